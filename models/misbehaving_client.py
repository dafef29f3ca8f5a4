"""A client that breaks the consumer protocol, for the group world (`misbehaving_client`).

No Kafka consumer sends these requests, but a coordinator meets them: a client built against
another protocol type (Connect's "connect"), an application configured with an assignor the
group does not use, a session timeout outside the broker's range, an empty group id, commit
metadata over `offset.metadata.max.bytes`, a static join carrying a dynamic member's pending id,
a removal naming an instance nobody has, a member's commit at the previous generation or before
its assignment arrives, and the LeaveGroup of a replaced static member's zombie incarnation. The coordinator's answer to each is a rule of its own
(reference §2.0-§2.5, §5.8), and the properties must hold whatever such a client sends.

The client keeps no state, like the admin client: each request is built from the group as it
is, and its answer is read in the step that produced it. Requests that name a member use the
group's first member (or pending member) by id, as a buggy client reusing an id would.
"""

from __future__ import annotations

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupspec.spec.state import Group
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE
from groupspec.vocabulary.requests import (
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    Request,
    SyncGroupRequest,
)

# The connection the misbehaving client's requests arrive on.
MISBEHAVING_CONNECTION = "misbehaving#0"
# Another protocol type than the consumer's (Kafka Connect's workers use this one).
FOREIGN_PROTOCOL_TYPE = "connect"
# An assignor name no client of the world offers.
FOREIGN_ASSIGNOR = "foreign-assignor"
# A group.instance.id no client of the world has.
UNKNOWN_INSTANCE_ID = "unknown-instance"
# The member id of a static member's incarnation that another has replaced.
REPLACED_MEMBER_ID = "replaced-incarnation"


def misbehaving_requests(
    group_id: str,
    group: Group | None,
    config: CoordinatorConfig,
    topic: str,
    session_timeout_ms: int,
    rebalance_timeout_ms: int,
) -> tuple[Request, ...]:
    """What the misbehaving client may send to `group_id`, given the group as it is now."""
    protocols = (JoinGroupProtocol(FOREIGN_ASSIGNOR),)

    def join(
        group: str,
        member_id: str,
        protocol_type: str = CONSUMER_PROTOCOL_TYPE,
        session: int = session_timeout_ms,
        instance_id: str | None = None,
    ) -> JoinGroupRequest:
        return JoinGroupRequest(
            group,
            member_id,
            protocol_type,
            protocols,
            session,
            rebalance_timeout_ms,
            group_instance_id=instance_id,
        )

    requests: list[Request] = [
        join(group_id, "", session=config.group_min_session_timeout_ms - 1),
        join("", ""),
        LeaveGroupRequest(group_id, (MemberIdentity("", UNKNOWN_INSTANCE_ID),)),
    ]
    if group is None:
        return tuple(requests)
    members = sorted(m.member_id for m in group.members)
    pending = sorted(p.member_id for p in group.pending_members)
    if members:
        member = members[0]
        # A new member of another protocol type: rejected only while the group has members
        # (an empty group would take it as its first member and change protocol type).
        requests.append(join(group_id, "", protocol_type=FOREIGN_PROTOCOL_TYPE))
        requests.append(join(group_id, member))
        requests.append(
            SyncGroupRequest(
                group_id, group.generation_id, member, protocol_type=FOREIGN_PROTOCOL_TYPE
            )
        )
        oversized = "x" * (config.offset_metadata_max_bytes + 1)
        requests.append(
            OffsetCommitRequest(
                group_id,
                (OffsetCommitPartition(topic, 0, 0, committed_metadata=oversized),),
                generation_id=group.generation_id,
                member_id=member,
            )
        )
    if pending:
        requests.append(join(group_id, pending[0], instance_id=UNKNOWN_INSTANCE_ID))
    if members and group.generation_id >= 1:
        # A commit at the previous generation under a member's id (a zombie's, or a client that
        # kept its id across a rebalance it missed): fenced with ILLEGAL_GENERATION.
        requests.append(_commit(group_id, topic, group.generation_id - 1, members[0]))
    if members and group.state is COMPLETING_REBALANCE:
        # A member's commit at the new generation before its assignment arrives: refused with
        # REBALANCE_IN_PROGRESS (offsets are accepted in Stable and PreparingRebalance only).
        requests.append(_commit(group_id, topic, group.generation_id, members[0]))
    statics = sorted(m.group_instance_id for m in group.members if m.group_instance_id is not None)
    if statics:
        # The LeaveGroup of a static member's replaced incarnation, still running somewhere
        # (KIP-345's zombie): its member id is not the instance's, so FENCED_INSTANCE_ID.
        requests.append(
            LeaveGroupRequest(group_id, (MemberIdentity(REPLACED_MEMBER_ID, statics[0]),))
        )
    return tuple(requests)


def _commit(group_id: str, topic: str, generation: int, member_id: str) -> OffsetCommitRequest:
    """A commit of offset 0 of the topic's first partition."""
    return OffsetCommitRequest(
        group_id,
        (OffsetCommitPartition(topic, 0, 0),),
        generation_id=generation,
        member_id=member_id,
    )
