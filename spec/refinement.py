"""Every coordinator step is a step of the abstract group (spec/abstract_group.py), or a stutter.

`refinement_problems` takes one detailed step of the coordinator (the state before and after,
mapped to the abstract view of one group by `abstract_view`; the input; the responses) and says
what in it no abstract step allows. The abstract steps, each a guarantee Kafka documents for
consumer groups (docs/refinement.md explains each with the behaviour it stands for):

- Join: a member joins (at most one per step, only by a JoinGroup); a static member's new
  incarnation may replace the old member of its instance id, keeping its assignment and
  leadership (KIP-345). A change of membership starts a rebalance, except a static replacement
  in a Stable group.
- Leave: members leave or are removed, only those the step names (a LeaveGroup's members, an
  expired session's member, the members a sync timeout finds unsynced, dynamic members a join
  timeout finds not rejoined, a member turned away because the group is full).
- New generation: a rebalance completes: the generation moves up by one, with members drawn
  from the rebalancing group (no static member dropped), a leader among them and a protocol,
  and no assignment yet; or, with no member left, the group is Empty.
- Sync: the generation's leader hands out the assignment; the group becomes Stable with exactly
  the leader's assignment.
- A rebalance may start at any time a member rejoins, and a write that failed sends a
  generation back to rebalancing.
- Commit: committed offsets change only by an OffsetCommit the coordinator answered without
  error for those partitions, to the offsets committed; expire only by the retention check; go
  with the group when it is deleted (only an Empty group is).
- Load: loading a partition rebuilds the group from the log (what the log holds is judged by
  LogReplay in spec/invariants.py: after each completed write, replaying the log gives the group
  in memory); unloading it drops the group from memory.
- Answers: a JoinGroup answered without error tells a member of the new generation its
  generation, leader and protocol (and only the leader the members); a SyncGroup answered
  without error carries the member's assignment in force; a Heartbeat, an OffsetCommit, a
  LeaveGroup, an OffsetFetch, a DescribeGroups, a DeleteGroups answer as the abstract group
  says (see `_answers`); a coordinator that has not loaded the group answers nothing about it;
  reading (Heartbeat, OffsetFetch, DescribeGroups, ListGroups) changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DescribeGroupsResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    Response,
    SyncGroupResponse,
)

from .abstract_group import (
    ABSENT,
    AbstractGroup,
    AbstractView,
    Durable,
    Phase,
    loaded_from,
)
from .events import (
    FinishLoading,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    SyncTimerExpired,
    Unload,
)

# The errors a client sees when the coordinator's write to the log failed: such a step may
# undo what it did in memory (a failed sync sends the generation back to rebalancing).
_WRITE_FAILURES = frozenset(
    append_error_to_response(error)
    for error in (
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.MESSAGE_TOO_LARGE,
    )
)
_NOT_LOADED = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS})
_READ_ONLY = (
    HeartbeatRequest,
    OffsetFetchRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    FindCoordinatorRequest,
)
_DESCRIBED_PHASE = {
    Phase.EMPTY: "Empty",
    Phase.REBALANCING: "PreparingRebalance",
    Phase.AWAITING_SYNC: "CompletingRebalance",
    Phase.STABLE: "Stable",
}


def refinement_problems(
    group_id: str,
    before: AbstractView,
    after: AbstractView,
    event: object,
    responses: Sequence[Response],
    parked: Mapping[RequestRef, str],
) -> list[str]:
    """What in one coordinator step of group `group_id` no abstract step allows (empty: it
    refines). `parked` names the member each parked request belongs to (the responses to parked
    requests name no member)."""
    if not _concerns(group_id, event):
        # Another group's step: this group stutters.
        if before.memory != after.memory or before.durable != after.durable:
            return [f"{_name(event)} of another group changed group {group_id}"]
        return []
    problems = _memory_step(group_id, before, after, event, responses)
    problems += _answers(group_id, before.memory, after.memory, event, responses, parked)
    return problems


def _concerns(group_id: str, event: object) -> bool:
    """Whether the step's input is about group `group_id` (a partition event is about all)."""
    target = event.request if isinstance(event, Received) else event
    if isinstance(target, (DescribeGroupsRequest, DeleteGroupsRequest)):
        return group_id in target.group_ids
    named = getattr(target, "group_id", None)
    return named is None or named == group_id


# -- memory ------------------------------------------------------------------------------------


def _memory_step(
    group_id: str,
    before: AbstractView,
    after: AbstractView,
    event: object,
    responses: Sequence[Response],
) -> list[str]:
    a, b = before.memory, after.memory
    if a is None and b is None:
        return []
    if a is None:
        assert b is not None
        return _load(before.durable, b, event)
    if b is None:
        return [] if isinstance(event, Unload) else [f"the group left memory on {_name(event)}"]
    if a == b:
        return []
    request = event.request if isinstance(event, Received) else None
    if isinstance(request, _READ_ONLY) or isinstance(event, FinishLoading):
        return [f"{_name(event)} changed the group: {_change(a, b)}"]
    problems = _offsets_step(a, b, event, responses)
    if a.offsets != b.offsets:
        a = _with_offsets(a, b.offsets)
        if a == b:
            return problems
    if b == _with_offsets(ABSENT, b.offsets):
        return problems + _deleted(a, event)
    if b.generation == a.generation + 1:
        return problems + _new_generation(a, b, event, responses)
    if b.generation != a.generation:
        return [*problems, f"generation {a.generation} -> {b.generation} on {_name(event)}"]
    return problems + _same_generation(a, b, event, responses)


def _load(durable: Durable, b: AbstractGroup, event: object) -> list[str]:
    """Loading a partition rebuilds the group from the log; a group the log holds with more
    members than group.max.size allows starts a rebalance at once."""
    if not isinstance(event, FinishLoading):
        return [f"the group came into memory on {_name(event)}"]
    expected = loaded_from(durable)
    if b == expected:
        return []
    if b.phase is Phase.REBALANCING and b.members == expected.members:
        return []
    return [f"loaded {_describe(b)}, but the log holds {_describe(expected)}"]


def _deleted(a: AbstractGroup, event: object) -> list[str]:
    """Only an Empty group is deleted: by DeleteGroups, or by the retention check."""
    request = event.request if isinstance(event, Received) else None
    if a.members:
        return [f"the group was deleted with members {sorted(a.member_ids())} on {_name(event)}"]
    if isinstance(request, DeleteGroupsRequest) or isinstance(event, OffsetRetentionCheck):
        return []
    if a.generation == 0 and a.phase is Phase.EMPTY:
        return []  # a group that never formed, dropped again (its creation's write failed)
    return [f"the group was deleted on {_name(event)}"]


def _new_generation(
    a: AbstractGroup, b: AbstractGroup, event: object, responses: Sequence[Response]
) -> list[str]:
    """A rebalance completes: members drawn from the rebalancing group (with at most the one
    joining now), none of its static members dropped, a leader among them, no assignment yet."""
    problems = []
    if b.members and b.phase is not Phase.AWAITING_SYNC:
        problems.append(f"generation {b.generation} formed with members but is {b.phase.value}")
    if not b.members and b.phase is not Phase.EMPTY:
        problems.append(f"generation {b.generation} formed without members but is {b.phase.value}")
    if b.members and b.leader not in b.member_ids():
        problems.append(f"generation {b.generation}'s leader {b.leader} is not a member")
    if b.members and b.protocol is None:
        problems.append(f"generation {b.generation} formed with no protocol")
    supported = (
        set.intersection(*(set(member.protocols) for member in b.members)) if b.members else set()
    )
    if b.members and b.protocol is not None and b.protocol not in supported:
        problems.append(
            f"generation {b.generation} runs {b.protocol}, which not every member supports"
        )
    joined = b.member_ids() - a.member_ids()
    problems += _joined(a, b, joined, event)
    named = _removals_named(a, event)
    for member in a.members:
        if (
            member.instance_id is not None
            and member.member_id not in b.member_ids()
            and member.member_id not in named
            and b.member_of(member.instance_id) is None
        ):
            problems.append(
                f"static member {member.member_id} ({member.instance_id}) dropped when "
                f"generation {b.generation} formed"
            )
    return problems


def _same_generation(
    a: AbstractGroup, b: AbstractGroup, event: object, responses: Sequence[Response]
) -> list[str]:
    """Within a generation: members join or leave (starting a rebalance), the leader's sync
    installs the assignment, or a rebalance starts."""
    problems: list[str] = []
    request = event.request if isinstance(event, Received) else None
    joined = b.member_ids() - a.member_ids()
    removed = a.member_ids() - b.member_ids()
    problems += _joined(a, b, joined, event)
    replaced = _replaced(a, b, joined, removed)
    named = _removals_named(a, event)
    unnamed = removed - named - set(replaced)
    if unnamed:
        problems.append(f"{_name(event)} removed members it did not name: {sorted(unnamed)}")
    changed = bool(joined or removed)
    if changed and not (replaced and b.phase is a.phase) and b.phase is not Phase.REBALANCING:
        problems.append(
            f"membership changed ({_change(a, b)}) but the group is {b.phase.value}, "
            "not rebalancing"
        )
    if not changed and a.phase is not b.phase:
        problems += _phase_move(a, b, event, responses)
    if b.phase is Phase.STABLE and a.phase is Phase.STABLE:
        moved = {new: dict(a.assignment).get(old, b"") for old, new in replaced.items()}
        kept = {m: data for m, data in a.assignment if m in b.member_ids()}
        if dict(b.assignment) != {**kept, **moved}:
            problems.append(f"the assignment in force changed on {_name(event)}")
        if b.leader != replaced.get(a.leader or "", a.leader):
            problems.append(f"the leader changed from {a.leader} to {b.leader} within generation")
    if (
        a.phase is Phase.AWAITING_SYNC
        and b.phase is Phase.AWAITING_SYNC
        and b.leader != a.leader
        and a.leader in b.member_ids()
    ):
        problems.append(f"the leader changed from {a.leader} to {b.leader} within generation")
    if (
        a.phase in (Phase.AWAITING_SYNC, Phase.STABLE)
        and b.phase in (Phase.AWAITING_SYNC, Phase.STABLE)
        and a.protocol != b.protocol
    ):
        problems.append(f"the protocol changed from {a.protocol} to {b.protocol} within generation")
    if (
        isinstance(request, SyncGroupRequest)
        and b.phase is Phase.STABLE
        and a.phase is not (Phase.STABLE)
    ):
        leader_says = {entry.member_id: entry.assignment for entry in request.assignments}
        wanted = {m: leader_says.get(m, b"") for m in b.member_ids()}
        if dict(b.assignment) != wanted:
            problems.append("the assignment installed is not the one the leader sent")
    return problems


def _phase_move(
    a: AbstractGroup, b: AbstractGroup, event: object, responses: Sequence[Response]
) -> list[str]:
    """The phase moves with the same members: the leader's sync makes a formed generation
    Stable; a member's rejoin, or a failed write, starts a rebalance."""
    request = event.request if isinstance(event, Received) else None
    if a.phase is Phase.AWAITING_SYNC and b.phase is Phase.STABLE:
        if isinstance(request, SyncGroupRequest) and request.member_id == a.leader:
            return []
        return [f"the generation became Stable on {_name(event)}, not on its leader's SyncGroup"]
    if b.phase is Phase.REBALANCING and a.phase in (Phase.AWAITING_SYNC, Phase.STABLE):
        # A member, or one handed an id to join with (MEMBER_ID_REQUIRED), joins, rejoins or
        # leaves, or its session or the sync timeout runs out, or a write failed.
        if isinstance(request, (JoinGroupRequest, LeaveGroupRequest)) or _write_failed(responses):
            return []
        if isinstance(event, (SyncTimerExpired, HeartbeatExpired)):
            return []
        return [f"a rebalance started on {_name(event)}"]
    return [f"{a.phase.value} -> {b.phase.value} on {_name(event)}"]


def _joined(a: AbstractGroup, b: AbstractGroup, joined: frozenset[str], event: object) -> list[str]:
    """At most one member joins per step, and only by a JoinGroup."""
    if not joined:
        return []
    request = event.request if isinstance(event, Received) else None
    if not isinstance(request, JoinGroupRequest):
        return [f"members {sorted(joined)} joined on {_name(event)}"]
    if len(joined) > 1:
        return [f"one JoinGroup added {sorted(joined)}"]
    (member_id,) = joined
    if b.instance_of(member_id) != request.group_instance_id:
        return [f"{member_id} joined with instance {b.instance_of(member_id)}, not the request's"]
    return []


def _replaced(
    a: AbstractGroup, b: AbstractGroup, joined: frozenset[str], removed: frozenset[str]
) -> dict[str, str]:
    """The static replacements of the step: old member id -> the new one of its instance."""
    replaced = {}
    for old in removed:
        instance = a.instance_of(old)
        if instance is None:
            continue
        new = b.member_of(instance)
        if new is not None and new in joined:
            replaced[old] = new
    return replaced


def _removals_named(a: AbstractGroup, event: object) -> set[str]:
    """The members the step's input may remove."""
    request = event.request if isinstance(event, Received) else None
    if isinstance(request, LeaveGroupRequest):
        named = set()
        for identity in request.members:
            named.add(identity.member_id)
            if identity.group_instance_id is not None:
                named.add(a.member_of(identity.group_instance_id) or identity.member_id)
        return named
    if isinstance(event, HeartbeatExpired):
        return {event.member_id}
    if isinstance(event, SyncTimerExpired):
        return set(a.member_ids())  # those the timer finds unsynced
    if isinstance(event, JoinTimerExpired):
        return {m.member_id for m in a.members if m.instance_id is None}  # not rejoined
    if isinstance(request, JoinGroupRequest):
        # A member turned away because the group is full, or removed on the way.
        return {request.member_id}
    return set()


def _offsets_step(
    a: AbstractGroup, b: AbstractGroup, event: object, responses: Sequence[Response]
) -> list[str]:
    """Offsets change only by an accepted OffsetCommit (to what was committed) and expire only
    by the retention check."""
    before, after = dict(a.offsets), dict(b.offsets)
    if before == after:
        return []
    request = event.request if isinstance(event, Received) else None
    changed = {tp for tp in after if before.get(tp) != after[tp]}
    gone = set(before) - set(after)
    problems = []
    if changed:
        if not isinstance(request, OffsetCommitRequest):
            problems.append(f"offsets of {sorted(map(str, changed))} changed on {_name(event)}")
        else:
            accepted = _accepted_commits(request, responses, event)
            for partition in changed:
                if accepted.get(partition) != after[partition]:
                    problems.append(
                        f"offset of {partition} became {after[partition]}, not an accepted commit"
                    )
    if gone and not (
        isinstance(event, OffsetRetentionCheck) or isinstance(request, DeleteGroupsRequest)
    ):
        problems.append(f"offsets of {sorted(map(str, gone))} removed on {_name(event)}")
    return problems


def _accepted_commits(
    request: OffsetCommitRequest, responses: Sequence[Response], event: object
) -> dict[TopicPartition, int]:
    assert isinstance(event, Received)
    accepted = {
        TopicPartition(p.topic, p.partition)
        for response in responses
        if response.ref == event.ref and isinstance(response.body, OffsetCommitResponse)
        for p in response.body.partitions
        if p.error_code is ErrorCode.NONE
    }
    return {
        TopicPartition(p.topic, p.partition): p.committed_offset
        for p in request.partitions
        if TopicPartition(p.topic, p.partition) in accepted
    }


# -- answers -----------------------------------------------------------------------------------


def _answers(
    group_id: str,
    a: AbstractGroup | None,
    b: AbstractGroup | None,
    event: object,
    responses: Sequence[Response],
    parked: Mapping[RequestRef, str],
) -> list[str]:
    """What the responses of the step say, against the abstract group they speak of."""
    problems: list[str] = []
    request = event.request if isinstance(event, Received) else None
    own = event.ref if isinstance(event, Received) else None
    for response in responses:
        body = response.body
        if isinstance(body, JoinGroupResponse) and body.error_code is ErrorCode.NONE:
            # Before JoinGroup v9 a static member that replaced the leader in a Stable group
            # is told the old leader's id, so that it never believes it leads (KIP-814).
            old_leader = (
                response.ref == own
                and isinstance(request, JoinGroupRequest)
                and request.group_instance_id is not None
                and request.api_version < 9
            )
            problems += _join_answer(b, body, old_leader)
        elif isinstance(body, SyncGroupResponse) and body.error_code is ErrorCode.NONE:
            member = (
                request.member_id
                if response.ref == own and isinstance(request, SyncGroupRequest)
                else parked.get(response.ref)
            )
            problems += _sync_answer(b, body, member)
    if request is None or not _concerns(group_id, event):
        return problems
    answer = next((r.body for r in responses if r.ref == own), None)
    if a is None:
        # (A Heartbeat is answered NONE while the partition loads: Kafka's coordinator maps
        # COORDINATOR_LOAD_IN_PROGRESS to NONE for it, see spec/coordinator.py.)
        if isinstance(answer, (JoinGroupResponse, SyncGroupResponse)) and (
            answer.error_code is ErrorCode.NONE
        ):
            problems.append(f"{_name(event)} answered NONE by a coordinator without the group")
        return problems
    if isinstance(request, HeartbeatRequest) and isinstance(answer, HeartbeatResponse):
        problems += _heartbeat_answer(a, request, answer.error_code)
    elif isinstance(request, OffsetCommitRequest) and isinstance(answer, OffsetCommitResponse):
        problems += _commit_answer(a, request, answer)
    elif isinstance(request, OffsetFetchRequest) and isinstance(answer, OffsetFetchResponse):
        problems += _fetch_answer(a, answer)
    elif isinstance(request, LeaveGroupRequest) and isinstance(answer, LeaveGroupResponse):
        problems += _leave_answer(a, b, answer)
    elif isinstance(request, DescribeGroupsRequest) and isinstance(answer, DescribeGroupsResponse):
        problems += _describe_answer(group_id, a, answer)
    elif isinstance(request, DeleteGroupsRequest) and isinstance(answer, DeleteGroupsResponse):
        problems += _delete_answer(group_id, a, answer)
    return problems


def _join_answer(b: AbstractGroup | None, body: JoinGroupResponse, old_leader: bool) -> list[str]:
    """A JoinGroup answered without error tells a member of the generation in force its
    generation, leader and protocol; only the leader gets the members."""
    if b is None or body.member_id not in b.member_ids():
        return [f"JoinGroup NONE to {body.member_id}, not a member"]
    if b.phase not in (Phase.AWAITING_SYNC, Phase.STABLE):
        return [f"JoinGroup NONE to {body.member_id} while the group is {b.phase.value}"]
    problems = []
    leader = body.leader if old_leader and body.leader not in b.member_ids() else b.leader
    if (body.generation_id, body.leader, body.protocol_name) != (b.generation, leader, b.protocol):
        problems.append(
            f"JoinGroup NONE says generation {body.generation_id}, leader {body.leader}, "
            f"protocol {body.protocol_name}; the group has {b.generation}, {b.leader}, {b.protocol}"
        )
    if body.members:
        listed = {m.member_id for m in body.members}
        if body.member_id != b.leader:
            problems.append(f"JoinGroup NONE lists the members to {body.member_id}, not the leader")
        elif listed != b.member_ids():
            problems.append(
                f"JoinGroup NONE lists {sorted(listed)}, members {sorted(b.member_ids())}"
            )
    return problems


def _sync_answer(b: AbstractGroup | None, body: SyncGroupResponse, member: str | None) -> list[str]:
    """A SyncGroup answered without error carries the member's assignment in force."""
    if b is None or b.phase is not Phase.STABLE:
        return ["SyncGroup NONE while no assignment is in force"]
    if member is not None and body.assignment != b.assignment_of(member):
        return [f"SyncGroup NONE to {member} carries another member's or an old assignment"]
    return []


def _heartbeat_answer(a: AbstractGroup, request: HeartbeatRequest, error: ErrorCode) -> list[str]:
    """A heartbeat is acknowledged only for a member of the generation in force while no
    rebalance is under way; it learns of a rebalance only as a member; an old generation or an
    unknown member is refused."""
    member = request.member_id in a.member_ids()
    current = request.generation_id == a.generation
    fine = {
        ErrorCode.NONE: member and current and a.phase in (Phase.AWAITING_SYNC, Phase.STABLE),
        ErrorCode.REBALANCE_IN_PROGRESS: member and a.phase is Phase.REBALANCING,
        ErrorCode.ILLEGAL_GENERATION: member and not current,
        ErrorCode.UNKNOWN_MEMBER_ID: not member,
    }
    if fine.get(error, True):
        return []
    return [
        f"Heartbeat of {request.member_id} at generation {request.generation_id} answered "
        f"{error.name} (group: {_describe(a)})"
    ]


def _commit_answer(
    a: AbstractGroup, request: OffsetCommitRequest, answer: OffsetCommitResponse
) -> list[str]:
    """A commit is accepted from a member of the generation in force (outside the wait for the
    assignment), or from outside the group's management (generation -1) when it has no member."""
    if not any(p.error_code is ErrorCode.NONE for p in answer.partitions):
        return []
    if request.generation_id < 0:
        if not a.members:
            return []
        return [
            f"a commit at generation {request.generation_id} accepted while the group has members"
        ]
    if (
        request.member_id in a.member_ids()
        and request.generation_id == a.generation
        and a.phase in (Phase.STABLE, Phase.REBALANCING)
    ):
        return []
    return [
        f"commit of {request.member_id} at generation {request.generation_id} accepted "
        f"(group: {_describe(a)})"
    ]


def _fetch_answer(a: AbstractGroup, answer: OffsetFetchResponse) -> list[str]:
    """OffsetFetch returns the committed offsets."""
    if answer.error_code is not ErrorCode.NONE:
        return []
    committed = dict(a.offsets)
    return [
        f"OffsetFetch returned {p.committed_offset} for {p.topic}-{p.partition}, committed "
        f"{committed.get(TopicPartition(p.topic, p.partition), -1)}"
        for p in answer.partitions
        if p.error_code is ErrorCode.NONE
        and p.committed_offset != committed.get(TopicPartition(p.topic, p.partition), -1)
    ]


def _leave_answer(
    a: AbstractGroup, b: AbstractGroup | None, answer: LeaveGroupResponse
) -> list[str]:
    """A member answered NONE has left; one answered UNKNOWN_MEMBER_ID was not a member; the
    incarnation of a static member that another has replaced (its instance id now names another
    member id) is told FENCED_INSTANCE_ID (KIP-345)."""
    problems = []
    after = b.member_ids() if b is not None else frozenset()
    for entry in answer.members:
        owner = a.member_of(entry.group_instance_id) if entry.group_instance_id else None
        member = entry.member_id or owner
        if (
            entry.member_id
            and owner is not None
            and owner != entry.member_id
            and entry.error_code is not ErrorCode.FENCED_INSTANCE_ID
        ):
            problems.append(
                f"LeaveGroup answered {entry.error_code.name} for {entry.member_id}, whose "
                f"instance {entry.group_instance_id} is now {owner}'s"
            )
        if entry.error_code is ErrorCode.NONE and member in after:
            problems.append(f"LeaveGroup answered NONE for {member}, still a member")
        if entry.error_code is ErrorCode.UNKNOWN_MEMBER_ID and member in a.member_ids():
            problems.append(f"LeaveGroup answered UNKNOWN_MEMBER_ID for member {member}")
    return problems


def _describe_answer(group_id: str, a: AbstractGroup, answer: DescribeGroupsResponse) -> list[str]:
    """DescribeGroups shows the group's phase and members."""
    problems = []
    for described in answer.groups:
        if described.group_id != group_id or described.error_code is not ErrorCode.NONE:
            continue
        if a == ABSENT or a == _with_offsets(ABSENT, a.offsets):
            continue  # a group that does not exist is described as Dead or Empty
        if described.group_state != _DESCRIBED_PHASE[a.phase]:
            problems.append(
                f"DescribeGroups says {described.group_state}, the group is {a.phase.value}"
            )
        listed = {m.member_id for m in described.members}
        if listed != a.member_ids():
            problems.append(
                f"DescribeGroups lists {sorted(listed)}, members {sorted(a.member_ids())}"
            )
    return problems


def _delete_answer(group_id: str, a: AbstractGroup, answer: DeleteGroupsResponse) -> list[str]:
    """Only a group without members is deleted."""
    for result in answer.results:
        if result.group_id == group_id and result.error_code is ErrorCode.NONE and a.members:
            return [f"DeleteGroups answered NONE for a group with members {sorted(a.member_ids())}"]
    return []


# -- helpers -----------------------------------------------------------------------------------


def _write_failed(responses: Sequence[Response]) -> bool:
    return any(
        getattr(response.body, "error_code", None) in _WRITE_FAILURES for response in responses
    )


def _with_offsets(
    group: AbstractGroup, offsets: tuple[tuple[TopicPartition, int], ...]
) -> AbstractGroup:
    return AbstractGroup(
        group.phase,
        group.generation,
        group.protocol,
        group.leader,
        group.members,
        group.assignment,
        offsets,
    )


def _without_offsets(group: AbstractGroup) -> AbstractGroup:
    return _with_offsets(group, ())


def _name(event: object) -> str:
    if isinstance(event, Received):
        return type(event.request).__name__.removesuffix("Request")
    return type(event).__name__


def _describe(group: AbstractGroup) -> str:
    members = ", ".join(
        m.member_id + (f"({m.instance_id})" if m.instance_id else "") for m in group.members
    )
    return (
        f"{group.phase.value} generation {group.generation} leader {group.leader} "
        f"protocol {group.protocol} members [{members}]"
    )


def _change(a: AbstractGroup, b: AbstractGroup) -> str:
    return f"{_describe(a)} -> {_describe(b)}"
