"""The oracle: traces of a correct coordinator pass, seeded faults are caught from traces alone,
and the nondeterminism a real coordinator has (racing requests, late timers, its own member ids,
its own leader choice) is accepted."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_impl_conformance import MUTATIONS

from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.oracle import Oracle
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, PASS, validate_trace
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.wire.group_apis import HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, b64

MINUTES = 60_000
SUBSCRIPTION = b64(encode_subscription_v0(("events",)))


def impl_trace(path: Path, seed: int, minutes: int = 10, consumers: int = 4) -> Path:
    with path.open("w") as out:
        write_impl_trace(out, seed=seed, duration_ms=minutes * MINUTES, consumers=consumers)
    return path


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), consumers=st.integers(1, 5))
def test_traces_of_the_impl_pass(tmp_path_factory, seed, consumers):
    path = impl_trace(
        tmp_path_factory.mktemp("t") / "t.jsonl", seed, minutes=6, consumers=consumers
    )
    verdict = validate_trace(path, shrink=False)
    assert verdict.status == PASS, verdict.divergence
    # Every request was answered and checked, but those still parked when the trace ends.
    assert 0 <= verdict.counts.requests - verdict.counts.responses_checked <= 6


# -- seeded faults: the oracle sees them in the traffic alone ----------------------------------


# The five faults the differential conformance test seeds (tests/test_impl_conformance.py).
FAULTS = MUTATIONS
# Catching a fault needs one divergence (tests/test_oracle_resync.py judges past them).
FIRST_DIVERGENCE = OracleSettings(max_divergences=1)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_seeded_fault_is_caught_from_the_trace(fault, tmp_path, monkeypatch):
    owner, attribute, replacement = FAULTS[fault]
    monkeypatch.setattr(owner, attribute, replacement)
    verdicts = []
    for seed in range(3):
        trace = impl_trace(tmp_path / f"{seed}.jsonl", seed)
        verdict = validate_trace(trace, settings=FIRST_DIVERGENCE, shrink=False)
        verdicts.append(verdict.status)
        if verdict.status == DIVERGED:
            break
    assert DIVERGED in verdicts, f"{fault}: no divergence in seeds 0..2"
    assert verdict.divergence is not None and verdict.divergence.allowed


def test_a_divergence_names_the_response_and_what_was_allowed(tmp_path, monkeypatch):
    owner, attribute, replacement = FAULTS["commit skips the generation check"]
    monkeypatch.setattr(owner, attribute, replacement)
    verdict = validate_trace(impl_trace(tmp_path / "t.jsonl", 0))
    divergence = verdict.divergence
    assert divergence is not None and divergence.api == "OffsetCommit"
    assert [p["error_code"] for t in divergence.observed["topics"] for p in t["partitions"]] == [0]
    assert divergence.allowed == (
        {"topics": [{"name": "events", "partitions": [{"partition_index": 0, "error_code": 22}]}]},
    )
    assert "Stable" in divergence.state
    # The excerpt is itself a trace that ends in the divergent response, and shorter than the
    # trace before it.
    assert json.loads(verdict.excerpt[-1])["line"] == divergence.line
    assert len(verdict.excerpt) < divergence.line - 1


# -- the nondeterminism a real coordinator has --------------------------------------------------


def join_body(member_id: str = "", instance: str | None = None) -> dict:
    return {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 10_000,
        "member_id": member_id,
        "group_instance_id": instance,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUBSCRIPTION}],
        "reason": None,
    }


def joined(member_id: str, leader: str, members: list[str], generation: int = 1) -> dict:
    return {
        "error_code": 0,
        "generation_id": generation,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "leader": leader,
        "skip_assignment": False,
        "member_id": member_id,
        "members": [
            {"member_id": m, "group_instance_id": None, "metadata": SUBSCRIPTION} for m in members
        ],
    }


def fetch_member_id(oracle: Oracle, connection: str, member: str, at: int) -> None:
    """A dynamic member's first JoinGroup (correlation id 1) is answered MEMBER_ID_REQUIRED
    with `member` at once."""
    oracle.request(connection, 1, JOIN_GROUP, 9, join_body(), at, client_id="c")
    required = {"error_code": 79, "member_id": member}
    assert oracle.response(connection, 1, JOIN_GROUP, 9, required, at) is None


def join_with_id(oracle: Oracle, connection: str, member: str, at: int) -> None:
    """The member joins again with its id (correlation id 2, not yet answered)."""
    oracle.request(connection, 2, JOIN_GROUP, 9, join_body(member), at, client_id="c")


def only_a_joins_while_b_fetches_an_id(oracle: Oracle) -> None:
    """a gets a member id and joins; b only fetches a member id (a pending member, whose
    session expires at 10,002 ms)."""
    fetch_member_id(oracle, "a", "c-a-uuid", 0)
    join_with_id(oracle, "a", "c-a-uuid", 1)
    fetch_member_id(oracle, "b", "c-b-uuid", 2)


def two_members_join(oracle: Oracle, leader: str) -> None:
    """Two dynamic members get ids (spelled like a UUID-issuing broker) and join; `leader` leads."""
    for conn, member in (("a", "c-a-uuid"), ("b", "c-b-uuid")):
        fetch_member_id(oracle, conn, member, 0)
        join_with_id(oracle, conn, member, 1)
    others = {"c-a-uuid": ["c-a-uuid", "c-b-uuid"]}
    for conn, member in (("a", "c-a-uuid"), ("b", "c-b-uuid")):
        listed = others.get(member, []) if member == leader else []
        if member == leader:
            listed = ["c-b-uuid", "c-a-uuid"]
        divergence = oracle.response(conn, 2, JOIN_GROUP, 9, joined(member, leader, listed), 5)
        assert divergence is None, divergence


@pytest.mark.parametrize("leader", ["c-a-uuid", "c-b-uuid"])
def test_either_leader_and_any_member_id_spelling_is_accepted(leader):
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    two_members_join(oracle, leader)
    assert oracle.divergence is None


def heartbeat(member: str, generation: int = 1) -> dict:
    return {
        "group_id": "g",
        "generation_id": generation,
        "member_id": member,
        "group_instance_id": None,
    }


def test_requests_racing_on_two_connections_may_take_effect_in_either_order():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    two_members_join(oracle, "c-a-uuid")
    leave = {"group_id": "g", "members": [{"member_id": "c-b-uuid", "group_instance_id": None}]}
    # b's LeaveGroup (a rebalance) is seen before a's heartbeat, but the heartbeat took effect
    # first: it is answered NONE, not REBALANCE_IN_PROGRESS.
    oracle.request("b", 3, LEAVE_GROUP, 4, leave, 100)
    oracle.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), 101)
    assert oracle.response("a", 3, HEARTBEAT, 4, {"error_code": 0}, 102) is None
    left = {
        "error_code": 0,
        "members": [{"member_id": "c-b-uuid", "group_instance_id": None, "error_code": 0}],
    }
    assert oracle.response("b", 3, LEAVE_GROUP, 4, left, 103) is None
    # The next heartbeat comes after the leave: the rebalance shows.
    oracle.request("a", 4, HEARTBEAT, 4, heartbeat("c-a-uuid"), 200)
    assert oracle.response("a", 4, HEARTBEAT, 4, {"error_code": 27}, 201) is None
    divergence = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    two_members_join(divergence, "c-a-uuid")
    divergence.request("b", 3, LEAVE_GROUP, 4, leave, 100)
    assert divergence.response("b", 3, LEAVE_GROUP, 4, left, 101) is None
    divergence.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), 102)
    # Seen after the leave was answered, the heartbeat cannot have gone first.
    assert divergence.response("a", 3, HEARTBEAT, 4, {"error_code": 0}, 103) is not None


@pytest.mark.parametrize("leader", ["c-a-uuid", "c-b-uuid"])
def test_a_request_seen_a_reorder_window_before_another_took_effect_first(leader):
    # a's JoinGroup is seen at 0 and b's at 3,000, a reorder window (1 s) apart and more: a's
    # took effect by 1,000, before b's could, so a is the group's first member and leads it.
    # (Taken after b's, a's join would make b the leader, with the 5 s initial delay counted
    # from 3,000: the answers at 8,500 fit that order too.)
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=5_000))
    body = {**join_body(), "rebalance_timeout_ms": 5_000}  # no time left to extend the delay
    oracle.request("a", 1, JOIN_GROUP, 3, body, 0, client_id="c")
    oracle.request("b", 1, JOIN_GROUP, 3, body, 3_000, client_id="c")
    everyone = ["c-a-uuid", "c-b-uuid"]
    for conn, member in (("a", "c-a-uuid"), ("b", "c-b-uuid")):
        answer = joined(member, leader, everyone if member == leader else [])
        oracle.response(conn, 1, JOIN_GROUP, 3, answer, 8_500)
    assert (not oracle.divergences) == (leader == "c-a-uuid")


@pytest.mark.parametrize(("third_join_at", "passes"), [(2_400, True), (2_800, False)])
def test_a_timer_fired_late_arms_the_next_from_when_it_fired(third_join_at, passes):
    # A 500 ms initial delay: a joins at 0, b at 1,200 (the delay, due at 500, may fire up to
    # the 1 s slack later: after b, which extends it). Kafka re-arms the delay from when it
    # fired, 1,200 at the earliest: due at 1,700, it fires by 2,700, after a third join at
    # 2,400 but not one at 2,800 (then the three join in one generation only if it fired
    # late twice over the slack). Counted from the first deadline instead, the extension
    # would be due at 1,000 and fire by 2,000, before either. (Kafka 4.4.0 under load.)
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=500))
    members = [("a", "c-a-uuid", 0), ("b", "c-b-uuid", 1_200), ("c", "c-c-uuid", third_join_at)]
    for conn, _, at in members:
        oracle.request(conn, 1, JOIN_GROUP, 3, join_body(), at, client_id="c")
    everyone = [member for _, member, _ in members]
    for conn, member, _ in members:
        answer = joined(member, "c-a-uuid", everyone if member == "c-a-uuid" else [])
        oracle.response(conn, 1, JOIN_GROUP, 3, answer, 3_400)
    assert (not oracle.divergences) == passes


def test_a_session_must_expire_once_its_deadline_and_the_slack_have_passed():
    settings = OracleSettings(timer_slack_ms=500)
    late = 1 + 10_000 + 501
    expired = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0), settings)
    two_members_join(expired, "c-a-uuid")
    expired.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), late)
    assert expired.response("a", 3, HEARTBEAT, 4, {"error_code": 25}, late) is None
    kept = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0), settings)
    two_members_join(kept, "c-a-uuid")
    kept.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), late)
    divergence = kept.response("a", 3, HEARTBEAT, 4, {"error_code": 0}, late)
    assert divergence is not None and divergence.allowed == ({"error_code": 25},)
    # Within the slack both are allowed: the broker's timer may not have fired yet.
    for answer in (0, 25):
        within = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0), settings)
        two_members_join(within, "c-a-uuid")
        within.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), 1 + 10_000 + 200)
        assert within.response("a", 3, HEARTBEAT, 4, {"error_code": answer}, 10_300) is None


def test_an_id_never_handed_out_is_unknown_even_if_it_looks_like_the_specs():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    two_members_join(oracle, "c-a-uuid")
    # "c-0" is how the specification itself numbers its first id: it must not alias a member.
    oracle.request("x", 1, HEARTBEAT, 4, heartbeat("c-0"), 10)
    divergence = oracle.response("x", 1, HEARTBEAT, 4, {"error_code": 0}, 10)
    assert divergence is not None and divergence.allowed == ({"error_code": 25},)


# -- bad input ---------------------------------------------------------------------------------

HEADER = '{"format":"groupspec-trace","version":1}\n'
REQUEST = (
    '{"ts":%d,"conn":"a","dir":"request","key":12,"ver":4,"corr":%d,'
    '"body":{"group_id":"g","generation_id":1,"member_id":"m","group_instance_id":null}}\n'
)
RESPONSE = (
    '{"ts":%d,"conn":"a","dir":"response","key":12,"ver":4,"corr":%d,"body":{"error_code":25}}\n'
)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (HEADER + REQUEST % (5, 1) + "{not json\n", 3, "not JSON"),
        (
            HEADER + '{"ts":1,"conn":"a","dir":"request","key":99,"ver":0,"corr":1,"body":{}}\n',
            2,
            "unknown API key 99",
        ),
        (HEADER + REQUEST % (5, 1) + RESPONSE % (4, 1), 3, "out of order"),
        (HEADER + RESPONSE % (4, 1), 2, "no request before it"),
        ('{"format":"other"}\n', 1, "header"),
        (
            HEADER
            + REQUEST % (5, 1)
            + RESPONSE % (6, 1)
            + REQUEST.replace('"member_id":"m",', "") % (7, 2),
            4,
            "member_id",
        ),
        (HEADER + '{"ts":1,"conn":"a","dir":"sideways"}\n', 2, '"dir"'),
        ("", 1, "empty"),
    ],
)
def test_bad_input_names_the_line_and_exits_2(tmp_path, capsys, text, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"{path}:{line}:" in error and message in error


def test_a_trace_cut_mid_line_validates_up_to_the_cut(tmp_path, capsys):
    path = tmp_path / "cut.jsonl"
    path.write_text(HEADER + REQUEST % (5, 1) + RESPONSE % (6, 1) + '{"ts":7,"conn":"a","di')
    assert main(["validate", str(path)]) == 0
    assert "cut at line 4" in capsys.readouterr().out


def test_unknown_coordinator_setting_is_bad_input(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(HEADER)
    assert main(["validate", str(path), "--set", "no_such_setting=1"]) == 2
    assert "no_such_setting" in capsys.readouterr().err


def test_cli_writes_a_json_report_and_exits_1_on_divergence(tmp_path, monkeypatch, capsys):
    good = impl_trace(tmp_path / "good.jsonl", 1, minutes=3)
    owner, attribute, replacement = FAULTS["leaving does not rebalance"]
    monkeypatch.setattr(owner, attribute, replacement)
    bad = impl_trace(tmp_path / "bad.jsonl", 0)
    report = tmp_path / "report.json"
    argv = ["validate", str(good), str(bad), "--json", str(report), "--no-shrink"]
    assert main([*argv, "--max-divergences", "1"]) == 1
    verdicts = json.loads(report.read_text())["verdicts"]
    assert [v["status"] for v in verdicts] == [PASS, DIVERGED]
    assert verdicts[1]["divergence"]["allowed"]
    out = capsys.readouterr().out
    assert "DIVERGED" in out and "allowed:" in out and "REBALANCE_IN_PROGRESS" in out


def test_the_same_seed_writes_the_same_trace():
    first, second = io.StringIO(), io.StringIO()
    write_impl_trace(first, seed=5, duration_ms=2 * MINUTES)
    write_impl_trace(second, seed=5, duration_ms=2 * MINUTES)
    assert first.getvalue() == second.getvalue()


def test_a_request_seen_a_reorder_window_after_another_took_effect_after_it():
    """b's LeaveGroup is seen at 100 ms and answered late; a's heartbeat is seen more than the
    reorder window (1 s) later: the leave had taken effect by then, so the heartbeat is told a
    rebalance is under way, and NONE is a divergence."""
    leave = {"group_id": "g", "members": [{"member_id": "c-b-uuid", "group_instance_id": None}]}
    left = {
        "error_code": 0,
        "members": [{"member_id": "c-b-uuid", "group_instance_id": None, "error_code": 0}],
    }
    seen = 100 + OracleSettings().reorder_window_ms + 1
    for answer, allowed in ((27, True), (0, False)):
        oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
        two_members_join(oracle, "c-a-uuid")
        oracle.request("b", 3, LEAVE_GROUP, 4, leave, 100)
        oracle.request("a", 3, HEARTBEAT, 4, heartbeat("c-a-uuid"), seen)
        divergence = oracle.response("a", 3, HEARTBEAT, 4, {"error_code": answer}, seen + 1)
        assert (divergence is None) is allowed, answer
        oracle.response("b", 3, LEAVE_GROUP, 4, left, seen + 2)
