"""The KIP-848 consumer's state machine (spec/kip848/consumer/): MemberState's legal moves, the
heartbeat's fields, reconciliation (revoke first, then assign, then acknowledge), errors and
leaving, each step against what Kafka's AbstractMembershipManager does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupspec.coverage.rule_index import KIP848_CONSUMER_SIDE, rule_places
from groupspec.spec.kip848 import ConsumerGroupConfig
from groupspec.spec.kip848.consumer import machine
from groupspec.spec.kip848.consumer.machine import (
    LEGAL_PREDECESSORS,
    ConsumerState,
    IllegalTransitionError,
    KafkaConsumer,
)
from groupspec.spec.kip848.consumer.rules import KIP848_CONSUMER_RULE_IDS
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupTopicPartitions,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

CONFIG = ConsumerGroupConfig()  # t0 (2 partitions), t1 (1)
T00, T01, T10 = TopicPartition("t0", 0), TopicPartition("t0", 1), TopicPartition("t1", 0)
S = ConsumerState


def ok(epoch: int, *partitions: TopicPartition | None) -> ConsumerGroupHeartbeatResponse:
    """A successful response at `epoch`, with these partitions as its assignment (none given: no
    assignment; a single None: an empty assignment)."""
    assignment = None
    if partitions:
        chosen = [p for p in partitions if p is not None]
        assignment = ConsumerGroupHeartbeatAssignment(machine.topic_partitions(CONFIG, chosen))
    return ConsumerGroupHeartbeatResponse(
        ErrorCode.NONE, member_id="c1", member_epoch=epoch, assignment=assignment
    )


def joined() -> KafkaConsumer:
    step = machine.subscribe(KafkaConsumer("c1"), ("t0", "t1"))
    assert step is not None
    return step.consumer


def sent(consumer: KafkaConsumer) -> KafkaConsumer:
    step = machine.heartbeat(consumer, CONFIG)
    assert step is not None
    return step.consumer


def stable_with(*partitions: TopicPartition) -> KafkaConsumer:
    """c1 at epoch 2, Stable, holding `partitions`, nothing in flight."""
    consumer = machine.on_response(sent(joined()), CONFIG, ok(2, *partitions)).consumer
    while consumer.state is S.RECONCILING:
        step = machine.revoke(consumer) or machine.assign(consumer)
        assert step is not None
        consumer = step.consumer
    consumer = sent(consumer)
    consumer = machine.on_response(consumer, CONFIG, ok(2)).consumer
    assert consumer.state is S.STABLE and consumer.owned == tuple(sorted(partitions))
    return consumer


def test_the_legal_moves_are_member_states_table():
    assert set(LEGAL_PREDECESSORS) == set(ConsumerState)
    assert LEGAL_PREDECESSORS[S.ACKNOWLEDGING] == {S.RECONCILING}
    assert LEGAL_PREDECESSORS[S.LEAVING] == {S.PREPARE_LEAVING}
    assert LEGAL_PREDECESSORS[S.STALE] == {S.LEAVING}
    assert LEGAL_PREDECESSORS[S.JOINING] == {S.FENCED, S.UNSUBSCRIBED, S.STALE}


def test_an_illegal_move_is_refused():
    with pytest.raises(IllegalTransitionError, match="Unsubscribed -> Acknowledging"):
        machine.move(KafkaConsumer("c1"), S.ACKNOWLEDGING)


def test_joining_sends_every_field_at_epoch_zero():
    step = machine.heartbeat(joined(), CONFIG)
    assert step is not None and step.request is not None
    request = step.request
    assert (request.member_id, request.member_epoch) == ("c1", 0)
    assert request.subscribed_topic_names == ("t0", "t1")
    assert request.rebalance_timeout_ms == machine.REBALANCE_TIMEOUT_MS
    assert request.topic_partitions == ()
    assert step.rules == ("cg_client.heartbeat.join_sent",)
    assert machine.heartbeat(step.consumer, CONFIG) is None  # one heartbeat in flight


def test_a_stable_heartbeat_carries_only_what_changed():
    consumer = stable_with(T00)
    step = machine.heartbeat(consumer, CONFIG)
    assert step is not None and step.request is not None
    assert step.request.topic_partitions is None
    assert step.request.subscribed_topic_names is None
    assert step.request.rebalance_timeout_ms == -1


def test_reconciliation_revokes_first_then_assigns_then_acknowledges():
    consumer = stable_with(T00, T01)
    consumer = machine.on_response(sent(consumer), CONFIG, ok(3, T00, T10)).consumer
    assert consumer.state is S.RECONCILING
    assert machine.assign(consumer) is None  # T01 must be revoked first
    revoked = machine.revoke(consumer)
    assert revoked is not None
    assert [(c.name, c.partitions) for c in revoked.callbacks] == [("onPartitionsRevoked", (T01,))]
    assert revoked.consumer.owned == (T00,)
    assigned = machine.assign(revoked.consumer)
    assert assigned is not None
    assert [(c.name, c.partitions) for c in assigned.callbacks] == [
        ("onPartitionsAssigned", (T10,))
    ]
    assert assigned.consumer.state is S.ACKNOWLEDGING
    ack = machine.heartbeat(assigned.consumer, CONFIG)
    assert ack is not None and ack.request is not None
    assert ack.request.member_epoch == 3
    assert ack.request.topic_partitions == machine.topic_partitions(CONFIG, (T00, T10))
    assert ack.consumer.state is S.STABLE


@pytest.mark.parametrize("error", [ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID])
def test_fencing_releases_everything_and_rejoins_at_epoch_zero(error):
    consumer = sent(stable_with(T00, T10))
    fenced = machine.on_response(consumer, CONFIG, ConsumerGroupHeartbeatResponse(error)).consumer
    assert (fenced.state, fenced.member_epoch, fenced.owned) == (S.FENCED, 0, (T00, T10))
    lost = machine.release_lost(fenced)
    assert lost is not None
    assert [(c.name, c.partitions) for c in lost.callbacks] == [("onPartitionsLost", (T00, T10))]
    rejoining = lost.consumer
    assert (rejoining.state, rejoining.member_id, rejoining.owned) == (S.JOINING, "c1", ())
    request = machine.heartbeat(rejoining, CONFIG)
    assert request is not None and request.request is not None
    assert (request.request.member_epoch, request.request.topic_partitions) == (0, ())


@pytest.mark.parametrize(
    "error",
    [ErrorCode.GROUP_MAX_SIZE_REACHED, ErrorCode.INVALID_REQUEST, ErrorCode.UNSUPPORTED_ASSIGNOR],
)
def test_other_errors_are_fatal(error):
    consumer = sent(stable_with(T00))
    step = machine.on_response(consumer, CONFIG, ConsumerGroupHeartbeatResponse(error))
    assert (step.consumer.state, step.consumer.owned) == (S.FATAL, ())
    assert [c.name for c in step.callbacks] == ["onPartitionsLost"]
    assert machine.heartbeat(step.consumer, CONFIG) is None
    assert machine.subscribe(step.consumer, ("t0",)) is None


def test_a_fatal_error_while_preparing_to_leave_lets_the_leaves_callback_release():
    """Java's transitionToFatal discards a leave in progress but not the revocation callback the
    leave already invoked: the partitions go through onPartitionsRevoked, not onPartitionsLost,
    and never without a callback (a group deleted under a slow member answers
    GROUP_ID_NOT_FOUND, which is fatal)."""
    prepare = machine.leave(sent(stable_with(T00)))
    assert prepare is not None and prepare.consumer.state is S.PREPARE_LEAVING
    response = ConsumerGroupHeartbeatResponse(ErrorCode.GROUP_ID_NOT_FOUND)
    step = machine.on_response(prepare.consumer, CONFIG, response)
    assert (step.consumer.state, step.consumer.owned) == (S.FATAL, ())
    assert [(c.name, c.partitions) for c in step.callbacks] == [("onPartitionsRevoked", (T00,))]


def test_leaving_revokes_then_sends_epoch_minus_one():
    prepare = machine.leave(stable_with(T00))
    assert prepare is not None and prepare.consumer.state is S.PREPARE_LEAVING
    released = machine.release_for_leave(prepare.consumer)
    assert released is not None
    assert [(c.name, c.partitions) for c in released.callbacks] == [("onPartitionsRevoked", (T00,))]
    assert (released.consumer.state, released.consumer.owned) == (S.LEAVING, ())
    leave = machine.heartbeat(released.consumer, CONFIG)
    assert leave is not None and leave.request is not None
    assert (leave.request.member_id, leave.request.member_epoch) == ("c1", -1)
    assert leave.consumer.state is S.UNSUBSCRIBED
    after = machine.on_response(leave.consumer, CONFIG, ok(-1))
    assert after.rules == ("cg_client.response.not_in_group",)


def test_a_poll_expiry_leaves_without_callbacks_and_holds_until_stale_releases():
    expired = machine.expire_poll(stable_with(T00))
    assert expired is not None and expired.callbacks == ()
    assert (expired.consumer.state, expired.consumer.member_epoch) == (S.LEAVING, -1)
    stale = machine.heartbeat(expired.consumer, CONFIG)
    assert stale is not None and stale.consumer.state is S.STALE
    assert stale.consumer.owned == (T00,)
    assert machine.rejoin_stale(stale.consumer) is None  # not before the lost callback
    lost = machine.release_lost(stale.consumer)
    assert lost is not None and lost.consumer.owned == ()
    rejoined = machine.rejoin_stale(lost.consumer)
    assert rejoined is not None and rejoined.consumer.state is S.JOINING


def test_a_new_assignment_while_preparing_to_leave_is_ignored():
    consumer = sent(stable_with(T00))
    prepare = machine.leave(consumer)
    assert prepare is not None
    step = machine.on_response(prepare.consumer, CONFIG, ok(3, T00, T01))
    assert step.rules == ("cg_client.response.assignment_ignored",)
    assert (step.consumer.member_epoch, step.consumer.target) == (3, (T00,))


def test_a_failed_heartbeat_makes_the_next_carry_every_field():
    consumer = sent(stable_with(T00))
    failed = machine.on_request_failed(consumer).consumer
    step = machine.heartbeat(failed, CONFIG)
    assert step is not None and step.request is not None
    assert step.request.topic_partitions == machine.topic_partitions(CONFIG, (T00,))
    assert step.request.subscribed_topic_names == ("t0", "t1")


def test_the_same_assignment_again_settles_a_joining_member():
    consumer = machine.on_response(sent(joined()), CONFIG, ok(2, None)).consumer
    assert consumer.state is S.RECONCILING  # nothing reconciled yet: even an empty one is new
    consumer = sent(machine.assign(consumer).consumer)  # type: ignore[union-attr]
    again = machine.on_response(replace(consumer, state=S.RECONCILING), CONFIG, ok(2, None))
    assert again.consumer.state is S.STABLE
    assert again.rules == ("cg_client.response.same_assignment",)


def test_every_rule_fires_somewhere_in_the_machine():
    assert set(rule_places(KIP848_CONSUMER_SIDE)) == KIP848_CONSUMER_RULE_IDS


def test_topic_ids_are_translated_both_ways():
    entries = machine.topic_partitions(CONFIG, (T10, T01, T00))
    assert entries == (
        ConsumerGroupTopicPartitions("t0-id", (0, 1)),
        ConsumerGroupTopicPartitions("t1-id", (0,)),
    )
    assert machine.named_partitions(CONFIG, entries) == (T00, T01, T10)


def test_the_heartbeat_version_is_the_highest_the_broker_serves():
    """Against Kafka 3.9's preview (v0 only) the consumer sends v0, with its own member id."""
    old_broker = replace(CONFIG, kafka_version="3.9")
    for config, version in [(CONFIG, 1), (old_broker, 0)]:
        step = machine.heartbeat(joined(), config)
        assert step is not None and step.request is not None
        assert (step.request.api_version, step.request.member_id) == (version, "c1")
