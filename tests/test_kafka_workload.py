"""A real-client workload against Apache Kafka's own broker (`groupspec workload --target
kafka`): the broker is started and stopped around the run, and the trace's header carries the
settings the broker ran with. Whether the oracle passes such traces is tested elsewhere."""

from __future__ import annotations

from collections import Counter

import pytest

from groupspec.cli.main import main
from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.kafka.install import pinned_release
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceReading, read_trace

SETTING = "group_initial_rebalance_delay_ms=100"


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """One kafka-python run of the dynamic scenario against a Kafka 4.x broker it starts."""
    folder = tmp_path_factory.mktemp("traces")
    argv = ["workload", "--client", "kafka-python", "--scenario", "dynamic", "--target", "kafka"]
    assert main([*argv, "--trace-dir", str(folder), "--coordinator-setting", SETTING]) == 0
    reading = TraceReading()
    events = list(read_trace(folder / "kafka-python-dynamic.jsonl", reading))
    return reading.header, events


def test_the_header_carries_the_brokers_settings(trace):
    header, _ = trace
    assert header.source.startswith(f"Apache Kafka {pinned_release('4.x')} (KRaft, one node) at")
    expected = KafkaBroker("4.x", settings={"group_initial_rebalance_delay_ms": 100})
    assert header.coordinator == expected.header_settings()
    assert header.coordinator["group_initial_rebalance_delay_ms"] == 100
    assert header.coordinator["kafka_version"] == "4.x"


def test_the_group_was_recorded_through_the_proxy(trace):
    _, events = trace
    seen = Counter((event.api, event.direction) for event in events)
    for api in ("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"):
        assert seen[(api, REQUEST)] >= 1 and seen[(api, REQUEST)] == seen[(api, RESPONSE)], api
    joined = [
        e
        for e in events
        if e.api == "JoinGroup" and e.direction == RESPONSE and e.body["error_code"] == 0
    ]
    assert {e.body["generation_id"] for e in joined} >= {1, 2}
