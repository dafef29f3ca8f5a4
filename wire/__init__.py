"""groupspec.wire — Kafka's wire format as the server, the recorder and the oracle share it.

`codec` turns frames into kafka-python message objects and back, `frames` splits a byte stream
into frames, `group_fields` writes group-API responses as Kafka's message fields, `trace_format`
and `trace_body` are the trace format (docs/trace-format.md), `address` parses `HOST:PORT`,
`request_connection` is one client connection (a request, then its response), `reachability` asks
whether a broker answers, and `tasks` runs a listener's background tasks.
Only kafka-python's protocol codec below it; nothing of groupspec.
"""
