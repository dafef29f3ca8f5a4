"""ConsumerGroupHeartbeat: a join, a heartbeat or a leave (Kafka 4.3.0's
GroupMetadataManager.consumerGroupHeartbeat, in its order): validate, find or create the group
and the member, update the member and bump the group epoch if its subscription changed (its
topic names, or its regular expression once resolved: impl/kip848/regex.py, which may also start
a resolution), recompute the target if the group epoch is ahead, reconcile the member, re-arm
its session timeout, answer. Every refusal (INVALID_REGULAR_EXPRESSION among them) is decided
before anything changes.

A Stable member's heartbeat with nothing to change costs a few dict lookups (and, in a group
with regular expressions, the check whether a resolution is due): no target computation, no
scan of the members (the owner index and the unreconciled count are kept
incrementally).
"""

from __future__ import annotations

from collections import Counter

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

from ..state import Ref
from .assignors import compute_target
from .config import ConsumerGroupConfig
from .fencing import fence_member
from .reconcile import Owned, reconcile, within
from .regex import RegexUpdate, maybe_start_resolution, refuses_regex, update_regexes
from .runtime import Runtime
from .state import NO_PARTITIONS, Group, Member, MemberState, Partitions

# ConsumerGroupHeartbeat v1 is the first version whose member ids the client generates.
CLIENT_GENERATED_MEMBER_ID_VERSION = 1


class Refused(Exception):
    """An answer with an error code; nothing has changed."""

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


def consumer_group_heartbeat(rt: Runtime, ref: Ref, request: ConsumerGroupHeartbeatRequest) -> None:
    """Serve one ConsumerGroupHeartbeat."""
    try:
        if invalid_request_reason(request):
            raise Refused(ErrorCode.INVALID_REQUEST)
        assignor = request.server_assignor
        if assignor is not None and assignor not in rt.config.assignors:
            raise Refused(ErrorCode.UNSUPPORTED_ASSIGNOR)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            _leave(rt, ref, request)
        elif not _stable_heartbeat(rt, ref, request):
            _heartbeat(rt, ref, request)
    except Refused as refused:
        rt.respond(ref, ConsumerGroupHeartbeatResponse(refused.error))


def invalid_request_reason(request: ConsumerGroupHeartbeatRequest) -> str:
    """Why the request is refused as INVALID_REQUEST before the group is read, or ''."""
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


def _owned(config: ConsumerGroupConfig, request: ConsumerGroupHeartbeatRequest) -> Owned:
    if request.topic_partitions is None:
        return None
    entries = []
    for entry in request.topic_partitions:
        topic = config.topic_with_id(entry.topic_id)
        entries.append((None if topic is None else topic.name, frozenset(entry.partitions)))
    return tuple(entries)


def _stable_heartbeat(rt: Runtime, ref: Ref, request: ConsumerGroupHeartbeatRequest) -> bool:
    """Kafka's fast path: a member at its current epoch, reconciled to a target that is up to
    date, whose subscription does not change, only re-arms its session and is answered without
    an assignment (unless the request is a full one). False when the request needs more."""
    epoch = request.member_epoch
    if epoch <= 0:
        return False
    group = rt.groups.get(request.group_id)
    if group is None or group.assignment_epoch != group.group_epoch:
        return False
    member_id = request.member_id
    member = group.members.get(member_id)
    if (
        member is None
        or member.member_epoch != epoch
        or member.state is not MemberState.STABLE
        or epoch != group.assignment_epoch
        or member.classic is not None
    ):
        # (A classic member heartbeating with the consumer protocol is converted: the full
        # path does it.)
        return False
    instance_id = request.instance_id
    if instance_id is not None and group.static_members.get(instance_id) != member_id:
        return False
    names = request.subscribed_topic_names
    if names is not None and frozenset(names) != member.subscribed_topic_names:
        return False
    regex = member.subscribed_topic_regex
    if request.subscribed_topic_regex not in (None, regex):
        return False
    if group.regex_subscribers:
        # A resolution may be due (the refresh interval passed, or one is unresolved).
        maybe_start_resolution(rt, group, regex, regex, False)
    member.client_id, member.client_host = rt.client
    if request.rack_id is not None:
        member.rack_id = request.rack_id
    if request.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
    if request.server_assignor is not None:
        member.server_assignor = request.server_assignor
    config = rt.config
    rt.arm_session(group, member_id, rt.now + config.session_timeout_ms)
    full = (
        request.rebalance_timeout_ms != -1
        and (names is not None or request.subscribed_topic_regex is not None)
        and request.topic_partitions is not None
    )
    rt.respond(
        ref,
        ConsumerGroupHeartbeatResponse(
            ErrorCode.NONE,
            member_id=member_id,
            member_epoch=epoch,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            assignment=(
                ConsumerGroupHeartbeatAssignment(topic_partitions(config, member.assigned))
                if full
                else None
            ),
        ),
    )
    return True


def _heartbeat(rt: Runtime, ref: Ref, request: ConsumerGroupHeartbeatRequest) -> None:
    config = rt.config
    joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
    group = rt.groups.get(request.group_id)
    new_group = group is None
    if group is None:
        if not joining:
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
        group = Group(request.group_id)
    members = group.members
    member_id = request.member_id
    if len(members) >= config.max_size and (member_id == "" or member_id not in members):
        raise Refused(ErrorCode.GROUP_MAX_SIZE_REACHED)
    # The owned partitions are read only off the fast path (a previous epoch, reconciliation).
    owned: Owned = None
    owned_read = False

    # Find the member, or decide to create it or to take over a static member's place.
    incumbent: Member | None = None
    member = members.get(member_id) if member_id else None
    if request.instance_id is None:
        if member is None:
            if not joining:
                raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        else:
            if request.member_epoch not in (0, member.member_epoch):
                owned, owned_read = _owned(config, request), True
            _check_member_epoch(member, request.member_epoch, owned)
    else:
        holder = group.static_member(request.instance_id)
        if joining:
            if holder is not None:
                if holder.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    raise Refused(ErrorCode.UNRELEASED_INSTANCE_ID)
                incumbent = holder
        else:
            if holder is None:
                raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
            if holder.member_id != member_id:
                raise Refused(ErrorCode.FENCED_INSTANCE_ID)
            if request.member_epoch not in (0, holder.member_epoch):
                owned, owned_read = _owned(config, request), True
            _check_member_epoch(holder, request.member_epoch, owned)
            member = holder
    base = incumbent if incumbent is not None else member
    # An empty expression is none (Kafka 4.4.0's subscribedTopicRegexOrNull; librdkafka sends
    # one beside its names); a null one keeps the member's.
    old_regex = base.subscribed_topic_regex if base is not None else ""
    new_regex = request.subscribed_topic_regex
    if new_regex is None:
        new_regex = old_regex
    if refuses_regex(group, old_regex, new_regex):
        raise Refused(ErrorCode.INVALID_REGULAR_EXPRESSION)
    # A member in the Unknown state is fenced unless it reports owning nothing (the one
    # refusal reconciliation makes), decided before anything changes.
    if base is not None and base.state is MemberState.UNKNOWN:
        owned, owned_read = _owned(config, request), True
        if owned is None or owned:
            raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)

    # Nothing refuses from here on.
    if new_group:
        rt.groups[group.group_id] = group
    if member_id == "":
        member_id = rt.new_member_id()
    if incumbent is not None:
        # The old id's timers stay armed and find no member when they fire.
        group.replace_member(incumbent, member_id)
        member = incumbent
    elif member is None:
        member = Member(member_id)
        group.add(member)
    previous_assigned = member.assigned

    # 1. Update the member; changed topic names bump the group epoch, and so does a changed
    # expression unless it waits for its resolution (which will bump it).
    old_topics = member.subscribed_topic_names
    member.client_id, member.client_host = rt.client
    # A classic member that heartbeats with the consumer protocol stops being classic; its
    # KIP-1251 assignment epochs, which its classic joins did not keep, are recorded below.
    was_classic = member.classic is not None
    member.classic = None
    if request.instance_id is not None:
        group.set_instance_id(member, request.instance_id)
    if request.rack_id is not None:
        member.rack_id = request.rack_id
    if request.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
    if request.server_assignor is not None:
        member.server_assignor = request.server_assignor
    names = request.subscribed_topic_names
    topics = old_topics if names is None else frozenset(names)
    names_changed = topics != old_topics
    regex_update = update_regexes(rt, group, member.subscribed_topic_regex, new_regex)
    if names_changed or regex_update is not RegexUpdate.NO_CHANGE:
        group.set_subscription(member, topics, new_regex)
    subscription_changed = names_changed or regex_update is not RegexUpdate.NO_CHANGE
    if names_changed or regex_update is RegexUpdate.UPDATED_AND_RESOLVED:
        group.bump_group_epoch(rt.config)

    # 2. Recompute the target when the group epoch is ahead of it.
    if group.assignment_epoch < group.group_epoch:
        _maybe_update_target(rt, group)

    # 3. Reconcile the member towards its target. A change (its assignment epochs included:
    # a converted classic member's are recorded now) arms or cancels its rebalance timeout.
    changed = False
    if subscription_changed or not member.is_reconciled_to(group.assignment_epoch):
        if not owned_read:
            owned = _owned(config, request)
        known = frozenset(
            name for name in member.subscribed_topics if config.topic_named(name) is not None
        )
        reconciled = reconcile(
            member,
            group.assignment_epoch,
            group.target.get(member_id, NO_PARTITIONS),
            known,
            subscription_changed,
            owned,
            group.owners,
        )
        if reconciled is not None and reconciled != (
            member.member_epoch,
            member.previous_member_epoch,
            member.state,
            member.assigned,
            member.pending_revocation,
        ):
            group.move(member, *reconciled)
            changed = True
    if changed or was_classic:
        epochs = member.assignment_epochs
        keep_assignment_epochs(member)
        if changed or member.assignment_epochs != epochs:
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                deadline = rt.now + member.rebalance_timeout_ms
                rt.arm_rebalance(group, member_id, member.member_epoch, deadline)
            else:
                group.rebalance_deadlines.pop(member_id, None)

    # 4. Re-arm the session timeout.
    rt.arm_session(group, member_id, rt.now + config.session_timeout_ms)

    # 5. Answer; the assignment only on a full request or when it changed.
    full = (
        request.rebalance_timeout_ms != -1
        and (
            request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None
        )
        and request.topic_partitions is not None
    )
    assignment = None
    assigned = member.assigned
    if joining or full or (assigned is not previous_assigned and assigned != previous_assigned):
        assignment = ConsumerGroupHeartbeatAssignment(topic_partitions(config, assigned))
    rt.respond(
        ref,
        ConsumerGroupHeartbeatResponse(
            ErrorCode.NONE,
            member_id=member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            assignment=assignment,
        ),
    )


def keep_assignment_epochs(member: Member) -> None:
    """Record the epoch each owned partition was assigned at (KIP-1251): a partition the member
    already owned keeps its epoch, a new one gets the member's current epoch."""
    kept = member.assignment_epochs
    epoch = member.member_epoch
    member.assignment_epochs = {
        p: kept.get(p, epoch) for p in member.assigned | member.pending_revocation
    }


def _check_member_epoch(member: Member, epoch: int, owned: Owned) -> None:
    """Epoch 0 (a rejoin) and the member's own epoch pass; its previous epoch passes when what
    it reports owning is inside its assignment."""
    if epoch == JOIN_GROUP_MEMBER_EPOCH:
        return
    current = member.member_epoch
    if epoch > current:
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)
    if epoch < current and (
        epoch != member.previous_member_epoch or not within(owned, member.assigned)
    ):
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)


def _maybe_update_target(rt: Runtime, group: Group) -> None:
    """A new target for the group epoch, unless the assignment interval has not passed."""
    last = group.assignment_timestamp_ms
    interval = rt.config.assignment_interval_ms
    if last != 0 and interval != 0 and rt.now < last + interval:
        return
    assignor = preferred_assignor(rt.config, group)
    target = compute_target(rt.config, assignor, group.members.values(), group.target)
    if rt.settle_target is not None:
        target = rt.settle_target(group.group_id, target)
    group.target = target
    group.assignment_timestamp_ms = rt.now
    group.set_assignment_epoch(group.group_epoch)


def preferred_assignor(config: ConsumerGroupConfig, group: Group) -> str:
    """The assignor the most members name (on a tie, the first by name), or the default."""
    votes = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
    if not votes:
        return config.default_assignor
    most = max(votes.values())
    return min(name for name, count in votes.items() if count == most)


def topic_partitions(
    config: ConsumerGroupConfig, partitions: Partitions
) -> tuple[ConsumerGroupTopicPartitions, ...]:
    """Partitions as the messages carry them: by topic id, topics and partitions in order. A
    topic the cluster no longer has (a server restarted without it) has no id and is left
    out, until reconciliation takes its partitions away."""
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    entries = []
    for name in sorted(by_topic):
        topic = config.topic_named(name)
        if topic is None:
            continue
        entries.append(ConsumerGroupTopicPartitions(topic.topic_id, tuple(sorted(by_topic[name]))))
    return tuple(entries)


def _leave(rt: Runtime, ref: Ref, request: ConsumerGroupHeartbeatRequest) -> None:
    """-1 fences the member; -2 keeps a static member until its session expires or a new member
    takes its instance id."""
    group = rt.groups.get(request.group_id)
    if group is None:
        raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
    if request.instance_id is None:
        member = group.members.get(request.member_id)
        if member is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    else:
        member = group.static_member(request.instance_id)
        if member is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        if member.member_id != request.member_id:
            raise Refused(ErrorCode.FENCED_INSTANCE_ID)
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # Kafka keeps the member's state (KAFKA-20641), dropping only what it revokes.
            group.move(
                member,
                LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                member.previous_member_epoch,
                member.state,
                member.assigned,
                NO_PARTITIONS,
            )
            epochs = member.assignment_epochs
            member.assignment_epochs = {p: epochs[p] for p in member.assigned if p in epochs}
            rt.respond(
                ref,
                ConsumerGroupHeartbeatResponse(
                    ErrorCode.NONE,
                    member_id=member.member_id,
                    member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                ),
            )
            return
    rt.respond(
        ref,
        ConsumerGroupHeartbeatResponse(
            ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch
        ),
    )
    fence_member(rt, group, member.member_id)
