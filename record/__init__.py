"""groupspec.record — recording any broker's group traffic as traces (docs/record.md).

`proxy` is the byte-transparent recording proxy, `recording` turns a connection's frames into
trace events, `advertise` rewrites broker addresses for `--advertise-self`, `proxy_thread` runs
the proxy beside programs that are not asyncio; `workload` drives real clients and probes.
"""
