"""Apache Kafka 4.4.0 as the ground truth of tests/consumer_protocol_scenarios.py: confluent-kafka
and Kafka's Java consumer with `group.protocol=consumer` consume every record exactly once while
members join, leave, restart as the same static member, crash and change their subscription, and
no partition is ever held by two of them at once (docs/serve.md, "End-to-end tests of the
consumer protocol (KIP-848)"). tests/test_serve_consumer_protocol.py runs the same against
`groupspec serve`.

One Kafka 4.x broker serves the module (`kafka_4x`); the two clients run at once, each on a group
and topics of its own.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from consumer_protocol_scenarios import (
    MIXED_STEPS,
    RUNS,
    STEPS,
    ExactlyOnceRun,
    check_never_twice_held,
    check_read_exactly_once,
    run_scenario,
)

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.workload.consumer_protocol import create_topics


@pytest.fixture(scope="module")
def runs(kafka_4x: KafkaBroker) -> dict[str, ExactlyOnceRun]:
    """Each client's whole scenario against the module's broker."""

    def one(name: str) -> tuple[str, ExactlyOnceRun]:
        topics = (f"eo-{name}-first", f"eo-{name}-second")
        create_topics(kafka_4x.bootstrap, topics)
        return name, run_scenario(name, kafka_4x.bootstrap, topics)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, RUNS))


@pytest.mark.parametrize("name", RUNS)
def test_no_partition_is_held_by_two_consumers_at_once(runs, name):
    check_never_twice_held(runs[name])


@pytest.mark.parametrize("name", RUNS)
def test_every_record_is_read_exactly_once(runs, name):
    check_read_exactly_once(runs[name], MIXED_STEPS if name == "mixed" else STEPS)
