"""`groupspec record --advertise-self`: broker addresses in answers rewritten to the recorder's.

A client learns where brokers are from Metadata (every broker) and FindCoordinator (the group's
coordinator), then connects there. A broker that cannot be told to advertise the recorder
(librdkafka's mock cluster, a broker you do not run) would lead clients past the recorder after
their first request; rewriting those two answers keeps every connection going through it. These
two kinds of response are decoded and re-encoded with the new host and port; nothing else they
hold changes, and every other frame is forwarded as it came.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from groupspec.wire import codec

LOGGER = logging.getLogger("groupspec.record")

REWRITTEN_APIS = frozenset({codec.METADATA, codec.FIND_COORDINATOR})


@dataclass
class AddressRewriter:
    """Points Metadata and FindCoordinator answers at `host`:`port`."""

    host: str
    port: int
    seen_brokers: set[tuple[str, int]] = field(default_factory=set)

    def rewrite(self, api_key: int, version: int, frame: bytes) -> bytes:
        """The framed response to send instead of `frame` (the body of an `api_key` response
        at `version`); raises `codec.FrameError` if the frame does not decode."""
        message = codec.decode_response(api_key, version, frame)
        if api_key == codec.METADATA:
            self._point_brokers(message.brokers)
        elif version >= 4:
            for coordinator in message.coordinators:
                self._point(coordinator)
        else:
            self._point(message)
        # Encoded at the version it was decoded at, with its own header (correlation id).
        return bytes(message.encode(header=True, framed=True))

    def _point_brokers(self, brokers: Any) -> None:
        for broker in brokers or []:
            self._note(broker.host, broker.port)
            broker.host, broker.port = self.host, self.port

    def _point(self, answer: Any) -> None:
        # An error answer names no coordinator (host "", port -1): it stays as it is.
        if answer.error_code == 0:
            self._note(answer.host, answer.port)
            answer.host, answer.port = self.host, self.port

    def _note(self, host: str, port: int) -> None:
        if (host, port) in self.seen_brokers:
            return
        self.seen_brokers.add((host, port))
        if len(self.seen_brokers) == 2:
            LOGGER.warning(
                "the upstream names more than one broker (%s); --advertise-self points them all "
                "at this recorder, which forwards to one upstream: record a one-broker cluster",
                ", ".join(f"{h}:{p}" for h, p in sorted(self.seen_brokers)),
            )
