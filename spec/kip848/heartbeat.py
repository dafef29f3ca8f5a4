"""ConsumerGroupHeartbeat, the one RPC of a consumer-protocol member (docs/protocol.md §12.2–§12.9).

Kafka 4.3.0, `group-coordinator/.../GroupCoordinatorService.java`
(`throwIfConsumerGroupHeartbeatRequestIsInvalid`) and `GroupMetadataManager.java`
(`consumerGroupHeartbeat`, `consumerGroupLeave`, `getOrMaybeSubscribeDynamicConsumerGroupMember`,
`getOrMaybeSubscribeStaticConsumerGroupMember`, `throwIfConsumerGroupMemberEpochIsInvalid`,
`maybeUpdateTargetAssignment`, `maybeReconcile`), in the order Kafka takes its steps: validate,
find or create the group and the member, update the member and bump the group epoch if its
subscription changed, recompute the target if the group epoch is ahead, reconcile the member,
re-arm its session timeout, answer. Every early return answers with an error and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from groupspec.vocabulary.consumer_groups import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupTopicPartitions,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef

from .assignors import candidate_targets, subscribed_partitions
from .config import ConsumerGroupConfig
from .fencing import fence_member
from .profiles import MAX_HEARTBEAT_VERSION, has_assignment_epochs, has_assignment_interval
from .proposed_fixes import KAFKA_20641
from .reconciliation import MemberFencedError, Owned, OwnedTopic, reconcile, within
from .regex import InvalidRegex, RegexUpdate, update_regexes
from .rules import (
    CG_ASSIGNMENT_COMPUTED,
    CG_ASSIGNMENT_DEFERRED,
    CG_ASSIGNMENT_NO_INTERVAL,
    CG_HEARTBEAT_FENCED_INSTANCE_ID,
    CG_HEARTBEAT_FENCED_MEMBER_EPOCH,
    CG_HEARTBEAT_GROUP_CREATED,
    CG_HEARTBEAT_GROUP_MAX_SIZE_REACHED,
    CG_HEARTBEAT_INVALID_REQUEST,
    CG_HEARTBEAT_JOIN_CLIENT_MEMBER_ID,
    CG_HEARTBEAT_JOIN_COORDINATOR_MEMBER_ID,
    CG_HEARTBEAT_MEMBER_LEFT,
    CG_HEARTBEAT_NEW_STATIC_MEMBER,
    CG_HEARTBEAT_PREVIOUS_EPOCH_ACCEPTED,
    CG_HEARTBEAT_REJOIN_KNOWN_MEMBER,
    CG_HEARTBEAT_RESPONSE_WITH_ASSIGNMENT,
    CG_HEARTBEAT_RESPONSE_WITHOUT_ASSIGNMENT,
    CG_HEARTBEAT_SESSION_TIMEOUT_ARMED,
    CG_HEARTBEAT_STATIC_MEMBER_LEFT_REVOKING,
    CG_HEARTBEAT_STATIC_MEMBER_REPLACED,
    CG_HEARTBEAT_STATIC_MEMBER_TEMPORARILY_LEFT,
    CG_HEARTBEAT_SUBSCRIPTION_CHANGED,
    CG_HEARTBEAT_UNKNOWN_GROUP,
    CG_HEARTBEAT_UNKNOWN_MEMBER_ID,
    CG_HEARTBEAT_UNKNOWN_STATIC_MEMBER,
    CG_HEARTBEAT_UNRELEASED_INSTANCE_ID,
    CG_HEARTBEAT_UNSUPPORTED_ASSIGNOR,
    CG_HEARTBEAT_UNSUPPORTED_VERSION,
    CG_RECONCILE_REBALANCE_TIMEOUT_ARMED,
    CG_RECONCILE_REBALANCE_TIMEOUT_CANCELLED,
)
from .state import (
    NO_PARTITIONS,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupsState,
    MemberState,
    Partitions,
)
from .step import Step

# ConsumerGroupHeartbeat v1 is the first version whose member ids the client generates (KIP-1082).
CLIENT_GENERATED_MEMBER_ID_VERSION = 1


class Refused(Exception):
    """An answer with an error code, as Kafka's handler throws it: the state does not change."""

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


def consumer_group_heartbeat(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupsState:
    """Handle one ConsumerGroupHeartbeat: a join, a heartbeat or a leave."""
    try:
        if request.api_version > MAX_HEARTBEAT_VERSION[step.config.kafka_version]:
            step.fire(CG_HEARTBEAT_UNSUPPORTED_VERSION)
            raise Refused(ErrorCode.UNSUPPORTED_VERSION)
        if invalid_request_reason(request):
            step.fire(CG_HEARTBEAT_INVALID_REQUEST)
            raise Refused(ErrorCode.INVALID_REQUEST)
        assignor = request.server_assignor
        if assignor is not None and assignor not in step.config.assignors:
            step.fire(CG_HEARTBEAT_UNSUPPORTED_ASSIGNOR)
            raise Refused(ErrorCode.UNSUPPORTED_ASSIGNOR)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return _leave(step, state, ref, request)
        return _heartbeat(step, state, ref, request)
    except InvalidRegex as invalid:
        step.respond(ref, ConsumerGroupHeartbeatResponse(invalid.error))
        return state
    except Refused as refused:
        step.respond(ref, ConsumerGroupHeartbeatResponse(refused.error))
        return state


def invalid_request_reason(request: ConsumerGroupHeartbeatRequest) -> str:
    """Why GroupCoordinatorService refuses the request as INVALID_REQUEST, or ''."""
    epoch = request.member_epoch
    needs_member_id = (
        request.api_version >= CLIENT_GENERATED_MEMBER_ID_VERSION
        or epoch > 0
        or epoch == LEAVE_GROUP_MEMBER_EPOCH
    )
    if needs_member_id and request.member_id == "":
        return "MemberId can't be empty"
    if request.group_id == "":
        return "GroupId can't be empty"
    if request.instance_id == "":
        return "InstanceId can't be empty"
    if request.rack_id == "":
        return "RackId can't be empty"
    if epoch == JOIN_GROUP_MEMBER_EPOCH:
        if request.rebalance_timeout_ms == -1:
            return "RebalanceTimeoutMs must be provided when joining"
        if request.topic_partitions != ():
            return "TopicPartitions must be empty when joining"
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            return "a subscription must be given when joining"
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            return "InstanceId can't be null"
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return "MemberEpoch is invalid"
    return ""


def owned_partitions(config: ConsumerGroupConfig, request: ConsumerGroupHeartbeatRequest) -> Owned:
    """The request's owned partitions by topic name (None when left out)."""
    if request.topic_partitions is None:
        return None
    entries = []
    for entry in request.topic_partitions:
        topic = config.topic_with_id(entry.topic_id)
        entries.append(
            OwnedTopic(None if topic is None else topic.name, frozenset(entry.partitions))
        )
    return tuple(entries)


def _heartbeat(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupsState:
    config = step.config
    joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
    group = state.group(request.group_id)
    if group is None:
        if not joining:
            step.fire(CG_HEARTBEAT_UNKNOWN_GROUP)
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
        step.fire(CG_HEARTBEAT_GROUP_CREATED)
        group = ConsumerGroup(request.group_id)
    members = group.members
    if len(members) >= config.max_size and (
        request.member_id == "" or request.member_id not in members
    ):
        step.fire(CG_HEARTBEAT_GROUP_MAX_SIZE_REACHED)
        raise Refused(ErrorCode.GROUP_MAX_SIZE_REACHED)
    member_id = request.member_id
    if member_id == "":
        step.fire(CG_HEARTBEAT_JOIN_COORDINATOR_MEMBER_ID)
        member_id = f"member-{state.next_member_number}"
        state = replace(state, next_member_number=state.next_member_number + 1)
    owned = owned_partitions(config, request)

    # Find, create or take over the member (getOrMaybeSubscribe*ConsumerGroupMember).
    if request.instance_id is None:
        member = _dynamic_member(step, group, member_id, request, owned)
    else:
        member, group = _static_member(step, group, member_id, request, owned)

    # 1. Update the member; a changed subscription bumps the group epoch.
    updated = replace(
        member,
        instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
        rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=(
            request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms
        ),
        server_assignor=(
            request.server_assignor
            if request.server_assignor is not None
            else member.server_assignor
        ),
        subscribed_topic_names=(
            frozenset(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names
        ),
        # A non-null expression replaces the member's; an empty one is none (Kafka 4.4.0,
        # ConsumerGroupMember.subscribedTopicRegexOrNull; librdkafka sends one with its names).
        subscribed_topic_regex=(
            request.subscribed_topic_regex
            if request.subscribed_topic_regex is not None
            else member.subscribed_topic_regex
        ),
        # A classic member that heartbeats with the consumer protocol stops being classic.
        classic=None,
    )
    names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    owners = group  # partition owners as the group holds them before this heartbeat's changes
    regex_update, group = update_regexes(step, group, member, updated)
    # The subscription changed with the names or the expression; the group epoch waits for an
    # expression that is not resolved yet (the resolution bumps it).
    subscription_changed = names_changed or regex_update.changed_subscription
    group_epoch = group.group_epoch
    if names_changed:
        step.fire(CG_HEARTBEAT_SUBSCRIPTION_CHANGED)
    if names_changed or regex_update is RegexUpdate.UPDATED_AND_RESOLVED:
        group_epoch += 1
    group = group.with_member(updated).with_group_epoch(group_epoch, config)

    # 2. Recompute the target assignment when the group epoch is ahead of it.
    group = _maybe_update_target(step, group, updated)

    # 3. Reconcile the member towards its target.
    try:
        reconciled = _maybe_reconcile(step, group, updated, subscription_changed, owned, owners)
    except MemberFencedError:
        step.fire(CG_HEARTBEAT_FENCED_MEMBER_EPOCH)
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH) from None
    if has_assignment_epochs(config.kafka_version):
        reconciled = with_assignment_epochs(updated, reconciled)
    group = group.with_member(reconciled)
    if reconciled != updated:
        if reconciled.state is MemberState.UNREVOKED_PARTITIONS:
            step.fire(CG_RECONCILE_REBALANCE_TIMEOUT_ARMED)
            deadline = step.now_ms + reconciled.rebalance_timeout_ms
            group = group.with_rebalance_deadline(member_id, reconciled.member_epoch, deadline)
        else:
            step.fire(CG_RECONCILE_REBALANCE_TIMEOUT_CANCELLED)
            group = group.without_rebalance_deadline(member_id)

    # 4. Re-arm the session timeout.
    step.fire(CG_HEARTBEAT_SESSION_TIMEOUT_ARMED)
    group = group.with_session_deadline(member_id, step.now_ms + config.session_timeout_ms)

    # 5. Answer; the assignment only on a full request or when it changed.
    full = (
        request.rebalance_timeout_ms != -1
        and (
            request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None
        )
        and request.topic_partitions is not None
    )
    assignment = None
    if joining or full or reconciled.assigned != member.assigned:
        step.fire(CG_HEARTBEAT_RESPONSE_WITH_ASSIGNMENT)
        assignment = ConsumerGroupHeartbeatAssignment(topic_partitions(config, reconciled.assigned))
    else:
        step.fire(CG_HEARTBEAT_RESPONSE_WITHOUT_ASSIGNMENT)
    step.respond(
        ref,
        ConsumerGroupHeartbeatResponse(
            ErrorCode.NONE,
            member_id=member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            assignment=assignment,
        ),
    )
    return state.with_group(group)


def _dynamic_member(
    step: Step,
    group: ConsumerGroup,
    member_id: str,
    request: ConsumerGroupHeartbeatRequest,
    owned: Owned,
) -> ConsumerGroupMember:
    existing = group.member(member_id)
    if existing is None:
        if request.member_epoch != JOIN_GROUP_MEMBER_EPOCH:
            step.fire(CG_HEARTBEAT_UNKNOWN_MEMBER_ID)
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        if request.member_id != "":
            step.fire(CG_HEARTBEAT_JOIN_CLIENT_MEMBER_ID)
        return ConsumerGroupMember(member_id)
    _check_member_epoch(step, existing, request.member_epoch, owned)
    return existing


def _static_member(
    step: Step,
    group: ConsumerGroup,
    member_id: str,
    request: ConsumerGroupHeartbeatRequest,
    owned: Owned,
) -> tuple[ConsumerGroupMember, ConsumerGroup]:
    """The static member and the group, which a replacement changes."""
    instance_id = request.instance_id
    assert instance_id is not None
    incumbent = group.static_member(instance_id)
    if request.member_epoch == JOIN_GROUP_MEMBER_EPOCH:
        if incumbent is None:
            step.fire(CG_HEARTBEAT_NEW_STATIC_MEMBER)
            return group.member(member_id) or ConsumerGroupMember(member_id), group
        if incumbent.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            step.fire(CG_HEARTBEAT_UNRELEASED_INSTANCE_ID)
            raise Refused(ErrorCode.UNRELEASED_INSTANCE_ID)
        step.fire(CG_HEARTBEAT_STATIC_MEMBER_REPLACED)
        successor = replace(incumbent, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        # replaceMember: the old id leaves with its target (its timers stay armed, and find no
        # member when they fire); the new id takes the old target.
        target = group.target_of(incumbent.member_id)
        session = dict(group.session_deadlines)
        rebalance = dict(group.rebalance_deadlines)
        group = group.without_member(incumbent.member_id)
        group = replace(
            group,
            session_deadlines=tuple(sorted(session.items())),
            rebalance_deadlines=tuple(sorted(rebalance.items())),
        )
        new_target = group.target
        new_target[member_id] = target
        return successor, group.with_member(successor).with_target(new_target)
    if incumbent is None:
        step.fire(CG_HEARTBEAT_UNKNOWN_STATIC_MEMBER)
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if incumbent.member_id != member_id:
        step.fire(CG_HEARTBEAT_FENCED_INSTANCE_ID)
        raise Refused(ErrorCode.FENCED_INSTANCE_ID)
    _check_member_epoch(step, incumbent, request.member_epoch, owned)
    return incumbent, group


def _check_member_epoch(step: Step, member: ConsumerGroupMember, epoch: int, owned: Owned) -> None:
    """throwIfConsumerGroupMemberEpochIsInvalid: epoch 0 (a rejoin) and the member's own epoch
    pass; its previous epoch passes when what it owns is inside its assignment."""
    if epoch == JOIN_GROUP_MEMBER_EPOCH:
        step.fire(CG_HEARTBEAT_REJOIN_KNOWN_MEMBER)
        return
    if epoch > member.member_epoch:
        step.fire(CG_HEARTBEAT_FENCED_MEMBER_EPOCH)
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)
    if epoch < member.member_epoch:
        if epoch != member.previous_member_epoch or not within(owned, member.assigned):
            step.fire(CG_HEARTBEAT_FENCED_MEMBER_EPOCH)
            raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)
        step.fire(CG_HEARTBEAT_PREVIOUS_EPOCH_ACCEPTED)


def _maybe_update_target(
    step: Step, group: ConsumerGroup, updated: ConsumerGroupMember
) -> ConsumerGroup:
    """maybeUpdateTargetAssignment: a new target for the group epoch, unless it is up to date
    or the assignment interval (KIP-1263) has not passed since the last one."""
    if group.assignment_epoch >= group.group_epoch:
        return group
    config = step.config
    last = group.assignment_timestamp_ms
    interval = config.assignment_interval_ms
    if last != 0 and interval != 0 and step.now_ms < last + interval:
        if has_assignment_interval(config.kafka_version):
            step.fire(CG_ASSIGNMENT_DEFERRED)
            return group
        step.fire(CG_ASSIGNMENT_NO_INTERVAL)
    step.fire(CG_ASSIGNMENT_COMPUTED)
    assignor = step.choose("preferred assignor", preferred_assignors(config, group))
    target = step.choose(
        "target assignment", candidate_targets(config, assignor, subscribing_members(group))
    )
    return replace(
        group.with_target(target),
        assignment_epoch=group.group_epoch,
        assignment_timestamp_ms=step.now_ms,
    )


def subscribing_members(group: ConsumerGroup) -> list[ConsumerGroupMember]:
    """The members as the assignor sees them: each subscribed to its topic names and the topics
    its regular expression resolved to (TargetAssignmentBuilder with the resolved expressions)."""
    return [
        replace(m, subscribed_topic_names=group.subscribed_topics_of(m))
        for m in group.iter_members()
    ]


def with_assignment_epochs(
    before: ConsumerGroupMember, after: ConsumerGroupMember
) -> ConsumerGroupMember:
    """`after` with the epoch each owned partition was assigned at (KIP-1251): a partition it
    already owned keeps its epoch, a new one gets the member's new epoch
    (CurrentAssignmentBuilder.computeNextAssignment in 4.3.0)."""
    kept = dict(before.assignment_epochs)
    epochs = {p: kept.get(p, after.member_epoch) for p in after.owned}
    return replace(after, assignment_epochs=tuple(sorted(epochs.items())))


def preferred_assignors(config: ConsumerGroupConfig, group: ConsumerGroup) -> tuple[str, ...]:
    """The assignors the most members name (a tie is broken by hash-map order in Kafka, so each
    tied one is allowed), or the default when none names one."""
    votes = Counter(m.server_assignor for m in group.iter_members() if m.server_assignor)
    if not votes:
        return (config.default_assignor,)
    most = max(votes.values())
    return tuple(sorted(name for name, count in votes.items() if count == most))


def _maybe_reconcile(
    step: Step,
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    subscription_changed: bool,
    owned: Owned,
    owners: ConsumerGroup,
) -> ConsumerGroupMember:
    if not subscription_changed and member.is_reconciled_to(group.assignment_epoch):
        return member
    return reconcile(
        step,
        member,
        group.assignment_epoch,
        group.target_of(member.member_id),
        subscribed_partitions(step.config, group.subscribed_topics_of(member)),
        subscription_changed,
        owned,
        owners.owner_of,
    )


def topic_partitions(
    config: ConsumerGroupConfig, partitions: Partitions
) -> tuple[ConsumerGroupTopicPartitions, ...]:
    """Partitions as the messages carry them: by topic id, topics and partitions in order."""
    by_topic: dict[str, list[int]] = {}
    for partition in sorted(partitions):
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    entries = []
    for name, numbers in sorted(by_topic.items()):
        topic = config.topic_named(name)
        assert topic is not None, f"partition of unknown topic {name}"
        entries.append(ConsumerGroupTopicPartitions(topic.topic_id, tuple(numbers)))
    return tuple(entries)


def _leave(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: ConsumerGroupHeartbeatRequest
) -> ConsumerGroupsState:
    """consumerGroupLeave: -1 fences the member; -2 keeps a static member until its session
    expires or a new member takes its instance id."""
    group = state.group(request.group_id)
    if group is None:
        step.fire(CG_HEARTBEAT_UNKNOWN_GROUP)
        raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
    if request.instance_id is None:
        member = group.member(request.member_id)
        if member is None:
            step.fire(CG_HEARTBEAT_UNKNOWN_MEMBER_ID)
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    else:
        member = group.static_member(request.instance_id)
        if member is None:
            step.fire(CG_HEARTBEAT_UNKNOWN_STATIC_MEMBER)
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        if member.member_id != request.member_id:
            step.fire(CG_HEARTBEAT_FENCED_INSTANCE_ID)
            raise Refused(ErrorCode.FENCED_INSTANCE_ID)
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            step.fire(CG_HEARTBEAT_STATIC_MEMBER_TEMPORARILY_LEFT)
            # Kafka keeps the member's state (KAFKA-20641): one in UnrevokedPartitions stays
            # there with nothing pending, which the invariant UnrevokedHasRevocations reports.
            # Its proposed fix makes it Stable; the rebalance timeout stays armed either way.
            state_after = member.state
            if (
                KAFKA_20641 in step.config.proposed_fixes
                and member.state is MemberState.UNREVOKED_PARTITIONS
            ):
                step.fire(CG_HEARTBEAT_STATIC_MEMBER_LEFT_REVOKING)
                state_after = MemberState.STABLE
            away = replace(
                member,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                state=state_after,
                pending_revocation=NO_PARTITIONS,
                assignment_epochs=tuple(
                    entry for entry in member.assignment_epochs if entry[0] in member.assigned
                ),
            )
            step.respond(
                ref,
                ConsumerGroupHeartbeatResponse(
                    ErrorCode.NONE,
                    member_id=member.member_id,
                    member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                ),
            )
            return state.with_group(group.with_member(away))
    step.fire(CG_HEARTBEAT_MEMBER_LEFT)
    step.respond(
        ref,
        ConsumerGroupHeartbeatResponse(
            ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch
        ),
    )
    return state.with_group(fence_member(step, group, member.member_id))
