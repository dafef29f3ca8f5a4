"""What probes speak with: one connection that sends a request and reads its answer, and a group
member built on it that remembers its id, generation and instance id.

Requests are kafka-python's protocol classes at the version a probe picks; nothing here retries
or interprets an answer beyond remembering what a member was given, so a trace holds exactly the
exchanges the probe wrote down.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin.groups import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

# The topic every probe subscribes to and commits offsets of.
TOPIC = "probe"
TOPIC_PARTITIONS = 3
CREATE_TOPICS_VERSION = 2
SESSION_MS = 10_000
REBALANCE_MS = 10_000
REPLY_TIMEOUT_S = 30.0
NO_ERROR = 0
MEMBER_ID_REQUIRED = 79


def subscription(
    *topics: str,
    user_data: bytes | None = None,
    owned: Mapping[str, Sequence[int]] | None = None,
) -> bytes:
    """A consumer-protocol subscription to `topics` (the metadata of a JoinGroup protocol): v0,
    or v1 with the partitions the member owns when `owned` (topic -> partitions) is given."""
    body = struct.pack(">hi", 0 if owned is None else 1, len(topics))
    for topic in topics:
        body += struct.pack(">h", len(topic)) + topic.encode()
    if user_data is None:
        body += struct.pack(">i", -1)
    else:
        body += struct.pack(">i", len(user_data)) + user_data
    if owned is None:
        return body
    body += struct.pack(">i", len(owned))
    for topic, partitions in owned.items():
        body += struct.pack(">h", len(topic)) + topic.encode()
        body += struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return body


SUBSCRIPTION = subscription(TOPIC)
RANGE = (("range", SUBSCRIPTION),)


class MalformedAnswer(Exception):
    """The peer's answer does not decode as the response to the request sent."""


class ProbeStopped(Exception):
    """An answer the probe cannot go on from (the broker refused a step it needs)."""


class ProbeClient:
    """One connection: a request, then its response (one at a time, as a consumer does)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str
    ) -> None:
        self.reader, self.writer, self.name = reader, writer, name
        self.correlation_id = 0
        # A heartbeat loop and a probe's next step may share the connection: one at a time.
        self._turn = asyncio.Lock()
        self._versions: dict[int, tuple[int, int]] | None = None

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        """Send `request` at `version` and return its decoded response."""
        async with self._turn:
            return await self._call(request, response_class, version)

    async def _call(self, request: Any, response_class: Any, version: int) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id=self.name)
        self.writer.write(bytes(request.encode(version=version, header=True, framed=True)))
        (length,) = struct.unpack(
            ">i", await asyncio.wait_for(self.reader.readexactly(4), REPLY_TIMEOUT_S)
        )
        frame = await asyncio.wait_for(self.reader.readexactly(length), REPLY_TIMEOUT_S)
        try:
            return response_class.decode(frame, version=version, header=True)
        except Exception as error:  # kafka-python raises whatever its reader hits
            raise MalformedAnswer(
                f"{response_class.__name__} v{version} does not decode: "
                f"{type(error).__name__}: {error}"
            ) from None

    def close(self) -> None:
        """Close the connection."""
        self.writer.close()

    async def supports(self, request_class: Any, version: int) -> bool:
        """Whether the broker takes `request_class` at `version` (asked once, with ApiVersions,
        which a trace does not record)."""
        if self._versions is None:
            answer = await self.call(ApiVersionsRequest(), ApiVersionsResponse, 0)
            self._versions = {
                api.api_key: (api.min_version, api.max_version) for api in answer.api_keys
            }
        low, high = self._versions.get(request_class.API_KEY, (0, -1))
        return low <= version <= high

    async def find_coordinator(self, group: str) -> Any:
        """FindCoordinator v2 for `group`."""
        return await self.call(
            FindCoordinatorRequest(key=group, key_type=0), FindCoordinatorResponse, 2
        )

    async def create_topic(self) -> None:
        """Make topic `TOPIC` exist with `TOPIC_PARTITIONS` partitions: a broker answers
        UNKNOWN_TOPIC_OR_PARTITION about a partition it does not know before its coordinator
        sees an offset request. CreateTopics where the broker has it (an existing topic is
        kept), else a Metadata request, which makes brokers that auto-create topics create it."""
        if await self.supports(CreateTopicsRequest, CREATE_TOPICS_VERSION):
            topic = CreateTopicsRequest.CreatableTopic(
                name=TOPIC,
                num_partitions=TOPIC_PARTITIONS,
                replication_factor=1,
                assignments=[],
                configs=[],
            )
            request = CreateTopicsRequest(topics=[topic], timeout_ms=30_000, validate_only=False)
            await self.call(request, CreateTopicsResponse, CREATE_TOPICS_VERSION)
        # Until this broker's metadata shows the topic with leaders (it may lag the creation).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REPLY_TIMEOUT_S
        while True:
            topic = MetadataRequest.MetadataRequestTopic(name=TOPIC)
            answer = await self.call(MetadataRequest(topics=[topic]), MetadataResponse, 1)
            found = [t for t in answer.topics if t.name == TOPIC and t.error_code == NO_ERROR]
            if found and all(p.leader_id >= 0 for p in found[0].partitions):
                return
            if loop.time() >= deadline:
                raise ProbeStopped(f"topic {TOPIC} did not appear in the broker's metadata")
            await asyncio.sleep(0.1)

    async def commit(
        self,
        group: str,
        offsets: dict[int, int],
        *,
        generation: int = -1,
        member_id: str = "",
        instance: str | None = None,
        metadata: dict[int, str] | None = None,
        retention_ms: int = -1,
        version: int = 2,
    ) -> Any:
        """OffsetCommit of `offsets` (partition -> offset) of `TOPIC`."""
        partitions = [
            OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=partition,
                committed_offset=offset,
                committed_leader_epoch=-1,
                committed_metadata=(metadata or {}).get(partition, ""),
            )
            for partition, offset in offsets.items()
        ]
        request = OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            group_instance_id=instance,
            retention_time_ms=retention_ms,
            topics=[
                OffsetCommitRequest.OffsetCommitRequestTopic(name=TOPIC, partitions=partitions)
            ],
        )
        return await self.call(request, OffsetCommitResponse, version)

    async def fetch(
        self,
        group: str,
        partitions: Sequence[int] | None,
        *,
        version: int = 5,
        require_stable: bool = False,
    ) -> Any:
        """OffsetFetch of `partitions` of `TOPIC` (None: every committed offset)."""
        topics = (
            None
            if partitions is None
            else [
                OffsetFetchRequest.OffsetFetchRequestTopic(
                    name=TOPIC, partition_indexes=list(partitions)
                )
            ]
        )
        request = OffsetFetchRequest(group_id=group, topics=topics, require_stable=require_stable)
        return await self.call(request, OffsetFetchResponse, version)

    async def fetch_groups(self, groups: dict[str, Sequence[int] | None]) -> Any:
        """OffsetFetch v8 (several groups in one request, offsets required stable)."""
        entries = [
            OffsetFetchRequest.OffsetFetchRequestGroup(
                group_id=group,
                topics=None
                if partitions is None
                else [
                    OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics(
                        name=TOPIC, partition_indexes=list(partitions)
                    )
                ],
            )
            for group, partitions in groups.items()
        ]
        request = OffsetFetchRequest(groups=entries, require_stable=True)
        return await self.call(request, OffsetFetchResponse, 8)

    async def describe(self, *groups: str, version: int = 5) -> Any:
        """DescribeGroups of `groups`."""
        request = DescribeGroupsRequest(groups=list(groups), include_authorized_operations=False)
        return await self.call(request, DescribeGroupsResponse, version)

    async def list_groups(
        self, states: Sequence[str] = (), types: Sequence[str] = (), version: int = 5
    ) -> Any:
        """ListGroups, filtered by state (v4+) and type (v5+)."""
        request = ListGroupsRequest(states_filter=list(states), types_filter=list(types))
        return await self.call(request, ListGroupsResponse, version)

    async def delete(self, *groups: str, version: int = 2) -> Any:
        """DeleteGroups of `groups`."""
        return await self.call(
            DeleteGroupsRequest(groups_names=list(groups)), DeleteGroupsResponse, version
        )

    async def leave(
        self, group: str, members: Sequence[tuple[str, str | None]], version: int = 3
    ) -> Any:
        """LeaveGroup v3+ of `members`, each (member id, group instance id)."""
        identities = [
            LeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=instance)
            for member_id, instance in members
        ]
        request = LeaveGroupRequest(group_id=group, members=identities)
        return await self.call(request, LeaveGroupResponse, version)


Connect = Callable[[str], Awaitable[ProbeClient]]


@dataclass
class ProbeMember:
    """A group member over its own connection: what the coordinator last told it."""

    client: ProbeClient
    group: str
    instance: str | None = None
    member_id: str = ""
    generation: int = -1
    leader: str = ""
    protocol_name: str | None = None
    members: tuple[str, ...] = ()
    protocols: tuple[tuple[str, bytes], ...] = RANGE
    session_ms: int = SESSION_MS
    rebalance_ms: int = REBALANCE_MS

    @property
    def is_leader(self) -> bool:
        """Whether the last successful join named this member the leader."""
        return self.member_id != "" and self.member_id == self.leader

    async def join(
        self,
        version: int = 3,
        *,
        member_id: str | None = None,
        protocol_type: str = "consumer",
        protocols: tuple[tuple[str, bytes], ...] | None = None,
        session_ms: int | None = None,
        instance: str | None = None,
    ) -> Any:
        """JoinGroup with this member's id (or `member_id`); remembers what it was given."""
        request = JoinGroupRequest(
            group_id=self.group,
            session_timeout_ms=self.session_ms if session_ms is None else session_ms,
            rebalance_timeout_ms=self.rebalance_ms,
            member_id=self.member_id if member_id is None else member_id,
            group_instance_id=self.instance if instance is None else instance,
            protocol_type=protocol_type,
            protocols=[
                JoinGroupRequest.JoinGroupRequestProtocol(name=name, metadata=metadata)
                for name, metadata in (self.protocols if protocols is None else protocols)
            ],
            reason=None,
        )
        answer = await self.client.call(request, JoinGroupResponse, version)
        if answer.error_code == NO_ERROR:
            self.member_id, self.generation = answer.member_id, answer.generation_id
            self.leader, self.protocol_name = answer.leader, answer.protocol_name
            self.members = tuple(m.member_id for m in answer.members)
        elif answer.error_code == MEMBER_ID_REQUIRED:
            self.member_id = answer.member_id
        return answer

    async def sync(
        self,
        version: int = 3,
        *,
        generation: int | None = None,
        assign: bool | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        omit_protocol: bool = False,
    ) -> Any:
        """SyncGroup; the leader (or `assign`) sends an empty assignment for every member. From
        v5 on, the protocol type and name are the group's unless given, or left out with
        `omit_protocol` (Kafka refuses a v5 SyncGroup without them)."""
        assigns = self.is_leader if assign is None else assign
        if version >= 5 and not omit_protocol:
            protocol_type = protocol_type or "consumer"
            protocol_name = protocol_name or self.protocol_name
        request = SyncGroupRequest(
            group_id=self.group,
            generation_id=self.generation if generation is None else generation,
            member_id=self.member_id,
            group_instance_id=self.instance,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=[
                SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=b"")
                for m in (self.members if assigns else ())
            ],
        )
        return await self.client.call(request, SyncGroupResponse, version)

    async def heartbeat(self, version: int = 3, *, generation: int | None = None) -> Any:
        """Heartbeat at this member's generation (or `generation`)."""
        request = HeartbeatRequest(
            group_id=self.group,
            generation_id=self.generation if generation is None else generation,
            member_id=self.member_id,
            group_instance_id=self.instance,
        )
        return await self.client.call(request, HeartbeatResponse, version)

    async def commit(
        self, offsets: dict[int, int], *, generation: int | None = None, version: int = 7
    ) -> Any:
        """OffsetCommit as this member, at its generation (or `generation`)."""
        return await self.client.commit(
            self.group,
            offsets,
            generation=self.generation if generation is None else generation,
            member_id=self.member_id,
            instance=self.instance if version >= 7 else None,
            version=version,
        )

    async def leave(self, version: int = 3) -> Any:
        """LeaveGroup of this member alone."""
        return await self.client.leave(self.group, [(self.member_id, self.instance)], version)


def expect(answer: Any, *errors: int, what: str = "") -> Any:
    """`answer` if its error code is one of `errors` (default: none); else ProbeStopped."""
    wanted = errors or (NO_ERROR,)
    if answer.error_code not in wanted:
        name = what or type(answer).__name__.removesuffix("Response")
        raise ProbeStopped(f"{name} answered error {answer.error_code}, expected {list(wanted)}")
    return answer


async def new_members(
    connect: Connect, group: str, count: int, *, static: bool = False, **fields: Any
) -> list[ProbeMember]:
    """`count` members of `group`, each on its own connection (static ones with instance ids
    `instance-0`, `instance-1`, ...); `fields` set their timeouts or protocols."""
    members = []
    for index in range(count):
        client = await connect(f"probe-{chr(ord('a') + index)}")
        instance = f"instance-{index}" if static else None
        members.append(ProbeMember(client, group, instance=instance, **fields))
    return members


async def form_group(members: Sequence[ProbeMember], version: int | None = None) -> None:
    """Every member joins at once (JoinGroup v3, v5 for static members, unless `version`), then
    the leader syncs and the followers after it: generation 1, Stable."""
    answers = await asyncio.gather(*(m.join(version or (5 if m.instance else 3)) for m in members))
    for answer in answers:
        expect(answer, what="JoinGroup")
    await sync_all(members)


async def sync_all(members: Sequence[ProbeMember]) -> None:
    """The leader syncs, then every follower (each must succeed)."""
    ordered = sorted(members, key=lambda m: not m.is_leader)
    for member in ordered:
        expect(await member.sync(5 if member.instance else 3), what="SyncGroup")


async def leave_all(members: Sequence[ProbeMember]) -> None:
    """Every member leaves in one LeaveGroup (v3 batch) over the first member's connection."""
    if members:
        identities = [(m.member_id, m.instance) for m in members]
        await members[0].client.leave(members[0].group, identities)


def close_all(*clients: ProbeClient | ProbeMember) -> None:
    """Close every connection given."""
    for item in clients:
        (item.client if isinstance(item, ProbeMember) else item).close()


async def heartbeat_until(
    member: ProbeMember, error: int, *, every_ms: int = 200, limit_ms: int = 20_000
) -> Any:
    """Heartbeat every `every_ms` until an answer carries `error` (that answer); ProbeStopped
    once `limit_ms` passed without it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_ms / 1000
    while True:
        answer = await member.heartbeat()
        if answer.error_code == error:
            return answer
        if loop.time() >= deadline:
            raise ProbeStopped(f"no Heartbeat answered error {error} within {limit_ms} ms")
        await asyncio.sleep(every_ms / 1000)


async def heartbeat_for(member: ProbeMember, duration_ms: int, *, every_ms: int = 200) -> None:
    """Heartbeat every `every_ms` for `duration_ms`, whatever the answers."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + duration_ms / 1000
    while loop.time() < deadline:
        await member.heartbeat()
        await asyncio.sleep(min(every_ms / 1000, max(deadline - loop.time(), 0)))
