"""Regular-expression subscriptions in the KIP-848 world (models/kip848_regex.py): the Java
consumer's subscribe(SubscriptionPattern) (spec/kip848/consumer/patterns.py), the resolution and
the refresh interval as world steps, their parameters, what the refinement and the invariants
allow a member whose expression awaits its resolution, and the replaced-target fix of the
consumer the regex world found."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_helpers import beat as request
from kip848_helpers import only, send
from kip848_regex_scenarios import RESOLVED, a_joined_with_regex, a_resolved, subscribe

from groupspec.checker.check import check
from groupspec.checker.model import Transition
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World, Kip848WorldState
from groupspec.models.parameters import ParameterError
from groupspec.spec.kip848 import ConsumerGroupConfig
from groupspec.spec.kip848.consumer import machine, patterns
from groupspec.spec.kip848.consumer.machine import ConsumerState, KafkaConsumer
from groupspec.spec.kip848.invariants import KIP848_INVARIANTS
from groupspec.spec.kip848.refinement import refinement_problems
from groupspec.spec.kip848.regex import REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

CONFIG = ConsumerGroupConfig()  # t0 (2 partitions), t1 (1)
T00, T01, T10 = TopicPartition("t0", 0), TopicPartition("t0", 1), TopicPartition("t1", 0)
S = ConsumerState
REGEX = Kip848Parameters(consumers=1, regex_subscriptions=True, check_convergence=False)


def ok(epoch: int, *partitions: TopicPartition) -> ConsumerGroupHeartbeatResponse:
    """A successful response at `epoch` assigning `partitions` (possibly none)."""
    assignment = ConsumerGroupHeartbeatAssignment(machine.topic_partitions(CONFIG, partitions))
    return ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, member_id="c1", member_epoch=epoch, assignment=assignment
    )


def pattern_joined(pattern: str = "t.*") -> KafkaConsumer:
    step = patterns.subscribe_pattern(KafkaConsumer("c1"), pattern)
    assert step is not None
    return step.consumer


def beat(consumer: KafkaConsumer) -> machine.ClientStep:
    step = machine.heartbeat(consumer, CONFIG)
    assert step is not None and step.request is not None
    return step


def reconciled(consumer: KafkaConsumer) -> KafkaConsumer:
    """The consumer after its revoke and assign steps (as many as it takes)."""
    while consumer.state is S.RECONCILING:
        step = machine.revoke(consumer) or machine.assign(consumer)
        assert step is not None
        consumer = step.consumer
    return consumer


# -- the consumer ------------------------------------------------------------------------------


def test_a_pattern_join_sends_the_pattern_and_no_topic_names():
    step = beat(pattern_joined())
    assert step.request is not None
    assert step.request.subscribed_topic_regex == "t.*"
    assert step.request.subscribed_topic_names == ()
    assert step.request.api_version >= 1


def test_the_pattern_goes_again_only_when_it_changed_or_the_fields_were_reset():
    member = machine.on_response(beat(pattern_joined()).consumer, CONFIG, ok(1)).consumer
    member = reconciled(member)
    quiet = beat(member)
    assert quiet.request is not None and quiet.request.subscribed_topic_regex is None
    changed = patterns.change_pattern(quiet.consumer, "t0")
    assert changed is not None and changed.rules == ("cg_client.subscribe.changed",)
    answered = machine.on_response(changed.consumer, CONFIG, ok(1)).consumer
    resent = beat(answered)
    assert resent.request is not None
    assert resent.request.subscribed_topic_regex == "t0"
    # HeartbeatState resends the names only when they changed: they did not.
    assert resent.request.subscribed_topic_names is None
    failed = machine.on_request_failed(resent.consumer).consumer
    full = beat(failed)
    assert full.request is not None
    assert (full.request.subscribed_topic_regex, full.request.subscribed_topic_names) == ("t0", ())


def test_a_pattern_change_needs_a_member_subscribed_by_pattern_and_another_pattern():
    by_names = machine.subscribe(KafkaConsumer("c1"), ("t0", "t1"))
    assert by_names is not None
    assert patterns.change_pattern(by_names.consumer, "t0") is None
    assert patterns.change_pattern(pattern_joined(), "t.*") is None
    assert patterns.subscribe_pattern(pattern_joined(), "t0") is None


def test_invalid_regular_expression_is_fatal_to_the_consumer():
    member = reconciled(
        machine.on_response(beat(pattern_joined()).consumer, CONFIG, ok(1, T00)).consumer
    )
    member = machine.on_response(beat(member).consumer, CONFIG, ok(1)).consumer
    error = ConsumerGroupHeartbeatResponse(ErrorCode.INVALID_REGULAR_EXPRESSION)
    step = machine.on_response(beat(member).consumer, CONFIG, error)
    assert step.consumer.state is S.FATAL
    assert step.rules == ("cg_client.error.fatal",)
    assert [c.name for c in step.callbacks] == ["onPartitionsLost"]


def test_leaving_forgets_the_pattern():
    member = reconciled(
        machine.on_response(beat(pattern_joined()).consumer, CONFIG, ok(1)).consumer
    )
    member = machine.on_response(beat(member).consumer, CONFIG, ok(1)).consumer
    preparing = machine.leave(member)
    assert preparing is not None
    released = machine.release_for_leave(preparing.consumer)
    assert released is not None and released.consumer.pattern is None


def test_a_replaced_target_with_the_held_partitions_is_reconciled_and_acknowledged():
    # Stable holding nothing, the member is given t0-0, then nothing again before reconciling:
    # Kafka's LocalAssignments differ (a new local epoch), so it reconciles and acknowledges.
    member = reconciled(
        machine.on_response(beat(pattern_joined()).consumer, CONFIG, ok(1)).consumer
    )
    member = machine.on_response(beat(member).consumer, CONFIG, ok(1)).consumer
    assert member.state is S.STABLE and member.current == ()
    given = machine.on_response(beat(member).consumer, CONFIG, ok(2, T00)).consumer
    assert given.state is S.RECONCILING
    taken_back = machine.on_response(beat(given).consumer, CONFIG, ok(2))
    assert taken_back.rules == ("cg_client.response.new_assignment",)
    assert taken_back.consumer.state is S.RECONCILING and taken_back.consumer.behind
    # The same target again is still not reconciled (the local epochs still differ).
    again = machine.on_response(beat(taken_back.consumer).consumer, CONFIG, ok(2))
    assert again.consumer.state is S.RECONCILING
    done = reconciled(again.consumer)
    assert done.state is S.ACKNOWLEDGING and not done.behind
    ack = beat(done)
    assert ack.request is not None and ack.request.topic_partitions == ()


# -- the world ---------------------------------------------------------------------------------


def steps(world: Kip848World, state: Kip848WorldState) -> dict[str, Transition[Kip848WorldState]]:
    found = {}
    for step in world.transitions(state):
        assert isinstance(step, Transition)
        found.setdefault(step.label, step)
    return found


def test_c1_subscribes_with_the_pattern_and_the_resolution_is_a_world_step():
    world = Kip848World(REGEX)
    (state,) = world.initial_states()
    state = steps(world, state)["subscribe(c1)"].state
    consumer = state.consumers[0]
    assert consumer is not None and consumer.pattern == "t.*"
    state = steps(world, state)["heartbeat(c1)"].state
    arrived = steps(world, state)["coordinator_receives(c1)"]
    assert "cg_regex.resolution_started" in arrived.rules
    assert "resolve_regex" not in steps(world, state)
    resolved = steps(world, arrived.state)["resolve_regex"]
    assert "cg_regex.resolved_changed" in resolved.rules
    group = resolved.state.coordinator.group("g")
    assert group is not None and group.resolved_regex("t.*") is not None


def test_the_refresh_step_moves_the_clock_once_past_the_refresh_interval():
    world = Kip848World(replace(REGEX, regex_refreshes=1))
    (state,) = world.initial_states()
    later = steps(world, state)["regex_refresh"].state
    assert later.now_ms == CONFIG.regex_refresh_interval_ms + 1
    assert later.now_ms > REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
    assert "regex_refresh" not in steps(world, later)


def test_a_resolution_after_the_refresh_finds_the_same_topics():
    result = check(Kip848World(replace(REGEX, regex_refreshes=1)))
    assert result.verdict == "pass"
    reached = set(result.search.rule_counts)
    assert {"cg_regex.resolved_unchanged", "cg_regex.resolved_changed"} <= reached


def test_without_the_refresh_no_second_resolution_starts():
    # At time 0 a group resolves once: the next resolution would be within 10 s of the last.
    result = check(Kip848World(REGEX))
    assert result.verdict == "pass"
    assert "cg_regex.resolved_unchanged" not in set(result.search.rule_counts)


_RDKAFKA = {"regex_subscriptions": True, "client": "librdkafka", "regex_pattern": "^t.*"}


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"regex_changes": 1}, "regex_changes"),
        ({"regex_refreshes": 1}, "regex_refreshes"),
        # librdkafka takes only a ^ entry as a pattern; its alternatives are patterns that
        # compile or topics of the cluster (a bare name subscribes by name).
        ({"regex_subscriptions": True, "client": "librdkafka"}, "regex_pattern"),
        ({**_RDKAFKA, "regex_pattern": "^t(?=1)"}, "regex_pattern"),
        (
            {**_RDKAFKA, "regex_changes": 1, "regex_alternatives": ("t0", "^t(?=1)")},
            "regex_alternatives",
        ),
        ({**_RDKAFKA, "regex_changes": 1, "regex_alternatives": ("t9",)}, "regex_alternatives"),
        ({**_RDKAFKA, "regex_changes": 1, "kafka_version": "3.9"}, "client"),
        ({"regex_subscriptions": True, "kafka_version": "3.9"}, "regex_subscriptions"),
        ({"regex_subscriptions": True, "regex_pattern": ""}, "regex_pattern"),
        ({"regex_subscriptions": True, "regex_alternatives": ("",)}, "regex_alternatives"),
    ],
)
def test_regex_parameters_are_refused_where_they_mean_nothing(changes, key):
    with pytest.raises(ParameterError) as refused:
        Kip848Parameters(**changes)
    assert refused.value.key == key


def test_librdkafka_subscribes_by_pattern_and_switches_to_names_or_patterns():
    accepted = Kip848Parameters(**_RDKAFKA, regex_alternatives=("t0", "^t1"), regex_changes=2)  # type: ignore[arg-type]
    assert accepted.regex_alternatives == ("t0", "^t1")
    # Without a change the alternatives (by default the Java consumer's patterns) are not used.
    assert Kip848Parameters(**_RDKAFKA).regex_alternatives == ("t0", "t(?=1)")  # type: ignore[arg-type]


def test_the_regex_parameters_default_off():
    defaults = Kip848Parameters()
    assert not defaults.regex_subscriptions
    assert (defaults.regex_changes, defaults.regex_refreshes) == (0, 0)


# -- what a resolving member is allowed --------------------------------------------------------


def test_a_member_joining_with_an_unresolved_expression_refines_without_a_new_epoch():
    outcome = a_joined_with_regex()
    group = outcome.state.group("g")
    assert group is not None and group.group_epoch == 1  # the join's, not a subscription bump
    assert refinement_problems(type(outcome.state)(), outcome.state) == []


def test_a_member_narrowed_to_an_unresolved_expression_keeps_the_invariants():
    # a holds t0's partitions through "t0", then switches to "t1" (unresolved): no new epoch,
    # a holds nothing, the group is Stable with a target that predates the switch.
    state = a_resolved("t0")
    group = state.group("g")
    assert group is not None
    epoch = group.group_epoch
    switching = only(send(state, subscribe("a", epoch, "t1"), 2_000)).state
    assert refinement_problems(state, switching) == []
    # a revokes t0's partitions, which its new subscription no longer covers.
    switched = only(send(switching, request("a", epoch), 2_100)).state
    after = switched.group("g")
    assert after is not None and after.group_epoch == epoch
    member = after.member("a")
    assert member is not None and member.assigned == frozenset() and after.target_of("a")
    assert after.state.value == "Stable"
    assert refinement_problems(switching, switched) == []
    for invariant in KIP848_INVARIANTS:
        if invariant.name != "LogReplaysToGroups":
            assert list(invariant.check(switched)) == [], invariant.name
    # The switch dropped the last resolution ("t0", tombstoned), so one started for "t1"; it
    # moves the epoch on, and the next heartbeat computes the new target.
    resolved = only(send(switched, RESOLVED, 30_000)).state
    later = resolved.group("g")
    assert later is not None and later.group_epoch == epoch + 1
    assert refinement_problems(switched, resolved) == []


def test_a_resolution_that_drops_every_subscribed_topic_moves_the_epoch_on():
    # a holds every partition through "t.*", then switches to "x.*", which matches no topic:
    # the switch tombstones "t.*" (no new epoch: "x.*" is unresolved) and starts a resolution.
    state = a_resolved("t.*")
    group = state.group("g")
    assert group is not None
    epoch = group.group_epoch
    switching = only(send(state, subscribe("a", epoch, "x.*"), 2_000)).state
    resolved = only(send(switching, RESOLVED, 3_000)).state
    after = resolved.group("g")
    assert after is not None
    # The group subscribes to no topic any more: its metadata hash differs from the one its last
    # epoch bump recorded (t0 and t1), so Kafka bumps the epoch (handleRegularExpressionsResult,
    # 4.0.0's subscription metadata, 4.1.0+'s metadata hash) and the next heartbeat computes a
    # target without t0 and t1.
    assert after.group_epoch == epoch + 1
    assert after.metadata_hash == ()
    assert refinement_problems(switching, resolved) == []
