"""A consumer process for the wire-server tests: prints JSON lines, commits after every batch.

usage: serve_consumer.py CLIENT BOOTSTRAP GROUP TOPIC [--assignor=NAME] [--instance-id=ID]
CLIENT is kafka-python, confluent or aiokafka. Events: {"ev": "assigned", "partitions": [...]}
whenever the assignment changes, {"ev": "record", "p", "o", "v"} per record. SIGTERM closes the
consumer gracefully (dynamic members leave the group).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import threading

SESSION_TIMEOUT_MS = 6000
HEARTBEAT_MS = 500
MAX_POLL_INTERVAL_MS = 10000


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def run_kafka_python(args: argparse.Namespace, stop: threading.Event) -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignors = {
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
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.instance_id or "serve-test",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=HEARTBEAT_MS,
        max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
        metadata_max_age_ms=2000,
        partition_assignment_strategy=[assignors[args.assignor]],
        **options,
    )
    consumer.subscribe([args.topic])
    current: frozenset[int] | None = None
    while not stop.is_set():
        batches = consumer.poll(timeout_ms=200)
        for records in batches.values():
            for record in records:
                emit(ev="record", p=record.partition, o=record.offset, v=record.value.decode())
        if batches:
            consumer.commit()
        assigned = frozenset(tp.partition for tp in consumer.assignment())
        if assigned != current and not consumer._coordinator.need_rejoin():
            current = assigned
            emit(ev="assigned", partitions=sorted(assigned))
    consumer.close()


def run_confluent(args: argparse.Namespace, stop: threading.Event) -> None:
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
    if args.instance_id:
        config["group.instance.id"] = args.instance_id
    consumer = Consumer(config)
    consumer.subscribe([args.topic])
    current: frozenset[int] | None = None
    while not stop.is_set():
        message = consumer.poll(0.2)
        got = False
        while message is not None:
            if message.error() is None:
                got = True
                emit(
                    ev="record",
                    p=message.partition(),
                    o=message.offset(),
                    v=message.value().decode(),
                )
            message = consumer.poll(0)
        if got:
            try:
                consumer.commit(asynchronous=False)
            except KafkaException as error:
                print(f"commit failed: {error}", flush=True)
        assigned = frozenset(tp.partition for tp in consumer.assignment())
        if assigned != current:
            current = assigned
            emit(ev="assigned", partitions=sorted(assigned))
    consumer.close()


def run_aiokafka(args: argparse.Namespace, stop: threading.Event) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}

    async def consume() -> None:
        consumer = AIOKafkaConsumer(
            args.topic,
            bootstrap_servers=args.bootstrap,
            group_id=args.group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
            metadata_max_age_ms=2000,
            partition_assignment_strategy=(assignors[args.assignor],),
        )
        await consumer.start()
        current: frozenset[int] | None = None
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=200)
            for records in batches.values():
                for record in records:
                    emit(ev="record", p=record.partition, o=record.offset, v=record.value.decode())
            if batches:
                await consumer.commit()
            assigned = frozenset(tp.partition for tp in consumer.assignment())
            if assigned != current:
                current = assigned
                emit(ev="assigned", partitions=sorted(assigned))
        await consumer.stop()

    asyncio.run(consume())


RUNNERS = {"kafka-python": run_kafka_python, "confluent": run_confluent, "aiokafka": run_aiokafka}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=sorted(RUNNERS))
    parser.add_argument("bootstrap")
    parser.add_argument("group")
    parser.add_argument("topic")
    parser.add_argument("--assignor", default="range")
    parser.add_argument("--instance-id", default="")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    RUNNERS[args.client](args, stop)
    emit(ev="closed")
    sys.exit(0)


if __name__ == "__main__":
    main()
