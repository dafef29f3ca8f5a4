"""librdkafka's consumer subscribing by pattern (spec/kip848/consumer/librdkafka_subscriptions.py):
the requests it sends when it switches from a `^` pattern to topic names (an empty
SubscribedTopicRegex) and back (no names), each against librdkafka v2.15.0's
src/rdkafka_cgrp.c and where the Java consumer does otherwise; the coordinator dropping the
expression (cg_regex.unsubscribed) on those requests; and preset kip848-librdkafka-regex-1."""

from __future__ import annotations

from dataclasses import replace

from kip848_helpers import SPEC, answer, only, send
from kip848_regex_scenarios import RESOLVED
from test_kip848_consumer import CONFIG, ok

from groupspec.checker.check import check
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.consumer import librdkafka, machine, patterns
from groupspec.spec.kip848.consumer.librdkafka import RdKafkaConsumer
from groupspec.spec.kip848.consumer.librdkafka_subscriptions import (
    combined_pattern,
    resubscribe,
    split,
    subscribe,
)
from groupspec.spec.kip848.consumer.machine import ClientStep, ConsumerState, KafkaConsumer
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.requests import TopicPartition

T00, T01, T10 = TopicPartition("t0", 0), TopicPartition("t0", 1), TopicPartition("t1", 0)
S = ConsumerState
PRESET = "kip848-librdkafka-regex-1"


def rd(step: ClientStep | None) -> RdKafkaConsumer:
    assert step is not None
    assert isinstance(step.consumer, RdKafkaConsumer)
    return step.consumer


def beat(consumer: RdKafkaConsumer) -> tuple[RdKafkaConsumer, ConsumerGroupHeartbeatRequest]:
    step = librdkafka.heartbeat(consumer, CONFIG)
    assert step is not None and step.request is not None
    return rd(step), step.request


def stable(entries: tuple[str, ...], *partitions: TopicPartition) -> RdKafkaConsumer:
    """c1 subscribed to `entries`, at epoch 2, Stable holding `partitions`, nothing in flight."""
    consumer, _ = beat(rd(subscribe(RdKafkaConsumer("c1"), entries)))
    consumer = rd(librdkafka.on_response(consumer, CONFIG, ok(2, *partitions)))
    revoked = librdkafka.revoke(consumer)
    consumer = rd(librdkafka.assign(rd(revoked) if revoked else consumer))
    consumer, _ = beat(consumer)
    consumer = rd(librdkafka.on_response(consumer, CONFIG, ok(2)))
    assert consumer.state is S.STABLE and consumer.owned == tuple(sorted(partitions))
    return consumer


# -- the subscription list ---------------------------------------------------------------------


def test_the_patterns_of_a_list_are_combined_into_one_in_its_order():
    """rd_kafka_topic_partition_list_combine_regexes: each ^ entry in parentheses, joined by |."""
    assert combined_pattern(("^t.*",)) == "(^t.*)"
    assert combined_pattern(("^b", "t0", "^a")) == "(^b)|(^a)"
    assert combined_pattern(("t1", "t0")) == ""
    assert split(("t1", "^t0.*", "t0", "t1")) == (("t0", "t1"), "(^t0.*)")
    assert split(("t0",)) == (("t0",), None)


def test_a_pattern_join_sends_the_combined_pattern_and_an_empty_list_of_names():
    """cg_rdkafka.heartbeat.full_sent: names and regex go together; Java's pattern join sends
    the pattern as it is."""
    joining = rd(subscribe(RdKafkaConsumer("c1", instance_id="i1"), ("^t.*",)))
    assert joining.state is S.JOINING
    step = librdkafka.heartbeat(joining, CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.full_sent",)
    assert (step.request.subscribed_topic_names, step.request.subscribed_topic_regex) == (
        (),
        "(^t.*)",
    )
    _, request = beat(rd(subscribe(RdKafkaConsumer("c1"), ("t1", "^t0"))))
    assert (request.subscribed_topic_names, request.subscribed_topic_regex) == (("t1",), "(^t0)")
    java = patterns.subscribe_pattern(KafkaConsumer("c1"), "t.*")
    assert java is not None
    java_join = machine.heartbeat(java.consumer, CONFIG)
    assert java_join is not None and java_join.request is not None
    assert java_join.request.subscribed_topic_regex == "t.*"


def test_from_a_pattern_to_names_the_next_heartbeat_sends_an_empty_regex():
    """cg_rdkafka.subscribe.changed, then cg_rdkafka.heartbeat.subscription_sent: the Java
    consumer cannot make this switch without unsubscribe()."""
    member = stable(("^t.*",), T00)
    changed = resubscribe(member, ("t0",))
    assert changed is not None and changed.rules == ("cg_rdkafka.subscribe.changed",)
    assert changed.callbacks == () and changed.request is None
    switched = rd(changed)
    assert (switched.subscription, switched.pattern, switched.owned) == (("t0",), None, (T00,))
    step = librdkafka.heartbeat(switched, CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == ("cg_rdkafka.heartbeat.sent", "cg_rdkafka.heartbeat.subscription_sent")
    request = step.request
    assert (request.subscribed_topic_names, request.subscribed_topic_regex) == (("t0",), "")
    assert (request.member_epoch, request.instance_id, request.rebalance_timeout_ms) == (
        2,
        None,
        -1,
    )
    assert request.topic_partitions is None
    # Sent once: the next heartbeat on the interval carries no subscription.
    quiet, again = beat(rd(librdkafka.on_response(rd(step), CONFIG, ok(2))))
    assert (again.subscribed_topic_names, again.subscribed_topic_regex) == (None, None)
    assert not quiet.send_subscription


def test_from_names_to_a_pattern_the_next_heartbeat_sends_no_names():
    member = stable(("t0", "t1"), T00, T10)
    switched = rd(resubscribe(member, ("^t1",)))
    assert (switched.subscription, switched.pattern) == ((), "(^t1)")
    _, request = beat(switched)
    assert (request.subscribed_topic_names, request.subscribed_topic_regex) == ((), "(^t1)")


def test_a_changed_subscription_waits_while_a_reconciliation_runs():
    """cg_rdkafka.heartbeat.subscription_postponed: Java's HeartbeatState sends a changed
    subscription with its next heartbeat, whatever the reconciliation."""
    member = stable(("^t.*",), T00)
    member, _ = beat(member)
    reconciling = rd(librdkafka.on_response(member, CONFIG, ok(3, T00, T10)))
    assert reconciling.state is S.RECONCILING and reconciling.reconciling == (T00, T10)
    switched = rd(resubscribe(reconciling, ("t0",)))
    step = librdkafka.heartbeat(switched, CONFIG)
    assert step is not None and step.request is not None
    assert step.rules == (
        "cg_rdkafka.heartbeat.sent",
        "cg_rdkafka.heartbeat.subscription_postponed",
    )
    assert (step.request.subscribed_topic_names, step.request.subscribed_topic_regex) == (
        None,
        None,
    )
    waiting = rd(librdkafka.on_response(rd(step), CONFIG, ok(3)))
    assert waiting.send_subscription
    acknowledging = rd(librdkafka.assign(waiting))
    ack = librdkafka.heartbeat(acknowledging, CONFIG)
    assert ack is not None and ack.request is not None
    assert ack.rules == ("cg_rdkafka.heartbeat.ack_sent", "cg_rdkafka.heartbeat.subscription_sent")
    assert (ack.request.subscribed_topic_names, ack.request.subscribed_topic_regex) == (("t0",), "")
    java = KafkaConsumer(
        "c1",
        state=S.RECONCILING,
        member_epoch=3,
        subscription=("t0",),
        owned=(T00,),
        current=(T00,),
        target=(T00, T10),
        send_subscription=True,
        send_rebalance_timeout=False,
        send_owned=False,
    )
    java_step = machine.heartbeat(java, CONFIG)
    assert java_step is not None and java_step.request is not None
    assert java_step.request.subscribed_topic_names == ("t0",)


def test_only_a_member_not_leaving_subscribes_again_and_only_to_something_else():
    member = stable(("^t.*",), T00)
    assert resubscribe(member, ("^t.*",)) is None
    assert resubscribe(RdKafkaConsumer("c1"), ("t0",)) is None
    preparing = rd(librdkafka.leave(member))
    assert preparing.state is S.PREPARE_LEAVING
    assert resubscribe(preparing, ("t0",)) is None
    assert resubscribe(replace(member, state=S.FATAL), ("t0",)) is None
    fenced = rd(resubscribe(replace(member, state=S.FENCED, member_epoch=0), ("t0",)))
    rejoining = rd(machine.release_lost(fenced))
    _, request = beat(rejoining)
    assert (request.member_epoch, request.subscribed_topic_names) == (0, ("t0",))
    assert request.subscribed_topic_regex == ""
    assert subscribe(member, ("t0",)) is None


# -- at the coordinator ------------------------------------------------------------------------


def _exchange(
    state: ConsumerGroupsState, consumer: RdKafkaConsumer, now_ms: int
) -> tuple[ConsumerGroupsState, RdKafkaConsumer, tuple[str, ...]]:
    """One heartbeat of the consumer to the coordinator and its answer."""
    consumer, request = beat(consumer)
    outcome = only(send(state, request, now_ms))
    consumer = rd(librdkafka.on_response(consumer, CONFIG, answer(outcome)))
    return outcome.state, consumer, outcome.rules


def _settled(
    state: ConsumerGroupsState, consumer: RdKafkaConsumer, now_ms: int
) -> tuple[ConsumerGroupsState, RdKafkaConsumer]:
    """The consumer after reconciling what it was given and acknowledging it."""
    while consumer.state in (S.RECONCILING, S.ACKNOWLEDGING):
        step = librdkafka.revoke(consumer) or librdkafka.assign(consumer)
        if step is not None:
            consumer = rd(step)
        else:
            state, consumer, _ = _exchange(state, consumer, now_ms)
    return state, consumer


def test_the_coordinator_drops_the_expression_on_the_empty_regex():
    """cg_regex.unsubscribed (and cg_regex.tombstone: the member was its last subscriber), from
    the requests the librdkafka consumer sends."""
    consumer = rd(subscribe(RdKafkaConsumer("c1"), ("^t.*",)))
    state, consumer, rules = _exchange(SPEC.initial_state(), consumer, 0)
    assert "cg_regex.subscribed_unresolved" in rules
    state = only(send(state, RESOLVED, 1_000)).state
    group = state.group("g")
    assert group is not None and group.resolved_regex("(^t.*)") is not None
    switched = rd(resubscribe(consumer, ("t0",)))
    state, switched, rules = _exchange(state, switched, 2_000)
    assert {"cg_regex.unsubscribed", "cg_regex.tombstone"} <= set(rules)
    group = state.group("g")
    assert group is not None and group.resolved_regexes == ()
    member = group.member("c1")
    assert member is not None
    assert (member.subscribed_topic_regex, member.subscribed_topic_names) == ("", {"t0"})
    state, switched = _settled(state, switched, 2_500)
    back = rd(resubscribe(switched, ("^t.*",)))
    state, _, rules = _exchange(state, back, 3_000)
    assert "cg_regex.subscribed_unresolved" in rules
    member = state.group("g").member("c1")  # type: ignore[union-attr]
    assert member is not None
    assert (member.subscribed_topic_regex, member.subscribed_topic_names) == ("(^t.*)", set())


# -- the preset --------------------------------------------------------------------------------


def test_the_preset_reaches_the_empty_regex_and_the_new_librdkafka_rules():
    loaded = load_model(PRESET)
    result = check(loaded.model)
    assert result.verdict == "pass"
    reached = set(result.search.rule_counts)
    assert {
        "cg_regex.unsubscribed",
        "cg_rdkafka.subscribe.changed",
        "cg_rdkafka.heartbeat.subscription_sent",
        "cg_rdkafka.heartbeat.subscription_postponed",
    } <= reached
    # The Java consumer's pattern switch is a rule of its own; librdkafka never fires it.
    assert "cg_client.subscribe.changed" not in reached
