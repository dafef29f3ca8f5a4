"""Probes of membership: JoinGroup in each group state, the MEMBER_ID_REQUIRED round, protocol
mismatches, SyncGroup and Heartbeat, static members replaced, LeaveGroup (reference §2.2–§2.5,
§9). Each takes a `Connect` and the name of a group nobody used, and writes nothing but its
requests; `probes.py` says which rules each is written to exercise."""

from __future__ import annotations

import asyncio

from .probe_client import (
    MEMBER_ID_REQUIRED,
    SUBSCRIPTION,
    TOPIC,
    Connect,
    ProbeMember,
    close_all,
    expect,
    form_group,
    heartbeat_until,
    leave_all,
    new_members,
    subscription,
    sync_all,
)

FENCED_INSTANCE_ID = 82
REBALANCE_IN_PROGRESS = 27
# A moment for a request sent on one connection to reach the coordinator before the probe
# sends the next on another: the order the probe means, where the answers then show it.
SETTLE_S = 0.2
# A request whose answer waits (a parked SyncGroup) may, to the oracle, take effect as late as
# its reorder window (OracleSettings.reorder_window_ms) after it was seen. Where no answer
# shows the order, a probe that needs the request to have taken effect first waits this long.
ORACLE_REORDER_WINDOW_MS = 1_000
PARKED_S = (ORACLE_REORDER_WINDOW_MS + 200) / 1000
# A subscription that differs from SUBSCRIPTION: the same protocol with changed metadata.
CHANGED = (("range", subscription(TOPIC, "probe-other")),)


async def member_id_required(connect: Connect, group: str) -> None:
    """A dynamic member's first JoinGroup v4."""
    client = await connect("probe-a")
    await client.find_coordinator(group)
    await ProbeMember(client, group).join(4)
    client.close()


async def first_generation(connect: Connect, group: str) -> None:
    """One member joins (v3) and syncs: the generation it gets."""
    client = await connect("probe-a")
    await client.find_coordinator(group)
    member = ProbeMember(client, group)
    if (await member.join(3)).error_code == 0:
        await member.sync(2)
    client.close()


async def initial_delay(connect: Connect, group: str) -> None:
    """Two members join (v3) 200 ms apart, within the initial rebalance delay."""
    first, second = await new_members(connect, group, 2)
    parked = asyncio.ensure_future(first.join(3))
    await asyncio.sleep(SETTLE_S)
    await asyncio.gather(parked, second.join(3))
    close_all(first, second)


async def sync_follower_after_leader(connect: Connect, group: str) -> None:
    """Two members join (v3); the leader syncs, then the follower does."""
    first, second = await new_members(connect, group, 2)
    await asyncio.gather(first.join(3), second.join(3))
    leader, follower = sorted((first, second), key=lambda m: not m.is_leader)
    await leader.sync(2)
    await asyncio.sleep(SETTLE_S)
    await follower.sync(2)
    close_all(first, second)


async def follower_syncs_first(connect: Connect, group: str) -> None:
    """Two members join; the follower's SyncGroup waits for the leader's, which answers both."""
    members = await new_members(connect, group, 2)
    for answer in await asyncio.gather(*(m.join(3) for m in members)):
        expect(answer, what="JoinGroup")
    leader, follower = sorted(members, key=lambda m: not m.is_leader)
    parked = asyncio.ensure_future(follower.sync())
    await asyncio.sleep(PARKED_S)
    expect(await leader.sync())
    expect(await parked)
    await leave_all(members)
    close_all(*members)


async def pending_member_joins(connect: Connect, group: str) -> None:
    """A dynamic member's JoinGroup v4 is asked for its id, it rejoins with it, syncs and
    leaves: the group is Empty again."""
    (member,) = await new_members(connect, group, 1)
    expect(await member.join(4), MEMBER_ID_REQUIRED)
    expect(await member.join(4))
    expect(await member.sync())
    expect(await member.leave())
    close_all(member)


async def pending_member_with_instance_id(connect: Connect, group: str) -> None:
    """A dynamic member is given an id (JoinGroup v5), then rejoins with it and an instance id."""
    (member,) = await new_members(connect, group, 1)
    expect(await member.join(5), MEMBER_ID_REQUIRED)
    await member.join(5, instance="instance-0")
    close_all(member)


async def leave_pending_member(connect: Connect, group: str) -> None:
    """A member given an id by MEMBER_ID_REQUIRED leaves before rejoining, then tries to join
    with that id."""
    (member,) = await new_members(connect, group, 1)
    expect(await member.join(4), MEMBER_ID_REQUIRED)
    await member.leave()
    await member.join(4)
    close_all(member)


async def new_member_protocol_mismatch(connect: Connect, group: str) -> None:
    """A consumer group of one is Stable; a member of another protocol type asks to join, then
    one offering only a protocol the group's member does not support."""
    (member,) = await new_members(connect, group, 1)
    await form_group([member])
    (stranger,) = await new_members(connect, group, 1)
    await stranger.join(3, protocol_type="connect")
    await stranger.join(3, protocols=(("roundrobin", SUBSCRIPTION),))
    expect(await member.leave())
    close_all(member, stranger)


async def member_protocol_mismatch(connect: Connect, group: str) -> None:
    """A member of a Stable group rejoins with another protocol type, then syncs (v5) naming
    another protocol type and another protocol."""
    (member,) = await new_members(connect, group, 1)
    await form_group([member])
    await member.join(3, protocol_type="connect")
    await member.sync(5, protocol_type="connect")
    await member.sync(5, protocol_name="roundrobin")
    expect(await member.leave())
    close_all(member)


async def leader_rejoins(connect: Connect, group: str) -> None:
    """In a Stable group of two the leader rejoins: the follower's heartbeat and SyncGroup are
    told a rebalance is under way, and its rejoin completes the join phase at once."""
    members = await new_members(connect, group, 2)
    await form_group(members)
    leader, follower = sorted(members, key=lambda m: not m.is_leader)
    rejoin = asyncio.ensure_future(leader.join(3))
    await heartbeat_until(follower, REBALANCE_IN_PROGRESS)
    expect(await follower.sync(), REBALANCE_IN_PROGRESS)
    expect(await follower.join(3))
    expect(await rejoin)
    await sync_all(members)
    await leave_all(members)
    close_all(*members)


async def follower_rejoins_unchanged(connect: Connect, group: str) -> None:
    """In a Stable group of two the follower rejoins with the same subscription: it is given
    the current generation at once, and its heartbeats go on."""
    members = await new_members(connect, group, 2)
    await form_group(members)
    follower = next(m for m in members if not m.is_leader)
    expect(await follower.join(3))
    expect(await follower.heartbeat())
    await leave_all(members)
    close_all(*members)


async def follower_rejoins_changed(connect: Connect, group: str) -> None:
    """In a Stable group of two the follower rejoins with another subscription: a rebalance,
    which the leader's rejoin completes."""
    members = await new_members(connect, group, 2)
    await form_group(members)
    leader, follower = sorted(members, key=lambda m: not m.is_leader)
    rejoin = asyncio.ensure_future(follower.join(3, protocols=CHANGED))
    await heartbeat_until(leader, REBALANCE_IN_PROGRESS)
    expect(await leader.join(3))
    expect(await rejoin)
    await sync_all(members)
    await leave_all(members)
    close_all(*members)


async def rejoin_while_completing(connect: Connect, group: str) -> None:
    """A lone member's join completes; before syncing it sends JoinGroup again, first with the
    same subscription (answered at once), then with another (a new generation)."""
    (member,) = await new_members(connect, group, 1)
    expect(await member.join(3))
    expect(await member.join(3))
    expect(await member.join(3, protocols=CHANGED))
    expect(await member.sync())
    expect(await member.leave())
    close_all(member)


async def sync_parked_then_rebalance(connect: Connect, group: str) -> None:
    """Two members join; the follower's SyncGroup waits for the leader's, and a third member
    joins meanwhile: the waiting SyncGroup is told a rebalance is under way."""
    members = await new_members(connect, group, 3)
    first_two, third = members[:2], members[2]
    for answer in await asyncio.gather(*(m.join(3) for m in first_two)):
        expect(answer, what="JoinGroup")
    leader, follower = sorted(first_two, key=lambda m: not m.is_leader)
    parked = asyncio.ensure_future(follower.sync())
    await asyncio.sleep(PARKED_S)
    newcomer = asyncio.ensure_future(third.join(3))
    expect(await parked, REBALANCE_IN_PROGRESS)
    for answer in await asyncio.gather(leader.join(3), follower.join(3)):
        expect(answer, what="JoinGroup")
    expect(await newcomer)
    await sync_all(members)
    await leave_all(members)
    close_all(*members)


async def static_rejoin(connect: Connect, group: str) -> None:
    """A static member joins and syncs (JoinGroup v5), rejoins from a new connection with its
    instance id, and its old incarnation heartbeats."""
    old = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    if (await old.join(5)).error_code != 0:
        old.client.close()
        return
    await old.sync(3)
    new = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    await new.join(5)
    await old.heartbeat(3)
    close_all(old, new)


async def static_replaced_while_joining(connect: Connect, group: str) -> None:
    """A dynamic member is Stable alone; a static member joins, so the group rebalances and
    waits for the first to rejoin; meanwhile the static member's instance id joins again from
    another connection: the first static JoinGroup is fenced, the second takes its place, and
    the dynamic member's rejoin completes the join phase."""
    (holder,) = await new_members(connect, group, 1)
    await form_group([holder])
    old = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    parked = asyncio.ensure_future(old.join(5))
    await heartbeat_until(holder, REBALANCE_IN_PROGRESS)
    new = ProbeMember(await connect("probe-static-new"), group, instance="instance-0")
    replacing = asyncio.ensure_future(new.join(5))
    expect(await parked, FENCED_INSTANCE_ID)
    expect(await holder.join(3))
    expect(await replacing)
    await sync_all([holder, new])
    await leave_all([holder, new])
    close_all(holder, old, new)


async def static_replaced_while_completing(connect: Connect, group: str) -> None:
    """A static member's join completes; before it syncs, its instance id joins from another
    connection: a new generation, and the old member id's SyncGroup is fenced."""
    old = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    expect(await old.join(5))
    new = ProbeMember(await connect("probe-static-new"), group, instance="instance-0")
    expect(await new.join(5))
    expect(await old.sync(5), FENCED_INSTANCE_ID)
    expect(await new.sync(5))
    expect(await new.leave())
    close_all(old, new)


async def static_replaced_protocol_changed(connect: Connect, group: str) -> None:
    """A static member of a Stable group restarts preferring another assignor (roundrobin, then
    range): the protocol the group would select changes, so it rebalances."""
    old = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    await form_group([old])
    upgraded = (("roundrobin", SUBSCRIPTION), ("range", SUBSCRIPTION))
    new = ProbeMember(
        await connect("probe-static-new"), group, instance="instance-0", protocols=upgraded
    )
    expect(await new.join(5))
    expect(await new.sync(5))
    expect(await new.leave())
    close_all(old, new)


async def static_leader_replaced(connect: Connect, group: str) -> None:
    """Two static members are Stable; the leader restarts twice with the same subscription:
    at JoinGroup v5 it is told the old leader id, at v9 it is told it leads and may skip the
    assignment. Neither restart rebalances."""
    members = await new_members(connect, group, 2, static=True)
    await form_group(members)
    leader = next(m for m in members if m.is_leader)
    successors = []
    for version in (5, 9):
        client = await connect("probe-restarted")
        successor = ProbeMember(client, group, instance=leader.instance)
        expect(await successor.join(version))
        expect(await successor.sync(5, assign=False))
        successors.append(successor)
    await leave_all([successors[-1], *(m for m in members if m is not leader)])
    close_all(*members, *successors)


async def fenced_instance(connect: Connect, group: str) -> None:
    """A static member is replaced from another connection; its old member id then heartbeats,
    syncs, commits, rejoins and leaves, each refused with FENCED_INSTANCE_ID."""
    old = ProbeMember(await connect("probe-static"), group, instance="instance-0")
    await old.client.create_topic()
    await form_group([old])
    new = ProbeMember(await connect("probe-static-new"), group, instance="instance-0")
    expect(await new.join(5))
    expect(await old.heartbeat(), FENCED_INSTANCE_ID)
    expect(await old.sync(5), FENCED_INSTANCE_ID)
    await old.commit({0: 1})
    expect(await old.join(5), FENCED_INSTANCE_ID)
    await old.leave()
    expect(await new.leave())
    close_all(old, new)


async def leave_in_batch(connect: Connect, group: str) -> None:
    """Two static members and a dynamic one are Stable. One LeaveGroup (v3) removes a static
    member by its member id, the other by its instance id alone, and names an unknown instance
    and an unknown member id; the dynamic member then rejoins, and leaves last: Empty."""
    statics = await new_members(connect, group, 2, static=True)
    (dynamic,) = await new_members(connect, group, 1)
    dynamic.client.name = "probe-dynamic"
    await form_group([*statics, dynamic])
    first, second = statics
    await dynamic.client.leave(
        group,
        [
            (first.member_id, first.instance),
            ("", second.instance),
            ("", "instance-unknown"),
            ("member-unknown", None),
        ],
    )
    await heartbeat_until(dynamic, REBALANCE_IN_PROGRESS)
    expect(await dynamic.join(3))
    expect(await dynamic.sync())
    expect(await dynamic.leave())
    close_all(*statics, dynamic)
