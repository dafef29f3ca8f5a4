"""One group member speaking the classic protocol directly, at the API versions Apache Kafka's
Java consumer sends to a 3.9 or 4.x broker (JoinGroup v9, which carries skipAssignment;
SyncGroup v5; Heartbeat v4; FindCoordinator v3; OffsetFetch v5; DescribeGroups v5; ListGroups v4), so that a finding's script
decides when each request is sent and sees every answer.

A member finds its coordinator through a bootstrap broker and then talks to the address
FindCoordinator named, as a client does; behind a recorder per broker, that is the coordinator's
recorder. A JoinGroup that the coordinator parks is sent with `send_join` and read later with
`joined`, so two members can be parked at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin.groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

from groupspec.wire.address import Address
from groupspec.wire.request_connection import NoAnswerError, RequestConnection

JOIN_V, SYNC_V, HEARTBEAT_V, FIND_V, DESCRIBE_V, FETCH_V, LIST_V = 9, 5, 4, 3, 5, 5, 4
ANSWER_TIMEOUT_S = 60.0
ASSIGNOR = "range"
PROTOCOL_TYPE = "consumer"

# topic -> partitions, in a member's assignment
Assignment = Mapping[str, Sequence[int]]


def subscription(topics: Sequence[str]) -> bytes:
    """A consumer-protocol subscription (v1, no owned partitions) to `topics`."""
    return bytes(
        ConsumerProtocolSubscription(
            topics=list(topics), user_data=None, owned_partitions=[]
        ).encode(version=1)
    )


def subscribed_topics(metadata: bytes) -> list[str]:
    """The topics a consumer-protocol subscription names."""
    return list(ConsumerProtocolSubscription.decode(metadata).topics)


def assignment_bytes(assignment: Assignment) -> bytes:
    """A consumer-protocol assignment (v0) of `assignment`."""
    partitions = [
        ConsumerProtocolAssignment.TopicPartition(topic=topic, partitions=list(numbers))
        for topic, numbers in sorted(assignment.items())
    ]
    return bytes(
        ConsumerProtocolAssignment(assigned_partitions=partitions, user_data=None).encode(version=0)
    )


def assigned(data: bytes) -> dict[str, list[int]]:
    """topic -> partitions of a consumer-protocol assignment (empty bytes: nothing)."""
    if not data:
        return {}
    result: dict[str, list[int]] = {}
    for partition in ConsumerProtocolAssignment.decode(data).partitions():
        result.setdefault(partition.topic, []).append(partition.partition)
    return {topic: sorted(numbers) for topic, numbers in sorted(result.items())}


@dataclass(frozen=True)
class Found:
    """A FindCoordinator answer."""

    error: int
    node_id: int
    address: Address


class GroupMember:
    """One member of `group`: its client id `name`, its group.instance.id (None: dynamic)."""

    def __init__(
        self,
        name: str,
        group: str,
        instance: str | None,
        bootstrap: Address,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
    ) -> None:
        self.name, self.group, self.instance = name, group, instance
        self.bootstrap = bootstrap
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.coordinator: RequestConnection | None = None
        self._join_correlation: int | None = None

    async def find(self) -> Found:
        """Ask the bootstrap broker for the group's coordinator; on success, connect to it
        (closing the connection to the previous one)."""
        connection = await RequestConnection.open(self.bootstrap, self.name)
        try:
            request = FindCoordinatorRequest(key=self.group, key_type=0)
            answer = await self._answer(connection.call(request, FindCoordinatorResponse, FIND_V))
        finally:
            connection.close()
        found = Found(answer.error_code, answer.node_id, Address(answer.host, answer.port))
        if found.error == 0:
            await self.connect(found.address)
        return found

    async def connect(self, address: Address) -> None:
        """Talk to the broker at `address` from now on, as if it were the coordinator."""
        self.close()
        self.coordinator = await RequestConnection.open(address, self.name)

    def send_join(self, topics: Sequence[str], member_id: str = "") -> None:
        """Send a JoinGroup (range assignor, subscribing to `topics`) without awaiting it."""
        request = JoinGroupRequest(
            group_id=self.group,
            session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            member_id=member_id,
            group_instance_id=self.instance,
            protocol_type=PROTOCOL_TYPE,
            protocols=[
                JoinGroupRequest.JoinGroupRequestProtocol(
                    name=ASSIGNOR, metadata=subscription(topics)
                )
            ],
            reason="groupspec finding",
        )
        self._join_correlation = self._connection().send(request, JOIN_V)

    async def joined(self) -> Any:
        """The answer to the JoinGroup `send_join` sent."""
        assert self._join_correlation is not None, "send_join first"
        correlation, self._join_correlation = self._join_correlation, None
        receive = self._connection().receive(JoinGroupResponse, JOIN_V, correlation)
        return await self._answer(receive)

    async def join(self, topics: Sequence[str], member_id: str = "") -> Any:
        """JoinGroup, awaiting its answer."""
        self.send_join(topics, member_id)
        return await self.joined()

    async def sync(
        self, generation: int, member_id: str, assignments: Mapping[str, Assignment]
    ) -> Any:
        """SyncGroup with `assignments` (member id -> assignment; empty for a follower or a
        leader told to skip the assignment)."""
        request = SyncGroupRequest(
            group_id=self.group,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=self.instance,
            protocol_type=PROTOCOL_TYPE,
            protocol_name=ASSIGNOR,
            assignments=[
                SyncGroupRequest.SyncGroupRequestAssignment(
                    member_id=member, assignment=assignment_bytes(assignment)
                )
                for member, assignment in sorted(assignments.items())
            ],
        )
        return await self._answer(self._connection().call(request, SyncGroupResponse, SYNC_V))

    async def heartbeat(self, generation: int, member_id: str) -> Any:
        """One Heartbeat."""
        request = HeartbeatRequest(
            group_id=self.group,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=self.instance,
        )
        return await self._answer(self._connection().call(request, HeartbeatResponse, HEARTBEAT_V))

    async def fetch_offsets(self) -> Any:
        """OffsetFetch of every committed offset of the group (read-only)."""
        request = OffsetFetchRequest(group_id=self.group, topics=None)
        return await self._answer(self._connection().call(request, OffsetFetchResponse, FETCH_V))

    async def describe(self) -> Any:
        """DescribeGroups of the group: its one described group."""
        request = DescribeGroupsRequest(groups=[self.group], include_authorized_operations=False)
        answer = await self._answer(
            self._connection().call(request, DescribeGroupsResponse, DESCRIBE_V)
        )
        (group,) = answer.groups
        return group

    async def state(self) -> str | None:
        """The group's state as ListGroups (v4) at the coordinator lists it; None if unlisted."""
        request = ListGroupsRequest(states_filter=[])
        answer = await self._answer(self._connection().call(request, ListGroupsResponse, LIST_V))
        states = [g.group_state for g in answer.groups if g.group_id == self.group]
        return states[0] if states else None

    def close(self) -> None:
        """Close the coordinator connection (a crash: no LeaveGroup)."""
        if self.coordinator is not None:
            self.coordinator.close()
            self.coordinator = None

    def _connection(self) -> RequestConnection:
        assert self.coordinator is not None, f"{self.name} has not found its coordinator"
        return self.coordinator

    async def _answer(self, call: Any) -> Any:
        try:
            return await asyncio.wait_for(call, ANSWER_TIMEOUT_S)
        except TimeoutError:
            raise NoAnswerError(f"{self.name}: no answer within {ANSWER_TIMEOUT_S:g} s") from None
