"""The Kafka wire-protocol server around the optimized coordinator (`groupspec serve`).

`server.WireServer` listens with asyncio; `codec` turns frames into kafka-python message objects
and back; `apis` serves each API (group APIs through `groupspec.impl.Coordinator`); `topics` is
the in-memory partitioned record log; `offsets_file` keeps `__consumer_offsets` on disk.
docs/serve.md explains the choices.
"""

from .server import ServeConfig, WireServer, parse_topics

__all__ = ["ServeConfig", "WireServer", "parse_topics"]
