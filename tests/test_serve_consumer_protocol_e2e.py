"""`groupspec serve` under real consumers of KIP-848's protocol, end to end: confluent-kafka and
Kafka's Java consumer with `group.protocol=consumer` run tests/consumer_protocol_scenarios.py
(members joining one by one, leaving, a static member restarting, a crash, a subscription
change) against an in-process server, as tests/test_kafka_consumer_protocol_e2e.py runs it
against Apache Kafka 4.4.0; and the run's two verdicts catch what they are for.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from consumer_protocol_scenarios import (
    MIXED_STEPS,
    PARTITIONS,
    RUNS,
    STEPS,
    Consumer,
    ExactlyOnceRun,
    Holding,
    check_never_twice_held,
    check_read_exactly_once,
    run_scenario,
)
from serve_support import ServerThread, serve_config

from groupspec.bench.broker_setup import connect
from groupspec.bench.consumer_load import CONSUMER_GROUP_HEARTBEAT_KEY
from groupspec.bench.formation_progress import FormationProgress
from groupspec.wire.address import Address

TOPICS = ("first", "second")

# -- the verdicts catch what they are for (no broker) -------------------------------------------


def _consumer(name: str, spans: dict[tuple[str, int], list[tuple[int, int | None]]]) -> Consumer:
    consumer = Consumer(name, subprocess.Popen([sys.executable, "-c", ""]))
    consumer.process.wait()
    for tp, held in spans.items():
        consumer.holdings[tp] = [Holding(name, start, end) for start, end in held]
    return consumer


def _run(*consumers: Consumer) -> ExactlyOnceRun:
    run = ExactlyOnceRun("test", "127.0.0.1:1", "g", TOPICS)
    run.everyone.extend(consumers)
    return run


def test_a_hand_over_in_order_is_not_twice_held():
    before = _consumer("a", {("first", 0): [(10, 20)], ("first", 1): [(10, 50)]})
    after = _consumer("b", {("first", 0): [(20, None)], ("first", 1): [(60, 70)]})
    assert _run(before, after).twice_held() == []


def test_a_partition_gained_before_its_release_is_twice_held():
    before = _consumer("a", {("first", 2): [(10, 2_000_020)]})
    after = _consumer("b", {("first", 2): [(20, 30)]})
    assert _run(before, after).twice_held() == ["first[2] held by a and b at once for 2.0 ms"]


def test_records_read_twice_or_never_or_unproduced_are_reported():
    reader = _consumer("a", {})
    reader.values.extend(["one-0", "one-1", "one-1", "stray"])
    run = _run(reader)
    run.produced.extend(["one-0", "one-1", "one-2"])
    assert run.not_read_once() == {"one-1": 2, "one-2": 0, "stray": 1}


# -- against `groupspec serve` ------------------------------------------------------------------


def _serves_the_consumer_protocol(port: int) -> bool:
    async def versions() -> dict[int, tuple[int, int]]:
        connection, served = await connect(Address("127.0.0.1", port), "probe", FormationProgress())
        connection.close()
        return served

    return CONSUMER_GROUP_HEARTBEAT_KEY in asyncio.run(versions())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ExactlyOnceRun]:
    """Each client's whole scenario against one server (the two at once, each on a group and
    topics of its own), with the session and heartbeat interval Kafka's broker runs with in these tests."""
    from groupspec.impl.kip848 import ConsumerGroupConfig

    topics = {f"{name}-{t}": PARTITIONS for name in RUNS for t in TOPICS}
    groups = ConsumerGroupConfig(
        session_timeout_ms=6_000, heartbeat_interval_ms=500, assignment_interval_ms=0
    )
    config = serve_config(
        data_dir=tmp_path_factory.mktemp("serve"), topics=topics, consumer_groups=groups
    )
    server = ServerThread(config).start()
    try:
        assert _serves_the_consumer_protocol(server.port), (
            "groupspec serve does not advertise ConsumerGroupHeartbeat"
        )

        def one(name: str) -> tuple[str, ExactlyOnceRun]:
            topics = (f"{name}-{TOPICS[0]}", f"{name}-{TOPICS[1]}")
            return name, run_scenario(name, server.bootstrap, topics)

        with ThreadPoolExecutor(2) as pool:
            return dict(pool.map(one, RUNS))
    finally:
        server.stop()


@pytest.mark.parametrize("name", RUNS)
def test_no_partition_is_held_by_two_consumers_at_once(runs, name):
    check_never_twice_held(runs[name])


@pytest.mark.parametrize("name", RUNS)
def test_every_record_is_read_exactly_once(runs, name):
    check_read_exactly_once(runs[name], MIXED_STEPS if name == "mixed" else STEPS)
