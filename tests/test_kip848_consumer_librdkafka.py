"""librdkafka's KIP-848 consumer (spec/kip848/consumer/librdkafka.py): one scenario per
`cg_rdkafka.*` rule, each against what librdkafka v2.15.0's src/rdkafka_cgrp.c does and where the
Java consumer does otherwise; a Hypothesis run of its steps; and the KIP-848 world with
`client=librdkafka`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kip848_consumer import CONFIG, ok

from groupspec.checker.check import check
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.models.parameters import ParameterError
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848.consumer import librdkafka, librdkafka_subscriptions, machine
from groupspec.spec.kip848.consumer.librdkafka import RdKafkaConsumer
from groupspec.spec.kip848.consumer.machine import ClientStep, ConsumerState, KafkaConsumer
from groupspec.spec.kip848.consumer.rules import KIP848_CONSUMER_RULE_IDS
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

T00, T01, T10 = TopicPartition("t0", 0), TopicPartition("t0", 1), TopicPartition("t1", 0)
S = ConsumerState
RDKAFKA_RULES = {r for r in KIP848_CONSUMER_RULE_IDS if r.startswith("cg_rdkafka.")}


def error(code: ErrorCode) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(code, member_id="", member_epoch=0)


def rd(step: ClientStep | None) -> RdKafkaConsumer:
    assert step is not None
    assert isinstance(step.consumer, RdKafkaConsumer)
    return step.consumer


def joined(instance_id: str | None = None) -> RdKafkaConsumer:
    return rd(librdkafka.subscribe(RdKafkaConsumer("c1", instance_id=instance_id), ("t0", "t1")))


def sent(consumer: RdKafkaConsumer) -> RdKafkaConsumer:
    return rd(librdkafka.heartbeat(consumer, CONFIG))


def reconciled(consumer: RdKafkaConsumer) -> RdKafkaConsumer:
    """Revoke (if anything) then assign."""
    revoked = librdkafka.revoke(consumer)
    if revoked is not None:
        consumer = rd(revoked)
    return rd(librdkafka.assign(consumer))


def stable_with(*partitions: TopicPartition, instance_id: str | None = None) -> RdKafkaConsumer:
    """c1 at epoch 2, Stable holding `partitions`, its acknowledgement answered."""
    consumer = librdkafka.on_response(sent(joined(instance_id)), CONFIG, ok(2, *partitions))
    acked = sent(reconciled(rd(consumer)))
    stable = rd(librdkafka.on_response(acked, CONFIG, ok(2)))
    assert stable.state is S.STABLE and stable.owned == tuple(sorted(partitions))
    return stable


def test_the_join_is_a_full_v1_heartbeat_with_an_empty_regex():
    """cg_rdkafka.heartbeat.full_sent; Java sends its negotiated version and no regex."""
    step = librdkafka.heartbeat(joined("i1"), CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.full_sent",)
    request = step.request
    assert (request.api_version, request.member_epoch, request.instance_id) == (1, 0, "i1")
    assert request.subscribed_topic_names == ("t0", "t1")
    assert request.subscribed_topic_regex == ""
    assert request.rebalance_timeout_ms == machine.REBALANCE_TIMEOUT_MS
    assert request.topic_partitions == ()
    java = machine.heartbeat(KafkaConsumer("c1", state=S.JOINING, subscription=("t0",)), CONFIG)
    assert java is not None and java.request is not None
    assert java.request.subscribed_topic_regex is None


def test_a_regular_heartbeat_leaves_out_the_instance_id():
    """cg_rdkafka.heartbeat.sent: Java's HeartbeatState sends group.instance.id every time."""
    step = librdkafka.heartbeat(stable_with(T00, instance_id="i1"), CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.sent",)
    assert step.request.instance_id is None
    assert step.request.subscribed_topic_names is None and step.request.topic_partitions is None
    java = KafkaConsumer("c1", state=S.STABLE, instance_id="i1", member_epoch=2)
    java_step = machine.heartbeat(replace(java, send_subscription=False, send_owned=False), CONFIG)
    assert java_step is not None and java_step.request is not None
    assert java_step.request.instance_id == "i1"


def test_after_a_coordinator_error_the_next_heartbeat_is_full_again():
    consumer = sent(stable_with(T00, instance_id="i1"))
    failed = rd(librdkafka.on_response(consumer, CONFIG, error(ErrorCode.NOT_COORDINATOR)))
    step = librdkafka.heartbeat(failed, CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.full_sent",)
    assert step.request.instance_id == "i1" and step.request.member_epoch == 2
    assert step.request.topic_partitions == machine.topic_partitions(CONFIG, (T00,))


def test_the_acknowledgement_carries_the_reconciled_assignment():
    """cg_rdkafka.heartbeat.ack_sent."""
    consumer = rd(librdkafka.on_response(sent(joined("i1")), CONFIG, ok(2, T00, T10)))
    step = librdkafka.heartbeat(reconciled(consumer), CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.ack_sent",)
    assert step.request.topic_partitions == machine.topic_partitions(CONFIG, (T00, T10))
    assert step.request.instance_id is None
    assert step.consumer.state is S.STABLE


def test_a_new_assignment_waits_for_the_acknowledgement():
    """cg_rdkafka.response.postponed, then cg_rdkafka.response.next_started. Java's
    processAssignmentReceived replaces the target at once and reconciles from the newest."""
    consumer = rd(librdkafka.on_response(sent(joined()), CONFIG, ok(2, T00)))
    in_flight = sent(replace(consumer, in_flight=False))  # a heartbeat on the interval
    assert in_flight.state is S.RECONCILING and in_flight.reconciling == (T00,)
    later = librdkafka.on_response(in_flight, CONFIG, ok(3, T00, T01))
    assert later.rules == ("cg_rdkafka.response.postponed",)
    waiting = rd(later)
    assert (waiting.reconciling, waiting.target) == ((T00,), (T00, T01))
    acked = sent(reconciled(waiting))
    assert acked.state is S.RECONCILING and acked.reconciling is None
    assert librdkafka.revoke(acked) is None and librdkafka.assign(acked) is None
    answered = librdkafka.on_response(acked, CONFIG, ok(3))
    assert answered.rules == ("cg_client.response.epoch", "cg_rdkafka.response.next_started")
    assert rd(answered).reconciling == (T00, T01)


def test_the_assignment_being_reconciled_again_changes_nothing():
    """cg_rdkafka.response.same_assignment: compared with the assignment being reconciled."""
    consumer = rd(librdkafka.on_response(sent(joined()), CONFIG, ok(2, T00)))
    again = librdkafka.on_response(sent(consumer), CONFIG, ok(2, T00))
    assert again.rules == ("cg_rdkafka.response.same_assignment",)
    assert rd(again).state is S.RECONCILING and rd(again).reconciling == (T00,)


def test_a_joining_member_given_nothing_stays_joining():
    """An empty assignment equals the empty one a joining librdkafka member holds; the Java
    consumer takes it as new and goes through Reconciling to Stable."""
    step = librdkafka.on_response(sent(joined()), CONFIG, ok(2, None))
    assert step.rules == ("cg_rdkafka.response.same_assignment",)
    assert rd(step).state is S.JOINING and rd(step).member_epoch == 2
    java = machine.on_response(
        replace(KafkaConsumer("c1", state=S.JOINING), in_flight=True), CONFIG, ok(2, None)
    )
    assert java.consumer.state is S.RECONCILING


def test_a_member_preparing_to_leave_sends_no_heartbeat():
    """cg_rdkafka.leave.prepare: Java's PrepareLeaving keeps heartbeating on the interval."""
    step = librdkafka.leave(stable_with(T00))
    assert step is not None and step.rules == ("cg_rdkafka.leave.prepare",)
    assert rd(step).state is S.PREPARE_LEAVING
    assert librdkafka.heartbeat(rd(step), CONFIG) is None
    assert machine.heartbeat(rd(step), CONFIG) is not None


def test_the_leave_goes_out_with_a_heartbeat_in_flight():
    """cg_rdkafka.heartbeat.leave_sent: static members leave at -2; the subscription waits for
    both answers."""
    preparing = rd(librdkafka.leave(sent(stable_with(T00, instance_id="i1"))))
    leaving = rd(machine.release_for_leave(preparing))
    step = librdkafka.heartbeat(leaving, CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.leave_sent",)
    assert (step.request.member_epoch, step.request.instance_id) == (-2, "i1")
    out = rd(step)
    assert (out.state, out.in_flight, out.second_in_flight) == (S.UNSUBSCRIBED, True, True)
    assert machine.heartbeat(leaving, CONFIG) is None  # Java waits for the one in flight
    once = rd(librdkafka.on_response(out, CONFIG, ok(2)))
    assert librdkafka.subscribe(once, ("t0",)) is None
    twice = rd(librdkafka.on_response(once, CONFIG, ok(-2)))
    assert librdkafka.subscribe(twice, ("t0",)) is not None


def test_load_in_progress_retries_the_same_request():
    """cg_rdkafka.error.load_in_progress_retried: Java sends a full heartbeat instead."""
    consumer = stable_with(T00, instance_id="i1")
    first = librdkafka.heartbeat(consumer, CONFIG)
    assert first is not None and first.request is not None
    retried = librdkafka.on_response(
        rd(first), CONFIG, error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    )
    assert retried.rules == ("cg_rdkafka.error.load_in_progress_retried",)
    assert retried.request == first.request and rd(retried).in_flight
    assert retried.request.instance_id is None
    java = machine.on_response(rd(first), CONFIG, error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    java_next = machine.heartbeat(java.consumer, CONFIG)
    assert java_next is not None and java_next.request is not None
    assert java_next.request.instance_id == "i1"
    assert java_next.request.subscribed_topic_names == ("t0", "t1")
    leaving = rd(librdkafka.leave(rd(first)))
    dropped = librdkafka.on_response(leaving, CONFIG, error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    assert dropped.request is None and not rd(dropped).in_flight


@pytest.mark.parametrize(
    "code", [ErrorCode.GROUP_MAX_SIZE_REACHED, ErrorCode.UNRELEASED_INSTANCE_ID]
)
def test_the_errors_that_agree_are_the_java_consumers(code: ErrorCode):
    """Fatal errors and fencing: the same moves and callbacks as the Java consumer."""
    consumer = sent(stable_with(T00))
    for response in (error(code), error(ErrorCode.FENCED_MEMBER_EPOCH)):
        ours = librdkafka.on_response(consumer, CONFIG, response)
        java = machine.on_response(consumer, CONFIG, response)
        assert (ours.rules, ours.callbacks) == (java.rules, java.callbacks)
        assert replace(ours.consumer, sent=None) == replace(java.consumer, sent=None)  # type: ignore[call-arg]


def test_every_librdkafka_rule_has_a_scenario_here():
    """Here, or for subscribing by pattern in tests/test_kip848_librdkafka_subscriptions.py."""
    here = Path(__file__)
    source = "".join(
        path.read_text(encoding="utf-8")
        for path in (here, here.with_name("test_kip848_librdkafka_subscriptions.py"))
    )
    assert RDKAFKA_RULES and all(rule in source for rule in RDKAFKA_RULES)


_RESPONSES = st.sampled_from(
    [
        ok(2),
        ok(3, None),
        ok(3, T00),
        ok(4, T00, T10),
        ok(5, T01),
        error(ErrorCode.FENCED_MEMBER_EPOCH),
        error(ErrorCode.NOT_COORDINATOR),
        error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
    ]
)
_ACTIONS = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "heartbeat",
                "revoke",
                "assign",
                "leave",
                "release",
                "lost",
                "failed",
                "names",
                "regex",
            ]
        ),
        _RESPONSES,
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_ACTIONS)
def test_librdkafka_steps_keep_its_invariants(actions: list[object]):
    """Any sequence of steps: every move is one MemberState allows (move would raise), the
    application never holds what it did not get through a callback, revocation and assignment
    only run for a reconciliation started, a response only comes to a request in flight, and
    what the member reports is what the application holds; a subscription changed between
    names and a pattern goes out as both fields, never in a revocation or assignment."""
    consumer = joined("i1")
    for action in actions:
        step: ClientStep | None
        if isinstance(action, ConsumerGroupHeartbeatResponse):
            if not consumer.in_flight:
                continue
            step = librdkafka.on_response(consumer, CONFIG, action)
        elif action == "heartbeat":
            step = librdkafka.heartbeat(consumer, CONFIG)
        elif action == "revoke":
            step = librdkafka.revoke(consumer)
        elif action == "assign":
            step = librdkafka.assign(consumer)
            if step is not None:
                assert consumer.reconciling is not None
        elif action == "leave":
            step = librdkafka.leave(consumer)
        elif action == "release":
            step = machine.release_for_leave(consumer) or machine.release_lost(consumer)
        elif action == "failed":
            step = librdkafka.on_request_failed(consumer) if consumer.in_flight else None
        elif action in ("names", "regex"):
            entries = ("t0",) if action == "names" else ("^t.*",)
            step = librdkafka_subscriptions.resubscribe(consumer, entries)
        else:
            step = None
        if step is None:
            continue
        before = set(consumer.owned)
        after = rd(step)
        gained = set(after.owned) - before
        given_now = {
            p for c in step.callbacks if c.name == "onPartitionsAssigned" for p in c.partitions
        }
        assert gained <= given_now
        if after.state is S.STABLE:
            assert after.current == after.owned or after.current is None
        assert not after.second_in_flight or after.in_flight
        if step.request is not None and step.request.member_epoch >= 0:
            # Names and regex go together, and a changed one never during a revocation or
            # assignment unless the heartbeat is full.
            request = step.request
            assert (request.subscribed_topic_names is None) == (
                request.subscribed_topic_regex is None
            )
            if consumer.reconciling is not None and request.rebalance_timeout_ms == -1:
                assert request.subscribed_topic_names is None
        consumer = after


def _check(**overrides: object) -> Kip848World:
    return Kip848World(Kip848Parameters(**overrides))  # type: ignore[arg-type]


def test_the_world_refuses_what_librdkafka_cannot_do_or_was_not_compared():
    with pytest.raises(ParameterError, match="client"):
        Kip848Parameters(client="librdkafka", kafka_version="3.9")
    for budget in ("poll_expiries", "subscription_changes", "commits"):
        with pytest.raises(ParameterError, match=budget):
            Kip848Parameters(client="librdkafka", **{budget: 1})  # type: ignore[arg-type]


def test_a_librdkafka_world_runs_librdkafka_consumers():
    world = _check(client="librdkafka")
    (initial,) = world.initial_states()
    assert all(isinstance(c, RdKafkaConsumer) for c in initial.consumers)
    assert isinstance(_check().initial_states()[0].consumers[0], KafkaConsumer)
    assert not isinstance(_check().initial_states()[0].consumers[0], RdKafkaConsumer)


def _world(preset: str, **overrides: object) -> Kip848World:
    """A preset's world with `overrides` on its parameters."""
    loaded = load_model(preset)
    assert isinstance(loaded.model, Kip848World)
    return Kip848World(replace(loaded.model.parameters, **overrides))


@pytest.mark.parametrize(
    ("preset", "overrides", "states"),
    [
        ("kip848-uniform-2", {}, 3393),
        ("kip848-faults-1", {"subscription_changes": 0}, 1965),
        ("kip848-static-1", {}, 2796),
        ("kip848-failover-1", {"subscription_changes": 0}, 2097),
    ],
)
def test_librdkafka_consumers_keep_every_property_of_the_java_presets(preset, overrides, states):
    """The figures docs/kip-848.md quotes ("What the world found")."""
    result = check(_world(preset, client="librdkafka", **overrides))
    assert (result.verdict, result.search.distinct_states) == ("pass", states)
    assert [item.verdict for item in result.liveness] == ["pass"]


@pytest.mark.parametrize(("client", "steps"), [("java", 14), ("librdkafka", 13)])
def test_two_static_members_reach_the_coordinators_unrevoked_state_with_either_client(
    client, steps
):
    """Not librdkafka's: the coordinator keeps a -2 leaver in UnrevokedPartitions with nothing
    to revoke whichever client leaves; librdkafka gets there a step sooner (its leave overtakes
    the heartbeat in flight)."""
    world = _world("kip848-static-1", client=client, consumers=2, crashes=0, message_losses=0)
    result = check(world)
    assert result.failed == ("UnrevokedHasRevocations",)
    assert len(result.search.problems[0].path) - 1 == steps  # the path counts the root
