"""The asyncio server: framing, per-connection response order, the coordinator's clock.

Each connection reads frames and dispatches them in arrival order; each request gets a slot
in the connection's response queue, and a writer sends slots in order as they complete, so a
parked JoinGroup holds back the responses behind it (clients match responses to requests by
order) without holding back the reading and serving of the requests behind it.

A frame that cannot be served (unknown api key, unsupported version other than ApiVersions,
undecodable body, null where the schema allows none, a length outside [8, max_frame_bytes])
closes that connection only, as Kafka does; nothing a client sends reaches another connection except through the coordinator.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.impl.clock import MonotonicClock
from groupspec.impl.config import CoordinatorConfig
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.hashing import partition_for
from groupspec.impl.kip848 import ConsumerGroupConfig, ConsumerGroupCoordinator
from groupspec.impl.kip848.records import ConsumerGroupRecord
from groupspec.vocabulary.errors import ErrorCode, InputError
from groupspec.wire import codec
from groupspec.wire.codec import FrameError, RequestHead
from groupspec.wire.group_apis import BodyError, UnmodelledRequest
from groupspec.wire.listener_tasks import TaskSet

from .apis import Apis, Fields
from .consumer_groups import ConsumerGroupRouter, cluster_topics
from .offsets_file import DurablePolicy, OffsetsFile
from .topics import TopicStore

LOGGER = logging.getLogger("groupspec.serve")
_LENGTH = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """Where to listen, what to keep, and the limits that protect the server."""

    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    # The port given to clients in Metadata and FindCoordinator (default: the bound port), so
    # a recording proxy in front can be advertised and every client connection goes through it.
    advertised_port: int | None = None
    data_dir: Path | None = None
    topics: dict[str, int] = field(default_factory=dict)
    fsync_interval_ms: int = 1000
    tick_ms: int = 50
    max_frame_bytes: int = 100 * 1024 * 1024
    max_in_flight: int = 1000
    coordinator: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    # The consumer-protocol (KIP-848) groups' settings; its topics come from the topic store.
    consumer_groups: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)


def parse_topics(spec: str) -> dict[str, int]:
    """`"t:6,u:3"` -> {"t": 6, "u": 3}; raises ValueError naming the bad part."""
    topics: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, count = part.rpartition(":")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise ValueError(f"topic {part!r}: expected NAME:PARTITIONS with PARTITIONS ≥ 1")
        topics[name] = int(count)
    return topics


class WireServer:
    """One broker: the coordinator, the topic store, the listening socket."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.topics = TopicStore()
        for name, partitions in config.topics.items():
            self.topics.create(name, partitions)
        self.offsets_file: OffsetsFile | None = None
        self.apis: Apis | None = None
        self.consumer_groups: ConsumerGroupRouter | None = None
        # The consumer-protocol groups' records read from the offsets file, until loaded.
        self._consumer_records: list[ConsumerGroupRecord] = []
        self._server: asyncio.Server | None = None
        self._tasks = TaskSet()
        self._connections: set[asyncio.StreamWriter] = set()
        self._next_connection = 0
        self.port = config.port
        self.loaded_records = 0

    async def start(self) -> None:
        """Load the offsets file (if any), bind, and start the coordinator's clock."""
        config = self.config
        self._server = await asyncio.start_server(self._serve_connection, config.host, config.port)
        self.port = self._server.sockets[0].getsockname()[1]
        advertised = config.advertised_host or config.host
        advertised_port = config.advertised_port or self.port
        self.apis = Apis(self._make_coordinator, self.topics, advertised, advertised_port)
        self.consumer_groups = ConsumerGroupRouter(self.apis, self._make_consumer_coordinator())
        self.consumer_groups.install()
        self._spawn(self._tick())

    def _make_consumer_coordinator(self) -> ConsumerGroupCoordinator:
        """The consumer-protocol coordinator, its groups and offsets loaded from the offsets
        file (if any) and every later change written there."""
        config = self.config
        offsets_file = self.offsets_file
        if offsets_file is None:
            return ConsumerGroupCoordinator(config.consumer_groups, clock=MonotonicClock())
        partitions = config.coordinator.offsets_topic_num_partitions

        def write(group_id: str, records: list[ConsumerGroupRecord]) -> None:
            offsets_file.append(partition_for(group_id, partitions), records)

        coordinator = ConsumerGroupCoordinator(
            config.consumer_groups, clock=MonotonicClock(), records=write
        )
        coordinator.set_topics(cluster_topics(self.topics))
        loaded = coordinator.load(self._consumer_records)
        LOGGER.info(
            "loaded %d consumer-protocol records (%d groups) from %s",
            len(self._consumer_records),
            loaded,
            offsets_file.path,
        )
        self._consumer_records = []
        return coordinator

    def _make_coordinator(self, respond: Any) -> Coordinator:
        config = self.config
        partitions = config.coordinator.offsets_topic_num_partitions
        if config.data_dir is None:
            return Coordinator(config.coordinator, clock=MonotonicClock(), respond=respond)
        self.offsets_file = OffsetsFile(config.data_dir, config.fsync_interval_ms)
        entries = self.offsets_file.load()
        # A restart is a coordinator failover: every partition starts unowned, the file is
        # the replicated log the new leader reads, then each partition loads.
        coordinator = Coordinator(
            config.coordinator,
            policy=DurablePolicy(self.offsets_file, partitions),
            clock=MonotonicClock(),
            respond=respond,
            unowned_partitions=frozenset(range(partitions)),
        )
        for partition, records in entries:
            classic = [r for r in records if not isinstance(r, ConsumerGroupRecord)]
            self._consumer_records.extend(r for r in records if isinstance(r, ConsumerGroupRecord))
            if classic:
                coordinator.log.append(partition, classic)
            self.loaded_records += len(records)
        for partition in range(partitions):
            coordinator.start_loading(partition)
            coordinator.finish_loading(partition)
        LOGGER.info(
            "loaded %d offsets-log records (%d groups) from %s",
            self.loaded_records,
            sum(1 for _ in coordinator.groups()),
            self.offsets_file.path,
        )
        return coordinator

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop listening, drop every connection, fsync the offsets file."""

        def drop_connections() -> None:
            for writer in list(self._connections):
                writer.close()

        await self._tasks.shut_down(self._server, drop_connections)
        if self.offsets_file is not None:
            self.offsets_file.close()

    def _spawn(self, coroutine: Awaitable[Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coroutine)

    async def _tick(self) -> None:
        """Fire due coordinator timers and fsync the offsets file on schedule."""
        interval = self.config.tick_ms / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                assert self.apis is not None
                self.apis.coordinator.advance()
                if self.consumer_groups is not None:
                    self.consumer_groups.advance()
                if self.offsets_file is not None:
                    self.offsets_file.maybe_sync()
            except Exception:  # a bug must not stop the clock for every group
                LOGGER.exception("coordinator tick failed")

    # -- connections ----------------------------------------------------------------------

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._next_connection += 1
        name = f"conn-{self._next_connection}"
        peer = writer.get_extra_info("peername")
        client_host = f"/{peer[0]}" if isinstance(peer, tuple) else "/unknown"
        LOGGER.debug("%s: connection from %s", name, peer)
        self._connections.add(writer)
        # None in the queue is the end of the stream.
        slots: asyncio.Queue[asyncio.Future[bytes | None] | None] = asyncio.Queue(
            self.config.max_in_flight
        )
        writer_task = self._spawn(self._write_responses(name, slots, writer))
        try:
            while True:
                frame = await self._read_frame(reader)
                if frame is None:
                    break
                slot = self._dispatch(name, frame, client_host)
                await slots.put(slot)
                if writer_task.done():
                    break
        except FrameError as error:
            LOGGER.debug("%s: closing: %s", name, error)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # a bug serving one request closes its connection, nothing more
            LOGGER.exception("%s: closing after an internal error", name)
        finally:
            # Let queued responses go out, then close (a bad frame ends the stream after them).
            with contextlib.suppress(asyncio.QueueFull):
                slots.put_nowait(None)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(writer_task, 5)
            writer_task.cancel()
            self._connections.discard(writer)
            writer.close()

    async def _read_frame(self, reader: asyncio.StreamReader) -> bytes | None:
        try:
            prefix = await reader.readexactly(4)
        except asyncio.IncompleteReadError as eof:
            if eof.partial:
                raise FrameError("connection closed inside a length prefix") from eof
            return None
        (length,) = _LENGTH.unpack(prefix)
        if not 8 <= length <= self.config.max_frame_bytes:
            raise FrameError(f"frame length {length} outside [8, {self.config.max_frame_bytes}]")
        return await reader.readexactly(length)

    def _dispatch(self, name: str, frame: bytes, client_host: str) -> asyncio.Future[bytes | None]:
        """Serve one frame now; the returned future holds its framed response (None: none)."""
        loop = asyncio.get_running_loop()
        head = codec.peek_head(frame)
        if not codec.is_supported(head):
            if head.api_key == codec.API_VERSIONS:
                return _done(loop, _unsupported_api_versions(head))
            raise FrameError(f"api key {head.api_key} v{head.api_version} is not served")
        request = codec.decode_request(frame, head)
        # The wire lets any array or string be null (length -1); Kafka's parser refuses one
        # where the schema does not allow it, and so does this broker, before any handler.
        codec.refuse_null_fields(request)
        assert self.apis is not None
        try:
            reply = self.apis.handlers[head.api_key](request, client_host)
        except (InputError, BodyError, UnmodelledRequest) as error:
            # Fields no real client sends (negative timeouts, duplicate protocols, ...).
            raise FrameError(f"invalid request: {error}") from error
        if reply is None:
            return _done(loop, None)
        if isinstance(reply, dict):
            return _done(loop, self._encode(head, reply))
        slot: asyncio.Future[bytes | None] = loop.create_future()
        self._spawn(self._complete(head, reply, slot))
        return slot

    async def _complete(
        self, head: RequestHead, reply: Awaitable[Fields], slot: asyncio.Future[bytes | None]
    ) -> None:
        """Resolve `slot` with the encoded answer of a deferred reply (or its failure)."""
        try:
            encoded = self._encode(head, await reply)
        except asyncio.CancelledError:
            slot.cancel()
            raise
        except Exception as error:  # the writer logs it and closes the connection
            if not slot.done():
                slot.set_exception(error)
            return
        if not slot.done():
            slot.set_result(encoded)

    def _encode(self, head: RequestHead, fields: Fields) -> bytes:
        return codec.encode_response(head.api_key, head.api_version, head.correlation_id, fields)

    async def _write_responses(
        self,
        name: str,
        slots: asyncio.Queue[asyncio.Future[bytes | None] | None],
        writer: asyncio.StreamWriter,
    ) -> None:
        """Send each slot's response in request order; stop at the close marker or an error."""
        try:
            while True:
                slot = await slots.get()
                if slot is None:
                    return
                try:
                    data = await slot
                except Exception as error:
                    LOGGER.error("%s: request failed, closing", name, exc_info=error)
                    return
                if data is None:
                    continue  # acks=0 Produce: no response
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            return
        finally:
            writer.close()


def _done(loop: asyncio.AbstractEventLoop, value: bytes | None) -> asyncio.Future[bytes | None]:
    future: asyncio.Future[bytes | None] = loop.create_future()
    future.set_result(value)
    return future


def _unsupported_api_versions(head: RequestHead) -> bytes:
    """Kafka's answer to an ApiVersions version it does not know: v0, error 35, its own range."""
    low, high = codec.SUPPORTED_VERSIONS[codec.API_VERSIONS]
    fields = {
        "error_code": int(ErrorCode.UNSUPPORTED_VERSION),
        "api_keys": [{"api_key": codec.API_VERSIONS, "min_version": low, "max_version": high}],
    }
    return codec.encode_response(codec.API_VERSIONS, 0, head.correlation_id, fields)
