"""The KIP-848 world's switches for the other profiles and brokers (models/kip848_params.py):
Kafka 3.9's coordinator-generated member ids (`coordinator_member_ids`), a broker without the
consumer protocol (`consumer_protocol_disabled`) and KIP-1263's assignment interval with the
world's clock (`assignment_interval`, models/kip848_clock.py); and what their worlds find
(docs/kip-848.md, "What the world found")."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_world_search import reachable_steps

from groupspec.checker.check import check
from groupspec.checker.model import Cut, Transition
from groupspec.models.kip848_clock import ASSIGNMENT_INTERVAL_MS, CLOCK_START_MS, interval_end
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World, Kip848WorldState
from groupspec.models.parameters import ParameterError
from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.consumer.machine import ConsumerState
from groupspec.spec.kip848.profiles import KAFKA_3_9, KAFKA_4_0
from groupspec.vocabulary.errors import ErrorCode

KAFKA_39_CONSUMER = Kip848Parameters(
    kafka_version=KAFKA_3_9, coordinator_member_ids=True, consumers=1, check_convergence=False
)
INTERVAL = Kip848Parameters(
    consumers=1,
    partitions=(1, 1),
    subscription_changes=1,
    assignment_interval=True,
    check_convergence=False,
)


def _reachable(world: Kip848World) -> list[tuple[Kip848WorldState, Transition[Kip848WorldState]]]:
    """Every step of every reachable state, breadth first: (before, step)."""
    return list(reachable_steps(world))


def _first(world: Kip848World, label: str) -> tuple[Kip848WorldState, Transition[Kip848WorldState]]:
    return next((before, step) for before, step in _reachable(world) if step.label == label)


# -- Kafka 3.9's consumer: coordinator-generated member ids ---------------------------------------


def test_a_kafka_39_consumer_joins_with_v0_and_no_member_id():
    _, step = _first(Kip848World(KAFKA_39_CONSUMER), "heartbeat(c1)")
    (heartbeat,) = step.state.requests[0]
    assert heartbeat.request.api_version == 0 and heartbeat.request.member_id == ""
    # The world names the message by the consumer's incarnation, not by its (empty) member id.
    assert heartbeat.member_id == "c1"


def test_a_kafka_39_consumer_takes_the_member_id_the_coordinator_generated():
    world = Kip848World(KAFKA_39_CONSUMER)
    _, joined = _first(world, "coordinator_receives(c1)")
    assert "cg_heartbeat.join_coordinator_member_id" in joined.rules
    assert set(joined.state.coordinator.group("g").members) == {"member-0"}
    (answered,) = [
        step
        for before, step in _reachable(world)
        if before == joined.state and step.label == "consumer_receives(c1)"
    ]
    consumer = answered.state.consumers[0]
    assert consumer is not None and consumer.member_id == "member-0"


def test_a_member_whose_join_answer_is_on_its_way_does_not_time_out():
    world = Kip848World(KAFKA_39_CONSUMER)
    _, joined = _first(world, "coordinator_receives(c1)")
    labels = {step.label for step in world.transitions(joined.state) if not isinstance(step, Cut)}
    assert "session_timeout(member-0)" not in labels


def test_a_member_whose_join_answer_was_lost_is_left_to_its_session_timeout():
    world = Kip848World(replace(KAFKA_39_CONSUMER, message_losses=1))
    _, joined = _first(world, "coordinator_receives(c1)")
    (lost,) = [
        step for step in world.transitions(joined.state) if step.label == "lose_response(c1)"
    ]
    consumer = lost.state.consumers[0]
    assert consumer is not None and consumer.member_id == "" and not consumer.in_flight
    labels = {step.label for step in world.transitions(lost.state) if not isinstance(step, Cut)}
    assert "session_timeout(member-0)" in labels


def test_an_answer_to_a_crashed_incarnation_does_not_reach_its_successor():
    world = Kip848World(replace(KAFKA_39_CONSUMER, crashes=1))
    for before, step in _reachable(world):
        if step.label != "consumer_receives(c1)" or before.incarnations[0] == 0:
            continue
        consumer = before.consumers[0]
        if consumer is not None and before.responses[0][0].member_id == "c1":
            # The first incarnation's answer: the restarted consumer (still without a member id,
            # like the crashed one) must not take it.
            assert step.state.consumers[0] == consumer
            return
    raise AssertionError("no answer to the first incarnation reaches the restarted consumer's slot")


def test_only_the_java_consumer_has_kafka_39s_member_ids():
    with pytest.raises(ParameterError, match="coordinator_member_ids"):
        Kip848Parameters(client="librdkafka", coordinator_member_ids=True)
    with pytest.raises(ParameterError, match="consumer_protocol_disabled"):
        Kip848Parameters(client="librdkafka", consumer_protocol_disabled=True)


# -- a broker without the consumer protocol ----------------------------------------------------------


def test_a_broker_without_the_consumer_protocol_makes_the_java_consumer_fatal():
    world = Kip848World(replace(KAFKA_39_CONSUMER, consumer_protocol_disabled=True, admin=True))
    steps = _reachable(world)
    refused = [step for _, step in steps if step.label == "coordinator_receives(c1)"]
    assert refused and all("cg_protocol_disabled.heartbeat" in step.rules for step in refused)
    (answer,) = refused[0].state.responses[0]
    assert answer.response.error_code is ErrorCode.UNSUPPORTED_VERSION
    read = [step for _, step in steps if step.label == "consumer_receives(c1)"]
    assert {step.state.consumers[0].state for step in read} == {ConsumerState.FATAL}
    assert any(
        "cg_protocol_disabled.describe" in step.rules
        for _, step in steps
        if step.label == "admin_describe"
    )
    assert all(step.state.coordinator.group("g") is None for _, step in steps)


# -- the assignment interval and the world's clock ----------------------------------------------------


def test_no_interval_runs_before_a_first_target_nor_without_the_setting():
    assert interval_end(ConsumerGroupsState(), CLOCK_START_MS, ASSIGNMENT_INTERVAL_MS) is None
    world = Kip848World(INTERVAL)
    (initial,) = world.initial_states()
    assert initial.now_ms == CLOCK_START_MS
    assert "interval_elapsed" not in {step.label for step in world.transitions(initial)}
    without = Kip848World(replace(INTERVAL, assignment_interval=False))
    assert without.config.assignment_interval_ms == 0
    assert without.initial_states()[0].now_ms == 0


def test_the_interval_elapses_once_after_each_computation():
    world = Kip848World(INTERVAL)
    _, joined = _first(world, "coordinator_receives(c1)")
    assert joined.state.coordinator.group("g").assignment_timestamp_ms == CLOCK_START_MS
    (elapsed,) = [
        step for step in world.transitions(joined.state) if step.label == "interval_elapsed"
    ]
    assert elapsed.state.now_ms == CLOCK_START_MS + ASSIGNMENT_INTERVAL_MS
    assert elapsed.state.coordinator == joined.state.coordinator
    assert "interval_elapsed" not in {step.label for step in world.transitions(elapsed.state)}


def test_a_subscription_change_within_the_interval_waits_and_narrows_the_member():
    steps = _reachable(Kip848World(INTERVAL))
    deferred = [(before, step) for before, step in steps if "cg_assignment.deferred" in step.rules]
    assert deferred
    for before, step in deferred:
        assert before.now_ms < ASSIGNMENT_INTERVAL_MS + CLOCK_START_MS
        group = step.state.coordinator.group("g")
        assert group.assignment_epoch < group.group_epoch
    assert any("cg_reconcile.subscription_narrowed" in step.rules for _, step in steps)
    # After the interval the waiting target is computed.
    assert any(
        "cg_assignment.computed" in step.rules and before.now_ms > CLOCK_START_MS
        for before, step in steps
    )


def test_before_43_the_interval_does_not_exist():
    steps = _reachable(Kip848World(replace(INTERVAL, kafka_version=KAFKA_4_0)))
    rules = {rule for _, step in steps for rule in step.rules}
    assert "cg_assignment.no_interval" in rules and "cg_assignment.deferred" not in rules


# -- what these worlds find ----------------------------------------------------------------------------

OVERTAKEN_COMMIT = (
    "a commit the world delivers after a later heartbeat of its consumer (the world lets "
    "commits overtake heartbeats; Kafka's broker serves one connection's requests in order) "
    "is accepted at the member's unchanged epoch for a partition the member released: with "
    "KIP-1263's interval a narrowed member revokes without a new epoch, and after a "
    "DeleteGroups a re-created group reuses its epochs (docs/kip-848.md)"
)


@pytest.mark.xfail(strict=True, reason=OVERTAKEN_COMMIT, raises=AssertionError)
@pytest.mark.parametrize(
    "budgets",
    [
        {"assignment_interval": True},
        {"leaves": 1, "admin": True},
    ],
    ids=["narrowed-within-the-interval", "deleted-and-recreated"],
)
def test_an_overtaken_commit_names_only_partitions_its_member_owns(budgets):
    parameters = replace(INTERVAL, **{"commits": 1, "assignment_interval": False, **budgets})
    world = Kip848World(parameters)
    world.properties = tuple(p for p in world.properties if p.name == "CommitFromOwner")
    result = check(world)
    assert (result.verdict, result.failed) == ("pass", ())


def test_the_overtaken_commits_break_commit_from_owner_within_the_documented_states():
    """The figures of docs/kip-848.md, "What the world found": where each search stops."""
    for budgets, states in [
        ({"assignment_interval": True}, 667),
        ({"leaves": 1, "admin": True}, 4_450),
    ]:
        parameters = replace(INTERVAL, **{"commits": 1, "assignment_interval": False, **budgets})
        result = check(Kip848World(parameters))
        assert (result.verdict, result.failed) == ("fail", ("CommitFromOwner",))
        assert result.search.distinct_states == states


@pytest.mark.slow
def test_a_newer_commit_epoch_is_reached_only_where_commit_from_owner_fails():
    """docs/coverage.md: cg_offset_commit.epoch_newer needs a group deleted and re-created under
    the same member id; the world that reaches it passes once CommitFromOwner is left out."""
    parameters = replace(INTERVAL, assignment_interval=False, commits=1, leaves=1, admin=True)
    world = Kip848World(parameters)
    world.properties = tuple(p for p in world.properties if p.name != "CommitFromOwner")
    result = check(world)
    assert result.verdict == "pass" and result.search.distinct_states == 8_095
    assert "cg_offset_commit.epoch_newer" in result.search.rule_counts


def test_a_stale_rebalance_timeout_lies_on_kafka_20641s_path():
    """docs/coverage.md: two static consumers with a leave reach the -2 leave of a revoking
    member, where UnrevokedHasRevocations fails before the stale timer can fire."""
    parameters = Kip848Parameters(
        consumers=2, partitions=(2,), static_members=True, leaves=1, check_convergence=False
    )
    result = check(Kip848World(parameters))
    assert (result.verdict, result.failed) == ("fail", ("UnrevokedHasRevocations",))
    assert result.search.distinct_states == 3_637


def test_a_kafka_39_consumer_unsubscribed_before_its_first_heartbeat_ends_fatal():
    """docs/kip-848.md: its leave carries the empty member id, which the coordinator refuses."""
    world = Kip848World(replace(KAFKA_39_CONSUMER, leaves=1))
    for before, step in _reachable(world):
        if "cg_heartbeat.invalid_request" not in step.rules:
            continue
        (heartbeat,) = before.requests[0]
        assert (heartbeat.request.member_id, heartbeat.request.member_epoch) == ("", -1)
        (answer,) = step.state.responses[0]
        assert answer.response.error_code is ErrorCode.INVALID_REQUEST
        (read,) = [s for s in world.transitions(step.state) if s.label == "consumer_receives(c1)"]
        assert read.state.consumers[0].state is ConsumerState.FATAL
        assert "cg_client.error.fatal" in read.rules
        return
    raise AssertionError("no leave without a member id")
