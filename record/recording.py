"""What the recorder makes of the frames on one client connection: trace events.

A `ConnectionRecorder` sees every request frame the client sent and every response frame the
broker sent back, in order. It remembers the api key and version of each request it needs by
correlation id (a response carries only the id; its version is its request's), and for the
group APIs (`trace_format.API_NAMES`) writes a request event and a response event with the
decoded fields as the body. A request frame it cannot decode is logged and not recorded, and
neither is its response, so a trace never holds half of a broken exchange. A response it
cannot decode to a recorded request is recorded as an *undecodable* response (no body, the
reason): dropping it would leave the request unanswered in the trace and hide the fault.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.wire import codec
from groupspec.wire.codec import FrameError
from groupspec.wire.trace_body import body_of
from groupspec.wire.trace_format import API_NAMES, CLOSE, REQUEST, RESPONSE, TraceEvent, TraceWriter

LOGGER = logging.getLogger("groupspec.record")


class TraceSink:
    """Where every connection's events go: one trace writer, a clock that never goes back
    (the trace format requires time order; a wall clock may step back), and counts."""

    def __init__(self, writer: TraceWriter, clock: Callable[[], float] = time.time) -> None:
        self._writer = writer
        self._clock = clock
        self._last_ms = 0.0
        self.counts: Counter[tuple[str, str]] = Counter()
        self.not_recorded: Counter[str] = Counter()
        self.undecodable: Counter[str] = Counter()

    def now_ms(self) -> float:
        """Milliseconds since the epoch, never less than the last value returned."""
        self._last_ms = max(self._clock() * 1000.0, self._last_ms)
        return self._last_ms

    def write(self, event: TraceEvent) -> None:
        """Append `event` to the trace and count it."""
        self._writer.write(event)
        self.counts[(event.api or CLOSE, event.direction)] += 1


@dataclass(frozen=True, slots=True)
class Answered:
    """The request a response frame answers."""

    api_key: int
    api_version: int
    correlation_id: int


class ConnectionRecorder:
    """The frames of one client connection in, its trace events out (see the module)."""

    def __init__(
        self, name: str, sink: TraceSink, also_track: frozenset[int] = frozenset()
    ) -> None:
        self.name = name
        self._sink = sink
        # Requests whose responses matter: the recorded ones, and `also_track` (for rewriting).
        self._track = frozenset(API_NAMES) | also_track
        self._pending: dict[int, Answered] = {}
        self._warned: set[tuple[str, int, int]] = set()
        self.recorded = 0
        self.closed = False

    def on_request(self, frame: bytes) -> None:
        """A complete request frame (without its length prefix) from the client."""
        if self.closed:
            return
        try:
            head = codec.peek_head(frame)
        except FrameError as error:
            self._not_recorded("request", -1, -1, -1, error)
            return
        if head.api_key not in self._track:
            return
        request = Answered(head.api_key, head.api_version, head.correlation_id)
        if head.api_key not in API_NAMES:
            self._pending[head.correlation_id] = request
            return
        ts = self._sink.now_ms()
        try:
            decoded = codec.decode_request(frame, head)
            body = body_of(decoded.body)
        except Exception as error:  # FrameError, or a body kafka-python decoded oddly
            self._not_recorded("request", *_fields(request), error)
            return
        self._pending[head.correlation_id] = request
        self._write(
            TraceEvent(
                ts,
                self.name,
                REQUEST,
                head.api_key,
                head.api_version,
                head.correlation_id,
                decoded.client_id,
                body,
            )
        )

    def on_response(self, frame: bytes) -> Answered | None:
        """A complete response frame from the broker; returns the tracked request it answers."""
        if self.closed:
            return None
        try:
            correlation_id = codec.peek_correlation_id(frame)
        except FrameError as error:
            self._not_recorded("response", -1, -1, -1, error)
            return None
        request = self._pending.pop(correlation_id, None)
        if request is None or request.api_key not in API_NAMES:
            return request
        ts = self._sink.now_ms()
        body: dict[str, Any] | None = None
        undecodable = None
        try:
            body = body_of(codec.decode_response(request.api_key, request.api_version, frame))
        except Exception as error:  # FrameError, or a body kafka-python decoded oddly
            undecodable = f"{type(error).__name__}: {error}"
            self._sink.undecodable[f"{API_NAMES[request.api_key]} response"] += 1
            LOGGER.warning(
                "%s: %s response v%d (correlation id %d) forwarded, recorded as undecodable: %s",
                self.name,
                API_NAMES[request.api_key],
                request.api_version,
                correlation_id,
                error,
            )
        self._write(
            TraceEvent(
                ts,
                self.name,
                RESPONSE,
                request.api_key,
                request.api_version,
                correlation_id,
                body=body,
                undecodable=undecodable,
            )
        )
        return request

    def on_close(self) -> None:
        """The connection is over (either side closed it): a close event if anything on it was
        recorded (connections without group traffic leave no trace), then nothing more."""
        if self.closed:
            return
        self.closed = True
        self._pending.clear()
        if self.recorded:
            self._write(TraceEvent(self._sink.now_ms(), self.name, CLOSE))

    def _write(self, event: TraceEvent) -> None:
        self.recorded += 1
        self._sink.write(event)

    def _not_recorded(
        self, what: str, api_key: int, version: int, correlation_id: int, error: Exception
    ) -> None:
        name = API_NAMES.get(api_key, f"api {api_key}")
        self._sink.not_recorded[f"{name} {what}"] += 1
        key = (what, api_key, version)
        level = logging.DEBUG if key in self._warned else logging.WARNING
        self._warned.add(key)
        LOGGER.log(
            level,
            "%s: %s %s v%d (correlation id %d) forwarded, not recorded: %s",
            self.name,
            name,
            what,
            version,
            correlation_id,
            error,
        )


def _fields(request: Answered) -> tuple[int, int, int]:
    return request.api_key, request.api_version, request.correlation_id
