"""The records of consumer-protocol groups and the groups rebuilt from them (spec/kip848/records.py,
replay.py, failover.py), and the two worlds that drive them (static members, failovers).

- A Hypothesis property: over random heartbeat sequences with failovers in between, the log
  replays to every group's durable view after every step, the uncompacted stream of records
  replays to the same groups as the compacted log, and a failover brings back the same groups
  with every member's session timeout armed.
- The invariant LogReplaysToGroups catches a coordinator that leaves a record kind out, in the
  world as in the relation.
- With `log_cleaning="active-segment"` the log keeps every record in the order written: a
  member's leave replays to the group without it through its tombstones, a coordinator that
  writes the tombstones out of Kafka's order breaks LogReplaysToGroups (which the compacted log
  cannot see), and the parameter's bad values are refused naming it.
- The worlds of kip848-static-1, kip848-failover-1 and kip848-replay-1 reach what they are for,
  and what they found is pinned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kip848_helpers import CONFIG, SPEC, beat, join, only, send

from groupspec.checker.bfs import search
from groupspec.checker.check import check
from groupspec.checker.model import Transition
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World, no_run_against_owner
from groupspec.models.parameters import ParameterError
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec, ConsumerGroupsState
from groupspec.spec.kip848.config import ACTIVE_SEGMENT_LOG, ConsumerGroupConfig
from groupspec.spec.kip848.events import (
    ConsumerGroupInput,
    CoordinatorLoaded,
    CoordinatorLoadStarted,
    CoordinatorUnloaded,
)
from groupspec.spec.kip848.invariants import check_state
from groupspec.spec.kip848.records import (
    CurrentAssignmentKey,
    MemberMetadataKey,
    Record,
    TargetAssignmentMetadataKey,
    appended,
    compacted,
    group_tombstones,
    records_between,
)
from groupspec.spec.kip848.replay import ReplayError, durability_problems, durable_view, replay
from groupspec.spec.kip848.step import Outcome
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.errors import InvalidConfigError

EMPTY = ConsumerGroupsState()
MEMBERS = ("a", "b", "s1", "s2")
INSTANCES = {"s1": "i1", "s2": "i1"}
PARTITIONS = ("t0-0", "t0-1", "t1-0")


def _request(kind: str, member: str, epoch: int, report: tuple[str, ...]):  # type: ignore[no-untyped-def]
    instance = INSTANCES.get(member)
    if kind == "join":
        return join(member, instance_id=instance)
    if kind == "leave":
        leave_epoch = -2 if instance is not None and epoch % 2 else -1
        return ConsumerGroupHeartbeatRequest("g", member, leave_epoch, instance_id=instance)
    return beat(member, epoch, *report, instance_id=instance)


STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["join", "beat", "beat", "leave"]),
            st.sampled_from(MEMBERS),
            st.integers(1, 4),
            st.lists(st.sampled_from(PARTITIONS), unique=True, max_size=3).map(tuple),
            st.integers(0, 5),
        ),
        st.just(("failover",)),
        st.just(("timer",)),
    ),
    max_size=25,
)


def _member_epoch(state: ConsumerGroupsState, member: str, fallback: int) -> int:
    group = state.group("g")
    found = group.member(member) if group is not None else None
    return fallback if found is None or found.member_epoch <= 0 else found.member_epoch


def _walk(
    steps: list[tuple[object, ...]],
    spec: ConsumerGroupCoordinatorSpec,
    check_step: Callable[[ConsumerGroupsState, list[Record]], None],
) -> None:
    """Drive `spec` through random `steps`: a failover must keep every group's durable view and
    re-arm each member's session; after any other step `check_step(state, stream)` judges the
    state and every record written so far."""
    state, stream = spec.initial_state(), []
    for step in steps:
        if step[0] == "failover":
            before = state
            state = failover(state, spec)
            assert [durable_view(g) for g in state.iter_groups()] == [
                durable_view(g) for g in before.iter_groups()
            ]
            for group in state.iter_groups():
                assert {m for m, _ in group.session_deadlines} == set(group.members)
            continue
        if step[0] == "timer":
            timers = armed_timers(state)
            if not timers:
                continue
            event: ConsumerGroupInput = timers[0][0]
            outcome = spec.step(state, event, 0)[0]
        else:
            kind, member, epoch, report, pick = step
            # Mostly the member's own epoch, so that the heartbeats get past the epoch check.
            epoch = _member_epoch(state, member, epoch) if pick else epoch
            outcomes = send(state, _request(kind, member, epoch, report), spec=spec)
            outcome = outcomes[pick % len(outcomes)]
        stream += records_between(spec.config, state.group("g"), outcome.state.group("g"))
        state = outcome.state
        check_step(state, stream)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(steps=STEPS)
def test_the_log_replays_to_the_groups_after_every_step(steps):  # type: ignore[no-untyped-def]
    def check_step(state: ConsumerGroupsState, stream: list[Record]) -> None:
        assert durability_problems(state, state.log) == []
        assert replay(stream).groups == replay(state.log).groups
        assert compacted((), tuple(stream)) == state.log

    _walk(steps, SPEC, check_step)


def failover(
    state: ConsumerGroupsState, spec: ConsumerGroupCoordinatorSpec = SPEC
) -> ConsumerGroupsState:
    """`state` after its coordinator moved away and back."""
    for event in (CoordinatorUnloaded(), CoordinatorLoadStarted(), CoordinatorLoaded()):
        state = only(send(state, event, spec=spec)).state
    return state


def _two_members() -> ConsumerGroupsState:
    state = only(send(EMPTY, join("a"))).state
    return send(state, join("b"))[0].state


def test_a_deleted_group_replays_to_nothing():
    state = _two_members()
    group = state.group("g")
    assert group is not None
    stream = records_between(CONFIG, None, group) + group_tombstones(group)
    assert replay(stream).groups == ()
    assert records_between(CONFIG, group, None) == group_tombstones(group)


def test_tombstones_out_of_kafkas_order_are_refused():
    state = _two_members()
    group = state.group("g")
    assert group is not None
    # The target-assignment epoch's tombstone while target entries remain.
    wrong = (*records_between(CONFIG, None, group), Record(TargetAssignmentMetadataKey("g"), None))
    with pytest.raises(ReplayError, match="entries left"):
        replay(wrong)


def test_a_step_that_changes_nothing_durable_writes_nothing():
    state = _two_members()
    again = only(send(state, beat("a", 3, "t0-0", "t1-0")))
    assert records_between(CONFIG, state.group("g"), again.state.group("g")) == ()


# -- a coordinator that leaves a record out -----------------------------------------------------


class ForgetsCurrentAssignments(ConsumerGroupCoordinatorSpec):
    """Writes every record but the members' current assignments (a seeded fault)."""

    def step(self, state, event, now_ms):  # type: ignore[no-untyped-def]
        def without(outcome: Outcome) -> Outcome:
            kept = {r.key: r for r in state.log if isinstance(r.key, CurrentAssignmentKey)}
            log = tuple(r for r in outcome.state.log if not isinstance(r.key, CurrentAssignmentKey))
            return replace(
                outcome, state=replace(outcome.state, log=compacted(log, tuple(kept.values())))
            )

        return tuple(without(o) for o in super().step(state, event, now_ms))


def test_log_replays_to_groups_catches_a_left_out_record_in_the_relation():
    faulty = ForgetsCurrentAssignments(CONFIG)
    outcome = only(send(EMPTY, join("a"), spec=faulty))
    problems = durability_problems(outcome.state, outcome.state.log)
    assert problems and "member a" in problems[0]


def _only_durability(world: Kip848World) -> Kip848World:
    world.properties = tuple(p for p in world.properties if p.name == "LogReplaysToGroups")
    assert len(world.properties) == 1
    return world


def test_log_replays_to_groups_catches_a_left_out_record_in_the_world():
    parameters = Kip848Parameters(consumers=1, assignor="range", check_convergence=False)
    faulty = ForgetsCurrentAssignments(parameters.coordinator_config())
    found = check(_only_durability(Kip848World(parameters, coordinator=faulty)))
    assert (found.verdict, found.failed) == ("fail", ("LogReplaysToGroups",))
    assert check(_only_durability(Kip848World(parameters))).verdict == "pass"


# -- the log as the cleaner left it -------------------------------------------------------------

UNCLEANED = ConsumerGroupConfig(assignment_interval_ms=0, log_cleaning=ACTIVE_SEGMENT_LOG)
UNCLEANED_SPEC = ConsumerGroupCoordinatorSpec(UNCLEANED)


def test_an_uncleaned_log_keeps_every_record_in_the_order_written():
    state = only(send(EMPTY, join("a"), spec=UNCLEANED_SPEC)).state
    first = state.log
    left = only(send(state, beat("a", -1), spec=UNCLEANED_SPEC)).state
    written = left.log[len(first) :]
    assert left.log[: len(first)] == first
    # The leave's three tombstones, in the order Kafka's removeMember writes them.
    assert [type(r.key).__name__ for r in written if r.is_tombstone] == [
        "CurrentAssignmentKey",
        "TargetAssignmentMemberKey",
        "MemberMetadataKey",
    ]
    assert appended(CONFIG, first, written) == compacted(first, written)
    assert all(not r.is_tombstone for r in compacted(first, written))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(steps=STEPS)
def test_an_uncleaned_log_is_every_record_written_and_replays_to_the_groups(steps):  # type: ignore[no-untyped-def]
    def check_step(state: ConsumerGroupsState, stream: list[Record]) -> None:
        assert state.log == tuple(stream)
        assert durability_problems(state, state.log) == []

    _walk(steps, UNCLEANED_SPEC, check_step)


def test_a_leave_replays_through_its_tombstones_to_the_group_without_the_member():
    state = only(send(EMPTY, join("a"), spec=UNCLEANED_SPEC)).state
    state = send(state, join("b"), spec=UNCLEANED_SPEC)[0].state
    state = only(send(state, beat("b", -1), spec=UNCLEANED_SPEC)).state
    assert any(r.is_tombstone for r in state.log)
    assert durability_problems(state, state.log) == []
    rules: list[str] = []
    for event in (CoordinatorUnloaded(), CoordinatorLoadStarted(), CoordinatorLoaded()):
        outcome = only(send(state, event, spec=UNCLEANED_SPEC))
        rules += outcome.rules
        state = outcome.state
    group = state.group("g")
    assert group is not None and set(group.members) == {"a"} and "b" not in group.target
    assert rules.count("cg_replay.tombstone") == 3


class SubscriptionTombstoneFirst(ConsumerGroupCoordinatorSpec):
    """Writes a removed member's subscription tombstone before its assignment tombstones, which
    Kafka's replay refuses (a seeded fault)."""

    def step(self, state, event, now_ms):  # type: ignore[no-untyped-def]
        def reordered(outcome: Outcome) -> Outcome:
            log = outcome.state.log
            if log[: len(state.log)] != state.log:
                return outcome  # a cleaned log: the tombstones are gone already
            written = log[len(state.log) :]
            first = [r for r in written if r.is_tombstone and isinstance(r.key, MemberMetadataKey)]
            rest = [r for r in written if r not in first]
            log = state.log + tuple(first + rest)
            return replace(outcome, state=replace(outcome.state, log=log))

        return tuple(reordered(o) for o in super().step(state, event, now_ms))


def test_tombstones_out_of_kafkas_order_break_log_replays_to_groups_only_in_an_uncleaned_log():
    parameters = Kip848Parameters(
        consumers=1, leaves=1, log_cleaning="active-segment", check_convergence=False
    )
    faulty = SubscriptionTombstoneFirst(parameters.coordinator_config())
    found = check(_only_durability(Kip848World(parameters, coordinator=faulty)))
    assert (found.verdict, found.failed) == ("fail", ("LogReplaysToGroups",))
    assert check(_only_durability(Kip848World(parameters))).verdict == "pass"
    # Cleaned to its end, the log holds no tombstone whose order replay could check.
    cleaned = replace(parameters, log_cleaning="compacted")
    faulty = SubscriptionTombstoneFirst(cleaned.coordinator_config())
    assert check(_only_durability(Kip848World(cleaned, coordinator=faulty))).verdict == "pass"


def test_a_subscription_tombstone_before_the_assignment_tombstones_does_not_replay():
    state = only(send(EMPTY, join("a"), spec=UNCLEANED_SPEC)).state
    log = (*state.log, Record(MemberMetadataKey("g", "a"), None))
    with pytest.raises(ReplayError, match="before its current-assignment tombstone"):
        replay(log)
    assert durability_problems(state, log)[0].startswith("the log does not replay")


def test_a_bad_log_cleaning_is_refused_naming_it():
    with pytest.raises(ParameterError, match="log_cleaning"):
        Kip848Parameters(log_cleaning="cleaned")
    with pytest.raises(ParameterError, match=r"log_cleaning.*slow_consumers"):
        Kip848Parameters(log_cleaning="active-segment", slow_consumers=True)
    with pytest.raises(InvalidConfigError, match="log_cleaning must be one of"):
        ConsumerGroupConfig(log_cleaning="none")


# -- the worlds --------------------------------------------------------------------------------


def _reached(preset: str) -> set[str]:
    """The rules the preset records (tests/test_kip848_world.py checks the record against a
    check of the preset)."""
    expected = load_model(preset).expected
    assert expected is not None and expected.rules_reached is not None
    return set(expected.rules_reached)


def test_the_static_world_replaces_a_closed_member_and_refuses_a_crashed_ones_successor():
    reached = _reached("kip848-static-1")
    assert {
        "cg_heartbeat.new_static_member",
        "cg_heartbeat.static_member_temporarily_left",
        "cg_heartbeat.static_member_replaced",
        "cg_heartbeat.unreleased_instance_id",
    } <= reached


def test_the_failover_world_rebuilds_the_group_and_the_consumer_waits():
    reached = _reached("kip848-failover-1")
    assert {
        "cg_failover.unloaded",
        "cg_failover.load_started",
        "cg_failover.loaded",
        "cg_failover.not_coordinator",
        "cg_failover.load_in_progress",
        "cg_client.error.coordinator",
        "cg_replay.current_assignment",
        "cg_record.member_tombstones",
    } <= reached


def test_the_replay_world_replays_a_leave_through_its_tombstones():
    # kip848-failover-1's log is cleaned, so its load never meets a tombstone; kip848-replay-1's
    # is not.
    assert "cg_replay.tombstone" not in _reached("kip848-failover-1")
    assert {
        "cg_record.member_tombstones",
        "cg_failover.loaded",
        "cg_replay.tombstone",
    } <= _reached("kip848-replay-1")


def test_the_replay_worlds_compacted_twin_explores_as_many_states_and_replays_no_tombstone():
    # docs/protocol.md §12.16 quotes these figures: with one consumer the whole history costs no
    # state here, and only the uncleaned log makes the failover replay a tombstone.
    uncleaned = load_model("kip848-replay-1")
    cleaned = load_model("kip848-replay-1", {"log_cleaning": "compacted"})
    found = {name: search(loaded.model) for name, loaded in (("u", uncleaned), ("c", cleaned))}
    assert [found[n].distinct_states for n in "uc"] == [1222, 1222]
    assert "cg_replay.tombstone" in found["u"].rule_counts
    assert "cg_replay.tombstone" not in found["c"].rule_counts
    assert "cg_failover.loaded" in found["c"].rule_counts


KAFKA_20641 = (
    "KAFKA-20641: a static member's consumer closes (leave with epoch -2) while the coordinator "
    "has it in UnrevokedPartitions; Kafka keeps that state with nothing pending revocation. The "
    "world with two static consumers and one close reaches it by itself in 14 steps."
)


@pytest.mark.xfail(strict=True, reason=KAFKA_20641)
def test_two_static_consumers_and_a_close_keep_unrevoked_has_revocations():
    parameters = Kip848Parameters(
        assignor="range", static_members=True, leaves=1, check_convergence=False
    )
    world = Kip848World(parameters)
    world.properties = tuple(p for p in world.properties if p.name == "UnrevokedHasRevocations")
    assert check(world).verdict == "pass"


STALE_REPORT_AFTER_FAILOVER = (
    "The stale-report finding (docs/kafka.md, 'Findings on the consumer protocol'; Kafka 4.4.0's "
    "coordinator answers so, probe cg-stale-owned) needs no client fault: "
    "a NOT_COORDINATOR answer during a failover resets the heartbeat's sent fields as a lost "
    "message does, so a consumer still Reconciling resends its empty current assignment"
)


# The shortest counterexample `groupspec check kip848-2 --set failovers=1` finds (19 steps; the
# check itself takes 20-40 s, so the test walks its path).
RACE_AFTER_FAILOVER = (
    "subscribe(c1)",
    "heartbeat(c1)",
    "coordinator_receives(c1)",
    "consumer_receives(c1)",
    "heartbeat(c1)",
    "subscribe(c2)",
    "heartbeat(c2)",
    "coordinator_receives(c2)",
    "consumer_receives(c2)",
    "heartbeat(c2)",
    "unload",
    "coordinator_receives(c1)",  # NOT_COORDINATOR
    "consumer_receives(c1)",  # the sent fields are reset
    "heartbeat(c1)",  # a full heartbeat: epoch 2, owning nothing yet
    "assign(c1)",  # c1's application takes t0-0, t0-1 and t1-0
    "start_loading",
    "finish_loading",
    "coordinator_receives(c1)",  # "owning nothing": t0-1 is free for c2
    "coordinator_receives(c2)",
)


def walk(world: Kip848World, labels: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """The state the world reaches taking, at each step, the first transition with that label
    (the relation's outcomes come in a stable order; when c2 joins, range may give it t0-1 or
    the other two partitions, and either choice ends in the same overlap)."""
    (state,) = world.initial_states()
    for label in labels:
        found = [
            t for t in world.transitions(state) if isinstance(t, Transition) and t.label == label
        ]
        assert found, f"no step {label}"
        state = found[0].state
    return state


def test_the_failover_path_is_a_path_of_the_world():
    world = Kip848World(Kip848Parameters(assignor="range", failovers=1))
    state = walk(world, RACE_AFTER_FAILOVER[:-1])
    c1 = state.consumers[0]
    assert c1 is not None and len(c1.owned) == 3
    # Every coordinator invariant, LogReplaysToGroups among them, holds on the way.
    assert check_state(state.coordinator) == []


@pytest.mark.xfail(strict=True, reason=STALE_REPORT_AFTER_FAILOVER)
def test_two_consumers_and_a_failover_run_no_partition_against_its_owner():
    world = Kip848World(Kip848Parameters(assignor="range", failovers=1))
    assert no_run_against_owner(walk(world, RACE_AFTER_FAILOVER)) == []


# -- what replay does not restore: the timers -----------------------------------------------------


class ForgetsTimersOnLoad(ConsumerGroupCoordinatorSpec):
    """Rebuilds the groups on load but arms no timer (a seeded fault: onLoaded's work left out)."""

    def step(self, state, event, now_ms):  # type: ignore[no-untyped-def]
        outcomes = super().step(state, event, now_ms)
        if not isinstance(event, CoordinatorLoaded):
            return outcomes
        return tuple(replace(outcome, state=_without_timers(outcome.state)) for outcome in outcomes)


def _without_timers(state: ConsumerGroupsState) -> ConsumerGroupsState:
    for group in state.iter_groups():
        state = state.with_group(replace(group, session_deadlines=(), rebalance_deadlines=()))
    return state


def test_a_load_that_arms_no_timer_keeps_a_crashed_member_forever():
    parameters = Kip848Parameters(consumers=1, assignor="range", crashes=1, failovers=1)
    world = Kip848World(
        parameters, coordinator=ForgetsTimersOnLoad(parameters.coordinator_config())
    )
    world.properties = tuple(p for p in world.properties if p.name == "Converges")
    found = check(world)
    assert (found.verdict, found.failed) == ("fail", ("Converges",))
    correct = Kip848World(parameters)
    correct.properties = tuple(p for p in correct.properties if p.name == "Converges")
    assert check(correct).verdict == "pass"
