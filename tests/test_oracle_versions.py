"""Kafka version profiles in the oracle: the same trace passes when judged against the release
whose coordinator produced it and diverges against the other; `--kafka-version` chooses, the
report (text and JSON) names the profile, and a bad value is a one-line usage error."""

from __future__ import annotations

import json

import pytest
from test_oracle import (
    fetch_member_id,
    heartbeat,
    join_body,
    join_with_id,
    joined,
    only_a_joins_while_b_fetches_an_id,
    two_members_join,
)

from groupspec.cli.main import main
from groupspec.oracle.trace.oracle import Oracle
from groupspec.spec.config import CoordinatorConfig
from groupspec.vocabulary.errors import ErrorCode
from groupspec.wire.group_apis import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    SYNC_GROUP,
)

SCALA, JAVA = "3.x", "4.x"
HEADER = '{"format":"groupspec-trace","version":1}\n'


def _commit_to_an_unknown_group(answer: ErrorCode) -> str:
    """An OffsetCommit v9 with generation 3 to a group the broker does not know, and `answer`."""
    request = {
        "group_id": "gone",
        "generation_id_or_member_epoch": 3,
        "member_id": "m",
        "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7}]}],
    }
    response = {
        "throttle_time_ms": 0,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": answer}]}],
    }
    lines = [
        {"ts": 1, "conn": "a", "dir": "request", "key": 8, "ver": 9, "corr": 1, "body": request},
        {"ts": 2, "conn": "a", "dir": "response", "key": 8, "ver": 9, "corr": 1, "body": response},
    ]
    return HEADER + "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize(
    ("answer", "passes_under"),
    [(ErrorCode.ILLEGAL_GENERATION, SCALA), (ErrorCode.GROUP_ID_NOT_FOUND, JAVA)],
)
def test_validate_judges_a_commit_to_an_unknown_group_by_the_chosen_release(
    tmp_path, capsys, answer, passes_under
):
    trace = tmp_path / "commit.jsonl"
    trace.write_text(_commit_to_an_unknown_group(answer))
    for version in (SCALA, JAVA):
        report = tmp_path / f"{version}.json"
        argv = ["validate", str(trace), "--kafka-version", version, "--json", str(report)]
        assert main([*argv, "--no-shrink"]) == (0 if version == passes_under else 1)
        out = capsys.readouterr().out
        assert f"judged as Kafka {version}: the " in out
        verdict = json.loads(report.read_text())["verdicts"][0]
        assert verdict["kafka_version"] == version
    # Without the flag the trace is judged as 4.x, and the report says so.
    assert main(["validate", str(trace), "--no-shrink"]) == (0 if passes_under == JAVA else 1)
    assert "judged as Kafka 4.x: the Java group coordinator" in capsys.readouterr().out


def _sync_in_stable_then_heartbeat_after_the_first_deadline(oracle: Oracle, answer: int) -> None:
    """a and b form a group (sessions 10 s, armed at 5 ms); at 6 s b heartbeats and a sends
    SyncGroup again; at 12.5 s, past a's first deadline and the timer slack, a heartbeats."""
    two_members_join(oracle, "c-a-uuid")
    assignments = [{"member_id": m, "assignment": ""} for m in ("c-a-uuid", "c-b-uuid")]
    sync = {"group_id": "g", "generation_id": 1, "group_instance_id": None}
    leader_sync = {**sync, "member_id": "c-a-uuid", "assignments": assignments}
    follower_sync = {**sync, "member_id": "c-b-uuid", "assignments": []}
    assigned = {"error_code": 0, "assignment": ""}
    for conn, corr, body, ts in (
        ("a", 3, leader_sync, 10),
        ("b", 3, follower_sync, 12),
        ("a", 4, {**leader_sync, "assignments": []}, 6_000),
    ):
        oracle.request(conn, corr, SYNC_GROUP, 3, body, ts)
        assert oracle.response(conn, corr, SYNC_GROUP, 3, assigned, ts + 1) is None
    oracle.request("b", 4, HEARTBEAT, 4, heartbeat("c-b-uuid"), 6_000)
    assert oracle.response("b", 4, HEARTBEAT, 4, {"error_code": 0}, 6_001) is None
    oracle.request("a", 5, HEARTBEAT, 4, heartbeat("c-a-uuid"), 12_500)
    oracle.response("a", 5, HEARTBEAT, 4, {"error_code": answer}, 12_501)


@pytest.mark.parametrize(
    ("answer", "passes_under"),
    [(ErrorCode.NONE, SCALA), (ErrorCode.UNKNOWN_MEMBER_ID, JAVA)],
)
def test_a_sync_in_stable_keeps_the_session_alive_only_under_3x(answer, passes_under):
    for version in (SCALA, JAVA):
        oracle = Oracle(
            CoordinatorConfig(group_initial_rebalance_delay_ms=0, kafka_version=version)
        )
        _sync_in_stable_then_heartbeat_after_the_first_deadline(oracle, answer)
        diverged = [d.api for d in oracle.divergences]
        assert diverged == ([] if version == passes_under else ["Heartbeat"]), version


def test_a_bad_kafka_version_is_a_one_line_usage_error(tmp_path, capsys):
    trace = tmp_path / "commit.jsonl"
    trace.write_text(_commit_to_an_unknown_group(ErrorCode.GROUP_ID_NOT_FOUND))
    for argv in (
        ["validate", str(trace), "--kafka-version", "2.0"],
        ["probe", "--trace-dir", str(tmp_path), "--validate", "--kafka-version", "5"],
    ):
        assert main(argv) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert "--kafka-version" in line and "'4.x', '3.x'" in line
    assert main(["validate", str(trace), "--set", "kafka_version=3.x"]) == 2
    assert "--kafka-version" in capsys.readouterr().err


def test_a_profile_file_may_choose_the_release_and_a_bad_one_names_its_line(tmp_path, capsys):
    trace = tmp_path / "commit.jsonl"
    trace.write_text(_commit_to_an_unknown_group(ErrorCode.ILLEGAL_GENERATION))
    profile = tmp_path / "broker.toml"
    profile.write_text('name = "old-broker"\n\n[coordinator]\nkafka_version = "3.x"\n')
    assert main(["validate", str(trace), "--no-shrink", "--profile", str(profile)]) == 0
    assert "judged as Kafka 3.x" in capsys.readouterr().out
    # --kafka-version wins over the profile.
    argv = ["validate", str(trace), "--no-shrink", "--profile", str(profile)]
    assert main([*argv, "--kafka-version", "4.x"]) == 1
    capsys.readouterr()
    profile.write_text('name = "old-broker"\n\n[coordinator]\nkafka_version = "2.x"\n')
    assert main(["validate", str(trace), "--profile", str(profile)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"{profile}:4: kafka_version must be one of 4.x, 3.x" in line


def test_a_trace_header_may_name_the_release(tmp_path, capsys):
    trace = tmp_path / "commit.jsonl"
    body = _commit_to_an_unknown_group(ErrorCode.ILLEGAL_GENERATION).split("\n", 1)[1]
    trace.write_text(
        '{"format":"groupspec-trace","version":1,"coordinator":{"kafka_version":"3.x"}}\n' + body
    )
    assert main(["validate", str(trace), "--no-shrink"]) == 0
    assert "judged as Kafka 3.x: the Scala GroupCoordinator" in capsys.readouterr().out
    trace.write_text(
        '{"format":"groupspec-trace","version":1,"coordinator":{"kafka_version":"9"}}\n' + body
    )
    assert main(["validate", str(trace)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert str(trace) in line and "kafka_version must be one of 4.x, 3.x" in line


@pytest.mark.parametrize(
    ("state", "passes_under"), [("CompletingRebalance", JAVA), ("PreparingRebalance", SCALA)]
)
def test_whether_an_expiry_ends_the_initial_delay_depends_on_the_release(state, passes_under):
    """a joins; b only fetches a member id, which expires at 10 s, inside the 20 s initial
    delay. At 15 s an admin describes the group: the Java coordinator has completed the join
    phase at the expiry, the Scala one is still waiting for the delay to run out."""
    for version in (SCALA, JAVA):
        config = CoordinatorConfig(group_initial_rebalance_delay_ms=20_000, kafka_version=version)
        oracle = Oracle(config)
        only_a_joins_while_b_fetches_an_id(oracle)
        describe = {"groups": ["g"], "include_authorized_operations": False}
        oracle.request("admin", 1, DESCRIBE_GROUPS, 5, describe, 15_000, client_id="admin")
        member = {
            "member_id": "c-a-uuid",
            "group_instance_id": None,
            "client_id": "c",
            "client_host": "/a",
            "member_metadata": "",
            "member_assignment": "",
        }
        group = {"error_code": 0, "group_id": "g", "group_state": state, "members": [member]}
        described = {"groups": [{**group, "protocol_type": "consumer", "protocol_data": ""}]}
        oracle.response("admin", 1, DESCRIBE_GROUPS, 5, described, 15_001)
        answer = joined("c-a-uuid", "c-a-uuid", ["c-a-uuid"])
        oracle.response("a", 2, JOIN_GROUP, 9, answer, 20_500)
        diverged = [d.api for d in oracle.divergences]
        assert diverged == ([] if version == passes_under else ["DescribeGroups"]), version


@pytest.mark.parametrize("version", [SCALA, JAVA])
def test_whether_a_second_member_extends_the_initial_delay_of_an_emptied_group_depends_on_the_release(
    version,
):
    """a forms the group and leaves: it is Empty at generation 2. c joins at 5 s and b at 6 s,
    during the 3 s initial delay. The Scala coordinator completes the join when the delay runs
    out (8 s); the Java one extends it for b, so answers at 8 s are early under 4.x."""
    oracle = Oracle(CoordinatorConfig(kafka_version=version))
    fetch_member_id(oracle, "a", "c-a-uuid", 0)
    join_with_id(oracle, "a", "c-a-uuid", 0)
    formed = joined("c-a-uuid", "c-a-uuid", ["c-a-uuid"])
    assert oracle.response("a", 2, JOIN_GROUP, 9, formed, 3_000) is None
    leave = {"group_id": "g", "members": [{"member_id": "c-a-uuid", "group_instance_id": None}]}
    oracle.request("a", 3, LEAVE_GROUP, 4, leave, 4_000, client_id="c")
    left = {"error_code": 0, "members": [{**leave["members"][0], "error_code": 0}]}
    assert oracle.response("a", 3, LEAVE_GROUP, 4, left, 4_001) is None
    fetch_member_id(oracle, "c", "c-c-uuid", 5_000)
    join_with_id(oracle, "c", "c-c-uuid", 5_000)
    fetch_member_id(oracle, "b", "c-b-uuid", 6_000)
    join_with_id(oracle, "b", "c-b-uuid", 6_000)
    leader = joined("c-c-uuid", "c-c-uuid", ["c-c-uuid", "c-b-uuid"], generation=3)
    oracle.response("c", 2, JOIN_GROUP, 9, leader, 8_001)
    follower = joined("c-b-uuid", "c-c-uuid", [], generation=3)
    oracle.response("b", 2, JOIN_GROUP, 9, follower, 8_001)
    diverged = {(d.api, d.kind) for d in oracle.divergences}
    assert diverged == (set() if version == SCALA else {("JoinGroup", "early")}), version


@pytest.mark.parametrize(("state", "passes_under"), [("Empty", JAVA), ("Dead", SCALA)])
def test_whether_a_group_a_join_created_survives_a_coordinator_move_depends_on_the_release(
    state, passes_under
):
    """a's first JoinGroup creates the group and gets a member id; the coordinator then loses
    the partition (NOT_COORDINATOR) and loads it again. The Java coordinator wrote the new
    group to the log, so the reloaded group is Empty; the Scala one kept it in memory only, so
    it is gone (DescribeGroups says Dead). The pending id is forgotten by both."""
    for version in (SCALA, JAVA):
        oracle = Oracle(CoordinatorConfig(kafka_version=version))
        fetch_member_id(oracle, "a", "c-a-uuid", 0)
        for corr, ts, error in ((2, 100, ErrorCode.NOT_COORDINATOR), (3, 1_000, 25)):
            oracle.request("a", corr, JOIN_GROUP, 9, join_body("c-a-uuid"), ts, client_id="c")
            answer = {"error_code": error, "member_id": "c-a-uuid"}
            assert oracle.response("a", corr, JOIN_GROUP, 9, answer, ts + 1) is None
        describe = {"groups": ["g"], "include_authorized_operations": False}
        oracle.request("admin", 1, DESCRIBE_GROUPS, 5, describe, 1_100, client_id="admin")
        group = {"error_code": 0, "group_id": "g", "group_state": state, "protocol_type": "",
                 "protocol_data": "", "members": []}  # fmt: skip
        oracle.response("admin", 1, DESCRIBE_GROUPS, 5, {"groups": [group]}, 1_101)
        diverged = [d.api for d in oracle.divergences]
        assert diverged == ([] if version == passes_under else ["DescribeGroups"]), version
        assert len(oracle.coordinators.moves) == 2


def test_coverage_counts_the_rules_of_the_profile_each_trace_was_judged_under(tmp_path, capsys):
    # A 3.x trace fires the Scala coordinator's own rules and can never fire the four rules
    # only the Java coordinator has: its totals are over the 3.x set (92 - 4 + 5), and a
    # campaign of both profiles counts both sets.
    scala, java = tmp_path / "scala.jsonl", tmp_path / "java.jsonl"
    scala.write_text(_commit_to_an_unknown_group(ErrorCode.ILLEGAL_GENERATION))
    java.write_text(_commit_to_an_unknown_group(ErrorCode.GROUP_ID_NOT_FOUND))
    report = tmp_path / "report.json"
    argv = ["validate", str(scala), "--kafka-version", SCALA, "--coverage", "--no-shrink"]
    assert main([*argv, "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "  rules reached: 1/93\n" in out
    assert "rules reached: 1/93 by the 1 traces together" in out
    coverage = json.loads(report.read_text())["coverage"]
    assert coverage["traces"][str(scala)] == ["commit.unknown_group_with_generation.kafka_3x"]
    assert coverage["totals"]["coordinator"] == {"known": 93, "reached": 1}
    never = set(coverage["never_reached"])
    assert "join.group_created.kafka_3x" in never
    assert not never & {"join.group_created", "commit.unknown_group_with_generation"}
    assert main(["validate", str(java), "--coverage", "--no-shrink"]) == 0
    assert "  rules reached: 1/92\n" in capsys.readouterr().out
    # A 3.x trace (its header says so) and a 4.x one together: both rule sets, 92 + 5.
    header = '{"format":"groupspec-trace","version":1,"coordinator":{"kafka_version":"3.x"}}'
    scala.write_text(scala.read_text().replace(HEADER.strip(), header, 1))
    argv = ["validate", str(scala), str(java), "--coverage", "--no-shrink", "--json", str(report)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rules reached: 2/97 by the 2 traces together" in out
    assert json.loads(report.read_text())["coverage"]["totals"]["coordinator"]["known"] == 97


@pytest.mark.parametrize("api_version", [5, 6])
def test_describe_groups_of_a_group_nobody_holds_answers_by_api_version(api_version):
    """Before v6 a group the coordinator does not hold is described Dead without error; from v6
    (Kafka 4.0+) with GROUP_ID_NOT_FOUND and a message, as Kafka 4.4.0 answered the
    describe-groups probe. The other version's answer diverges."""
    for error in (ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND):
        oracle = Oracle(CoordinatorConfig())
        describe = {"groups": ["gone"], "include_authorized_operations": False}
        oracle.request("admin", 1, DESCRIBE_GROUPS, api_version, describe, 1_000, client_id="a")
        group = {
            "error_code": int(error),
            "error_message": "Group gone not found." if error else None,
            "group_id": "gone",
            "group_state": "Dead",
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
        }
        answer = {"throttle_time_ms": 0, "groups": [group]}
        divergence = oracle.response("admin", 1, DESCRIBE_GROUPS, api_version, answer, 1_001)
        expected = ErrorCode.GROUP_ID_NOT_FOUND if api_version >= 6 else ErrorCode.NONE
        assert (divergence is None) == (error is expected), (api_version, error)
