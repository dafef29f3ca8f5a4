"""Drivers that show, on Apache Kafka's own brokers, each difference between the oracle's Kafka
version profiles (docs/oracle.md, "Kafka version profiles"; docs/kafka.md, "The version
profiles on real brokers").

Each speaks the protocol directly through the recording proxy, as the probes do
(record/workload/probes.py), and is timed so that Kafka 4.4.0 (the Java coordinator) and Kafka
3.9.2 (the Scala one) answer it differently, with margins wider than the oracle's tolerances
(`--reorder-window-ms` and `--timer-slack-ms`, 1 s each). They expect the broker settings of
`SETTINGS`: a 6 s initial-rebalance delay, so that a member can expire or join within it, and a
2 s minimum session timeout, so that a pending member expires within that delay.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from kafka.protocol.admin.groups import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.record.workload.probe_client import SUBSCRIPTION, Connect, ProbeClient
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

LOOPBACK = "127.0.0.1"
INITIAL_DELAY_MS = 6_000
SETTINGS = {
    "group_initial_rebalance_delay_ms": INITIAL_DELAY_MS,
    "group_min_session_timeout_ms": 2_000,
}
SESSION_MS = 6_000
REBALANCE_MS = 20_000

Driver = Callable[[Connect, str], Coroutine[Any, Any, None]]


def _sync(group: str, generation: int, member_id: str, assignments: list[str]) -> SyncGroupRequest:
    """A SyncGroup with empty assignments for `assignments` (the leader's) or none."""
    return SyncGroupRequest(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=None,
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=b"")
            for m in assignments
        ],
    )


def _join(group: str, member_id: str = "", session_ms: int = SESSION_MS) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=REBALANCE_MS,
        member_id=member_id,
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )


async def _describe(client: ProbeClient, group: str) -> None:
    request = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
    await client.call(request, DescribeGroupsResponse, 1)


async def _join_and_sync(client: ProbeClient, group: str) -> Any:
    """JoinGroup v3 (no MEMBER_ID_REQUIRED round), then SyncGroup v2 as the leader (with every
    member's empty assignment) or as a follower; the join's answer."""
    joined = await client.call(_join(group), JoinGroupResponse, 3)
    if joined.error_code == 0:
        members = [m.member_id for m in joined.members] if joined.leader == joined.member_id else []
        await client.call(
            _sync(group, joined.generation_id, joined.member_id, members), SyncGroupResponse, 2
        )
    return joined


async def sync_in_stable(connect: Connect, group: str) -> None:
    """`sync.stable_returns_assignment`: one member forms the group (6 s sessions), sends
    SyncGroup again 4 s into Stable, and heartbeats 4 s later. The Scala coordinator restarted
    its session at that SyncGroup (the heartbeat is answered NONE); the Java one did not, so the
    session ran out 6 s into Stable (UNKNOWN_MEMBER_ID)."""
    client = await connect("profile-a")
    await client.find_coordinator(group)
    joined = await _join_and_sync(client, group)
    await asyncio.sleep(4.0)
    await client.call(
        _sync(group, joined.generation_id, joined.member_id, []), SyncGroupResponse, 2
    )
    await asyncio.sleep(4.0)
    heartbeat = HeartbeatRequest(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=joined.member_id,
        group_instance_id=None,
    )
    await client.call(heartbeat, HeartbeatResponse, 3)
    client.close()


async def commit_to_unknown_group(connect: Connect, group: str) -> None:
    """`commit.unknown_group_with_generation`: OffsetCommit v9 with generation 1 to a group
    nobody created. Java: GROUP_ID_NOT_FOUND (from v9); Scala: ILLEGAL_GENERATION."""
    client = await connect("profile-a")
    await client.create_topic()
    await client.find_coordinator(group)
    partition = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
        partition_index=0, committed_offset=7, committed_leader_epoch=-1, committed_metadata=""
    )
    commit = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=1,
        member_id="profile-member",
        group_instance_id=None,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name="probe", partitions=[partition])],
    )
    await client.call(commit, OffsetCommitResponse, 9)
    client.close()


async def expiry_during_initial_delay(connect: Connect, group: str) -> None:
    """`rebalance.join_completed_after_removal`: b creates the group (JoinGroup v3, parked for
    the 6 s initial delay); a takes a member id (JoinGroup v4, 2 s session) and never comes
    back. When a's pending id expires (2 s), everyone left has joined: the Java coordinator
    completes the join there, the Scala one waits out the delay (6 s). A DescribeGroups at 4 s
    tells them apart (Stable after b's sync, or PreparingRebalance)."""
    b, a, admin = await connect("profile-b"), await connect("profile-a"), await connect("admin")
    parked = asyncio.ensure_future(_join_and_sync(b, group))
    await asyncio.sleep(0.05)
    await a.call(_join(group, session_ms=2_000), JoinGroupResponse, 4)
    await asyncio.sleep(4.0)
    await _describe(admin, group)
    await parked
    for client in (a, b, admin):
        client.close()


async def join_after_emptied(connect: Connect, group: str) -> None:
    """`rebalance.initial_delay_extended` (Java) / `join.new_member_does_not_extend_initial_delay
    .kafka_3x` (Scala): a forms generation 1 and leaves, so the group is Empty past generation
    0; b joins (the initial delay starts, 6 s) and c 3 s later. The Java coordinator extends the
    delay for c (6 s more, the join completes at 12 s), the Scala one does not (6 s). A
    DescribeGroups at 8.5 s tells them apart."""
    a, b, c, admin = [await connect(n) for n in ("profile-a", "profile-b", "profile-c", "admin")]
    joined = await _join_and_sync(a, group)
    leave = LeaveGroupRequest(
        group_id=group,
        members=[
            LeaveGroupRequest.MemberIdentity(member_id=joined.member_id, group_instance_id=None)
        ],
    )
    await a.call(leave, LeaveGroupResponse, 3)
    first = asyncio.ensure_future(_join_and_sync(b, group))
    await asyncio.sleep(3.0)
    second = asyncio.ensure_future(_join_and_sync(c, group))
    await asyncio.sleep(5.5)
    await _describe(admin, group)
    await asyncio.gather(first, second)
    for client in (a, b, c, admin):
        client.close()


class UnloadNotSeen(Exception):
    """The restarting broker closed the connection of the parked JoinGroup without answering
    it: the unload that would have answered it NOT_COORDINATOR ran after the socket server had
    stopped (a race in Kafka's shutdown, docs/kafka.md), so the trace does not show the move."""


def created_then_restarted(restart: Callable[[], None]) -> Driver:
    """`join.group_created`: a JoinGroup v3 creates the group and is parked in the initial
    delay; 1.5 s later the broker restarts (the unload answers the join NOT_COORDINATOR) and
    describes the group. The Java coordinator wrote the new group's record and reloads it
    (Empty); the Scala one kept it in memory only (Dead). `restart` stops the broker and starts
    it again on the same port and data. UnloadNotSeen if the join was not answered."""

    async def driver(connect: Connect, group: str) -> None:
        client = await connect("profile-a")
        await client.find_coordinator(group)
        parked = asyncio.ensure_future(client.call(_join(group), JoinGroupResponse, 3))
        await asyncio.sleep(1.5)
        await asyncio.to_thread(restart)
        try:
            await parked
        except asyncio.IncompleteReadError:
            raise UnloadNotSeen(f"group {group}: the parked JoinGroup was not answered") from None
        admin = await connect("admin")
        await _describe(admin, group)
        client.close()
        admin.close()

    return driver


def record_restarted(broker: KafkaBroker, name: str, trace_dir: Path, attempts: int = 3) -> Path:
    """`record` of `created_then_restarted` on `broker`, again on a new group (the trace
    replaced) while the unload goes unseen, at most `attempts` times (UnloadNotSeen after)."""
    driver = created_then_restarted(restarter(broker))
    for _ in range(attempts - 1):
        try:
            return record(broker, name, driver, trace_dir)
        except UnloadNotSeen:
            continue
    return record(broker, name, driver, trace_dir)


def record(broker: KafkaBroker, name: str, driver: Driver, trace_dir: Path) -> Path:
    """Run `driver` against `broker` through the recording proxy on a group named afresh; the
    trace written (`trace_dir/name.jsonl`, the broker's settings in its header)."""
    path = trace_dir / f"{name}.jsonl"
    config = ProxyConfig(Address(LOOPBACK, 0), broker.address, advertise_self=True)
    header = TraceHeader(
        f"{broker.describe()}, version-profile driver {name!r}", broker.header_settings()
    )
    with RecorderThread(config, path, header) as recorder:

        async def connect(client_id: str, port: int = recorder.port) -> ProbeClient:
            reader, writer = await asyncio.open_connection(LOOPBACK, port)
            return ProbeClient(reader, writer, client_id)

        asyncio.run(driver(connect, f"{name}-{uuid.uuid4().hex[:12]}"))
        time.sleep(0.2)  # the recorder sees the last frames
    return path


def restarter(broker: KafkaBroker) -> Callable[[], None]:
    """Stop `broker` (keeping its data) and start it again; it must have a fixed port."""

    def restart() -> None:
        broker.stop(keep_data=True)
        broker.start()

    return restart


DRIVERS: dict[str, Driver] = {
    "sync-in-stable": sync_in_stable,
    "commit-to-unknown-group": commit_to_unknown_group,
    "expiry-during-initial-delay": expiry_during_initial_delay,
    "join-after-emptied": join_after_emptied,
}
