"""Trace campaigns driven by rule coverage: the oracle says which spec rules traces exercised,
the impl's scenarios reach the hard cases plain churn never did, and faults seeded in those
hard cases are caught from the traces alone."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.cli.main import main
from groupspec.conformance.impl_campaign import HARD_CASES, greedy_cover, run_campaign
from groupspec.conformance.impl_traces import (
    ADMIN,
    LEADER_STALLS,
    PENDING_CRASH,
    SCENARIOS,
    STATIC_RESTART_COMPLETING,
    write_impl_trace,
)
from groupspec.impl import admin as impl_admin
from groupspec.impl import coordinator as impl_coordinator
from groupspec.impl import join as impl_join
from groupspec.impl import rebalance as impl_rebalance
from groupspec.oracle.trace.validate import DIVERGED, PASS, validate_trace
from groupspec.vocabulary.errors import ErrorCode as ImplErrorCode

MINUTES = 60_000
# The scenario aimed at each hard case. Five simulated minutes of seed 0 reach each one.
AIMED_AT = {
    "join.static_replacement.completing_rebalances": STATIC_RESTART_COMPLETING,
    "timer.pending_member_expired": PENDING_CRASH,
    "rebalance.leader_reelected": LEADER_STALLS,
}


def scenario_trace(path: Path, scenario_name: str, minutes: int = 5, consumers: int = 4) -> Path:
    with path.open("w") as out:
        write_impl_trace(
            out,
            seed=0,
            duration_ms=minutes * MINUTES,
            consumers=consumers,
            scenario=SCENARIOS[scenario_name],
        )
    return path


# -- the oracle reports the rules a trace exercised -------------------------------------------


def test_validate_coverage_reports_each_traces_rules_and_their_union(tmp_path, capsys):
    steady = tmp_path / "steady.jsonl"
    with steady.open("w") as out:
        write_impl_trace(out, seed=0, duration_ms=MINUTES, consumers=2, churn=False)
    crash = scenario_trace(tmp_path / "crash.jsonl", PENDING_CRASH.name, minutes=2)
    report = tmp_path / "report.json"
    code = main(["validate", str(steady), str(crash), "--coverage", "--json", str(report)])
    assert code == 0
    document = json.loads(report.read_text())
    rules = {v["trace"]: set(v["rules_exercised"]) for v in document["verdicts"]}
    # A steady group forms, heartbeats and commits; nobody expires.
    assert {"join.group_created", "sync.leader_assignment_stored_group_stable"} <= rules[
        str(steady)
    ]
    assert {"commit.accepted", "heartbeat.accepted"} <= rules[str(steady)]
    assert "timer.pending_member_expired" not in rules[str(steady)]
    assert "timer.pending_member_expired" in rules[str(crash)]
    # Only the coordinator's rules count: the oracle judges no consumer.
    coverage = document["coverage"]
    assert coverage["traces"] == {name: sorted(found) for name, found in rules.items()}
    union = rules[str(steady)] | rules[str(crash)]
    assert coverage["totals"]["coordinator"]["reached"] == len(union)
    assert coverage["totals"]["consumer"]["known"] == 0
    assert not union & set(coverage["never_reached"])
    text = capsys.readouterr().out
    assert f"rules reached: {len(rules[str(steady)])}/" in text
    assert f"rules reached: {len(union)}/" in text and "by the 2 traces together" in text
    assert "timer.pending_member_expired" not in text.split("never reached")[1]


def test_validate_coverage_on_spark_is_refused_before_any_work(tmp_path, capsys):
    argv = ["validate", str(tmp_path), "--engine", "spark", "--out", str(tmp_path / "r")]
    assert main([*argv, "--coverage"]) == 2
    assert "need --engine inprocess" in capsys.readouterr().err


# -- the campaign reaches the hard cases --------------------------------------------------------


def test_the_campaign_reaches_every_hard_case_and_keeps_traces_covering_its_union():
    scenarios = [*AIMED_AT.values(), ADMIN]
    campaign = run_campaign(scenarios, range(1), duration_ms=5 * MINUTES)
    assert [trace.verdict.status for trace in campaign.traces] == [PASS] * 4
    for rule, scenario in AIMED_AT.items():
        (trace,) = [t for t in campaign.traces if t.scenario == scenario.name]
        assert rule in trace.rules, f"{scenario.name} did not reach {rule} ({HARD_CASES[rule]})"
    # The admin client's requests: the APIs no consumer of the other scenarios sends.
    admin = campaign.by_scenario()[ADMIN.name]
    assert {"list.groups", "fetch.all_offsets", "fetch.offsets", "fetch.unknown_group"} <= admin
    assert {
        "describe.stable_group",
        "describe.unknown_group",
        "commit.simple_group_created",
    } <= admin
    assert {"delete.empty_group_deleted", "delete.non_empty_group", "delete.unknown_group"} <= admin
    kept = frozenset().union(*(trace.rules for trace in campaign.kept))
    assert kept == campaign.union
    assert set(HARD_CASES) <= campaign.union


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(st.lists(st.frozensets(st.sampled_from("abcdefgh")), max_size=8))
def test_the_greedy_cover_covers_the_union_and_each_kept_item_adds_rules(sets):
    kept = greedy_cover(sets, lambda rules: rules)
    assert frozenset().union(*kept) == frozenset().union(*sets)
    covered: frozenset[str] = frozenset()
    for rules in kept:
        added = rules - covered
        assert added
        # Greedy: no item left out or kept later would have added more at this point.
        assert all(len(other - covered) <= len(added) for other in sets)
        covered |= rules


def test_campaign_command_writes_the_kept_traces_and_names_the_hard_cases(tmp_path, capsys):
    out = tmp_path / "traces"
    options = ["--scenario", PENDING_CRASH.name, "--seeds", "1", "--minutes", "3"]
    code = main(["campaign", *options, "--out", str(out), "--json", "-"])
    assert code == 0
    # With --json -, the JSON is stdout and the report goes to stderr.
    captured = capsys.readouterr()
    document, text = json.loads(captured.out), captured.err
    assert document["kept"] == ["pending-crash-0"]
    assert document["hard_cases"]["timer.pending_member_expired"] == ["pending-crash-0"]
    assert document["hard_cases"]["rebalance.leader_reelected"] == []
    assert "hard case rebalance.leader_reelected" in text and "NOT REACHED" in text
    trace = out / "pending-crash-0.jsonl"
    assert validate_trace(trace).rules == frozenset(document["traces"][0]["rules_exercised"])


@pytest.mark.parametrize("option", ["--seeds", "--minutes", "--consumers"])
def test_campaign_command_refuses_a_count_below_one(option, capsys):
    assert main(["campaign", option, "0"]) == 2
    assert f"argument {option}: 0 is below 1" in capsys.readouterr().err


# -- faults in the hard cases: caught from the traces alone --------------------------------------


def _forget_pending_members(original):
    def expired(rt, group, member_id):
        if member_id in group.pending_members:
            return None  # the pending id stays: the group waits for a member that never comes
        return original(rt, group, member_id)

    return expired


def _keep_a_leader_that_did_not_rejoin(original):
    def elect(rt, group):
        if group.leader_id in group.members:
            return True  # the old leader leads the new generation, though it did not rejoin
        return original(rt, group)

    return elect


def _refuse_every_delete(original):
    def delete(rt, group):
        if group is None:
            return original(rt, group)
        return ImplErrorCode.NON_EMPTY_GROUP  # an Empty group with offsets counted as in use

    return delete


# Faults where only a scenario's traces go: the three hard cases, and the admin APIs.
FAULTS_IN_SCENARIOS = {
    # In CompletingRebalance a static replacement must prepare a rebalance; this coordinator
    # parks the new incarnation's join and goes on completing the old round.
    "a static replacement during CompletingRebalance does not rebalance": (
        STATIC_RESTART_COMPLETING,
        impl_join,
        "prepare_rebalance",
        lambda rt, group: None,
    ),
    "pending members never expire": (
        PENDING_CRASH,
        impl_coordinator,
        "on_heartbeat_expired",
        _forget_pending_members(impl_coordinator.on_heartbeat_expired),
    ),
    "a join completes with a leader that did not rejoin": (
        LEADER_STALLS,
        impl_rebalance,
        "elect_joined_leader",
        _keep_a_leader_that_did_not_rejoin(impl_rebalance.elect_joined_leader),
    ),
    "deleting an empty group that has offsets is refused": (
        ADMIN,
        impl_admin,
        "delete_group",
        _refuse_every_delete(impl_admin.delete_group),
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS_IN_SCENARIOS))
def test_a_fault_only_a_scenario_reaches_is_caught_and_the_trace_judged_to_its_end(
    fault, tmp_path, monkeypatch
):
    scenario, owner, attribute, replacement = FAULTS_IN_SCENARIOS[fault]
    monkeypatch.setattr(owner, attribute, replacement)
    verdict = validate_trace(scenario_trace(tmp_path / "t.jsonl", scenario.name), shrink=False)
    assert verdict.status == DIVERGED, fault
    assert verdict.judged_fraction > 0.95
    assert all(d.allowed or d.kind != "response" for d in verdict.divergences)


def test_a_scenario_writes_the_same_trace_for_the_same_seed():
    # So a divergence above is the seeded fault's, and a campaign can be rerun.
    first, second = io.StringIO(), io.StringIO()
    for out in (first, second):
        write_impl_trace(out, seed=0, duration_ms=2 * MINUTES, scenario=LEADER_STALLS)
    assert first.getvalue() == second.getvalue()
