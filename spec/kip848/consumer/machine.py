"""The Java consumer's membership state machine for the consumer protocol (KIP-848), as pure
functions from a consumer to its next consumer, the rules fired, the callbacks run and the
heartbeat it sends (docs/protocol.md §12.14).

Kafka's clients module (`org.apache.kafka.clients.consumer.internals`, trunk at 1eb7644, the
code of 4.0.0): `MemberState` lists the states and, for each, the states it may be entered from;
`AbstractMembershipManager` moves between them (`transitionTo` refuses any other move, and so
does `move` here); `ConsumerHeartbeatRequestManager.HeartbeatState` decides which fields a
heartbeat carries; `AbstractHeartbeatRequestManager.onErrorResponse` maps errors to fencing or
to the fatal state.

What the application holds (`owned`, Kafka's `SubscriptionState` assigned partitions) is kept
apart from what the member reports to the coordinator (`current`, Kafka's `currentAssignment`,
changed only when a reconciliation completes) and from the last assignment received (`target`).
Reconciliation takes two steps, as `revokeAndAssign` chains them: the revocation callback runs
and the revoked partitions are released, then the assignment callback runs and the assignment
becomes effective, after which the member acknowledges it with its next heartbeat, at once.
Commits, metadata resolution and the callbacks' own failures are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum
from typing import TypeVar

from groupspec.vocabulary.consumer_groups import (
    HIGHEST_HEARTBEAT_VERSION,
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupTopicPartitions,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

from ...consumer.rules import ConsumerRule
from ..config import ConsumerGroupConfig
from ..profiles import MAX_HEARTBEAT_VERSION
from .rules import (
    CG_CLIENT_ERROR_COORDINATOR,
    CG_CLIENT_ERROR_FATAL,
    CG_CLIENT_ERROR_FENCED,
    CG_CLIENT_ERROR_FENCED_LEAVING,
    CG_CLIENT_FENCED_PARTITIONS_LOST,
    CG_CLIENT_HEARTBEAT_ACK_SENT,
    CG_CLIENT_HEARTBEAT_FAILED,
    CG_CLIENT_HEARTBEAT_JOIN_SENT,
    CG_CLIENT_HEARTBEAT_LEAVE_SENT,
    CG_CLIENT_HEARTBEAT_SENT,
    CG_CLIENT_LEAVE_NOT_IN_GROUP,
    CG_CLIENT_LEAVE_PREPARE,
    CG_CLIENT_LEAVE_RELEASED,
    CG_CLIENT_POLL_EXPIRED,
    CG_CLIENT_RECONCILE_ASSIGNED,
    CG_CLIENT_RECONCILE_REVOKED,
    CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED,
    CG_CLIENT_RESPONSE_EPOCH,
    CG_CLIENT_RESPONSE_NEW_ASSIGNMENT,
    CG_CLIENT_RESPONSE_NOT_IN_GROUP,
    CG_CLIENT_RESPONSE_SAME_ASSIGNMENT,
    CG_CLIENT_STALE_PARTITIONS_LOST,
    CG_CLIENT_STALE_REJOIN,
    CG_CLIENT_SUBSCRIBE_CHANGED,
    CG_CLIENT_SUBSCRIBE_JOINING,
    KIP848_CONSUMER_RULES,
)

# Partitions as a sorted tuple: consumers live in model states, whose repr must be canonical.
Assignment = tuple[TopicPartition, ...]
NOTHING: Assignment = ()
REBALANCE_TIMEOUT_MS = 300_000  # max.poll.interval.ms's default, which the consumer sends
_KNOWN_RULES = frozenset(KIP848_CONSUMER_RULES)


class ConsumerState(Enum):
    """The member states of Kafka's `MemberState`."""

    UNSUBSCRIBED = "Unsubscribed"
    JOINING = "Joining"
    RECONCILING = "Reconciling"
    ACKNOWLEDGING = "Acknowledging"
    STABLE = "Stable"
    FENCED = "Fenced"
    PREPARE_LEAVING = "PrepareLeaving"
    LEAVING = "Leaving"
    FATAL = "Fatal"
    STALE = "Stale"


_S = ConsumerState
# MemberState's table: each state and the states it may be entered from.
LEGAL_PREDECESSORS: dict[ConsumerState, frozenset[ConsumerState]] = {
    _S.STABLE: frozenset({_S.JOINING, _S.ACKNOWLEDGING, _S.RECONCILING}),
    _S.RECONCILING: frozenset({_S.STABLE, _S.JOINING, _S.ACKNOWLEDGING, _S.RECONCILING}),
    _S.ACKNOWLEDGING: frozenset({_S.RECONCILING}),
    _S.FATAL: frozenset(
        {
            _S.JOINING,
            _S.STABLE,
            _S.RECONCILING,
            _S.ACKNOWLEDGING,
            _S.PREPARE_LEAVING,
            _S.LEAVING,
            _S.UNSUBSCRIBED,
        }
    ),
    _S.FENCED: frozenset(
        {_S.JOINING, _S.STABLE, _S.RECONCILING, _S.ACKNOWLEDGING, _S.PREPARE_LEAVING, _S.LEAVING}
    ),
    _S.JOINING: frozenset({_S.FENCED, _S.UNSUBSCRIBED, _S.STALE}),
    _S.PREPARE_LEAVING: frozenset(
        {_S.JOINING, _S.STABLE, _S.RECONCILING, _S.ACKNOWLEDGING, _S.UNSUBSCRIBED}
    ),
    _S.LEAVING: frozenset({_S.PREPARE_LEAVING}),
    _S.UNSUBSCRIBED: frozenset({_S.PREPARE_LEAVING, _S.LEAVING, _S.FENCED}),
    _S.STALE: frozenset({_S.LEAVING}),
}
# States in which the member takes part in the group and heartbeats (not isNotInGroup).
IN_GROUP = frozenset(
    {
        _S.JOINING,
        _S.RECONCILING,
        _S.ACKNOWLEDGING,
        _S.STABLE,
        _S.FENCED,
        _S.PREPARE_LEAVING,
        _S.LEAVING,
    }
)
# States that may take a new assignment (MemberState.canHandleNewAssignment).
_TAKES_ASSIGNMENT = LEGAL_PREDECESSORS[_S.RECONCILING]
# States whose heartbeat goes out at once (shouldHeartbeatNow), and those on the interval.
_HEARTBEAT_NOW = frozenset({_S.JOINING, _S.ACKNOWLEDGING, _S.LEAVING})
_HEARTBEAT_ON_INTERVAL = frozenset({_S.STABLE, _S.RECONCILING, _S.PREPARE_LEAVING})
_FENCING_ERRORS = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})
# Errors of the coordinator's whereabouts: the heartbeat is retried, the membership unchanged.
_COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    }
)


class IllegalTransitionError(Exception):
    """A move MemberState does not allow (Kafka's transitionTo throws IllegalStateException)."""


@dataclass(frozen=True)
class KafkaConsumer:
    """One consumer's membership: its state, member id and epoch, what it subscribes to, what the
    application holds (`owned`), what it reports (`current`, None before its first
    reconciliation), the last assignment received (`target`), the assignment a reconciliation in
    progress moves to (`reconciling`), whether a heartbeat is in flight, which fields its next
    heartbeat must carry again, whether its poll timer expired, and the pattern it subscribes
    with, if any (spec/kip848/consumer/patterns.py)."""

    member_id: str
    group_id: str = "g"
    state: ConsumerState = ConsumerState.UNSUBSCRIBED
    member_epoch: int = JOIN_GROUP_MEMBER_EPOCH
    subscription: tuple[str, ...] = ()
    owned: Assignment = NOTHING
    current: Assignment | None = None
    target: Assignment | None = None
    reconciling: Assignment | None = None
    in_flight: bool = False
    send_subscription: bool = True
    send_rebalance_timeout: bool = True
    send_owned: bool = True
    poll_expired: bool = False
    instance_id: str | None = None
    # subscribe(SubscriptionPattern): the RE2J pattern the coordinator resolves (None: topic
    # names), and whether it changed since the last heartbeat (HeartbeatState's sent pattern).
    pattern: str | None = None
    send_pattern: bool = False
    # The target was replaced by one with the partitions of `current` and is not reconciled yet:
    # Kafka's LocalAssignments differ in their local epochs though the partitions agree.
    behind: bool = False


# A consumer of either client (librdkafka's adds fields): a move keeps its class.
AnyConsumer = TypeVar("AnyConsumer", bound=KafkaConsumer)


@dataclass(frozen=True)
class Callback:
    """A rebalance listener callback the consumer ran: its name and partitions."""

    name: str  # onPartitionsRevoked, onPartitionsAssigned, onPartitionsLost
    partitions: Assignment


@dataclass(frozen=True)
class ClientStep:
    """One step of the consumer: the consumer after it, the rules fired, the callbacks run in
    order, and the heartbeat it sent (None when it sent none)."""

    consumer: KafkaConsumer
    rules: tuple[str, ...]
    callbacks: tuple[Callback, ...] = ()
    request: ConsumerGroupHeartbeatRequest | None = None


class Effects:
    """What one step fires and runs, collected while the step is computed."""

    def __init__(self) -> None:
        self.rules: list[str] = []
        self.callbacks: list[Callback] = []

    def fire(self, rule: ConsumerRule) -> None:
        if rule not in _KNOWN_RULES:
            raise KeyError(f"unknown rule {rule!r}: add it to spec/kip848/consumer/rules.py")
        self.rules.append(rule.rule_id)

    def run(self, name: str, partitions: Iterable[TopicPartition]) -> None:
        self.callbacks.append(Callback(name, tuple(sorted(partitions))))

    def done(
        self, consumer: KafkaConsumer, request: ConsumerGroupHeartbeatRequest | None = None
    ) -> ClientStep:
        return ClientStep(consumer, tuple(self.rules), tuple(self.callbacks), request)


def leave_epoch(consumer: KafkaConsumer) -> int:
    """The epoch a leave carries: -2 for a static member (group.instance.id set), which the
    coordinator keeps for its next incarnation, -1 otherwise (leaveGroupEpoch)."""
    if consumer.instance_id is not None:
        return LEAVE_GROUP_STATIC_MEMBER_EPOCH
    return LEAVE_GROUP_MEMBER_EPOCH


def move(consumer: AnyConsumer, to: ConsumerState, **changes: object) -> AnyConsumer:
    """The consumer in state `to` with `changes`, if MemberState allows the move."""
    if consumer.state is not to and consumer.state not in LEGAL_PREDECESSORS[to]:
        raise IllegalTransitionError(
            f"{consumer.member_id}: {consumer.state.value} -> {to.value} is not a legal move"
        )
    return replace(consumer, state=to, **changes)  # type: ignore[arg-type]


def _sorted(partitions: Iterable[TopicPartition]) -> Assignment:
    return tuple(sorted(set(partitions)))


# -- the application's calls -------------------------------------------------------------------


def subscribe(consumer: KafkaConsumer, topics: Iterable[str]) -> ClientStep | None:
    """subscribe(topics) then poll(): an Unsubscribed consumer joins (None if not Unsubscribed)."""
    if consumer.state is not ConsumerState.UNSUBSCRIBED:
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_SUBSCRIBE_JOINING)
    return effects.done(_joining(consumer, tuple(sorted(set(topics)))))


def _joining(consumer: KafkaConsumer, subscription: tuple[str, ...]) -> KafkaConsumer:
    """transitionToJoining: epoch 0, no reconciliation, every field to be sent."""
    return move(
        consumer,
        ConsumerState.JOINING,
        member_epoch=JOIN_GROUP_MEMBER_EPOCH,
        subscription=subscription,
        target=None,
        behind=False,
        reconciling=None,
        send_subscription=True,
        send_rebalance_timeout=True,
        send_owned=True,
        poll_expired=False,
    )


def change_subscription(consumer: KafkaConsumer, topics: Iterable[str]) -> ClientStep | None:
    """subscribe(other topics) of a member: its next heartbeat carries them (None when it is
    not a member taking assignments, or the topics are the same)."""
    subscription = tuple(sorted(set(topics)))
    if consumer.state not in _TAKES_ASSIGNMENT or subscription == consumer.subscription:
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_SUBSCRIBE_CHANGED)
    return effects.done(replace(consumer, subscription=subscription, send_subscription=True))


def leave(consumer: KafkaConsumer) -> ClientStep | None:
    """unsubscribe() or close(): a member prepares to leave; a Fenced consumer just stops (None
    when it is already leaving or out of the group)."""
    effects = Effects()
    if consumer.state is ConsumerState.FENCED:
        effects.fire(CG_CLIENT_LEAVE_NOT_IN_GROUP)
        if consumer.owned:
            # transitionToFenced already signalled onPartitionsLost; unsubscribe() runs the
            # pending callbacks before it returns, so the application sees it before the clear.
            effects.run("onPartitionsLost", consumer.owned)
        left = move(
            consumer,
            ConsumerState.UNSUBSCRIBED,
            owned=NOTHING,
            current=None,
            target=None,
            reconciling=None,
            subscription=(),
            pattern=None,
        )
        return effects.done(left)
    if consumer.state not in _TAKES_ASSIGNMENT:
        return None
    effects.fire(CG_CLIENT_LEAVE_PREPARE)
    return effects.done(move(consumer, ConsumerState.PREPARE_LEAVING, reconciling=None))


def expire_poll(consumer: KafkaConsumer) -> ClientStep | None:
    """max.poll.interval.ms passed without poll(): the member leaves at once, without callbacks
    (None unless it is a member taking assignments)."""
    if consumer.state not in _TAKES_ASSIGNMENT:
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_POLL_EXPIRED)
    preparing = move(consumer, ConsumerState.PREPARE_LEAVING, reconciling=None, poll_expired=True)
    leaving = move(
        preparing, ConsumerState.LEAVING, member_epoch=leave_epoch(consumer), current=None
    )
    return effects.done(leaving)


# -- the background thread's steps -------------------------------------------------------------


def release_for_leave(consumer: KafkaConsumer) -> ClientStep | None:
    """PrepareLeaving: the revocation callback runs for every partition, then the assignment is
    cleared and the member is Leaving at epoch -1 (None in any other state)."""
    if consumer.state is not ConsumerState.PREPARE_LEAVING or consumer.poll_expired:
        return None
    effects = Effects()
    if consumer.owned:
        effects.run("onPartitionsRevoked", consumer.owned)
    effects.fire(CG_CLIENT_LEAVE_RELEASED)
    leaving = move(
        consumer,
        ConsumerState.LEAVING,
        member_epoch=leave_epoch(consumer),
        owned=NOTHING,
        current=None,
        target=None,
        subscription=(),
        pattern=None,
    )
    return effects.done(leaving)


def revoke(consumer: KafkaConsumer) -> ClientStep | None:
    """Reconciling with partitions the assignment being reconciled does not have: the revocation
    callback runs first, then they are released (None when there is nothing to revoke)."""
    if consumer.state is not ConsumerState.RECONCILING or consumer.target is None:
        return None
    goal = consumer.reconciling if consumer.reconciling is not None else consumer.target
    revoked = tuple(p for p in consumer.owned if p not in goal)
    if not revoked:
        return None
    effects = Effects()
    effects.run("onPartitionsRevoked", revoked)
    effects.fire(CG_CLIENT_RECONCILE_REVOKED)
    kept = tuple(p for p in consumer.owned if p in goal)
    return effects.done(replace(consumer, owned=kept, reconciling=goal))


def assign(consumer: KafkaConsumer) -> ClientStep | None:
    """Reconciling with nothing left to revoke: the assignment callback runs for the added
    partitions, the assignment becomes effective and the member acknowledges it next (None when
    something is still to be revoked, or the target is already reconciled)."""
    if consumer.state is not ConsumerState.RECONCILING or consumer.target is None:
        return None
    goal = consumer.reconciling if consumer.reconciling is not None else consumer.target
    if any(p not in goal for p in consumer.owned):
        return None
    effects = Effects()
    added = tuple(p for p in goal if p not in consumer.owned)
    effects.run("onPartitionsAssigned", added)
    effects.fire(CG_CLIENT_RECONCILE_ASSIGNED)
    done = move(
        consumer,
        ConsumerState.ACKNOWLEDGING,
        owned=goal,
        current=goal,
        reconciling=None,
        send_owned=True,
        behind=False,
    )
    return effects.done(done)


def release_lost(consumer: KafkaConsumer) -> ClientStep | None:
    """Fenced, or Stale and not yet released: the lost callback runs and the assignment is
    cleared; a Fenced member then rejoins at epoch 0 with the same member id (None otherwise)."""
    stale = consumer.state is ConsumerState.STALE and consumer.poll_expired
    if consumer.state is not ConsumerState.FENCED and not stale:
        return None
    effects = Effects()
    if consumer.owned:
        effects.run("onPartitionsLost", consumer.owned)
    cleared = replace(
        consumer, owned=NOTHING, current=None, target=None, reconciling=None, behind=False
    )
    if stale:
        effects.fire(CG_CLIENT_STALE_PARTITIONS_LOST)
        return effects.done(replace(cleared, poll_expired=False))
    effects.fire(CG_CLIENT_FENCED_PARTITIONS_LOST)
    return effects.done(_joining(cleared, consumer.subscription))


def rejoin_stale(consumer: KafkaConsumer) -> ClientStep | None:
    """A Stale consumer that released its partitions polls again: it rejoins (None otherwise)."""
    if consumer.state is not ConsumerState.STALE or consumer.poll_expired:
        return None
    effects = Effects()
    effects.fire(CG_CLIENT_STALE_REJOIN)
    return effects.done(_joining(consumer, consumer.subscription))


# -- heartbeats --------------------------------------------------------------------------------


def heartbeat(consumer: KafkaConsumer, config: ConsumerGroupConfig) -> ClientStep | None:
    """The heartbeat the consumer sends now, if it sends one: at once when Joining,
    Acknowledging or Leaving, on the interval when Stable, Reconciling or PrepareLeaving, never
    with one in flight (None then, and in the other states)."""
    state = consumer.state
    if consumer.in_flight or state not in _HEARTBEAT_NOW | _HEARTBEAT_ON_INTERVAL:
        return None
    effects = Effects()
    joining = state is ConsumerState.JOINING
    version = negotiated_version(config)
    request = ConsumerGroupHeartbeatRequest(
        api_version=version,
        group_id=consumer.group_id,
        member_id=consumer.member_id,
        member_epoch=consumer.member_epoch,
        # group.instance.id goes on every heartbeat of a static member (HeartbeatState).
        instance_id=consumer.instance_id,
        rebalance_timeout_ms=(
            REBALANCE_TIMEOUT_MS if joining or consumer.send_rebalance_timeout else -1
        ),
        subscribed_topic_names=(
            consumer.subscription if joining or consumer.send_subscription else None
        ),
        topic_partitions=(
            topic_partitions(config, consumer.current or NOTHING)
            if joining or consumer.send_owned
            else None
        ),
        # The pattern goes with every field when joining or after a reset, and when it changed
        # (HeartbeatState compares it with the one last sent).
        subscribed_topic_regex=(
            consumer.pattern
            if consumer.pattern is not None
            and (joining or consumer.send_subscription or consumer.send_pattern)
            else None
        ),
    )
    if state is ConsumerState.LEAVING:
        # A leave carries only the ids and epoch -1, or -2 for a static member (the fields
        # above are those of a heartbeat).
        request = leave_request(consumer, version)
    sent = with_heartbeat_sent(consumer)
    if joining:
        effects.fire(CG_CLIENT_HEARTBEAT_JOIN_SENT)
    elif state is ConsumerState.ACKNOWLEDGING:
        effects.fire(CG_CLIENT_HEARTBEAT_ACK_SENT)
        sent = acknowledged(sent)
    elif state is ConsumerState.LEAVING:
        effects.fire(CG_CLIENT_HEARTBEAT_LEAVE_SENT)
        if consumer.poll_expired:
            # Stale: the partitions are still held until the lost callback runs.
            sent = move(sent, ConsumerState.STALE)
        else:
            sent = move(sent, ConsumerState.UNSUBSCRIBED)
    else:
        effects.fire(CG_CLIENT_HEARTBEAT_SENT)
    return effects.done(sent, request)


def leave_request(consumer: KafkaConsumer, version: int) -> ConsumerGroupHeartbeatRequest:
    """The leave heartbeat: the ids and epoch -1, or -2 for a static member."""
    return ConsumerGroupHeartbeatRequest(
        group_id=consumer.group_id,
        member_id=consumer.member_id,
        member_epoch=leave_epoch(consumer),
        instance_id=consumer.instance_id,
        api_version=version,
    )


def with_heartbeat_sent(consumer: AnyConsumer) -> AnyConsumer:
    """The consumer with a heartbeat in flight and nothing owed to the next one."""
    return replace(
        consumer,
        in_flight=True,
        send_subscription=False,
        send_rebalance_timeout=False,
        send_owned=False,
        send_pattern=False,
    )


def acknowledged(consumer: AnyConsumer) -> AnyConsumer:
    """After the acknowledgement goes out: Stable if the target is reached, else Reconciling."""
    reached = consumer.current == consumer.target
    return move(consumer, ConsumerState.STABLE if reached else ConsumerState.RECONCILING)


def negotiated_version(config: ConsumerGroupConfig) -> int:
    """The ConsumerGroupHeartbeat version the consumer sends: the highest both it and the
    broker support (the NetworkClient picks it from the broker's ApiVersions). From 4.0 the
    Java consumer generates its member id itself, and sends it on v0 too."""
    return min(HIGHEST_HEARTBEAT_VERSION, MAX_HEARTBEAT_VERSION[config.kafka_version])


def topic_partitions(
    config: ConsumerGroupConfig, partitions: Iterable[TopicPartition]
) -> tuple[ConsumerGroupTopicPartitions, ...]:
    """Partitions as a heartbeat carries them: by topic id, each topic once, sorted."""
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        topic = config.topic_named(partition.topic)
        if topic is None:
            raise ValueError(f"{partition}: no such topic in the cluster's metadata")
        by_topic.setdefault(topic.topic_id, []).append(partition.partition)
    return tuple(
        ConsumerGroupTopicPartitions(topic_id, tuple(sorted(numbers)))
        for topic_id, numbers in sorted(by_topic.items())
    )


def named_partitions(
    config: ConsumerGroupConfig, entries: Iterable[ConsumerGroupTopicPartitions]
) -> Assignment:
    """An assignment's partitions by topic name (topics the metadata does not know are left
    out, as the consumer leaves unresolved topic ids for later)."""
    found: list[TopicPartition] = []
    for entry in entries:
        topic = config.topic_with_id(entry.topic_id)
        if topic is not None:
            found.extend(TopicPartition(topic.name, p) for p in entry.partitions)
    return _sorted(found)


def on_response(
    consumer: KafkaConsumer, config: ConsumerGroupConfig, response: ConsumerGroupHeartbeatResponse
) -> ClientStep:
    """The consumer after the response to its heartbeat in flight (onHeartbeatSuccess, or the
    error handling of AbstractHeartbeatRequestManager)."""
    consumer = replace(consumer, in_flight=False)
    effects = Effects()
    if response.error_code is not ErrorCode.NONE:
        return _on_error(consumer, response.error_code, effects)
    state = consumer.state
    if state not in _TAKES_ASSIGNMENT and state is not ConsumerState.PREPARE_LEAVING:
        effects.fire(CG_CLIENT_RESPONSE_NOT_IN_GROUP)
        return effects.done(consumer)
    updated = with_response_ids(consumer, response)
    if response.assignment is None:
        effects.fire(CG_CLIENT_RESPONSE_EPOCH)
        return effects.done(updated)
    if state is ConsumerState.PREPARE_LEAVING:
        effects.fire(CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED)
        return effects.done(updated)
    target = named_partitions(config, response.assignment.topic_partitions)
    updated = replace(updated, target=target)
    # Kafka compares LocalAssignments, whose local epoch moves on whenever the target is
    # replaced: a target other than the last one is new even when it equals what the member
    # holds (it was given more and then less before reconciling), and is reconciled and
    # acknowledged, so the coordinator hears what the member owns.
    replaced = consumer.target is None or target != consumer.target
    if target != consumer.current or replaced or consumer.behind:
        effects.fire(CG_CLIENT_RESPONSE_NEW_ASSIGNMENT)
        behind = target == consumer.current
        return effects.done(move(updated, ConsumerState.RECONCILING, behind=behind))
    effects.fire(CG_CLIENT_RESPONSE_SAME_ASSIGNMENT)
    if state in (ConsumerState.RECONCILING, ConsumerState.JOINING):
        # A reconciliation in progress is abandoned (maybeAbortReconciliation).
        return effects.done(move(updated, ConsumerState.STABLE, reconciling=None))
    return effects.done(updated)


def with_response_ids(
    consumer: AnyConsumer, response: ConsumerGroupHeartbeatResponse
) -> AnyConsumer:
    """The consumer taking a successful response's member id (if any) and epoch."""
    return replace(
        consumer,
        member_id=response.member_id or consumer.member_id,
        member_epoch=response.member_epoch,
    )


def _on_error(consumer: KafkaConsumer, error: ErrorCode, effects: Effects) -> ClientStep:
    # Every error response resets the heartbeat state: the next heartbeat carries every field.
    consumer = replace(
        consumer, send_subscription=True, send_rebalance_timeout=True, send_owned=True
    )
    state = consumer.state
    if error in _COORDINATOR_ERRORS:
        if state not in IN_GROUP:
            # A leave's answer: the leave is not retried, the member is out either way.
            effects.fire(CG_CLIENT_RESPONSE_NOT_IN_GROUP)
            return effects.done(consumer)
        effects.fire(CG_CLIENT_ERROR_COORDINATOR)
        return effects.done(consumer)
    if error in _FENCING_ERRORS:
        if state in (ConsumerState.PREPARE_LEAVING, ConsumerState.LEAVING):
            effects.fire(CG_CLIENT_ERROR_FENCED_LEAVING)
            if state is ConsumerState.PREPARE_LEAVING:
                consumer = move(consumer, ConsumerState.LEAVING, member_epoch=leave_epoch(consumer))
            if state is ConsumerState.PREPARE_LEAVING and consumer.owned:
                # The leave in progress already invoked onPartitionsRevoked (leaveGroup starts it
                # on entering PrepareLeaving); the fence completes the leave, not the callback.
                effects.run("onPartitionsRevoked", consumer.owned)
            # A poll-expired member still holds its partitions here; it is out of the group, so
            # they are dropped with the rest (no callback: the application is not polling).
            left = move(
                consumer,
                ConsumerState.UNSUBSCRIBED,
                owned=NOTHING,
                current=None,
                target=None,
                poll_expired=False,
            )
            return effects.done(left)
        if state not in LEGAL_PREDECESSORS[ConsumerState.FENCED]:
            effects.fire(CG_CLIENT_RESPONSE_NOT_IN_GROUP)
            return effects.done(consumer)
        effects.fire(CG_CLIENT_ERROR_FENCED)
        fenced = move(
            consumer,
            ConsumerState.FENCED,
            member_epoch=JOIN_GROUP_MEMBER_EPOCH,
            reconciling=None,
        )
        return effects.done(fenced)
    if state not in LEGAL_PREDECESSORS[ConsumerState.FATAL]:
        effects.fire(CG_CLIENT_RESPONSE_NOT_IN_GROUP)
        return effects.done(consumer)
    effects.fire(CG_CLIENT_ERROR_FATAL)
    if consumer.owned and state is ConsumerState.PREPARE_LEAVING:
        # The leave invoked the revocation callback when it began; a fatal error discards the
        # leave but not that callback, which completes and clears the assignment
        # (AbstractMembershipManager.transitionToFatal returns early for a leaving member).
        if not consumer.poll_expired:
            effects.run("onPartitionsRevoked", consumer.owned)
    elif consumer.owned and state not in (ConsumerState.UNSUBSCRIBED, ConsumerState.LEAVING):
        effects.run("onPartitionsLost", consumer.owned)
    fatal = move(
        consumer, ConsumerState.FATAL, owned=NOTHING, current=None, target=None, reconciling=None
    )
    return effects.done(fatal)


def on_request_failed(consumer: KafkaConsumer) -> ClientStep:
    """The heartbeat in flight got no response (lost, timed out): the consumer forgets what it
    sent, so its next heartbeat carries every field again."""
    effects = Effects()
    effects.fire(CG_CLIENT_HEARTBEAT_FAILED)
    failed = replace(
        consumer,
        in_flight=False,
        send_subscription=True,
        send_rebalance_timeout=True,
        send_owned=True,
    )
    return effects.done(failed)
