"""A client that breaks the classic protocol against a consumer group, for the mixed world
(`misbehaving_client`).

No Kafka consumer sends these requests, but a coordinator holding classic members inside a
consumer group meets them (docs/protocol.md §12.15): a Heartbeat from a member id the group does
not hold, or naming the KIP-848 consumer's member id (a consumer-protocol member), or naming the
classic member at a generation that is not its epoch (a zombie of an older generation); a
SyncGroup naming an assignor the member did not offer; a JoinGroup of another protocol type
(Kafka Connect's "connect"); an OffsetCommit and an OffsetFetch under the classic member's id at
a generation it does not have; and a Heartbeat under a static member's instance id from another
member id (KIP-345's zombie of a replaced incarnation). Kafka refuses each, and none changes the
group: the refusal is a rule of its own (spec/kip848/classic_members.py, spec/kip848/offsets.py).

Like the classic world's misbehaving client (models/misbehaving_client.py) it keeps no state:
each request is built from the consumer group as it is, and its answer is read in the step that
produced it. It speaks only while the group is a non-empty consumer group (the classic world's
client covers classic groups); its JoinGroup names no member id, so it never takes the place of
a member.
"""

from __future__ import annotations

from groupspec.spec.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupspec.spec.kip848 import RequestArrived
from groupspec.spec.kip848.mixed_state import MixedState
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    Request,
    RequestRef,
    SyncGroupRequest,
)

from .misbehaving_client import (
    FOREIGN_ASSIGNOR,
    FOREIGN_PROTOCOL_TYPE,
    MISBEHAVING_CONNECTION,
    REPLACED_MEMBER_ID,
)

# A member id no member of the group has.
UNKNOWN_MEMBER_ID = "unknown-member"
# The timeouts of the foreign JoinGroup: inside the broker's session-timeout range, so that the
# join reaches the group (a timeout out of range is refused before any group is read).
SESSION_TIMEOUT_MS = 10_000
REBALANCE_TIMEOUT_MS = 20_000

MisbehavingEvent = Received | RequestArrived


def misbehaving_classic_requests(
    state: MixedState, group_id: str, topic: str
) -> tuple[Request, ...]:
    """What the misbehaving client may send to `group_id` while it is a non-empty consumer
    group, built from the group as it is now (none otherwise)."""
    group = state.consumer.group(group_id)
    if group is None or not group.members_by_id:
        return ()
    requests: list[Request] = [
        HeartbeatRequest(group_id, group.group_epoch, UNKNOWN_MEMBER_ID),
        JoinGroupRequest(
            group_id,
            "",
            FOREIGN_PROTOCOL_TYPE,
            (JoinGroupProtocol(FOREIGN_ASSIGNOR),),
            SESSION_TIMEOUT_MS,
            REBALANCE_TIMEOUT_MS,
        ),
    ]
    for member in sorted(group.iter_members(), key=lambda m: m.member_id):
        epoch = member.member_epoch
        if member.uses_classic_protocol:
            wrong = epoch + 1
            requests += [
                HeartbeatRequest(group_id, wrong, member.member_id),
                SyncGroupRequest(
                    group_id,
                    epoch,
                    member.member_id,
                    protocol_type=CONSUMER_PROTOCOL_TYPE,
                    protocol_name=FOREIGN_ASSIGNOR,
                ),
                OffsetCommitRequest(
                    group_id,
                    (OffsetCommitPartition(topic, 0, 0),),
                    generation_id=wrong,
                    member_id=member.member_id,
                ),
                OffsetFetchRequest(group_id, None, member_id=member.member_id, member_epoch=wrong),
            ]
        else:
            requests.append(HeartbeatRequest(group_id, epoch, member.member_id))
        if member.instance_id is not None:
            requests.append(
                HeartbeatRequest(
                    group_id, epoch, REPLACED_MEMBER_ID, group_instance_id=member.instance_id
                )
            )
    return tuple(requests)


def as_event(request: Request) -> MisbehavingEvent:
    """`request` arriving on the misbehaving client's connection: a consumer group's offsets
    are the consumer-protocol coordinator's input, the other requests the classic ones."""
    ref = RequestRef(MISBEHAVING_CONNECTION, 1)
    if isinstance(request, OffsetCommitRequest | OffsetFetchRequest):
        return RequestArrived(ref, request)
    return Received(ref, request)
