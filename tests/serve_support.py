"""Helpers for the wire-server tests: an in-process server on a free port, a raw client.

The consumer processes and the scenario steps are the workloads' (`groupspec.record.workload`).
"""

from __future__ import annotations

import asyncio
import queue
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import replace

from kafka.protocol.consumer.group import JoinGroupRequest

from groupspec.impl.config import CoordinatorConfig
from groupspec.impl.server import ServeConfig, WireServer
from groupspec.record.workload.members import WAIT_S


def serve_config(**overrides: object) -> ServeConfig:
    """Server settings for tests: loopback, any free port, a 6 s minimum session timeout."""
    base = ServeConfig(
        host="127.0.0.1",
        port=0,
        coordinator=CoordinatorConfig(
            group_initial_rebalance_delay_ms=500, group_min_session_timeout_ms=1000
        ),
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


class ServerThread:
    """A WireServer on its own event loop thread; restartable on the same port and data dir."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.server: WireServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ServerThread:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self.server = WireServer(self.config)
                loop.run_until_complete(self.server.start())
            except BaseException as error:
                failure.append(error)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.server.close())
            loop.close()

        self._thread = threading.Thread(target=run, name="wire-server", daemon=True)
        self._thread.start()
        ready.wait(WAIT_S)
        if failure:
            raise failure[0]
        # Later restarts bind the same port, so clients reconnect to the same address.
        self.config = replace(self.config, port=self.port)
        return self

    def call(self, function: Callable[[WireServer], object]) -> object:
        """Run `function(server)` on the server's loop and return its result."""
        assert self._loop is not None and self.server is not None
        done: queue.Queue[object] = queue.Queue()
        server = self.server
        self._loop.call_soon_threadsafe(lambda: done.put(function(server)))
        return done.get(timeout=WAIT_S)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(WAIT_S)
        self._loop = None
        self._thread = None

    def restart(self) -> None:
        self.stop()
        self.start()


class Raw:
    """A bare client connection."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)

    def send(self, message, version: int, correlation_id: int) -> None:
        message.with_header(correlation_id=correlation_id, client_id="raw")
        self.sock.sendall(bytes(message.encode(version=version, header=True, framed=True)))

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self) -> bytes | None:
        """One response frame without its length prefix, or None once the server closed."""
        prefix = self._exactly(4)
        if prefix is None:
            return None
        return self._exactly(struct.unpack(">i", prefix)[0])

    def _exactly(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            try:
                chunk = self.sock.recv(size - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def closed_by_server(self) -> bool:
        return self.receive() is None

    def close(self) -> None:
        self.sock.close()


def join_request(group: str, member: str = "") -> JoinGroupRequest:
    """A consumer's JoinGroup for `group` (empty metadata, range), as `member`."""
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=6000,
        rebalance_timeout_ms=3000,
        member_id=member,
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")],
    )
