"""groupspec.wire — Kafka's wire format as the server, the recorder and the oracle share it.

`codec` turns frames into kafka-python message objects and back, `frames` splits a byte stream
into frames, `group_apis` maps each group API's message fields to and from the vocabulary (one
entry per API, which the server, the oracle and the trace format all use), `trace_format`
and `trace_body` are the trace format (docs/trace-format.md), `address` parses `HOST:PORT`,
`request_connection` is one client connection (a request, then its response), `reachability` asks
whether a broker answers, and `tasks` runs a listener's background tasks.
Below it: kafka-python's protocol codec and the vocabulary (`groupspec.vocabulary`), nothing
else of groupspec.
"""
