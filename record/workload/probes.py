"""Probes: short scripted group exchanges, each isolating one rule of the protocol.

A real client's run stops being judged at the first divergence, and a coordinator that departs
early (say, on the first JoinGroup) hides everything after. A probe speaks the protocol
directly, at API versions chosen so that it steps around the other probes' rules (JoinGroup v3
has no MEMBER_ID_REQUIRED round), through the recording proxy; each writes its own trace, for
`groupspec validate` to judge. The rules, as the specification states them (reference
docs/protocol.md):

- `member-id-required`: a dynamic member's first JoinGroup v4+ is answered MEMBER_ID_REQUIRED
  with an id (KIP-394);
- `first-generation`: a lone member's join completes generation 1;
- `initial-delay`: members joining during the initial rebalance delay extend it;
- `sync-follower-after-leader`: a follower whose SyncGroup arrives after the leader's gets its
  assignment;
- `static-rejoin`: a static member rejoining with its instance id replaces its old member id,
  which is then fenced (FENCED_INSTANCE_ID);
- `offset-fetch-all`: OffsetFetch with `topics: null` returns every committed offset;
- `offset-fetch-uncommitted`: OffsetFetch (v5, which carries leader epochs) of a partition nobody
  committed returns offset -1, leader epoch -1 and metadata "".
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

from .targets import Target

LOOPBACK = "127.0.0.1"
SESSION_MS = 10_000
REBALANCE_MS = 10_000
# A consumer-protocol subscription v0 to topic "probe" (no user data).
SUBSCRIPTION = b"\x00\x00\x00\x00\x00\x01\x00\x05probe\xff\xff\xff\xff"
REPLY_TIMEOUT_S = 30.0
# How long a probe waits for its topic to be created (a ceiling against a hang, not a check).
TOPIC_WAIT_S = 30.0
PROBE_TOPIC = "probe"


class MalformedAnswer(Exception):
    """The peer's answer does not decode as the response to the request sent."""


class _Client:
    """One connection: a request, then its response (one at a time, as a consumer does)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str
    ) -> None:
        self.reader, self.writer, self.name = reader, writer, name
        self.correlation_id = 0

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id=self.name)
        self.writer.write(bytes(request.encode(version=version, header=True, framed=True)))
        (length,) = struct.unpack(
            ">i", await asyncio.wait_for(self.reader.readexactly(4), REPLY_TIMEOUT_S)
        )
        frame = await self.reader.readexactly(length)
        try:
            return response_class.decode(frame, version=version, header=True)
        except Exception as error:  # kafka-python raises whatever its reader hits
            raise MalformedAnswer(
                f"{response_class.__name__} v{version} does not decode: "
                f"{type(error).__name__}: {error}"
            ) from None

    def close(self) -> None:
        self.writer.close()


Connect = Callable[[str], Awaitable[_Client]]


def _join(group: str, member_id: str = "", instance: str | None = None) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=SESSION_MS,
        rebalance_timeout_ms=REBALANCE_MS,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )


def _sync(
    group: str, generation: int, member_id: str, assignments: list[str], instance: str | None = None
) -> SyncGroupRequest:
    return SyncGroupRequest(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance,
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=b"")
            for m in assignments
        ],
    )


async def _find(client: _Client, group: str) -> None:
    await client.call(FindCoordinatorRequest(key=group, key_type=0), FindCoordinatorResponse, 2)


async def member_id_required(connect: Connect, group: str) -> None:
    """A dynamic member's first JoinGroup v4."""
    client = await connect("probe-a")
    await _find(client, group)
    await client.call(_join(group), JoinGroupResponse, 4)
    client.close()


async def first_generation(connect: Connect, group: str) -> None:
    """One member joins (v3) and syncs: the generation it gets."""
    client = await connect("probe-a")
    await _find(client, group)
    joined = await client.call(_join(group), JoinGroupResponse, 3)
    if joined.error_code == 0:
        await client.call(
            _sync(group, joined.generation_id, joined.member_id, [joined.member_id]),
            SyncGroupResponse,
            2,
        )
    client.close()


async def initial_delay(connect: Connect, group: str) -> None:
    """Two members join (v3) 200 ms apart, within the initial rebalance delay."""
    first, second = await connect("probe-a"), await connect("probe-b")
    parked = asyncio.ensure_future(first.call(_join(group), JoinGroupResponse, 3))
    await asyncio.sleep(0.2)
    await asyncio.gather(parked, second.call(_join(group), JoinGroupResponse, 3))
    first.close()
    second.close()


async def sync_follower_after_leader(connect: Connect, group: str) -> None:
    """Two members join (v3); the leader syncs, then the follower does."""
    first, second = await connect("probe-a"), await connect("probe-b")
    answers = await asyncio.gather(
        first.call(_join(group), JoinGroupResponse, 3),
        second.call(_join(group), JoinGroupResponse, 3),
    )
    by_role = sorted(
        zip(answers, (first, second), strict=True), key=lambda a: a[0].leader != a[0].member_id
    )
    (leader_answer, leader), (follower_answer, follower) = by_role
    members = [m.member_id for m in leader_answer.members]
    await leader.call(
        _sync(group, leader_answer.generation_id, leader_answer.member_id, members),
        SyncGroupResponse,
        2,
    )
    await asyncio.sleep(0.2)
    await follower.call(
        _sync(group, follower_answer.generation_id, follower_answer.member_id, []),
        SyncGroupResponse,
        2,
    )
    first.close()
    second.close()


async def static_rejoin(connect: Connect, group: str) -> None:
    """A static member joins and syncs (JoinGroup v5), rejoins from a new connection with its
    instance id, and its old incarnation heartbeats."""
    old = await connect("probe-static")
    joined = await old.call(_join(group, instance="instance-0"), JoinGroupResponse, 5)
    if joined.error_code != 0:
        old.close()
        return
    await old.call(
        _sync(group, joined.generation_id, joined.member_id, [joined.member_id], "instance-0"),
        SyncGroupResponse,
        3,
    )
    new = await connect("probe-static")
    await new.call(_join(group, instance="instance-0"), JoinGroupResponse, 5)
    await old.call(
        HeartbeatRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            group_instance_id="instance-0",
        ),
        HeartbeatResponse,
        3,
    )
    old.close()
    new.close()


async def _create_probe_topic(client: _Client, topic: str = PROBE_TOPIC) -> None:
    """Make `topic` ("probe") exist before a commit names it: a broker answers
    UNKNOWN_TOPIC_OR_PARTITION about a topic it does not know before its coordinator sees the
    request. A Metadata request makes brokers that auto-create topics create it (librdkafka's
    mock at once; Kafka in the background, answering UNKNOWN_TOPIC_OR_PARTITION meanwhile);
    CreateTopics creates it on brokers that do not (`groupspec serve`), and is answered
    TOPIC_ALREADY_EXISTS where the Metadata request already did. Then Metadata is asked until
    the topic's partition 0 has a leader, for at most TOPIC_WAIT_S."""
    if await _has_leader(client, topic):
        return
    creatable = CreateTopicsRequest.CreatableTopic(
        name=topic, num_partitions=1, replication_factor=1, assignments=[], configs=[]
    )
    create = CreateTopicsRequest(topics=[creatable], timeout_ms=int(TOPIC_WAIT_S * 1000))
    await client.call(create, CreateTopicsResponse, 2)  # any answer: Metadata tells
    deadline = time.monotonic() + TOPIC_WAIT_S
    while not await _has_leader(client, topic) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


async def _has_leader(client: _Client, topic: str) -> bool:
    """Whether the broker's metadata shows `topic`'s partition 0 with a leader."""
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)])
    answer = await client.call(request, MetadataResponse, 1)
    return any(
        t.name == topic
        and t.error_code == 0
        and any(p.partition_index == 0 and p.leader_id >= 0 for p in t.partitions)
        for t in answer.topics
    )


async def offset_fetch_all(connect: Connect, group: str) -> None:
    """Commit an offset without group management, then fetch every offset (topics null)."""
    client = await connect("probe-a")
    await _create_probe_topic(client)
    await _find(client, group)
    commit = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        retention_time_ms=-1,
        topics=[
            OffsetCommitRequest.OffsetCommitRequestTopic(
                name="probe",
                partitions=[
                    OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=42, committed_metadata=""
                    )
                ],
            )
        ],
    )
    await client.call(commit, OffsetCommitResponse, 2)
    await client.call(OffsetFetchRequest(group_id=group, topics=None), OffsetFetchResponse, 2)
    client.close()


async def offset_fetch_uncommitted(connect: Connect, group: str) -> None:
    """Fetch, at v5, the offset of a partition of an existing topic that nobody committed."""
    client = await connect("probe-a")
    await _create_probe_topic(client)
    await _find(client, group)
    topic = OffsetFetchRequest.OffsetFetchRequestTopic(name="probe", partition_indexes=[0])
    await client.call(OffsetFetchRequest(group_id=group, topics=[topic]), OffsetFetchResponse, 5)
    client.close()


PROBES: dict[str, Callable[[Connect, str], Coroutine[Any, Any, None]]] = {
    "member-id-required": member_id_required,
    "first-generation": first_generation,
    "initial-delay": initial_delay,
    "sync-follower-after-leader": sync_follower_after_leader,
    "static-rejoin": static_rejoin,
    "offset-fetch-all": offset_fetch_all,
    "offset-fetch-uncommitted": offset_fetch_uncommitted,
}


@dataclass
class ProbeResult:
    """One probe's trace, or why it did not finish."""

    name: str
    trace: Path
    error: str | None = None


def run_probes(
    target: Target, trace_dir: Path, names: list[str] | None = None
) -> list[ProbeResult]:
    """Run each probe against a fresh `target` behind the recorder; one trace per probe."""
    results = []
    trace_dir.mkdir(parents=True, exist_ok=True)
    for name in names or list(PROBES):
        target.open()
        path = trace_dir / f"probe-{name}.jsonl"
        try:
            config = ProxyConfig(
                Address(LOOPBACK, 0), target.upstream, advertise_self=target.advertise_self
            )
            header = TraceHeader(
                f"{target.describe()}, groupspec probe {name!r}", target.coordinator
            )
            with RecorderThread(config, path, header) as recorder:
                target.attach(Address(LOOPBACK, recorder.port))

                async def connect(client_id: str, port: int = recorder.port) -> _Client:
                    reader, writer = await asyncio.open_connection(LOOPBACK, port)
                    return _Client(reader, writer, client_id)

                result = ProbeResult(name, path)
                try:
                    asyncio.run(PROBES[name](connect, f"probe-{name}-{int(time.time() * 1000)}"))
                except (
                    TimeoutError,
                    OSError,
                    asyncio.IncompleteReadError,
                    MalformedAnswer,
                ) as error:
                    result.error = f"{type(error).__name__}: {error}"
                # Let the recorder see the last frames before it stops.
                time.sleep(0.2)
        finally:
            target.close()
        results.append(result)
    return results
