"""Probes of classic-protocol members inside a consumer-protocol group (KIP-848's mixed groups,
`spec/kip848/classic_members.py` and `conversion.py`): a consumer-protocol member creates each
group with ConsumerGroupHeartbeat, so that the consumer-protocol oracle judges it, then classic
members join it with JoinGroup v5, SyncGroup v5, Heartbeat v3 and LeaveGroup v3, as a classic
Java consumer does when its group has moved to the new protocol.

A classic member subscribes with the consumer protocol's subscription (v1, which carries the
partitions it owns) under the "range" assignor name, learns its partitions from SyncGroup's
assignment, and rejoins when a Heartbeat or SyncGroup answers REBALANCE_IN_PROGRESS, reporting
what it holds. `cg-classic-static` adds static classic members (a group instance id): joining
without a member id round, replacing the instance's holder on a restart, and the downgrade a
replacement of the last consumer-protocol member makes (docs/protocol.md §12.15).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from .consumer_protocol import PARTITIONS
from .probe_client import ProbeMember, ProbeStopped, subscription
from .probes_consumer import (
    GROUP_LIFECYCLE,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    REVOCATION,
    STEP_MS,
    TIMER_SURELY_FIRED_MS,
    CgMember,
    Connect,
    ConsumerProbe,
    ErrorCode,
    ProbeSetup,
    Topic,
    commit,
    expect,
    expect_code,
    fetch,
    heartbeat_for,
    new_id,
    settle,
)

JOIN_VERSION = 5  # the first with group instance ids; from v4 a member id is required first
SYNC_VERSION = 5  # the first naming the protocol type and name
HEARTBEAT_VERSION = 3
LEAVE_VERSION = 3
ASSIGNOR = "range"
OTHER_ASSIGNOR = "roundrobin"
SESSION_MS = 10_000
REBALANCE_MS = 30_000
# The rebalance timeout of a classic member whose join or sync timeout a probe waits out.
SHORT_REBALANCE_MS = 1_000
MAX_ROUNDS = 50


class ClassicError(IntEnum):
    """The classic error codes the probes expect (Kafka's `Errors`), besides ErrorCode's."""

    NONE = 0
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    UNKNOWN_MEMBER_ID = 25
    REBALANCE_IN_PROGRESS = 27
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82


def check(answer: Any, error: ClassicError, what: str) -> Any:
    """`answer` if the broker answered `error`; else the probe stops."""
    if answer.error_code != error:
        raise ProbeStopped(f"{what}: expected {error.name}, got error code {answer.error_code}")
    return answer


def assigned_partitions(assignment: bytes) -> frozenset[int]:
    """The partitions a SyncGroup's consumer-protocol assignment gives (empty bytes: none)."""
    if not assignment:
        return frozenset()
    return frozenset(
        p.partition for p in ConsumerProtocolAssignment.decode(assignment).partitions()
    )


@dataclass
class ClassicMember:
    """A dynamic classic consumer over its own connection, subscribed to `topic`: what it owns
    from its last SyncGroup."""

    member: ProbeMember
    topic: Topic
    owned: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    async def connect(
        cls, connect: Connect, name: str, group: str, topic: Topic, rebalance_ms: int = REBALANCE_MS
    ) -> ClassicMember:
        """A member named `name` of `group` on a connection of its own (not joined yet)."""
        member = ProbeMember(
            await connect(name),
            group,
            protocols=((ASSIGNOR, subscription(topic.name)),),
            session_ms=SESSION_MS,
            rebalance_ms=rebalance_ms,
        )
        return cls(member, topic)

    @property
    def member_id(self) -> str:
        """The id the coordinator gave it ("" before)."""
        return self.member.member_id

    async def join(self, **fields: Any) -> Any:
        """JoinGroup v5 reporting the partitions it owns (a subscription v1)."""
        owned = {self.topic.name: sorted(self.owned)}
        metadata = subscription(self.topic.name, owned=owned)
        names = fields.pop("names", (ASSIGNOR,))
        protocols = tuple((name, metadata) for name in names)
        return await self.member.join(JOIN_VERSION, protocols=protocols, **fields)

    async def enter(self) -> None:
        """Join as a new member: MEMBER_ID_REQUIRED, then joined with the id given."""
        check(await self.join(), ClassicError.MEMBER_ID_REQUIRED, "a join without member id")
        check(await self.join(), ClassicError.NONE, "a join with the id given")

    async def sync(self, **fields: Any) -> Any:
        """SyncGroup v5; on success it owns what the assignment gives."""
        answer = await self.member.sync(SYNC_VERSION, **fields)
        if answer.error_code == ClassicError.NONE:
            self.owned = assigned_partitions(answer.assignment)
        return answer

    async def heartbeat(self, **fields: Any) -> Any:
        """Heartbeat v3 at its generation (or `generation`)."""
        return await self.member.heartbeat(HEARTBEAT_VERSION, **fields)

    async def leave(self) -> Any:
        """LeaveGroup v3 of this member alone."""
        return await self.member.leave(LEAVE_VERSION)


async def until_rejoin(classic: ClassicMember, *others: CgMember) -> None:
    """Heartbeat `classic` (NONE) until it is told to rejoin (REBALANCE_IN_PROGRESS), the
    consumer-protocol members `others` heartbeating in between."""
    for _ in range(MAX_ROUNDS):
        answer = await classic.heartbeat()
        if answer.error_code == ClassicError.REBALANCE_IN_PROGRESS:
            return
        check(answer, ClassicError.NONE, "a heartbeat before the rejoin")
        for other in others:
            expect(await other.heartbeat(), ErrorCode.NONE, "a consumer-protocol heartbeat")
        await asyncio.sleep(STEP_MS / 1000)
    raise ProbeStopped("the classic member was never told to rejoin")


async def rejoin(classic: ClassicMember) -> None:
    """Rejoin and sync, each answered NONE."""
    check(await classic.join(), ClassicError.NONE, "a rejoin")
    check(await classic.sync(), ClassicError.NONE, "a sync after the rejoin")


async def settle_mixed(classic: ClassicMember, *others: CgMember) -> None:
    """Heartbeat everyone, `classic` rejoining whenever it is told to, until the generation
    and epochs agree and each partition of the topic has one owner."""
    wanted = sorted((classic.topic.topic_id, p) for p in range(PARTITIONS))
    for _ in range(MAX_ROUNDS):
        answer = await classic.heartbeat()
        if answer.error_code == ClassicError.REBALANCE_IN_PROGRESS:
            await rejoin(classic)
            continue
        check(answer, ClassicError.NONE, "a heartbeat while settling")
        for other in others:
            expect(await other.heartbeat(), ErrorCode.NONE, "a consumer-protocol heartbeat")
        held = sorted(
            [(classic.topic.topic_id, p) for p in classic.owned]
            + [(t, p) for m in others for t, parts in m.owned.items() for p in parts]
        )
        epochs = {m.epoch for m in others} | {classic.member.generation}
        if len(epochs) == 1 and held == wanted:
            return
        await asyncio.sleep(STEP_MS / 1000)
    raise ProbeStopped("the mixed group did not settle")


# -- the probes -------------------------------------------------------------------------------


async def join_sync(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A classic member joins a consumer group (member id required first), syncs while its
    partitions are still another's, is told to rejoin once they are free and gets them, commits
    and fetches offsets at its generation (and is refused at another); when a
    newcomer joins it is told to rejoin again and does until the three share the partitions;
    it leaves with LeaveGroup."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    b = await ClassicMember.connect(connect, "b", group, topic)
    await b.enter()
    check(await b.sync(), ClassicError.NONE, "b syncs")
    if b.owned:
        raise ProbeStopped(f"b was given {sorted(b.owned)} while a still holds everything")
    check(await b.heartbeat(), ClassicError.NONE, "b heartbeats while a revokes")
    # a revokes what b is to get; b is then told to rejoin for it.
    await until_rejoin(b, a)
    await rejoin(b)
    check(await b.heartbeat(), ClassicError.NONE, "b heartbeats with its partitions")
    held = b.owned
    if not held:
        raise ProbeStopped("b got no partition after its rejoin")
    # It commits what it holds at its generation (any version: v8 here), and fetches as itself;
    # at another generation both are refused with ILLEGAL_GENERATION.
    client, generation = b.member.client, b.member.generation
    committed = await commit(client, group, topic, held, generation, b.member_id, version=8)
    expect_code(committed, ErrorCode.NONE, "b commits at its generation")
    ahead = await commit(client, group, topic, held, generation + 3, b.member_id, version=8)
    expect_code(ahead, ErrorCode.ILLEGAL_GENERATION, "b commits at a later generation")
    fetched = await fetch(client, group, topic, generation, b.member_id)
    expect_code(fetched, ErrorCode.NONE, "b fetches at its generation")
    behind = await fetch(client, group, topic, generation - 1, b.member_id)
    expect_code(behind, ErrorCode.ILLEGAL_GENERATION, "b fetches at an earlier generation")
    # A newcomer: b rejoins (reporting what it holds) until the three share the partitions.
    c = CgMember(await connect("c"), group, topic, new_id())
    expect(await c.join(), ErrorCode.NONE, "c joins")
    await until_rejoin(b, a, c)
    await settle_mixed(b, a, c)
    check(await b.leave(), ClassicError.NONE, "b leaves")
    await settle(a, c)
    expect(await c.leave(), ErrorCode.NONE, "c leaves")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")


async def refusals(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A classic member's requests the consumer group refuses: another generation, an unknown
    member id, a consumer-protocol member's id, another protocol type or name; a SyncGroup
    behind a new group epoch is told to rejoin. Once Empty, a classic JoinGroup replaces the
    consumer group with a classic one. The consumer-protocol member is static, so that a
    Heartbeat and a LeaveGroup naming its instance id with another member id are fenced."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id(), instance_id=f"{group}-a")
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    b = await ClassicMember.connect(connect, "b", group, topic)
    await b.enter()
    generation = b.member.generation
    check(
        await b.heartbeat(generation=generation + 5),
        ClassicError.ILLEGAL_GENERATION,
        "a heartbeat at another generation",
    )
    check(
        await b.sync(generation=generation + 5),
        ClassicError.ILLEGAL_GENERATION,
        "a sync at another generation",
    )
    check(
        await b.sync(protocol_name=OTHER_ASSIGNOR),
        ClassicError.INCONSISTENT_GROUP_PROTOCOL,
        "a sync naming another protocol",
    )
    check(
        await b.sync(protocol_type="connect"),
        ClassicError.INCONSISTENT_GROUP_PROTOCOL,
        "a sync naming another protocol type",
    )
    stranger = await ClassicMember.connect(connect, "stranger", group, topic)
    check(
        await stranger.join(protocol_type="connect"),
        ClassicError.INCONSISTENT_GROUP_PROTOCOL,
        "a join of another protocol type",
    )
    check(
        await stranger.join(names=(OTHER_ASSIGNOR,)),
        ClassicError.INCONSISTENT_GROUP_PROTOCOL,
        "a join offering no protocol b offers",
    )
    # Requests of ids b is not, naming b's protocol (a v5 SyncGroup without one is refused
    # before the coordinator, docs/kafka.md).
    stranger.member.member_id, stranger.member.generation = new_id(), generation
    stranger.member.protocol_name = ASSIGNOR
    check(await stranger.heartbeat(), ClassicError.UNKNOWN_MEMBER_ID, "an unknown member id")
    check(await stranger.sync(), ClassicError.UNKNOWN_MEMBER_ID, "a sync of an unknown id")
    stranger.member.member_id, stranger.member.generation = a.member_id, a.epoch
    check(await stranger.heartbeat(), ClassicError.UNKNOWN_MEMBER_ID, "a consumer member's id")
    stranger.member.member_id, stranger.member.instance = new_id(), a.instance_id
    check(await stranger.heartbeat(), ClassicError.FENCED_INSTANCE_ID, "another's instance id")
    answer = await stranger.leave()
    check(answer, ClassicError.NONE, "a leave naming another's instance id")
    if [m.error_code for m in answer.members] != [ClassicError.FENCED_INSTANCE_ID]:
        raise ProbeStopped(f"the leave's entry was answered {answer.members}")
    stranger.member.instance = None
    # A new member bumps the group epoch: b, behind it, is told to rejoin by its SyncGroup.
    c = CgMember(await connect("c"), group, topic, new_id())
    expect(await c.join(), ErrorCode.NONE, "c joins")
    check(await b.sync(), ClassicError.REBALANCE_IN_PROGRESS, "b syncs behind the group")
    check(await b.leave(), ClassicError.NONE, "b leaves")
    await settle(a, c)
    expect(await c.leave(), ErrorCode.NONE, "c leaves")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    # The group is Empty: a classic join makes it a classic group (judged no further).
    late = await ClassicMember.connect(connect, "late", group, topic)
    check(await late.join(), ClassicError.MEMBER_ID_REQUIRED, "a join to the Empty group")


async def timers(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A classic member that joins and never syncs is fenced by its sync timeout; one told to
    rejoin that does not is fenced by its join timeout (rebalance timeouts of 1 s, while the
    consumer-protocol member heartbeats); their later requests find no member."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    b = await ClassicMember.connect(connect, "b", group, topic, SHORT_REBALANCE_MS)
    await b.enter()
    check(await b.sync(), ClassicError.NONE, "b syncs")
    c = await ClassicMember.connect(connect, "c", group, topic, SHORT_REBALANCE_MS)
    await c.enter()
    # c's join bumped the group epoch: b is told to rejoin, and does not; c does not sync.
    check(await b.heartbeat(), ClassicError.REBALANCE_IN_PROGRESS, "b is told to rejoin")
    await heartbeat_for((SHORT_REBALANCE_MS + TIMER_SURELY_FIRED_MS) / 1000, a)
    check(await b.heartbeat(), ClassicError.UNKNOWN_MEMBER_ID, "b after its join timeout")
    check(await c.sync(), ClassicError.UNKNOWN_MEMBER_ID, "c after its sync timeout")
    await settle(a)
    expect(await a.leave(), ErrorCode.NONE, "a leaves")


async def max_size(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A group holding group.consumer.max.size members, one of them classic, refuses a classic
    newcomer's JoinGroup with GROUP_MAX_SIZE_REACHED while its classic member rejoins; one
    LeaveGroup then fences a classic member and a consumer-protocol member together."""
    topic = setup.first
    members = [CgMember(await connect(f"m{i}"), group, topic, new_id()) for i in range(3)]
    for member in members:
        expect(await member.join(), ErrorCode.NONE, "a consumer-protocol member joins")
    await settle(*members)
    b = await ClassicMember.connect(connect, "b", group, topic)
    await b.enter()
    if setup.group_max_size != len(members) + 1:
        raise ProbeStopped(f"the group is not full: max size {setup.group_max_size}")
    newcomer = await ClassicMember.connect(connect, "newcomer", group, topic)
    check(await newcomer.join(), ClassicError.GROUP_MAX_SIZE_REACHED, "a fifth member")
    check(await b.join(), ClassicError.NONE, "b rejoins the full group")
    check(await b.sync(), ClassicError.NONE, "b syncs")
    leaving = members.pop()
    answer = await b.member.client.leave(
        group, [(b.member_id, None), (leaving.member_id, None)], LEAVE_VERSION
    )
    check(answer, ClassicError.NONE, "b and a consumer-protocol member leave")
    codes = [m.error_code for m in answer.members]
    if codes != [0, 0]:
        raise ProbeStopped(f"the leave's members were answered {codes}")
    await settle(*members)
    for member in members:
        expect(await member.leave(), ErrorCode.NONE, "a consumer-protocol member leaves")


async def downgrade(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """The last consumer-protocol member leaves a group whose other member is classic: the
    group becomes a classic group (Kafka's migration policy is bidirectional), judged no
    further."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    b = await ClassicMember.connect(connect, "b", group, topic)
    await b.enter()
    check(await b.sync(), ClassicError.NONE, "b syncs")
    # Nothing more: the group is a classic one now, which the consumer-protocol oracle leaves.
    expect(await a.leave(), ErrorCode.NONE, "a leaves")


async def static_members(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """Static classic members: a JoinGroup with an instance id and no member id joins at once
    (no member id round); the instance restarting on another connection replaces it, and the old
    incarnation's Heartbeat is FENCED_INSTANCE_ID; then the application instance of the group's
    static consumer-protocol member leaves (-2) and restarts as a classic consumer of the second
    topic: it replaces the last consumer-protocol member, and the group becomes a classic group
    that must rebalance for the new subscription (KAFKA-19546), judged no further; in a second
    group the same restart with the same subscription downgrades it Stable, without one."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id(), instance_id="ia")
    expect(await a.join(), ErrorCode.NONE, "a static consumer-protocol member joins")
    await settle(a)
    first = await ClassicMember.connect(connect, "k", group, topic)
    first.member.instance = "ik"
    check(await first.join(), ClassicError.NONE, "a static classic member joins at once")
    check(await first.sync(), ClassicError.NONE, "the static classic member syncs")
    restarted = await ClassicMember.connect(connect, "k2", group, topic)
    restarted.member.instance = "ik"
    check(await restarted.join(), ClassicError.NONE, "its restart replaces it")
    check(await first.heartbeat(), ClassicError.FENCED_INSTANCE_ID, "the old incarnation beats")
    check(await restarted.sync(), ClassicError.NONE, "the restarted member syncs")
    left = await a.leave(LEAVE_GROUP_STATIC_MEMBER_EPOCH)
    expect(left, ErrorCode.NONE, "the consumer-protocol instance closes (-2)")
    downgraded = await ClassicMember.connect(connect, "a2", group, setup.second)
    downgraded.member.instance = "ia"
    answer = check(await downgraded.join(), ClassicError.NONE, "it restarts as a classic member")
    if answer.generation_id != 0:
        raise ProbeStopped(
            f"a downgrade that must rebalance answered generation {answer.generation_id}"
        )
    # In a group of its own, the instance restarts with the same subscription: the downgraded
    # group keeps the replaced member's assignment, Stable, with no rebalance.
    same = f"{group}-same"
    b = CgMember(await connect("b"), same, topic, new_id(), instance_id="ib")
    expect(await b.join(), ErrorCode.NONE, "a static consumer-protocol member joins")
    await settle(b)
    settled = b.epoch
    expect(await b.leave(LEAVE_GROUP_STATIC_MEMBER_EPOCH), ErrorCode.NONE, "it closes (-2)")
    kept = await ClassicMember.connect(connect, "b2", same, topic)
    kept.member.instance = "ib"
    answer = check(await kept.join(), ClassicError.NONE, "it restarts as a classic member")
    if answer.generation_id != settled:
        raise ProbeStopped(f"a Stable downgrade answered generation {answer.generation_id}")


# What every probe shows: a classic member asked for a member id, then joining as a new member
# (the group's epoch bumped by its subscription), and the consumer-protocol members around it.
CLASSIC_RULES = (
    "cg_classic.join_answered",
    "cg_classic.join_member_id_required",
    "cg_classic.join_new_member",
    "cg_heartbeat.join_client_member_id",
)
# The same with the group settled, revoked for the classic member and emptied again.
MIXED_LIFECYCLE = (*GROUP_LIFECYCLE, *REVOCATION, *CLASSIC_RULES)

CLASSIC_MEMBER_PROBES: dict[str, ConsumerProbe] = {
    p.name: p
    for p in (
        ConsumerProbe(
            "cg-classic-join-sync",
            join_sync,
            (
                *MIXED_LIFECYCLE,
                "cg_classic.heartbeat_ok",
                "cg_classic.heartbeat_rejoin",
                "cg_classic.join_known_member",
                "cg_classic.join_timeout_armed",
                "cg_classic.leave",
                "cg_classic.offset_commit",
                "cg_classic.offset_fetch",
                "cg_classic.sync_assignment",
                "cg_offset_commit.epoch_matches",
                "cg_offset_commit.epoch_newer",
                "cg_offset_fetch.member",
                "cg_offset_fetch.stale_member_epoch",
            ),
        ),
        ConsumerProbe(
            "cg-classic-refusals",
            refusals,
            (
                *MIXED_LIFECYCLE,
                "cg_classic.empty_consumer_group_replaced",
                "cg_classic.fenced_instance_id",
                "cg_classic.illegal_generation",
                "cg_classic.join_inconsistent_protocol",
                "cg_classic.join_timeout_armed",
                "cg_classic.leave",
                "cg_classic.not_classic_member",
                "cg_classic.sync_inconsistent_protocol",
                "cg_classic.sync_rebalance_in_progress",
                "cg_classic.unknown_member",
                "cg_heartbeat.new_static_member",
            ),
        ),
        ConsumerProbe(
            "cg-classic-timers",
            timers,
            (
                *MIXED_LIFECYCLE,
                "cg_classic.heartbeat_rejoin",
                "cg_classic.join_timeout_armed",
                "cg_classic.sync_assignment",
                "cg_classic.timer_join_expired",
                "cg_classic.timer_sync_expired",
                "cg_classic.unknown_member",
            ),
        ),
        ConsumerProbe(
            "cg-classic-max-size",
            max_size,
            (
                *MIXED_LIFECYCLE,
                "cg_classic.join_group_max_size_reached",
                "cg_classic.join_known_member",
                "cg_classic.leave",
                "cg_classic.sync_assignment",
            ),
        ),
        ConsumerProbe(
            "cg-classic-downgrade",
            downgrade,
            (
                # The group is converted, not emptied: no member fenced, nothing tombstoned.
                "cg_assignment.computed",
                "cg_heartbeat.group_created",
                "cg_heartbeat.member_left",
                "cg_heartbeat.response_with_assignment",
                "cg_heartbeat.response_without_assignment",
                "cg_heartbeat.session_timeout_armed",
                "cg_heartbeat.subscription_changed",
                "cg_reconcile.rebalance_timeout_cancelled",
                "cg_reconcile.to_stable",
                "cg_record.current_assignment",
                "cg_record.group_epoch",
                "cg_record.member_metadata",
                "cg_record.target_epoch",
                "cg_record.target_member",
                "cg_reconcile.to_unreleased",
                *CLASSIC_RULES,
                "cg_classic.sync_assignment",
                "cg_convert.downgrade",
            ),
        ),
        ConsumerProbe(
            "cg-classic-static",
            static_members,
            (
                "cg_heartbeat.new_static_member",
                "cg_heartbeat.static_member_temporarily_left",
                "cg_classic.join_answered",
                "cg_classic.sync_assignment",
                "cg_classic.static_new_member",
                "cg_classic.static_member_replaced",
                "cg_classic.fenced_instance_id",
                "cg_convert.downgrade_on_replacement_rebalance",
                "cg_convert.downgrade_on_replacement",
            ),
        ),
    )
}
