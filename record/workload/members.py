"""Consumers as processes: start one, read what it reports, stop it gracefully or kill it.

A `Member` runs a consumer process (`consumer.py` for the Python clients, `JavaClient.java` for
Kafka's own Java consumer, or kcat) and reads its stdout in a thread: the assignment it reports,
the records it read, the offsets it committed.
`wait_until` polls a condition with a ceiling that only guards against hangs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from .java_client import java_client_command

WAIT_S = 60.0  # a generous ceiling on waiting for a client; never a pass/fail timing
STOP_WAIT_S = 60.0
CONSUMER_MODULE = "groupspec.record.workload.consumer"

Event = dict[str, object]


class WorkloadError(Exception):
    """A workload step that did not happen (a group never balanced, records never read)."""


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Poll `condition` until true; raise WorkloadError naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise WorkloadError(f"timed out waiting for {what}")


class Member:
    """A consumer in its own process, reporting assignments, records and commits as lines."""

    def __init__(self, name: str, argv: list[str], parse: Callable[[str], Event | None]) -> None:
        self.name = name
        self.assignment: frozenset[int] = frozenset()
        self.records: list[tuple[int, int, str]] = []
        self.committed: dict[int, int] = {}
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
            if event is not None:
                self._apply(event)

    def _apply(self, event: Event) -> None:
        with self._lock:
            # An event's values are parsed JSON (object): both parsers give "partitions" as a
            # list of ints and "p", "o" as ints, which mypy cannot see.
            if event["ev"] == "assigned":
                self.assignment = frozenset(event["partitions"])  # type: ignore[call-overload]
                self.ready = True
            elif event["ev"] == "record":
                self.records.append((int(event["p"]), int(event["o"]), str(event["v"])))  # type: ignore[call-overload]
            elif event["ev"] == "committed":
                offsets = event["offsets"]
                assert isinstance(offsets, dict)
                for partition, offset in offsets.items():
                    self.committed[int(partition)] = int(offset)

    def snapshot(self) -> list[tuple[int, int, str]]:
        """The records read so far: (partition, offset, value)."""
        with self._lock:
            return list(self.records)

    def commits(self) -> dict[int, int]:
        """The last offset this member committed, per partition."""
        with self._lock:
            return dict(self.committed)

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def stop(self) -> None:
        """Graceful: the client closes (a dynamic member sends LeaveGroup)."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_WAIT_S)
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
        """The last lines the process printed (for failure reports)."""
        return "\n".join(self.lines[-30:])


def parse_json_line(line: str) -> Event | None:
    """One event line of `consumer.py`, or None for anything else it printed."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "ev" in event else None


def python_member(
    name: str, client: str, bootstrap: str, group: str, topic: str, **options: str
) -> Member:
    """A `consumer.py` process for `client` (kafka-python, confluent, aiokafka); `options`
    become its `--key=value` flags (assignor, instance_id, api_version)."""
    argv = [sys.executable, "-m", CONSUMER_MODULE, client, bootstrap, group, topic]
    for key, value in options.items():
        argv.append(f"--{key.replace('_', '-')}={value}")
    return Member(name, argv, parse_json_line)


def java_member(name: str, bootstrap: str, group: str, topic: str, **options: str) -> Member:
    """A `JavaClient.java consume` process (Kafka's own KafkaConsumer); `options` become its
    `--key=value` flags (assignor, instance_id)."""
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
    return Member(
        name, java_client_command("consume", bootstrap, group, topic, *flags), parse_json_line
    )


def parse_kcat_line(line: str) -> Event | None:
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
    """A kcat balanced consumer (`-G`, auto-commit every 200 ms)."""
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
