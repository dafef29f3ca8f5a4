"""librdkafka's consumer (`group.protocol=consumer`) as a second client of KIP-848: the Java
consumer's states and steps (`machine`) where the two agree, librdkafka's own steps where they
differ (docs/protocol.md §12.14, "librdkafka's consumer"; docs/kip-848.md).

Read from librdkafka's `src/rdkafka_cgrp.c` and `src/rdkafka_request.c` at tag v2.15.0 (the
newest release in the mirror; confluent-kafka 2.16 bundles the next one). librdkafka has join
states and flags, not Java's `MemberState`; the consumer here keeps Java's states for what the
two share, and each difference fires a `cg_rdkafka.*` rule:

- A heartbeat is *full* (group.instance.id, rebalance timeout, the subscription, the assignment
  held) when joining and after a coordinator error or a lost request; otherwise it carries the
  member id and epoch, a changed subscription and an acknowledgement, but never
  group.instance.id (`rd_kafka_cgrp_consumer_group_heartbeat`). It is always v1
  (`rd_kafka_ConsumerGroupHeartbeatRequest` accepts no other version).
- The subscription goes out as two fields together: the topic names and SubscribedTopicRegex,
  the one pattern librdkafka combines from the subscription's `^` entries, the empty string
  when it has none (`rd_kafka_cgrp_subscription_set`; subscribing by pattern:
  spec/kip848/consumer/librdkafka_subscriptions.py). A changed subscription waits while a
  reconciliation's revocation or assignment is under way
  (`rd_kafka_cgrp_consumer_subscription_preconditions_met` refuses it while rebalancing).
- A reconciliation, once started, runs to its acknowledgement: an assignment arriving meanwhile
  waits, and is compared with the one being reconciled, not with the one held
  (`rd_kafka_cgrp_consumer_handle_next_assignment`, `..._is_new_assignment_different`). An
  assignment equal to the one held changes nothing, so a Joining member given the empty
  assignment it holds stays Joining.
- While preparing to leave no heartbeat is sent, and the leave goes out even with a heartbeat in
  flight (`rd_kafka_cgrp_consumer_heartbeat_preconditions_met`, `rd_kafka_cgrp_consumer_leave`).
- COORDINATOR_LOAD_IN_PROGRESS retries the very request (`rd_kafka_buf_retry`) instead of a
  full one (`rd_kafka_cgrp_handle_ConsumerGroupHeartbeat`).

The consumer remembers the heartbeat in flight (`sent`) to retry it. Fencing (lost callback,
rejoin at epoch 0 with the same member id), fatal errors (GROUP_MAX_SIZE_REACHED,
UNRELEASED_INSTANCE_ID, ...), NOT_COORDINATOR, the leave's own response and the callbacks of
a reconciliation agree with the Java consumer's and are its steps. Poll expiry, commits and
the world's subscription changes by names (`subscription_changes`) are not compared (the world
refuses them with this client).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode

from ..config import ConsumerGroupConfig
from . import machine
from .machine import (
    IN_GROUP,
    NOTHING,
    REBALANCE_TIMEOUT_MS,
    ClientStep,
    ConsumerState,
    KafkaConsumer,
    named_partitions,
    topic_partitions,
)
from .rules import (
    CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED,
    CG_CLIENT_RESPONSE_EPOCH,
    CG_CLIENT_RESPONSE_NEW_ASSIGNMENT,
    CG_CLIENT_RESPONSE_NOT_IN_GROUP,
    CG_RDKAFKA_ERROR_LOAD_RETRIED,
    CG_RDKAFKA_HEARTBEAT_ACK_SENT,
    CG_RDKAFKA_HEARTBEAT_FULL_SENT,
    CG_RDKAFKA_HEARTBEAT_LEAVE_SENT,
    CG_RDKAFKA_HEARTBEAT_SENT,
    CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_POSTPONED,
    CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_SENT,
    CG_RDKAFKA_LEAVE_PREPARE,
    CG_RDKAFKA_RESPONSE_NEXT_STARTED,
    CG_RDKAFKA_RESPONSE_POSTPONED,
    CG_RDKAFKA_RESPONSE_SAME_ASSIGNMENT,
)

# rd_kafka_ConsumerGroupHeartbeatRequest asks the broker for version 1 and nothing else.
LIBRDKAFKA_HEARTBEAT_VERSION = 1
# What librdkafka sends as SubscribedTopicRegex for a subscription without patterns.
EMPTY_REGEX = ""
_S = ConsumerState
# Heartbeats on the interval: Java's, less PrepareLeaving (will_leave stops them).
_HEARTBEAT_ON_INTERVAL = frozenset({_S.STABLE, _S.RECONCILING})
_HEARTBEAT_NOW = frozenset({_S.JOINING, _S.ACKNOWLEDGING})


@dataclass(frozen=True)
class RdKafkaConsumer(KafkaConsumer):
    """A librdkafka consumer: the Java consumer's fields, the heartbeat in flight (`sent`),
    which COORDINATOR_LOAD_IN_PROGRESS makes it send again unchanged, and whether a second
    request is in flight (a leave sent while a heartbeat was)."""

    sent: ConsumerGroupHeartbeatRequest | None = None
    second_in_flight: bool = False


def _answered(consumer: RdKafkaConsumer) -> RdKafkaConsumer:
    """One request in flight fewer (its response arrived or it was lost)."""
    if consumer.second_in_flight:
        return replace(consumer, second_in_flight=False, sent=None)
    return replace(consumer, in_flight=False, sent=None)


def _full(consumer: KafkaConsumer) -> bool:
    """A full heartbeat: joining, or every field owed after an error (SEND_FULL_REQUEST)."""
    return consumer.state is _S.JOINING or consumer.send_rebalance_timeout


def _rebalancing(consumer: KafkaConsumer) -> bool:
    """A reconciliation's revocation or assignment under way (RD_KAFKA_CGRP_REBALANCING: the
    join state waits for an assign or unassign call or its completion)."""
    return consumer.state is _S.RECONCILING and consumer.reconciling is not None


def heartbeat(consumer: RdKafkaConsumer, config: ConsumerGroupConfig) -> ClientStep | None:
    """The heartbeat librdkafka sends now, if any: full when joining or after an error, an
    acknowledgement at once after a reconciliation, on the interval when Stable or Reconciling,
    nothing while preparing to leave; the leave at once, even with a heartbeat in flight. A
    changed subscription goes with the first one sent outside a revocation or assignment."""
    state = consumer.state
    effects = machine.Effects()
    if state is _S.LEAVING:
        request = machine.leave_request(consumer, LIBRDKAFKA_HEARTBEAT_VERSION)
        effects.fire(CG_RDKAFKA_HEARTBEAT_LEAVE_SENT)
        left = machine.move(
            consumer,
            _S.UNSUBSCRIBED,
            in_flight=True,
            second_in_flight=consumer.in_flight,
            sent=None,
        )
        return effects.done(left, request)
    if consumer.in_flight or state not in _HEARTBEAT_NOW | _HEARTBEAT_ON_INTERVAL:
        return None
    full = _full(consumer)
    acknowledging = state is _S.ACKNOWLEDGING
    # A new subscription (SEND_NEW_SUBSCRIPTION) waits while rebalancing; a full one carries it.
    carries = full or (consumer.send_subscription and not _rebalancing(consumer))
    subscription = consumer.subscription if carries else None
    owned = None
    if full or acknowledging or consumer.send_owned:
        # What it holds, or the acknowledgement of the reconciled assignment (send_owned).
        owned = topic_partitions(config, consumer.current or NOTHING)
    request = ConsumerGroupHeartbeatRequest(
        api_version=LIBRDKAFKA_HEARTBEAT_VERSION,
        group_id=consumer.group_id,
        member_id=consumer.member_id,
        # A negative epoch is never sent on a heartbeat: it becomes 0.
        member_epoch=max(consumer.member_epoch, 0),
        instance_id=consumer.instance_id if full else None,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS if full else -1,
        subscribed_topic_names=subscription,
        subscribed_topic_regex=(consumer.pattern or EMPTY_REGEX) if carries else None,
        topic_partitions=owned,
    )
    postponed = consumer.send_subscription and not carries
    sent = replace(machine.with_heartbeat_sent(consumer), sent=request, send_subscription=postponed)
    if acknowledging:
        effects.fire(CG_RDKAFKA_HEARTBEAT_ACK_SENT)
        # A target kept meanwhile waits for the acknowledgement's answer (reconciling None).
        sent = machine.acknowledged(sent)
    elif full:
        effects.fire(CG_RDKAFKA_HEARTBEAT_FULL_SENT)
    else:
        effects.fire(CG_RDKAFKA_HEARTBEAT_SENT)
    if postponed:
        effects.fire(CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_POSTPONED)
    elif consumer.send_subscription and not full:
        effects.fire(CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_SENT)
    return effects.done(sent, request)


def _in_progress(consumer: KafkaConsumer) -> bool:
    """A reconciliation started and not yet acknowledged (rd_kafka's WAIT_ACK)."""
    return consumer.state is _S.ACKNOWLEDGING or (
        consumer.state is _S.RECONCILING and consumer.reconciling is not None
    )


def on_response(
    consumer: RdKafkaConsumer,
    config: ConsumerGroupConfig,
    response: ConsumerGroupHeartbeatResponse,
) -> ClientStep:
    """librdkafka after the response to its heartbeat in flight
    (rd_kafka_cgrp_handle_ConsumerGroupHeartbeat)."""
    if response.error_code is not ErrorCode.NONE:
        return _on_error(consumer, response.error_code, config, response)
    consumer = _answered(consumer)
    effects = machine.Effects()
    state = consumer.state
    if state not in IN_GROUP or state is _S.LEAVING:
        effects.fire(CG_CLIENT_RESPONSE_NOT_IN_GROUP)
        return effects.done(consumer)
    updated = machine.with_response_ids(consumer, response)
    if state is _S.PREPARE_LEAVING:
        # will_leave: the id and epoch are taken, the rest dropped as outdated.
        rule = CG_CLIENT_RESPONSE_EPOCH
        if response.assignment is not None:
            rule = CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED
        effects.fire(rule)
        return effects.done(updated)
    if response.assignment is None:
        effects.fire(CG_CLIENT_RESPONSE_EPOCH)
        return effects.done(_start_kept(updated, effects))
    received = named_partitions(config, response.assignment.topic_partitions)
    base = consumer.reconciling if consumer.reconciling is not None else consumer.current
    if received == (base or NOTHING):
        effects.fire(CG_RDKAFKA_RESPONSE_SAME_ASSIGNMENT)
        kept = replace(updated, target=received)
        if state is _S.RECONCILING and consumer.reconciling is None:
            # The acknowledgement answered and nothing left to reconcile.
            kept = machine.move(kept, _S.STABLE)
        return effects.done(kept)
    updated = replace(updated, target=received)
    if _in_progress(consumer):
        effects.fire(CG_RDKAFKA_RESPONSE_POSTPONED)
        return effects.done(updated)
    effects.fire(CG_CLIENT_RESPONSE_NEW_ASSIGNMENT)
    return effects.done(machine.move(updated, _S.RECONCILING, reconciling=received))


def _start_kept(consumer: RdKafkaConsumer, effects: machine.Effects) -> RdKafkaConsumer:
    """After an answered acknowledgement, the target kept meanwhile starts reconciling."""
    if consumer.state is not _S.RECONCILING or consumer.reconciling is not None:
        return consumer
    if consumer.target is None or consumer.target == consumer.current:
        return machine.move(consumer, _S.STABLE)
    effects.fire(CG_RDKAFKA_RESPONSE_NEXT_STARTED)
    return replace(consumer, reconciling=consumer.target)


def _on_error(
    consumer: RdKafkaConsumer,
    error: ErrorCode,
    config: ConsumerGroupConfig,
    response: ConsumerGroupHeartbeatResponse,
) -> ClientStep:
    """Errors: LOAD_IN_PROGRESS retries the same request; the rest as the Java consumer."""
    if error is not ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        step = machine.on_response(consumer, config, response)
        after = replace(step.consumer, in_flight=consumer.in_flight)
        assert isinstance(after, RdKafkaConsumer)
        return replace(step, consumer=_answered(after))
    effects = machine.Effects()
    effects.fire(CG_RDKAFKA_ERROR_LOAD_RETRIED)
    leaving = consumer.state in (_S.PREPARE_LEAVING, _S.LEAVING)
    if consumer.state not in IN_GROUP or leaving or consumer.sent is None:
        return effects.done(_answered(consumer))
    return effects.done(consumer, consumer.sent)


def subscribe(consumer: RdKafkaConsumer, topics: tuple[str, ...]) -> ClientStep | None:
    """subscribe(): as the Java consumer, but not before its leave is answered (a subscription
    made while leaving waits for the leave's response)."""
    if consumer.in_flight:
        return None
    return machine.subscribe(consumer, topics)


def leave(consumer: RdKafkaConsumer) -> ClientStep | None:
    """unsubscribe() or close(): as the Java consumer (a Fenced one just stops), but a member
    preparing to leave sends no heartbeat until its leave."""
    if consumer.state not in machine.LEGAL_PREDECESSORS[_S.RECONCILING]:
        return machine.leave(consumer)
    effects = machine.Effects()
    effects.fire(CG_RDKAFKA_LEAVE_PREPARE)
    return effects.done(machine.move(consumer, _S.PREPARE_LEAVING, reconciling=None))


def revoke(consumer: RdKafkaConsumer) -> ClientStep | None:
    """The revocation step, only of a reconciliation started (not of a target kept)."""
    if consumer.reconciling is None:
        return None
    return machine.revoke(consumer)


def assign(consumer: RdKafkaConsumer) -> ClientStep | None:
    """The assignment step, only of a reconciliation started (not of a target kept)."""
    if consumer.reconciling is None:
        return None
    return machine.assign(consumer)


def on_request_failed(consumer: RdKafkaConsumer) -> ClientStep:
    """A lost request, as a transport error: the next heartbeat is a full one."""
    step = machine.on_request_failed(consumer)
    after = replace(step.consumer, in_flight=consumer.in_flight)
    assert isinstance(after, RdKafkaConsumer)
    return replace(step, consumer=_answered(after))
