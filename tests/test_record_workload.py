"""`groupspec workload`: one real kafka-python group run against `groupspec serve` through the
recorder, and what its trace holds; bad targets."""

from __future__ import annotations

import base64
from collections import defaultdict

import pytest
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from groupspec.cli.main import main
from groupspec.oracle.trace.validate import PASS, validate_trace
from groupspec.record.workload.runner import group_name
from groupspec.record.workload.targets import free_port
from groupspec.wire.trace_format import CLOSE, REQUEST, RESPONSE, TraceReading, read_trace

GROUP = TOPIC = "gs-dynamic-kafka-python"
PARTITIONS = 6


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    trace_dir = tmp_path_factory.mktemp("traces")
    code = main(
        [
            "workload",
            "--client",
            "kafka-python",
            "--target",
            "serve",
            "--scenario",
            "dynamic",
            "--trace-dir",
            str(trace_dir),
        ]
    )
    assert code == 0
    reading = TraceReading()
    events = list(read_trace(trace_dir / "kafka-python-dynamic.jsonl", reading))
    return reading, events, trace_dir / "kafka-python-dynamic.jsonl"


def test_the_trace_validates_against_the_specification(trace):
    verdict = validate_trace(trace[2])
    assert verdict.status == PASS, verdict.to_json()
    assert verdict.counts.responses_checked > 100


def by_api(events, api, direction):
    return [e for e in events if e.api == api and e.direction == direction]


def test_the_trace_has_every_group_api_the_scenario_uses_each_answered(trace):
    reading, events, _ = trace
    assert reading.header.source.startswith("groupspec serve at 127.0.0.1:")
    assert reading.header.coordinator == {
        "group_initial_rebalance_delay_ms": 500,
        "group_min_session_timeout_ms": 6000,
    }
    requests = {(e.connection, e.correlation_id): e for e in events if e.direction == REQUEST}
    answered = {(e.connection, e.correlation_id) for e in events if e.direction == RESPONSE}
    assert answered <= set(requests)
    for api in ("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit",
                "OffsetFetch", "LeaveGroup", "DescribeGroups", "ListGroups"):  # fmt: skip
        assert by_api(events, api, REQUEST) and by_api(events, api, RESPONSE), api
    # Every connection that carried group traffic ends with its close event.
    last = {}
    for event in events:
        last[event.connection] = event.direction
    assert set(last.values()) == {CLOSE}


def test_join_and_sync_bodies_carry_the_consumer_protocol(trace):
    _, events, _ = trace
    for join in by_api(events, "JoinGroup", REQUEST):
        assert join.body["group_id"] == GROUP
        assert join.body["session_timeout_ms"] == 6000
        protocol = join.body["protocols"][0]
        assert protocol["name"] == "range"
        subscription = ConsumerProtocolSubscription.decode(base64.b64decode(protocol["metadata"]))
        assert subscription.topics == [TOPIC]
    # Each leader's SyncGroup hands out every partition exactly once.
    for sync in by_api(events, "SyncGroup", REQUEST):
        if not sync.body["assignments"]:
            continue
        owned = []
        for given in sync.body["assignments"]:
            assignment = ConsumerProtocolAssignment.decode(base64.b64decode(given["assignment"]))
            owned += [p for tp in assignment.assigned_partitions for p in tp.partitions]
        assert sorted(owned) == list(range(PARTITIONS))
    # Members learn their partitions from SyncGroup responses.
    answered = [e for e in by_api(events, "SyncGroup", RESPONSE) if e.body["error_code"] == 0]
    assert answered
    for sync in answered:
        ConsumerProtocolAssignment.decode(base64.b64decode(sync.body["assignment"]))


def test_the_membership_changes_show_in_the_trace(trace):
    _, events, _ = trace
    joined = defaultdict(set)
    for response in by_api(events, "JoinGroup", RESPONSE):
        if response.body["error_code"] == 0:
            joined[response.body["generation_id"]].add(response.body["member_id"])
    sizes = [len(joined[generation]) for generation in sorted(joined)]
    # Three join, a fourth joins, one leaves, one is killed and expires: 3, 4, 3, 2 members
    # (kafka-python may add a rebalance of the same size, e.g. after a metadata change). When
    # the scenario ends, the last two close one after the other; the second may rejoin alone
    # in between (a generation of 1) if its poll loop runs before its own close.
    distinct = [size for i, size in enumerate(sizes) if i == 0 or size != sizes[i - 1]]
    assert distinct in ([3, 4, 3, 2], [3, 4, 3, 2, 1]), sizes
    leaves = by_api(events, "LeaveGroup", REQUEST)
    assert leaves and all(e.body["group_id"] == GROUP for e in leaves)
    commits = by_api(events, "OffsetCommit", REQUEST)
    offsets = {
        p["partition_index"]: p["committed_offset"]
        for commit in commits
        for topic in commit.body["topics"]
        for p in topic["partitions"]
    }
    assert set(offsets) == set(range(PARTITIONS))
    (described,) = by_api(events, "DescribeGroups", RESPONSE)
    assert described.body["groups"][0]["group_state"] == "Stable"
    assert len(described.body["groups"][0]["members"]) == 2


def test_a_target_with_nothing_listening_exits_2(tmp_path, capsys):
    port = free_port()
    code = main(["workload", "--target", f"127.0.0.1:{port}", "--trace-dir", str(tmp_path)])
    assert code == 2
    assert f"nothing listening at 127.0.0.1:{port}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_target_exits_2(tmp_path, capsys):
    assert main(["workload", "--target", "kafak", "--trace-dir", str(tmp_path)]) == 2
    assert "serve, mock, kafka, kafka-3.9 or HOST:PORT" in capsys.readouterr().err


def test_the_workload_package_imports_no_spec_model_or_checker():
    import ast
    from pathlib import Path

    import groupspec.record.workload as workload

    for path in sorted(Path(workload.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                assert not {"spec", "models", "checker"} & set(parts), (path.name, node.module)


def test_on_a_running_broker_every_workload_names_its_group_afresh():
    names = {group_name("dynamic", "kafka-python", "broker") for _ in range(50)}
    assert len(names) == 50 and all(n.startswith("gs-dynamic-kafka-python-") for n in names)
    assert group_name("dynamic", "kafka-python", "serve") == GROUP  # a fresh serve: plain name
