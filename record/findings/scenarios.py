"""The scripts that drive Apache Kafka into the model checker's counterexamples of the two
findings about the classic protocol (docs/bugs.md, "A finding: ...").

Each script sends the counterexample's requests in its order, with the answers it needs to go
on, and records one `Check` per answer that matters: the counterexample's step numbers, what
was sent, what the specification answered there, and what the broker answered. A finding is
reproduced when every check holds. The order of requests on different connections is made
certain where it matters by watching the group (ListGroups from an observer) rather than by
waiting a fixed time; the only waits are the coordinator's own timers (the initial rebalance
delay, a session timeout).

The two scripts and the steps they follow (`groupspec check ...`, docs/bugs.md):

- `static-failover-fenced` (static-2, failovers=1, evictions=0; 30 steps to the point of no
  return): a static member restarts while a rebalance is starting, its replacement is kept
  in memory only, the coordinator moves before the SyncGroup, and the new coordinator fences
  the live member.
- `static-leader-new-topic-unassigned` (static-2, one static client, topics t and u; 15
  steps): a lone static leader restarts subscribing to one more topic; the group stays
  Stable, the leader is told to skip the assignment, and the new topic stays unassigned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from groupspec.wire.address import Address

from .member import Assignment, GroupMember, assigned, subscribed_topics

NONE, NOT_COORDINATOR, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID = 0, 16, 25, 82
ERROR_NAMES = {
    NONE: "NONE",
    NOT_COORDINATOR: "NOT_COORDINATOR",
    UNKNOWN_MEMBER_ID: "UNKNOWN_MEMBER_ID",
    FENCED_INSTANCE_ID: "FENCED_INSTANCE_ID",
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    22: "ILLEGAL_GENERATION",
    27: "REBALANCE_IN_PROGRESS",
}
WATCH_S = 0.05
# How often the watcher asks the broker taking the group over whether it serves it yet: the
# trace then brackets the moment its load finished within this interval (docs/bugs.md).
WATCH_LOAD_S = 0.01


class Failover(Protocol):
    """Moving the group's coordinator in two steps (record/kafka/cluster.py): `prefer` names
    the broker to move to, `elect` moves it there and returns once it has loaded the group."""

    async def prefer(self, to_node: int | None = None) -> int: ...

    async def elect(self) -> int: ...


def error_name(code: int) -> str:
    """Kafka's name of an error code (the number for one not listed here)."""
    return ERROR_NAMES.get(code, str(code))


@dataclass(frozen=True)
class Check:
    """One answer the finding depends on: the counterexample's steps it stands for ("steps
    19-21"), what was sent, what the specification answers there, what the broker answered,
    whether they agree."""

    steps: str
    action: str
    expected: str
    observed: str
    holds: bool


@dataclass
class Scenario:
    """What a script needs: the group, where members bootstrap, the members' timeouts, each
    broker's client address (node id -> address), and how to move the coordinator (None where
    no broker to move to exists)."""

    group: str
    bootstrap: Address
    session_timeout_ms: int
    rebalance_timeout_ms: int
    brokers: Mapping[int, Address] = field(default_factory=dict)
    failover: Failover | None = None
    checks: list[Check] = field(default_factory=list)

    def member(self, name: str, instance: str | None) -> GroupMember:
        """A new member (a new client incarnation) of the group."""
        return GroupMember(
            name,
            self.group,
            instance,
            self.bootstrap,
            self.session_timeout_ms,
            self.rebalance_timeout_ms,
        )

    def check(self, steps: str, action: str, expected: str, observed: str, holds: bool) -> bool:
        """Record one check; whether it holds."""
        self.checks.append(Check(steps, action, expected, observed, holds))
        return holds

    @property
    def reproduced(self) -> bool:
        """Whether the script ran to its end and every check held."""
        return bool(self.checks) and all(check.holds for check in self.checks)


class Stop(Exception):
    """A check failed: the broker left the counterexample, so the script cannot go on."""


def _require(holds: bool, what: str) -> None:
    if not holds:
        raise Stop(what)


def _joined(answer: Any) -> str:
    text = f"{error_name(answer.error_code)}"
    if answer.error_code == NONE:
        text += f", generation {answer.generation_id}, leader {answer.leader}"
        if answer.skip_assignment:
            text += ", skip assignment"
    return text


async def _until_state(observer: GroupMember, state: str) -> None:
    """ListGroups until the group is in `state`. (Not DescribeGroups: outside Stable, the
    specification's 4.x profile describes members without their assignment, Kafka 4.x with it:
    docs/bugs.md.)"""
    while await observer.state() != state:
        await asyncio.sleep(WATCH_S)


async def _until_served(watcher: GroupMember) -> int:
    """OffsetFetch of the group every WATCH_LOAD_S until the broker the watcher is connected
    to answers it without error (it leads the group's partition and has loaded it); how many
    answers said otherwise (NOT_COORDINATOR before the move, COORDINATOR_LOAD_IN_PROGRESS
    during the load)."""
    refused = 0
    while (await watcher.fetch_offsets()).error_code != NONE:
        refused += 1
        await asyncio.sleep(WATCH_LOAD_S)
    return refused


async def _move(run: Scenario) -> tuple[int, int]:
    """Move the coordinator, watching the broker it moves to through that broker's recorder
    meanwhile (so the trace shows when the load finished); the new coordinator's node id and
    how many of the watcher's answers came before it served the group."""
    assert run.failover is not None, "this finding needs a coordinator to move to"
    target = await run.failover.prefer()
    watcher = run.member("watcher", None)
    await watcher.connect(run.brokers[target])
    watching = asyncio.create_task(_until_served(watcher))
    try:
        moved_to = await run.failover.elect()
        refused = await watching
    finally:
        watching.cancel()
        watcher.close()
    return moved_to, refused


async def _sync_following(member: GroupMember, *sync: Any) -> tuple[Any, list[str]]:
    """SyncGroup; if the broker answers NOT_COORDINATOR, find the coordinator again and resend
    (as a client does). The last answer, and the NOT_COORDINATOR hops taken on the way."""
    hops: list[str] = []
    while True:
        answer = await member.sync(*sync)
        if answer.error_code != NOT_COORDINATOR:
            return answer, hops
        found = await member.find()
        hops.append(f"NOT_COORDINATOR, then FindCoordinator: node {found.node_id}")


async def static_failover_fenced(run: Scenario) -> None:
    """The counterexample of `groupspec check static-2 --set failovers=1 --set evictions=0`."""
    topics = ["t"]
    observer = run.member("observer", None)
    c1, c2 = run.member("c1", "i1"), run.member("c2", "i2")
    await observer.find()
    # Steps 1-11: c1 (group.instance.id i1) forms generation 1 alone.
    await c1.find()
    first = await c1.join(topics)
    old_id = first.member_id
    _require(
        run.check(
            "steps 1-11",
            "c1 (instance i1) JoinGroup(member '') to a new group",
            "NONE, generation 1, c1 the leader",
            _joined(first),
            first.error_code == NONE and first.generation_id == 1 and first.leader == old_id,
        ),
        "c1 did not form generation 1",
    )
    # Step 12: the leader's SyncGroup stores generation 1 (i1 -> old_id) in __consumer_offsets.
    own: Assignment = {"t": [0, 1]}
    synced = await c1.sync(1, old_id, {old_id: own})
    _require(
        run.check(
            "step 12",
            f"c1 SyncGroup(generation 1, {old_id}) assigning t-0, t-1",
            "NONE (the group's record is written)",
            error_name(synced.error_code),
            synced.error_code == NONE,
        ),
        "generation 1 was not stored",
    )
    # Step 13: c1's client crashes (no LeaveGroup: a static member never sends one) and
    # restarts; steps 14-17: both clients find the coordinator.
    c1.close()
    restarted = run.member("c1", "i1")
    await c2.find()
    await restarted.find()
    # Step 18: c2 (instance i2) joins the Stable group: a rebalance starts, its JoinGroup parks.
    c2.send_join(topics)
    await _until_state(observer, "PreparingRebalance")
    # Step 19: the restarted c1 joins with no member id: a static replacement in
    # PreparingRebalance (kept in memory only); every member has joined, so the join completes.
    restarted.send_join(topics)
    answer_c1, answer_c2 = await restarted.joined(), await c2.joined()
    new_id = answer_c1.member_id
    _require(
        run.check(
            "steps 19-21",
            "restarted c1 (instance i1) JoinGroup(member '')",
            "NONE, generation 2, a new member id for i1, the leader; c2 NONE, generation 2",
            f"c1 {_joined(answer_c1)} (member {new_id}); c2 {_joined(answer_c2)}",
            answer_c1.error_code == NONE
            and answer_c2.error_code == NONE
            and answer_c1.generation_id == answer_c2.generation_id == 2
            and new_id != old_id
            and answer_c1.leader == new_id,
        ),
        "generation 2 did not form around the replaced static member",
    )
    # Steps 22-24: the coordinator fails over before any SyncGroup of generation 2.
    moved_to, refused = await _move(run)
    # Steps 25-26: the live c1's SyncGroup reaches the new coordinator, which loaded
    # generation 1 (i1 -> old_id) from the log.
    c2_id = answer_c2.member_id
    plan = {new_id: {"t": [0]}, c2_id: {"t": [1]}}
    fenced, hops = await _sync_following(restarted, 2, new_id, plan)
    run.check(
        "steps 22-26",
        f"coordinator moved to node {moved_to} (it refused the group {refused} times before "
        f"serving it); c1 SyncGroup(generation 2, {new_id}, 2 assignments)",
        "FENCED_INSTANCE_ID (the log maps i1 to the old member id)",
        "; ".join([*hops, error_name(fenced.error_code)]),
        fenced.error_code == FENCED_INSTANCE_ID,
    )
    restarted.close()  # FencedInstanceIdException is fatal to the consumer
    # Steps 27-28: c2's SyncGroup: the new coordinator has never heard of it.
    unknown, hops = await _sync_following(c2, 2, c2_id, {})
    run.check(
        "steps 27-28",
        f"c2 SyncGroup(generation 2, {c2_id})",
        "UNKNOWN_MEMBER_ID",
        "; ".join([*hops, error_name(unknown.error_code)]),
        unknown.error_code == UNKNOWN_MEMBER_ID,
    )
    await observer.find()
    loaded = await observer.describe()
    run.check(
        "after step 28",
        "DescribeGroups at the new coordinator",
        f"Stable, the one member {old_id} (instance i1): generation 1 as the log holds it",
        f"{loaded.group_state}, members "
        f"{[(m.member_id, m.group_instance_id) for m in loaded.members]}",
        loaded.group_state == "Stable" and [m.member_id for m in loaded.members] == [old_id],
    )
    # Steps 29-32: c2 rejoins; the rebalance waits for i1's old member, which nobody
    # heartbeats for, until its session expires (step 31); c2 then leads generation 2 alone.
    rejoined = await c2.join(topics)
    alone = rejoined.member_id
    run.check(
        "steps 29-32",
        "c2 JoinGroup(member ''); i1's old member's session expires",
        "NONE, generation 2, c2 the leader and the only member",
        f"{_joined(rejoined)}, members {[m.member_id for m in rejoined.members]}",
        rejoined.error_code == NONE
        and rejoined.generation_id == 2
        and rejoined.leader == alone
        and [m.member_id for m in rejoined.members] == [alone],
    )
    # Steps 33-37: c2 takes every partition; the group is Stable without i1 from now on.
    final = await c2.sync(rejoined.generation_id, alone, {alone: own})
    beat = await c2.heartbeat(rejoined.generation_id, alone)
    run.check(
        "steps 33-37",
        "c2 SyncGroup assigning t-0, t-1; Heartbeat",
        "NONE with t-0, t-1; Heartbeat NONE (converged without the live i1)",
        f"{error_name(final.error_code)} with {assigned(final.assignment)}; "
        f"Heartbeat {error_name(beat.error_code)}",
        final.error_code == NONE
        and assigned(final.assignment) == {"t": [0, 1]}
        and beat.error_code == NONE,
    )
    c2.close()
    observer.close()


async def static_leader_new_topic_unassigned(run: Scenario) -> None:
    """The counterexample of `groupspec check static-2 --set clients=1 --set static_clients=1
    --set topics=t,u --set partitions=1,1 --set alternative_subscription=t
    --set subscription_changes=1 --set evictions=0`."""
    c1 = run.member("c1", "i1")
    # Steps 1-9: c1 (instance i1), subscribed to t only, forms generation 1 with t-0.
    await c1.find()
    first = await c1.join(["t"])
    old_id = first.member_id
    _require(
        run.check(
            "steps 1-8",
            "c1 (instance i1) subscribed to t: JoinGroup(member '')",
            "NONE, generation 1, c1 the leader",
            _joined(first),
            first.error_code == NONE and first.generation_id == 1 and first.leader == old_id,
        ),
        "c1 did not form generation 1",
    )
    synced = await c1.sync(1, old_id, {old_id: {"t": [0]}})
    _require(
        run.check(
            "step 9",
            f"c1 SyncGroup(generation 1, {old_id}) assigning t-0",
            "NONE with t-0",
            f"{error_name(synced.error_code)} with {assigned(synced.assignment)}",
            synced.error_code == NONE and assigned(synced.assignment) == {"t": [0]},
        ),
        "generation 1 was not synced",
    )
    # Step 10: c1 crashes and restarts with its configured subscription, t and u.
    c1.close()
    restarted = run.member("c1", "i1")
    await restarted.find()
    # Step 15: a static replacement in Stable; the selected assignor stays range.
    answer = await restarted.join(["t", "u"])
    new_id = answer.member_id
    _require(
        run.check(
            "steps 11-15",
            "restarted c1 (instance i1) subscribed to t, u: JoinGroup(member '')",
            "NONE, generation 1 (no rebalance), a new member id, the leader, skip assignment",
            f"{_joined(answer)} (member {new_id})",
            answer.error_code == NONE
            and answer.generation_id == 1
            and new_id != old_id
            and answer.leader == new_id
            and bool(answer.skip_assignment),
        ),
        "the coordinator did not keep the group Stable",
    )
    # After step 15: the leader skips the assignment and syncs with none.
    kept = await restarted.sync(1, new_id, {})
    beat = await restarted.heartbeat(1, new_id)
    described = await restarted.describe()
    (member,) = described.members
    run.check(
        "after step 15",
        f"c1 SyncGroup(generation 1, {new_id}, no assignments); Heartbeat; DescribeGroups",
        "NONE with t-0 only; Heartbeat NONE; Stable, the member subscribed to t, u and "
        "assigned t-0: u-0 is nobody's",
        f"{error_name(kept.error_code)} with {assigned(kept.assignment)}; Heartbeat "
        f"{error_name(beat.error_code)}; {described.group_state}, subscribed to "
        f"{subscribed_topics(member.member_metadata)}, assigned "
        f"{assigned(member.member_assignment)}",
        kept.error_code == NONE
        and assigned(kept.assignment) == {"t": [0]}
        and beat.error_code == NONE
        and described.group_state == "Stable"
        and subscribed_topics(member.member_metadata) == ["t", "u"]
        and assigned(member.member_assignment) == {"t": [0]},
    )
    restarted.close()


FINDINGS: dict[str, Callable[[Scenario], Coroutine[Any, Any, None]]] = {
    "static-failover-fenced": static_failover_fenced,
    "static-leader-new-topic-unassigned": static_leader_new_topic_unassigned,
}
# The findings whose counterexample moves the coordinator.
NEEDS_FAILOVER = frozenset({"static-failover-fenced"})
