"""The stale-owned-partitions finding (docs/kafka.md, "Findings on the consumer protocol") driven
through Apache Kafka's own Java consumers: two `StaleOwnedConsumer.java` processes
(group.protocol=consumer, range) on a two-broker cluster whose coordinator moves while the first
consumer is still reconciling its first assignment.

c1 joins alone and is given every partition; its onPartitionsAssigned is held (the
reconciliation stays in progress). c2 joins, so c1 must give some partitions up. With `move`
the offsets partition's leadership moves: c1's heartbeat is answered NOT_COORDINATOR, which
resets its heartbeat's sent fields, and its next heartbeat, to the new coordinator, reports the
owned partitions of its assignment before (none) at the epoch it is reconciling; the coordinator
takes that as the revocation done and gives c2 the partitions. Then c1's callback is released:
its reconciliation completes holding every partition, until its next one revokes what c2 has.
Without `move`, c2 is given nothing before c1 revokes (the control).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from importlib import resources
from typing import IO

from groupspec.record.kafka.cluster import KafkaCluster
from groupspec.record.kafka.install import install, java_executable
from groupspec.record.kafka.settings import KAFKA_4X

from .consumer_protocol import create_topics
from .java_client import JVM_OPTIONS, client_classpath

SOURCE = "StaleOwnedConsumer.java"
# How long a new topic takes to reach the group coordinator's metadata image (as for the probes).
METADATA_PROPAGATION_S = 1.0
# Bounds on waiting for a consumer's event: a JVM start and a join take a few seconds.
EVENT_WAIT_S = 60.0
# How long c2 is given to receive c1's partitions while c1's callback is held: a few heartbeat
# intervals after the move completes (groupspec's brokers use 500 ms).
HANDOVER_WAIT_S = 10.0
POLL_S = 0.05


@dataclass(frozen=True)
class ConsumerEvent:
    """One line of a consumer process: who, what (assigning, assigned, revoked, lost), which
    partitions, and when (CLOCK_MONOTONIC nanoseconds, comparable across processes)."""

    who: str
    event: str
    partitions: frozenset[int]
    t_ns: int


@dataclass(frozen=True)
class StaleOwnedRun:
    """What a run showed: every consumer event in arrival order, and the node the coordinator
    moved to (None without the move)."""

    events: tuple[ConsumerEvent, ...]
    moved_to: int | None

    def first(self, who: str, event: str) -> ConsumerEvent | None:
        """`who`'s first `event` with partitions, or None."""
        return next(
            (e for e in self.events if e.who == who and e.event == event and e.partitions), None
        )

    def held_twice(self) -> frozenset[int]:
        """The partitions c2's onPartitionsAssigned returned with while c1 still held them: c1 had
        begun assigning them to itself before, and revoked them only after."""
        gained = self.first("c2", "assigned")
        assigning = self.first("c1", "assigning")
        revoked = self.first("c1", "revoked")
        if gained is None or assigning is None or revoked is None:
            return frozenset()
        if not assigning.t_ns < gained.t_ns < revoked.t_ns:
            return frozenset()
        return gained.partitions & assigning.partitions & revoked.partitions


class _Consumer:
    """One `StaleOwnedConsumer.java consume` process and the events it printed."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, hold: bool) -> None:
        source = resources.files(__package__) / SOURCE
        command = [
            java_executable(),
            *JVM_OPTIONS,
            "-cp",
            client_classpath(install(KAFKA_4X)),
            str(source),
            "consume",
            bootstrap,
            group,
            topic,
            *(["--hold-first"] if hold else []),
        ]
        self.name = name
        self.events: list[ConsumerEvent] = []
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self._process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self._process.stdout,))
        self._reader.daemon = True
        self._reader.start()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            if not line.startswith("{"):
                continue  # a JVM warning
            fields = json.loads(line)
            event = ConsumerEvent(self.name, fields["ev"], frozenset(fields["ps"]), fields["t"])
            with self._lock:
                self.events.append(event)

    def seen(self, event: str, *, with_partitions: bool) -> bool:
        """Whether the consumer printed `event` (with partitions, or any)."""
        with self._lock:
            return any(
                e.event == event and (bool(e.partitions) or not with_partitions)
                for e in self.events
            )

    def wait_for(self, event: str, *, with_partitions: bool, seconds: float) -> bool:
        """Wait up to `seconds` for `event`; whether it came (False also if the process ended)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.seen(event, with_partitions=with_partitions):
                return True
            if self._process.poll() is not None:
                return False
            time.sleep(POLL_S)
        return False

    def release(self) -> None:
        """Let the held onPartitionsAssigned return."""
        assert self._process.stdin is not None
        self._process.stdin.write("release\n")
        self._process.stdin.flush()

    def close(self) -> None:
        """Close the consumer (its stdin's end) and wait for the process."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(EVENT_WAIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(EVENT_WAIT_S)


def _expect(consumer: _Consumer, event: str, what: str) -> None:
    """Wait for `consumer`'s `event` with partitions; RuntimeError naming `what` if it never came."""
    if not consumer.wait_for(event, with_partitions=True, seconds=EVENT_WAIT_S):
        raise RuntimeError(f"{consumer.name}: {what} did not happen")


def run_stale_owned(cluster: KafkaCluster, *, move: bool) -> StaleOwnedRun:
    """Run the scenario (see the module docstring) on a running `cluster` with a topic and group
    of its own; with `move`, the coordinator moves while c1's first callback is held."""
    bootstrap = ",".join(str(cluster.address(node)) for node in range(1, cluster.size + 1))
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"stale-owned-{suffix}", f"stale-owned-{suffix}"
    create_topics(bootstrap, (topic,))
    time.sleep(METADATA_PROPAGATION_S)
    c1 = _Consumer("c1", bootstrap, group, topic, hold=True)
    c2: _Consumer | None = None
    moved_to = None
    try:
        _expect(c1, "assigning", "its first assignment")
        c2 = _Consumer("c2", bootstrap, group, topic, hold=False)
        # c2's join is answered (with nothing: c1 holds every partition).
        if not c2.wait_for("assigned", with_partitions=False, seconds=EVENT_WAIT_S):
            raise RuntimeError("c2: its join was not answered")
        if move:
            moved_to = asyncio.run(cluster.move_coordinator())
        c2.wait_for("assigned", with_partitions=True, seconds=HANDOVER_WAIT_S)
        c1.release()
        _expect(c1, "revoked", "the revocation of c2's partitions")
        _expect(c2, "assigned", "c2's assignment of c1's partitions")
    finally:
        for consumer in (c1, c2):
            if consumer is not None:
                consumer.close()
    events = sorted([*c1.events, *(c2.events if c2 else [])], key=lambda e: e.t_ns)
    return StaleOwnedRun(tuple(events), moved_to)
