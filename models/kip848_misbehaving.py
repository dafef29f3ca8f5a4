"""A client that breaks the consumer protocol, for the KIP-848 world (`misbehaving_client`).

No Kafka consumer sends these requests, but a consumer-protocol coordinator meets them: a
heartbeat a hand-written client forgot to fill in (a join without a subscription), an
application configured with a server assignor the broker does not offer (`group.remote.assignor`
naming a custom assignor), an admin tool describing the empty group id, a client library that
commits with OffsetCommit v8 (before the member epoch), a member's commit to a group that the
coordinator does not hold (one deleted under it, or not created yet), with v9 and with v8, and,
against a coordinator that serves an older ConsumerGroupHeartbeat than the newest (Kafka 3.9
knows v0 only), a join at the newest version from a client that ignored the broker's
ApiVersions answer.
GroupCoordinatorService and OffsetMetadataManager refuse each with an error of its own
(docs/protocol.md §12.2, §12.11, §12.17), and the group must stay as it was.

The client keeps no state, like the admin client: each request is built from the group as it is,
and answered in the step that sends it. Requests that name a member use the group's first member
by id, as a buggy client reusing an id would; the requests with a group id use the world's.
"""

from __future__ import annotations

from groupspec.spec.kip848.events import Kip848Request
from groupspec.spec.kip848.state import ConsumerGroup
from groupspec.vocabulary.consumer_groups import (
    HIGHEST_HEARTBEAT_VERSION,
    JOIN_GROUP_MEMBER_EPOCH,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import OffsetCommitPartition, OffsetCommitRequest

from .misbehaving_client import FOREIGN_ASSIGNOR

# The connection the misbehaving client's requests arrive on.
MISBEHAVING_CLIENT = "misbehaving"
# The member id the misbehaving client generates for its joins (v1: the client generates it).
MISBEHAVING_MEMBER_ID = "misbehaving-member"
# The member id of a consumer whose group the coordinator no longer holds.
GONE_MEMBER_ID = "c1"
# The first ConsumerGroupHeartbeat version where the client generates its member id.
CLIENT_MEMBER_ID_VERSION = 1
# The last OffsetCommit version before the generation id carries the member epoch (v9).
OLD_COMMIT_VERSION = 8
REBALANCE_TIMEOUT_MS = 300_000


def misbehaving_requests(
    group_id: str,
    group: ConsumerGroup | None,
    topics: tuple[str, ...],
    heartbeat_version: int = HIGHEST_HEARTBEAT_VERSION,
) -> tuple[tuple[str, Kip848Request, ErrorCode], ...]:
    """What the misbehaving client may send to `group_id` now, given the group as it is and the
    newest ConsumerGroupHeartbeat version the coordinator serves: each request with a short
    name and the error the coordinator must refuse it with."""

    def join(
        subscription: tuple[str, ...] | None, assignor: str | None, version: int
    ) -> ConsumerGroupHeartbeatRequest:
        # Before v1 the coordinator gives the member its id: the join names none.
        member_id = MISBEHAVING_MEMBER_ID if version >= CLIENT_MEMBER_ID_VERSION else ""
        return ConsumerGroupHeartbeatRequest(
            group_id,
            member_id,
            JOIN_GROUP_MEMBER_EPOCH,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
            subscribed_topic_names=subscription,
            server_assignor=assignor,
            topic_partitions=(),
            api_version=version,
        )

    requests: list[tuple[str, Kip848Request, ErrorCode]] = [
        (
            "join_without_subscription",
            join(None, None, heartbeat_version),
            ErrorCode.INVALID_REQUEST,
        ),
        (
            "join_foreign_assignor",
            join(topics, FOREIGN_ASSIGNOR, heartbeat_version),
            ErrorCode.UNSUPPORTED_ASSIGNOR,
        ),
        (
            "describe_empty_group_id",
            ConsumerGroupDescribeRequest(("",)),
            ErrorCode.INVALID_GROUP_ID,
        ),
    ]
    if heartbeat_version < HIGHEST_HEARTBEAT_VERSION:
        # A client that ignored ApiVersions joins at the newest version: a well-formed v1 join.
        requests.append(
            (
                "join_unsupported_version",
                join(topics, None, HIGHEST_HEARTBEAT_VERSION),
                ErrorCode.UNSUPPORTED_VERSION,
            )
        )
    if group is None:
        # A member of a group the coordinator does not hold commits at the epoch it had.
        requests += [
            (
                "commit_to_unknown_group",
                _commit(group_id, topics[0], 1, GONE_MEMBER_ID, 9),
                ErrorCode.GROUP_ID_NOT_FOUND,
            ),
            (
                "commit_v8_to_unknown_group",
                _commit(group_id, topics[0], 1, GONE_MEMBER_ID, OLD_COMMIT_VERSION),
                ErrorCode.ILLEGAL_GENERATION,
            ),
        ]
        return tuple(requests)
    members = sorted(group.members)
    if members:
        member = group.member(members[0])
        assert member is not None
        requests.append(
            (
                "commit_v8",
                _commit(
                    group_id, topics[0], member.member_epoch, member.member_id, OLD_COMMIT_VERSION
                ),
                ErrorCode.UNSUPPORTED_VERSION,
            )
        )
    return tuple(requests)


def _commit(
    group_id: str, topic: str, epoch: int, member_id: str, version: int
) -> OffsetCommitRequest:
    """A commit of offset 0 of the topic's first partition."""
    return OffsetCommitRequest(
        group_id,
        (OffsetCommitPartition(topic, 0, 0),),
        generation_id=epoch,
        member_id=member_id,
        api_version=version,
    )
