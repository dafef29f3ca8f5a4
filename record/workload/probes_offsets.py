"""Probes of committed offsets and of the administrative APIs: OffsetCommit fencing and its
limits, OffsetFetch, offsets retention, DescribeGroups, ListGroups, DeleteGroups, and the
answers about a group that does not exist or a request the coordinator refuses outright
(reference §2.0, §2.7, §2.8, §5, §6)."""

from __future__ import annotations

import asyncio

from kafka.protocol.admin.groups import DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetFetchRequest

from .probe_client import (
    Connect,
    ProbeClient,
    ProbeMember,
    close_all,
    expect,
    form_group,
    leave_all,
    new_members,
    sync_all,
)
from .probes_membership import SETTLE_S
from .probes_timers import MARGIN_MS, ORACLE_TIMER_SLACK_MS

ILLEGAL_GENERATION = 22
# An offset committed with this retention (OffsetCommit v2-v4) expires that long after; a
# broker's own retention (offsets.retention.minutes) cannot be shorter than a minute.
COMMIT_RETENTION_MS = 500
# The retention check interval the retention probe needs (`probes.LIMITS`).
RETENTION_CHECK_INTERVAL_MS = 500
METADATA_MAX_BYTES = 4_096


async def _describe_version(client: ProbeClient) -> int:
    """DescribeGroups v6 where the broker has it (it reports a missing group as an error), else
    v5."""
    return 6 if await client.supports(DescribeGroupsRequest, 6) else 5


async def offset_fetch_all(connect: Connect, group: str) -> None:
    """Commit an offset without group management, then fetch every offset (topics null)."""
    client = await connect("probe-a")
    await client.create_topic()
    await client.find_coordinator(group)
    await client.commit(group, {0: 42})
    await client.fetch(group, None, version=2)
    client.close()


async def offset_fetch_uncommitted(connect: Connect, group: str) -> None:
    """Fetch, at v5, the offset of a partition of an existing topic that nobody committed."""
    client = await connect("probe-a")
    await client.create_topic()
    await client.find_coordinator(group)
    await client.fetch(group, [0], version=5)
    client.close()


async def offset_fetch_stable(connect: Connect, group: str) -> None:
    """Commit offsets without group management, then fetch them asking for stable offsets
    (OffsetFetch v7 `require_stable`), and again in a v8 request that also names a group that
    does not exist."""
    client = await connect("probe-a")
    await client.create_topic()
    await client.commit(group, {0: 7, 1: 8})
    await client.fetch(group, [0, 1, 2], version=7, require_stable=True)
    if await client.supports(OffsetFetchRequest, 8):
        await client.fetch_groups({group: [0, 1], f"{group}-unknown": None})
    client.close()


async def commit_metadata_too_large(connect: Connect, group: str) -> None:
    """One OffsetCommit whose metadata exceeds offset.metadata.max.bytes on one partition and
    not on another: only the second is written."""
    client = await connect("probe-a")
    await client.create_topic()
    too_large = "m" * (METADATA_MAX_BYTES + 1)
    await client.commit(group, {0: 1, 1: 2}, metadata={0: too_large, 1: "fits"})
    await client.fetch(group, [0, 1])
    client.close()


async def commit_generations(connect: Connect, group: str) -> None:
    """A lone member commits while its join phase completes (refused: rebalancing), once
    Stable (accepted), with an unknown member id (refused), and after a new generation with
    the old one: its commit, heartbeat and SyncGroup are refused as ILLEGAL_GENERATION."""
    (member,) = await new_members(connect, group, 1)
    await member.client.create_topic()
    expect(await member.join(3))
    await member.commit({0: 1})
    expect(await member.sync())
    await member.commit({0: 2})
    await member.client.commit(group, {0: 3}, generation=member.generation, member_id="ghost")
    expect(await member.join(3))
    old = member.generation - 1
    await member.commit({0: 4}, generation=old)
    expect(await member.heartbeat(generation=old), ILLEGAL_GENERATION)
    expect(await member.sync(generation=old), ILLEGAL_GENERATION)
    expect(await member.sync())
    await member.commit({0: 5})
    await member.client.fetch(group, [0])
    expect(await member.leave())
    close_all(member)


async def offsets_retention(connect: Connect, group: str) -> None:
    """Offsets committed without group management with a short retention (OffsetCommit v2)
    expire at the next retention check, and the group, Empty and left without offsets, is
    deleted."""
    client = await connect("probe-a")
    await client.create_topic()
    await client.commit(group, {0: 3, 1: 4}, retention_ms=COMMIT_RETENTION_MS)
    await client.fetch(group, [0, 1])
    wait_ms = COMMIT_RETENTION_MS + RETENTION_CHECK_INTERVAL_MS + ORACLE_TIMER_SLACK_MS
    await asyncio.sleep((wait_ms + MARGIN_MS) / 1000)
    await client.describe(group)
    await client.fetch(group, [0, 1])
    client.close()


async def unknown_group(connect: Connect, group: str) -> None:
    """Every group API about a group that does not exist, naming a member it never had."""
    client = await connect("probe-a")
    await client.create_topic()
    ghost = ProbeMember(client, group, member_id="member-unknown", generation=1)
    await ghost.join(3)
    await ghost.sync()
    await ghost.heartbeat()
    await client.leave(group, [("member-unknown", None), ("", "instance-unknown")])
    if await client.supports(OffsetCommitRequest, 9):
        await ghost.commit({0: 1}, version=9)
    await ghost.commit({0: 1}, version=8)
    await client.fetch(group, [0])
    await client.describe(group, version=await _describe_version(client))
    await client.delete(group)
    client.close()


async def invalid_group_id(connect: Connect, group: str) -> None:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup with an empty group id."""
    client = await connect("probe-a")
    nameless = ProbeMember(client, "", member_id="member-unknown", generation=1)
    await nameless.join(3, member_id="")
    await nameless.sync()
    await nameless.heartbeat()
    await nameless.leave()
    client.close()


async def invalid_session_timeout(connect: Connect, group: str) -> None:
    """JoinGroup with a session timeout below any broker's minimum, then one above Kafka's
    default maximum (30 minutes)."""
    (member,) = await new_members(connect, group, 1)
    await member.join(3, session_ms=1)
    await member.join(3, session_ms=1_800_001)
    close_all(member)


async def group_max_size(connect: Connect, group: str) -> None:
    """With group.max.size 2, a third member asks to join two that are joining, and again
    once they are Stable: refused both times."""
    members = await new_members(connect, group, 2)
    (third,) = await new_members(connect, group, 1)
    joins = asyncio.gather(*(m.join(3) for m in members))
    await asyncio.sleep(SETTLE_S)
    await third.join(3)
    for answer in await joins:
        expect(answer, what="JoinGroup")
    await sync_all(members)
    await third.join(4)
    await leave_all(members)
    close_all(*members, third)


async def describe_groups(connect: Connect, group: str) -> None:
    """DescribeGroups of a group while its first join waits (PreparingRebalance), once Stable,
    once Empty, and after it was deleted (at v6 if the broker has it: GROUP_ID_NOT_FOUND)."""
    admin = await connect("probe-admin")
    (member,) = await new_members(connect, group, 1)
    joining = asyncio.ensure_future(member.join(3))
    await asyncio.sleep(SETTLE_S)
    await admin.describe(group)
    expect(await joining)
    expect(await member.sync())
    await admin.describe(group)
    expect(await member.leave())
    await admin.describe(group)
    await admin.delete(group)
    await admin.describe(group, version=await _describe_version(admin))
    close_all(member, admin)


async def list_groups(connect: Connect, group: str) -> None:
    """ListGroups with no filter, by state and by type (v5, if the broker has it), while a
    group of two is Stable and then rebalancing."""
    admin = await connect("probe-admin")
    members = await new_members(connect, group, 2)
    await form_group(members)
    if await admin.supports(ListGroupsRequest, 5):
        await admin.list_groups()
        await admin.list_groups(states=["Stable"], types=["classic"])
        await admin.list_groups(states=["stable", "empty"], types=["consumer"])
    else:
        await admin.list_groups(states=["Stable"], version=4)
    leader = next(m for m in members if m.is_leader)
    rejoin = asyncio.ensure_future(leader.join(3))
    await asyncio.sleep(SETTLE_S)
    await admin.list_groups(states=["PreparingRebalance"], version=4)
    await admin.list_groups(version=2)
    for member in members:
        if member is not leader:
            expect(await member.join(3))
    expect(await rejoin)
    await sync_all(members)
    await leave_all(members)
    close_all(*members, admin)


async def delete_groups(connect: Connect, group: str) -> None:
    """DeleteGroups of a Stable group (refused), then, once it is Empty and holds offsets, of it
    and of a group that does not exist in one request; its offsets are gone."""
    admin = await connect("probe-admin")
    await admin.create_topic()
    (member,) = await new_members(connect, group, 1)
    await form_group([member])
    await member.commit({0: 9})
    await admin.delete(group)
    expect(await member.leave())
    await admin.delete(group, f"{group}-unknown")
    await admin.fetch(group, [0])
    close_all(member, admin)
