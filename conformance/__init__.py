"""groupspec.conformance — holding the optimized coordinator (`groupspec.impl`) to the spec.

`differential` runs both on the same inputs and compares responses and states; `coordinator_runs`
replays every coordinator transition a preset explores; `vectors` and `vector_codec` write and
run the portable conformance vectors; `impl_adapter` is the impl's adapter for them;
`impl_traces` writes traces of simulated consumers on the impl, for the oracle's tests and bench.
"""
