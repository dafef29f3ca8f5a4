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
    CLIENTS,
    PARTITIONS,
    ExactlyOnceRun,
    check_never_twice_held,
    check_read_exactly_once,
    run_exactly_once,
)

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.workload.consumer_protocol import create_topics


@pytest.fixture(scope="module")
def runs(kafka_4x: KafkaBroker) -> dict[str, ExactlyOnceRun]:
    """Each client's whole scenario against the module's broker."""

    def one(client: str) -> tuple[str, ExactlyOnceRun]:
        topics = (f"eo-{client}-first", f"eo-{client}-second")
        create_topics(kafka_4x.bootstrap, topics)
        return client, run_exactly_once(client, kafka_4x.bootstrap, f"eo-{client}", topics)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, CLIENTS))


def test_the_topics_have_the_scenarios_partition_count():
    from groupspec.record.workload import consumer_protocol

    assert consumer_protocol.PARTITIONS == PARTITIONS


@pytest.mark.parametrize("client", CLIENTS)
def test_no_partition_is_held_by_two_consumers_at_once(runs, client):
    check_never_twice_held(runs[client])


@pytest.mark.parametrize("client", CLIENTS)
def test_every_record_is_read_exactly_once(runs, client):
    check_read_exactly_once(runs[client])
