"""A group followed across coordinators: the broker leading it answers NOT_COORDINATOR
(`follow.unload`), another takes it over and serves it from the log (`follow.load`); brokers
that do not coordinate it may answer NOT_COORDINATOR; a wrong answer after the move is found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_oracle import heartbeat, join_body, joined

from groupspec.cli.main import main
from groupspec.oracle.trace.coordinators import FOLLOW_LOAD, FOLLOW_UNLOAD
from groupspec.oracle.trace.oracle import Oracle
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.group_apis import (
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    SYNC_GROUP,
)

MEMBER = "c-1-uuid"
NOT_COORDINATOR, LOAD_IN_PROGRESS, UNKNOWN_MEMBER_ID = 16, 14, 25


def stable_group_on(oracle: Oracle, connection: str) -> None:
    """One member joins (JoinGroup v3: no MEMBER_ID_REQUIRED round), syncs and heartbeats."""
    oracle.request(connection, 1, JOIN_GROUP, 3, join_body(), 0, client_id="c")
    assert (
        oracle.response(connection, 1, JOIN_GROUP, 3, joined(MEMBER, MEMBER, [MEMBER]), 5) is None
    )
    sync = {"group_id": "g", "generation_id": 1, "member_id": MEMBER,
            "assignments": [{"member_id": MEMBER, "assignment": "AAE="}]}  # fmt: skip
    oracle.request(connection, 2, SYNC_GROUP, 3, sync, 10, client_id="c")
    synced = {"error_code": 0, "assignment": "AAE="}
    assert oracle.response(connection, 2, SYNC_GROUP, 3, synced, 12) is None


def beat(oracle: Oracle, connection: str, correlation: int, at: int, error: int = 0) -> object:
    oracle.request(connection, correlation, HEARTBEAT, 3, heartbeat(MEMBER), at, client_id="c")
    return oracle.response(connection, correlation, HEARTBEAT, 3, {"error_code": error}, at + 1)


def test_a_group_moving_to_another_broker_is_followed_and_judged_there():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    stable_group_on(oracle, "b1|c")
    assert beat(oracle, "b1|c", 3, 1_000) is None
    # b1 loses the offsets partition; the member finds b2, which loads the group from the log.
    assert beat(oracle, "b1|c", 4, 2_000, NOT_COORDINATOR) is None
    # Whichever broker answers FindCoordinator meanwhile may name the old, the new or none.
    oracle.request("b1|c", 6, FIND_COORDINATOR, 3, {"key": "g", "key_type": 0}, 2_100)
    found = {"error_code": 0, "node_id": 2, "host": "b2", "port": 9092}
    assert oracle.response("b1|c", 6, FIND_COORDINATOR, 3, found, 2_101) is None
    assert oracle.counts.skipped_apis == {"FindCoordinator (its group's coordinator moving)": 1}
    assert beat(oracle, "b2|c", 1, 2_500) is None
    assert beat(oracle, "b2|c", 2, 3_000) is None
    # A late request to the old coordinator gets NOT_COORDINATOR: allowed.
    assert beat(oracle, "b1|c", 5, 3_500, NOT_COORDINATOR) is None
    assert not oracle.divergences
    assert [(step, broker) for step, _, broker in oracle.coordinators.moves] == [
        (FOLLOW_UNLOAD, "b1"),
        (FOLLOW_LOAD, "b2"),
    ]
    # The new coordinator is held to the group the log rebuilt: the member is known there.
    divergence = beat(oracle, "b2|c", 3, 4_000, UNKNOWN_MEMBER_ID)
    assert divergence is not None and divergence.api == "Heartbeat"


def test_one_broker_losing_and_regaining_a_partition_is_followed():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    stable_group_on(oracle, "c")
    assert beat(oracle, "c", 3, 1_000, NOT_COORDINATOR) is None
    assert beat(oracle, "c", 4, 2_000) is None
    assert not oracle.divergences
    assert [step for step, _, _ in oracle.coordinators.moves] == [FOLLOW_UNLOAD, FOLLOW_LOAD]


def test_an_answer_from_a_broker_that_never_had_the_group_is_judged_after_the_move():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    stable_group_on(oracle, "b1|c")
    # b2 answers as coordinator without b1 saying it lost the group: b1 is taken to have
    # unloaded, and b2 must serve the group as the log left it (generation 2 is wrong).
    oracle.request("b2|c", 1, HEARTBEAT, 3, heartbeat(MEMBER, 2), 1_000, client_id="c")
    divergence = oracle.response("b2|c", 1, HEARTBEAT, 3, {"error_code": 0}, 1_001)
    assert divergence is not None
    assert [step for step, _, _ in oracle.coordinators.moves] == [FOLLOW_UNLOAD, FOLLOW_LOAD]


def test_a_heartbeat_answered_load_in_progress_diverges_kafka_answers_none_while_loading():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    stable_group_on(oracle, "b1|c")
    assert beat(oracle, "b1|c", 3, 1_000, NOT_COORDINATOR) is None
    divergence = beat(oracle, "b2|c", 1, 2_000, LOAD_IN_PROGRESS)
    assert divergence is not None
    assert divergence.tolerable_by == "error:Heartbeat:COORDINATOR_LOAD_IN_PROGRESS=NONE"
    assert [step for step, _, _ in oracle.coordinators.moves] == [FOLLOW_UNLOAD, FOLLOW_LOAD]


def trace_lines(events: list[tuple[int, str, str, int, int, dict]]) -> str:
    """A trace of (ts, connection, dir, api key, correlation id, body) events."""
    header = {"format": "groupspec-trace", "version": 1, "coordinator": SETTINGS}
    lines = [json.dumps(header)]
    for ts, conn, direction, key, corr, body in events:
        event = {"ts": T0 + ts, "conn": conn, "dir": direction, "key": key, "ver": 3,
                 "corr": corr, "body": body}  # fmt: skip
        if direction == "request":
            event["client_id"] = "c"
        lines.append(json.dumps(event))
    return "\n".join(lines) + "\n"


T0 = 1_700_000_000_000
SETTINGS = {"group_initial_rebalance_delay_ms": 0}
SYNC = {"group_id": "g", "generation_id": 1, "member_id": MEMBER, "group_instance_id": None,
        "assignments": [{"member_id": MEMBER, "assignment": "AAE="}]}  # fmt: skip


def two_recorders(tmp_path: Path, last_error: int) -> list[Path]:
    """b1 serves the group until it answers NOT_COORDINATOR; b2 serves it from then on, its
    last heartbeat answered with `last_error`."""
    b1 = [
        (0, "c", "request", JOIN_GROUP, 1, join_body()),
        (5, "c", "response", JOIN_GROUP, 1, joined(MEMBER, MEMBER, [MEMBER])),
        (10, "c", "request", SYNC_GROUP, 2, SYNC),
        (12, "c", "response", SYNC_GROUP, 2, {"error_code": 0, "assignment": "AAE="}),
        (1_000, "c", "request", HEARTBEAT, 3, heartbeat(MEMBER)),
        (1_001, "c", "response", HEARTBEAT, 3, {"error_code": NOT_COORDINATOR}),
    ]
    b2 = [
        (1_500, "c", "request", HEARTBEAT, 1, heartbeat(MEMBER)),
        (1_501, "c", "response", HEARTBEAT, 1, {"error_code": 0}),
        (2_500, "c", "request", HEARTBEAT, 2, heartbeat(MEMBER)),
        (2_501, "c", "response", HEARTBEAT, 2, {"error_code": last_error}),
    ]
    paths = [tmp_path / "b1.jsonl", tmp_path / "b2.jsonl"]
    for path, events in zip(paths, (b1, b2), strict=True):
        path.write_text(trace_lines(events))
    return paths


def test_validate_merges_the_recorders_of_two_brokers_and_follows_the_group(tmp_path, capsys):
    merged = tmp_path / "cluster.jsonl"
    paths = [str(p) for p in two_recorders(tmp_path, 0)]
    assert main(["validate", "--merge", str(merged), *paths]) == 0
    out = capsys.readouterr().out
    assert "merged 2 traces (10 events)" in out
    assert "3 offsets-partition events followed" in out  # Unload, StartLoading, FinishLoading
    conns = {json.loads(line).get("conn") for line in merged.read_text().splitlines()[1:]}
    assert conns == {"b1|c", "b2|c"}
    paths = [str(p) for p in two_recorders(tmp_path, UNKNOWN_MEMBER_ID)]
    assert main(["validate", "--merge", str(merged), "--no-shrink", *paths]) == 1


def test_merged_recorders_must_agree_on_the_settings_and_be_named_apart(tmp_path, capsys):
    b1, b2 = two_recorders(tmp_path, 0)
    b2.write_text(
        b2.read_text().replace(
            '"group_initial_rebalance_delay_ms": 0', '"group_initial_rebalance_delay_ms": 3'
        )
    )
    out = str(tmp_path / "m.jsonl")
    assert main(["validate", "--merge", out, str(b1), str(b2)]) == 2
    assert "differ from" in capsys.readouterr().err
    other = tmp_path / "x"
    other.mkdir()
    (other / "b1.jsonl").write_text(b1.read_text())
    assert main(["validate", "--merge", out, str(b1), str(other / "b1.jsonl")]) == 2
    assert "must differ" in capsys.readouterr().err


def test_merge_is_refused_with_the_spark_engine(tmp_path, capsys):
    b1, b2 = two_recorders(tmp_path, 0)
    out = str(tmp_path / "m.jsonl")
    args = ["validate", "--merge", out, "--engine", "spark", "--out", str(tmp_path / "r")]
    assert main([*args, str(b1), str(b2)]) == 2
    assert "need --engine inprocess" in capsys.readouterr().err


def commit(oracle: Oracle, connection: str, correlation: int, at: int, error: int = 0) -> object:
    """An OffsetCommit v9 of the member's generation 1, answered with `error`."""
    partitions = [{"partition_index": 0, "committed_offset": correlation}]
    request = {"group_id": "g", "generation_id_or_member_epoch": 1, "member_id": MEMBER,
               "group_instance_id": None, "topics": [{"name": "t", "partitions": partitions}]}  # fmt: skip
    answer = {"throttle_time_ms": 0,
              "topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": error}]}]}  # fmt: skip
    oracle.request(connection, correlation, 8, 9, request, at, client_id="c")
    return oracle.response(connection, correlation, 8, 9, answer, at + 1)


def test_a_heartbeat_answered_blindly_while_loading_does_not_end_the_load():
    """While a partition loads, Kafka answers a Heartbeat NONE (and a SyncGroup
    REBALANCE_IN_PROGRESS) instead of COORDINATOR_LOAD_IN_PROGRESS: such an answer does not show
    the load finished, so a commit answered COORDINATOR_LOAD_IN_PROGRESS after it is allowed."""
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    stable_group_on(oracle, "c")
    assert beat(oracle, "c", 3, 1_000, NOT_COORDINATOR) is None
    assert commit(oracle, "c", 4, 1_500, LOAD_IN_PROGRESS) is None
    assert beat(oracle, "c", 5, 1_600) is None
    assert commit(oracle, "c", 6, 1_700, LOAD_IN_PROGRESS) is None
    assert beat(oracle, "c", 7, 2_000) is None
    assert commit(oracle, "c", 8, 2_100) is None
    assert not oracle.divergences
    assert [step for step, _, _ in oracle.coordinators.moves] == [FOLLOW_UNLOAD, FOLLOW_LOAD]


def _create_then_restart(version: str, describe_state: str, unload_at: int) -> Oracle:
    """A JoinGroup v3 creates group g and is parked in a 6 s initial-rebalance delay; at
    `unload_at` the broker restarts and answers it NOT_COORDINATOR (its first answer for g);
    after the restart it describes g as `describe_state`. Kafka 4.4.0 answers Empty (the Java
    coordinator wrote the new group's record), Kafka 3.9.2 Dead (the Scala one never did)."""
    config = CoordinatorConfig(group_initial_rebalance_delay_ms=6_000, kafka_version=version)
    oracle = Oracle(config)
    oracle.request("a", 1, JOIN_GROUP, 3, join_body(), 0, client_id="a")
    moved = {"error_code": NOT_COORDINATOR, "generation_id": -1, "protocol_name": "",
             "leader": "", "member_id": "a-uuid", "members": []}  # fmt: skip
    assert oracle.response("a", 1, JOIN_GROUP, 3, moved, unload_at) is None
    oracle.request("b", 1, DESCRIBE_GROUPS, 1, {"groups": ["g"]}, 5_000, client_id="b")
    described = {"group_id": "g", "error_code": 0, "group_state": describe_state,
                 "protocol_type": "", "protocol_data": "", "members": []}  # fmt: skip
    oracle.response("b", 1, DESCRIBE_GROUPS, 1, {"groups": [described]}, 5_001)
    return oracle


@pytest.mark.parametrize(("version", "reloaded"), [("4.x", "Empty"), ("3.x", "Dead")])
def test_a_parked_join_answered_not_coordinator_is_an_unload_and_the_group_reloads_from_the_log(
    version, reloaded
):
    # The one broker of a trace coordinates its groups from the start: a NOT_COORDINATOR to a
    # join it parked 1.2 s earlier (past the reorder window) is the partition unloading, and
    # DescribeGroups answered by it as coordinator is the partition loaded again. Only the Java
    # coordinator persisted the group when the join created it.
    for state in ("Empty", "Dead"):
        oracle = _create_then_restart(version, state, unload_at=1_200)
        assert [step for step, _, _ in oracle.coordinators.moves] == [FOLLOW_UNLOAD, FOLLOW_LOAD]
        assert (not oracle.divergences) == (state == reloaded), (version, state)


def test_a_join_seen_within_the_reorder_window_of_the_unload_may_have_come_after_it():
    # Recorded 0.5 s before the NOT_COORDINATOR, the join may have reached the broker after the
    # unload (answered by its coordinator check, no group created) as well as before it.
    for state in ("Empty", "Dead"):
        assert not _create_then_restart("4.x", state, unload_at=500).divergences
