"""Probes of the coordinator's timers: a session that expires, a pending member that never
rejoins, the rebalance timeout, the sync timeout (reference §3). They need a broker whose
minimum session timeout admits SHORT_SESSION_MS (`probes.SHORT_SESSIONS`).

A timer's effect is observed, never guessed: a probe waits until an answer shows it (a
heartbeat told a rebalance is under way, a JoinGroup answered). Where a timer changes nothing a
client can see (a join timer re-armed, a session timer sparing a member parked in JoinGroup),
the probe waits past the deadline plus the oracle's timer slack (`ORACLE_TIMER_SLACK_MS`), so
that every explanation of the trace has fired it.
"""

from __future__ import annotations

import asyncio

from .probe_client import (
    MEMBER_ID_REQUIRED,
    Connect,
    ProbeMember,
    close_all,
    expect,
    form_group,
    heartbeat_until,
    leave_all,
    new_members,
    sync_all,
)
from .probes_membership import CHANGED, REBALANCE_IN_PROGRESS, SETTLE_S

SHORT_SESSION_MS = 1_000
SHORT_REBALANCE_MS = 1_500
# How late the oracle lets a timer fire by default (OracleSettings.timer_slack_ms), and a margin.
ORACLE_TIMER_SLACK_MS = 1_000
MARGIN_MS = 500
UNKNOWN_MEMBER_ID = 25


async def session_expiry(connect: Connect, group: str) -> None:
    """In a Stable group of two, one member (1 s session) goes silent: it is removed, the other
    is told to rejoin, and its rejoin completes the join phase."""
    quiet, steady = await new_members(connect, group, 2)
    quiet.session_ms = SHORT_SESSION_MS
    await form_group([quiet, steady])
    await heartbeat_until(steady, REBALANCE_IN_PROGRESS)
    expect(await steady.join(3))
    expect(await steady.sync())
    expect(await steady.leave())
    close_all(quiet, steady)


async def expiry_completes_join(connect: Connect, group: str) -> None:
    """In a Stable group of two, one member rejoins with a new subscription and the other (2 s
    session) goes silent: its expiry leaves everyone joined, which completes the join phase.
    (A DescribeGroups in between shows the rejoin took effect before the expiry.)"""
    quiet, steady = await new_members(connect, group, 2)
    # Long enough for the DescribeGroups to come before the expiry.
    quiet.session_ms = 2 * SHORT_SESSION_MS
    admin = await connect("probe-admin")
    await form_group([quiet, steady])
    rejoin = asyncio.ensure_future(steady.join(3, protocols=CHANGED))
    await asyncio.sleep(SETTLE_S)
    await admin.describe(group)
    expect(await rejoin)
    expect(await steady.sync())
    expect(await steady.leave())
    close_all(quiet, steady, admin)


async def pending_member_expiry(connect: Connect, group: str) -> None:
    """A Stable group of one; a new member is given an id (JoinGroup v4, 1 s session) and never
    rejoins, and the leader rejoins: the join phase waits for the pending member until it
    expires. Its late rejoin is then refused."""
    (holder,) = await new_members(connect, group, 1)
    await form_group([holder])
    pending = ProbeMember(await connect("probe-pending"), group, session_ms=SHORT_SESSION_MS)
    expect(await pending.join(4), MEMBER_ID_REQUIRED)
    expect(await holder.join(3))
    expect(await pending.join(4), UNKNOWN_MEMBER_ID)
    expect(await holder.sync())
    expect(await holder.leave())
    close_all(holder, pending)


async def rebalance_timeout(connect: Connect, group: str) -> None:
    """In a Stable group of two, one member (1 s session) rejoins with a new subscription; the
    other keeps heartbeating but never rejoins. The rejoined member's session timer fires while
    it waits (it is spared), then the rebalance timeout removes the other."""
    rebalance_ms = SHORT_SESSION_MS + ORACLE_TIMER_SLACK_MS + MARGIN_MS
    parked, idle = await new_members(connect, group, 2, rebalance_ms=rebalance_ms)
    parked.session_ms = SHORT_SESSION_MS
    await form_group([parked, idle])
    rejoin = asyncio.ensure_future(parked.join(3, protocols=CHANGED))
    await heartbeat_until(idle, UNKNOWN_MEMBER_ID, limit_ms=4 * rebalance_ms)
    expect(await rejoin)
    expect(await parked.sync())
    expect(await parked.leave())
    close_all(parked, idle)


async def leader_not_rejoined(connect: Connect, group: str) -> None:
    """Two static members are Stable; the follower rejoins with a new subscription and the
    leader stays silent: at the rebalance timeout the leader is kept (static) but the follower,
    the only member that rejoined, becomes the leader."""
    members = await new_members(connect, group, 2, static=True, rebalance_ms=SHORT_REBALANCE_MS)
    await form_group(members)
    leader, follower = sorted(members, key=lambda m: not m.is_leader)
    expect(await follower.join(5, protocols=CHANGED))
    expect(await leader.join(5))
    await sync_all(members)
    await leave_all(members)
    close_all(*members)


async def no_member_rejoined(connect: Connect, group: str) -> None:
    """Two static members are Stable; an admin removes one by its instance id, and the other
    does not rejoin before the rebalance timeout: nobody rejoined, so the coordinator waits
    another rebalance timeout. The member then rejoins, which completes the join phase."""
    members = await new_members(connect, group, 2, static=True, rebalance_ms=SHORT_REBALANCE_MS)
    await form_group(members)
    kept, removed = members
    admin = await connect("probe-admin")
    await admin.leave(group, [("", removed.instance)])
    await asyncio.sleep((SHORT_REBALANCE_MS + ORACLE_TIMER_SLACK_MS + MARGIN_MS) / 1000)
    expect(await kept.join(5))
    expect(await kept.sync(5))
    expect(await kept.leave())
    close_all(*members, admin)


async def sync_timeout(connect: Connect, group: str) -> None:
    """Two members join; the leader syncs and the follower never does: at the rebalance timeout
    the follower is removed and the leader is told to rejoin."""
    members = await new_members(connect, group, 2, rebalance_ms=SHORT_REBALANCE_MS)
    for answer in await asyncio.gather(*(m.join(3) for m in members)):
        expect(answer, what="JoinGroup")
    leader, follower = sorted(members, key=lambda m: not m.is_leader)
    expect(await leader.sync())
    await heartbeat_until(leader, REBALANCE_IN_PROGRESS, limit_ms=10 * SHORT_REBALANCE_MS)
    expect(await follower.heartbeat(), UNKNOWN_MEMBER_ID)
    expect(await leader.join(3))
    expect(await leader.sync())
    expect(await leader.leave())
    close_all(*members)
