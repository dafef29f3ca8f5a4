"""A consumer process for the workloads and the wire-server tests: JSON lines on stdout.

usage: python -m groupspec.record.workload.consumer CLIENT BOOTSTRAP GROUP TOPIC
           [--assignor=NAME] [--instance-id=ID] [--api-version=2.3]
           [--group-protocol=consumer] [--remote-assignor=uniform|range] [--then-topic=T]
           [--callbacks]

CLIENT is kafka-python, confluent or aiokafka. The consumer commits after every batch it reads.
Events: {"ev": "assigned", "partitions": [...]} whenever the assignment changes (confluent adds
"topics"; with --then-topic, SIGHUP subscribes to that topic instead and says {"ev": "subscribed"}),
{"ev": "record", "p", "o", "v"} per record, {"ev": "committed", "offsets": {"p": offset}} after
each commit, {"ev": "error", "error"} for an error the client raised (it goes on consuming),
{"ev": "closed"} at the end. SIGTERM closes the consumer gracefully (a dynamic
member leaves the group; a static one does not). `--api-version` fixes kafka-python's broker
version instead of probing it (librdkafka's mock cluster answers kafka-python's ApiVersions v4
probe in a format kafka-python cannot read; 2.3 makes it ask v2). `--callbacks` (confluent
only) assigns and revokes in rebalance callbacks that say {"ev": "gained", "tps": [[topic, p],
...], "t": NANOS} as an assignment starts and {"ev": "released", "tps", "t"} once a revocation
committed what was read and ended ("lost": true for lost partitions, nothing committed); NANOS
is `time.monotonic_ns()`, CLOCK_MONOTONIC, so the times of several processes compare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

SESSION_TIMEOUT_MS = 6000
HEARTBEAT_MS = 500
MAX_POLL_INTERVAL_MS = 10000


def emit(**event: object) -> None:
    """Print one event as a JSON line."""
    print(json.dumps(event), flush=True)


def emit_batches(batches: dict[Any, list[Any]]) -> None:
    """Report every record of a kafka-python or aiokafka poll ({partition: [records]})."""
    for records in batches.values():
        for record in records:
            emit(ev="record", p=record.partition, o=record.offset, v=record.value.decode())


def emit_committed(offsets: dict[int, int]) -> None:
    """Report committed offsets (partition -> next offset to read)."""
    if offsets:
        emit(ev="committed", offsets={str(p): o for p, o in sorted(offsets.items())})


def python_client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The consumer settings kafka-python and aiokafka share (same names in both)."""
    return {
        "bootstrap_servers": args.bootstrap,
        "group_id": args.group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": HEARTBEAT_MS,
        "max_poll_interval_ms": MAX_POLL_INTERVAL_MS,
        "metadata_max_age_ms": 2000,
    }


def run_kafka_python(args: argparse.Namespace, stop: threading.Event) -> None:
    """Consume with kafka-python's KafkaConsumer until `stop`."""
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.errors import KafkaError

    assignors: dict[str, Any] = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
    }
    if args.assignor == "cooperative-sticky":
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor

        assignors["cooperative-sticky"] = CooperativeStickyAssignor
    options: dict[str, object] = {}
    if args.instance_id:
        options["group_instance_id"] = args.instance_id
    if args.api_version:
        options["api_version"] = tuple(int(part) for part in args.api_version.split("."))
    consumer = KafkaConsumer(
        client_id=args.instance_id or "serve-test",
        partition_assignment_strategy=[assignors[args.assignor]],
        **python_client_options(args),
        **options,
    )
    consumer.subscribe([args.topic])
    current: frozenset[int] | None = None
    while not stop.is_set():
        try:
            batches = consumer.poll(timeout_ms=200)
            emit_batches(batches)
            if batches:
                consumer.commit()
                emit_committed({tp.partition: consumer.position(tp) for tp in batches})
        except KafkaError as error:  # reported; the consumer rejoins as an application would
            emit(ev="error", error=f"{type(error).__name__}: {error}")
            continue
        assigned = frozenset(tp.partition for tp in consumer.assignment())
        if assigned != current and not consumer._coordinator.need_rejoin():
            current = assigned
            emit(ev="assigned", partitions=sorted(assigned))
    consumer.close()


def run_confluent(args: argparse.Namespace, stop: threading.Event) -> None:
    """Consume with confluent-kafka's (librdkafka's) Consumer until `stop`."""
    from confluent_kafka import Consumer, KafkaException

    config: dict[str, object] = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
        "partition.assignment.strategy": args.assignor,
        "topic.metadata.refresh.interval.ms": 2000,
    }
    if args.group_protocol == "consumer":
        # KIP-848: the broker owns the session, the heartbeat interval and the assignor
        # (librdkafka refuses these with the consumer protocol); a server assignor may be named.
        for name in (
            "session.timeout.ms",
            "heartbeat.interval.ms",
            "partition.assignment.strategy",
        ):
            del config[name]
        config["group.protocol"] = "consumer"
        if args.remote_assignor:
            config["group.remote.assignor"] = args.remote_assignor
    if args.instance_id:
        config["group.instance.id"] = args.instance_id
    consumer = Consumer(config)
    read: dict[tuple[str, int], int] = {}  # the next offset to read, per partition read
    handover = _Handover(consumer, read) if args.callbacks else None
    callbacks = handover.options() if handover is not None else {}
    consumer.subscribe([args.topic], **callbacks)
    # SIGHUP moves the subscription to --then-topic (a subscription change).
    resubscribe = threading.Event()
    if args.then_topic:
        signal.signal(signal.SIGHUP, lambda *_: resubscribe.set())
    current: tuple[frozenset[int], frozenset[str]] | None = None
    while not stop.is_set():
        if resubscribe.is_set():
            resubscribe.clear()
            consumer.subscribe([args.then_topic], **callbacks)
            emit(ev="subscribed", topics=[args.then_topic])
        message = consumer.poll(0.2)
        got = False
        while message is not None:
            if message.error() is None:
                got = True
                read[(str(message.topic()), int(message.partition()))] = int(message.offset()) + 1  # type: ignore[arg-type]
                emit(
                    ev="record",
                    p=message.partition(),
                    o=message.offset(),
                    # The workload's producer gives every record a value (steps.produce).
                    v=message.value().decode(),  # type: ignore[union-attr]
                )
            message = consumer.poll(0)
        if got:
            try:
                done = consumer.commit(asynchronous=False) or []
            except KafkaException as error:
                print(f"commit failed: {error}", flush=True)
            else:
                emit_committed({tp.partition: tp.offset for tp in done if tp.offset >= 0})
        owned = consumer.assignment()
        now = (frozenset(tp.partition for tp in owned), frozenset(tp.topic for tp in owned))
        if now != current:
            current = now
            emit(ev="assigned", partitions=sorted(now[0]), topics=sorted(now[1]))
    consumer.close()


class _Handover:
    """confluent-kafka's rebalance callbacks of `--callbacks` (see the module): a revocation
    commits what was read from the revoked partitions before it gives them up."""

    def __init__(self, consumer: Any, read: dict[tuple[str, int], int]) -> None:
        self._consumer = consumer
        self._read = read

    def options(self) -> dict[str, Callable[[Any, list[Any]], None]]:
        """`subscribe`'s callback arguments."""
        return {"on_assign": self.assign, "on_revoke": self.revoke, "on_lost": self.lose}

    def assign(self, consumer: Any, partitions: list[Any]) -> None:
        """Say `gained`, then take the partitions (incrementally: KIP-848 is cooperative)."""
        emit(ev="gained", tps=_pairs(partitions), t=time.monotonic_ns())
        consumer.incremental_assign(partitions)

    def revoke(self, consumer: Any, partitions: list[Any]) -> None:
        """Commit what was read from `partitions`, give them up, then say `released`."""
        from confluent_kafka import KafkaException, TopicPartition

        done = [
            TopicPartition(tp.topic, tp.partition, self._read[(tp.topic, tp.partition)])
            for tp in partitions
            if (tp.topic, tp.partition) in self._read
        ]
        if done:
            try:
                consumer.commit(offsets=done, asynchronous=False)
            except KafkaException as error:
                print(f"commit on revocation failed: {error}", flush=True)
            else:
                emit_committed({tp.partition: tp.offset for tp in done})
        consumer.incremental_unassign(partitions)
        emit(ev="released", tps=_pairs(partitions), t=time.monotonic_ns())

    def lose(self, consumer: Any, partitions: list[Any]) -> None:
        """Give lost partitions up without a commit, then say `released` (lost)."""
        consumer.incremental_unassign(partitions)
        emit(ev="released", lost=True, tps=_pairs(partitions), t=time.monotonic_ns())


def _pairs(partitions: list[Any]) -> list[list[Any]]:
    return [[tp.topic, tp.partition] for tp in partitions]


def run_aiokafka(args: argparse.Namespace, stop: threading.Event) -> None:
    """Consume with aiokafka's AIOKafkaConsumer until `stop`."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.errors import KafkaError

    assignors: dict[str, Any] = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
    }

    async def consume() -> None:
        consumer = AIOKafkaConsumer(
            group_instance_id=args.instance_id or None,
            partition_assignment_strategy=(assignors[args.assignor],),
            **python_client_options(args),
        )
        await consumer.start()
        # Subscribed after start(), which would otherwise wait for the first assignment and
        # fail for good on a join error; getmany() reports such errors and rejoins.
        consumer.subscribe([args.topic])
        current: frozenset[int] | None = None
        while not stop.is_set():
            try:
                batches = await consumer.getmany(timeout_ms=200)
                emit_batches(batches)
                if batches:
                    await consumer.commit()
                    emit_committed({tp.partition: await consumer.position(tp) for tp in batches})
            except KafkaError as error:  # reported; the consumer rejoins as an application would
                emit(ev="error", error=f"{type(error).__name__}: {error}")
                continue
            assigned = frozenset(tp.partition for tp in consumer.assignment())
            if assigned != current:
                current = assigned
                emit(ev="assigned", partitions=sorted(assigned))
        await consumer.stop()

    asyncio.run(consume())


RUNNERS: dict[str, Callable[[argparse.Namespace, threading.Event], None]] = {
    "kafka-python": run_kafka_python,
    "confluent": run_confluent,
    "aiokafka": run_aiokafka,
}


def main() -> None:
    """Parse the arguments, consume until SIGTERM, report `closed`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=sorted(RUNNERS))
    parser.add_argument("bootstrap")
    parser.add_argument("group")
    parser.add_argument("topic")
    parser.add_argument("--assignor", default="range")
    parser.add_argument("--instance-id", default="")
    parser.add_argument("--api-version", default="")
    # confluent only: "consumer" speaks KIP-848's protocol (ConsumerGroupHeartbeat).
    parser.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic")
    parser.add_argument("--remote-assignor", default="")
    # confluent only: SIGHUP subscribes to this topic instead.
    parser.add_argument("--then-topic", default="")
    # confluent only: rebalance callbacks that report hand-overs with their times.
    parser.add_argument("--callbacks", action="store_true")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    RUNNERS[args.client](args, stop)
    emit(ev="closed")
    sys.exit(0)


if __name__ == "__main__":
    main()
