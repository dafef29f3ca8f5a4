"""The recording proxy (`groupspec record`): Kafka traffic forwarded, group APIs recorded.

Every client connection gets one upstream connection, and every byte goes through unchanged in
both directions, forwarded as soon as it arrives. Beside the forwarding, a `FrameSplitter` per
direction cuts the stream into frames and a `ConnectionRecorder` turns the group APIs' requests
and responses into trace events (docs/record.md). With `advertise_self`, Metadata and
FindCoordinator responses are the exception: they are rewritten to name the proxy (see
`advertise.py`), so responses are forwarded a whole frame at a time.

A request event is written before its frame is forwarded, so its response (which the broker
cannot send earlier) always comes after it in the trace. A stream that is not Kafka's framing
is still forwarded as it is; that connection is no longer recorded, and the log says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.wire.address import Address
from groupspec.wire.frames import DEFAULT_MAX_FRAME_BYTES, Frame, FrameSplitter
from groupspec.wire.listener_tasks import TaskSet

from .advertise import REWRITTEN_APIS, AddressRewriter
from .recording import ConnectionRecorder, TraceSink

LOGGER = logging.getLogger("groupspec.record")
CHUNK_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
# After one side of a connection ends, how long the other may still send before both close.
HALF_CLOSE_GRACE_S = 10.0
_MIN_REQUEST_BYTES = 8  # api key, version, correlation id


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """Where to listen, where to forward, and whether to rewrite broker addresses."""

    listen: Address
    upstream: Address
    advertise_self: bool = False
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES


class RecordingProxy:
    """The listener and its connections (see the module docstring)."""

    def __init__(self, config: ProxyConfig, sink: TraceSink) -> None:
        self.config = config
        self.sink = sink
        self.port = config.listen.port
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks = TaskSet()
        self._rewriter: AddressRewriter | None = None

    async def start(self) -> None:
        """Bind the listener (port 0 picks a free one: see `port`)."""
        listen = self.config.listen
        self._server = await asyncio.start_server(self._accept, listen.host, listen.port)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.config.advertise_self:
            self._rewriter = AddressRewriter(listen.host, self.port)

    async def close(self) -> None:
        """Stop listening and end every connection (each gets its close event)."""
        await self._tasks.shut_down(self._server)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._tasks.spawn(self._connection(reader, writer))

    async def _connection(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        name = _peer_name(client_writer.get_extra_info("peername"))
        upstream = self.config.upstream
        try:
            upstream_reader, upstream_writer = await asyncio.wait_for(
                asyncio.open_connection(upstream.host, upstream.port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as error:
            LOGGER.warning(
                "%s: cannot reach upstream %s (%s): closing the client", name, upstream, error
            )
            client_writer.close()
            return
        self.connections += 1
        LOGGER.debug("%s: connected to upstream %s", name, upstream)
        tracked = REWRITTEN_APIS if self._rewriter is not None else frozenset()
        link = _Link(name, ConnectionRecorder(name, self.sink, tracked), self.config)
        rewriting = self._rewriter is not None
        pumps = {
            asyncio.ensure_future(_pump(client_reader, upstream_writer, link.requests, link)),
            asyncio.ensure_future(
                _pump(
                    upstream_reader,
                    client_writer,
                    self._responses(link),
                    link,
                    link.held_responses if rewriting else None,
                )
            ),
        }
        try:
            _, running = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            if running:
                await asyncio.wait(running, timeout=HALF_CLOSE_GRACE_S)
        finally:
            for pump in pumps:
                pump.cancel()
            for pump in pumps:
                with contextlib.suppress(BaseException):
                    await pump
            client_writer.close()
            upstream_writer.close()
            link.recorder.on_close()
            LOGGER.debug("%s: closed", name)

    def _responses(self, link: _Link) -> Callable[[bytes], bytes]:
        if self._rewriter is None:
            return link.responses
        rewriter = self._rewriter
        return lambda chunk: link.rewritten_responses(chunk, rewriter)


class _Link:
    """One client connection's two frame splitters and its recorder."""

    def __init__(self, name: str, recorder: ConnectionRecorder, config: ProxyConfig) -> None:
        self.name = name
        self.recorder = recorder
        self.recording = True
        self._requests = FrameSplitter(config.max_frame_bytes, _MIN_REQUEST_BYTES)
        self._responses = FrameSplitter(config.max_frame_bytes)

    def requests(self, chunk: bytes) -> bytes:
        """Record the requests `chunk` completes; forward it unchanged."""
        for frame in self._split(self._requests, chunk, "client"):
            self.recorder.on_request(frame.body)
        return chunk

    def responses(self, chunk: bytes) -> bytes:
        """Record the responses `chunk` completes; forward it unchanged."""
        for frame in self._split(self._responses, chunk, "upstream"):
            self.recorder.on_response(frame.body)
        return chunk

    def rewritten_responses(self, chunk: bytes, rewriter: AddressRewriter) -> bytes:
        """Record the responses `chunk` completes; forward whole frames, Metadata and
        FindCoordinator answers rewritten to name the proxy."""
        if not self.recording:
            return self._responses.take_pending() + chunk
        out = bytearray()
        for frame in self._split(self._responses, chunk, "upstream"):
            out += self._rewrite(frame, rewriter)
        if not self.recording:  # the stream broke inside this chunk: pass the rest as it is
            out += self._responses.take_pending()
        return bytes(out)

    def held_responses(self) -> bytes:
        """The bytes of an incomplete response frame held back (at the end of the stream)."""
        return self._responses.take_pending()

    def _rewrite(self, frame: Frame, rewriter: AddressRewriter) -> bytes:
        answered = self.recorder.on_response(frame.body)
        if answered is None or answered.api_key not in REWRITTEN_APIS:
            return frame.wire
        try:
            return rewriter.rewrite(answered.api_key, answered.api_version, frame.body)
        except Exception as error:  # FrameError, or a message kafka-python cannot re-encode
            LOGGER.warning(
                "%s: a response forwarded without rewriting its address: %s", self.name, error
            )
            return frame.wire

    def _split(self, splitter: FrameSplitter, chunk: bytes, side: str) -> list[Frame]:
        if not self.recording:
            return []
        frames = splitter.feed(chunk)
        if splitter.broken is not None:
            self.stop_recording(f"the {side} sent a {splitter.broken}")
        return frames

    def stop_recording(self, reason: str) -> None:
        """Forward the rest of this connection without recording it."""
        if self.recording:
            self.recording = False
            LOGGER.error(
                "%s: %s; forwarding the rest of this connection unrecorded", self.name, reason
            )


async def _pump(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    transform: Callable[[bytes], bytes],
    link: _Link,
    held: Callable[[], bytes] | None = None,
) -> None:
    """Copy `reader` to `writer` through `transform` until the end of the stream (then the
    bytes `held` back, if any), and pass the end on (a half close) so the other side sees it."""
    try:
        while chunk := await reader.read(CHUNK_BYTES):
            try:
                out = transform(chunk)
            except Exception as error:  # a recorder bug must not break the forwarding
                LOGGER.exception("%s: recording failed", link.name)
                link.stop_recording(f"recording failed ({type(error).__name__}: {error})")
                out = chunk
            if out:
                writer.write(out)
                await writer.drain()
        if held is not None and (rest := held()):
            writer.write(rest)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        return


def _peer_name(peer: Any) -> str:
    """ "127.0.0.1:53422" (or "[::1]:53422") for a socket's peer address."""
    if isinstance(peer, tuple) and len(peer) >= 2:
        return str(Address(str(peer[0]), int(peer[1])))
    return str(peer)
