"""Helpers for the wire-server tests: an in-process server on a free port, consumer processes."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from groupspec.impl.config import CoordinatorConfig
from groupspec.impl.wire import ServeConfig, WireServer

HERE = Path(__file__).resolve().parent
CONSUMER_SCRIPT = HERE / "serve_consumer.py"
WAIT_S = 60.0  # a generous ceiling on waiting for a client; never a pass/fail timing


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Poll `condition` until true; fail naming `what` after `timeout_s` (a hang guard)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Member:
    """A consumer in its own process, reporting assignments and records as JSON lines."""

    def __init__(self, name: str, argv: list[str], parse: Callable[[str], dict | None]) -> None:
        self.name = name
        self.assignment: frozenset[int] = frozenset()
        self.records: list[tuple[int, int, str]] = []
        self.ready = False
        self.lines: list[str] = []
        self._parse = parse
        self._lock = threading.Lock()
        self.process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._reader = threading.Thread(target=self._read, name=f"reader-{name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            event = self._parse(line)
            if event is None:
                continue
            with self._lock:
                if event["ev"] == "assigned":
                    self.assignment = frozenset(event["partitions"])
                    self.ready = True
                elif event["ev"] == "record":
                    self.records.append((event["p"], event["o"], event["v"]))

    def snapshot(self) -> list[tuple[int, int, str]]:
        with self._lock:
            return list(self.records)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Graceful: the client closes (a dynamic member sends LeaveGroup)."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)

    def kill(self) -> None:
        """SIGKILL: no LeaveGroup, no more heartbeats."""
        if self.alive:
            self.process.kill()
            self.process.wait()
        self._reader.join(5)

    def tail(self) -> str:
        return "\n".join(self.lines[-30:])


def parse_json_line(line: str) -> dict | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def python_member(
    name: str, client: str, bootstrap: str, group: str, topic: str, **options: str
) -> Member:
    argv = [sys.executable, str(CONSUMER_SCRIPT), client, bootstrap, group, topic]
    for key, value in options.items():
        argv.append(f"--{key.replace('_', '-')}={value}")
    return Member(name, argv, parse_json_line)


def parse_kcat_line(line: str) -> dict | None:
    """kcat -G output: `REC p o value` records and its `% Group ... rebalanced` lines."""
    line = line.strip()
    if line.startswith("REC "):
        _, partition, offset, value = line.split(" ", 3)
        return {"ev": "record", "p": int(partition), "o": int(offset), "v": value}
    if line.startswith("% Group ") and "rebalanced" in line:
        if "assigned:" in line:
            listed = line.split("assigned:", 1)[1]
            partitions = [int(part.split("[")[1].rstrip("], ")) for part in listed.split(",")]
            return {"ev": "assigned", "partitions": partitions}
        return {"ev": "assigned", "partitions": []}
    return None


def kcat_member(name: str, bootstrap: str, group: str, topic: str) -> Member:
    argv = [
        "kcat",
        "-b",
        bootstrap,
        "-G",
        group,
        "-u",
        "-f",
        "REC %p %o %s\\n",
        "-X",
        "session.timeout.ms=6000",
        "-X",
        "heartbeat.interval.ms=500",
        "-X",
        "auto.commit.interval.ms=200",
        "-X",
        "auto.offset.reset=earliest",
        "-X",
        "topic.metadata.refresh.interval.ms=2000",
        topic,
    ]
    return Member(name, argv, parse_kcat_line)


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
