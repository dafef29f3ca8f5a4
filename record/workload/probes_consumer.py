"""Probes of the consumer protocol (KIP-848): short scripted ConsumerGroupHeartbeat and
ConsumerGroupDescribe exchanges, each written to exercise named rules of `spec/kip848/rules.py`,
spoken directly (no client library between) through the recording proxy to one Kafka 4.x
broker, one trace each, judged by the consumer-protocol oracle.

Members speak v1 with ids they generate (KIP-1082), subscribe to the probe's topic, and
acknowledge an assignment by sending the partitions they own in their next heartbeat, as a
consumer does once it has revoked and assigned; `still_owning` lets a probe keep partitions it
was told to revoke. `tests/test_kafka_consumer_protocol.py` checks each probe's trace passes
and exercises its rules; docs/kafka.md lists what they found.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire import codec
from groupspec.wire.address import Address
from groupspec.wire.group_apis import (
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    DELETE_GROUPS,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
)
from groupspec.wire.trace_format import TraceHeader

from .consumer_protocol import PARTITIONS, create_topics, topic_ids
from .probe_client import ProbeClient, ProbeStopped
from .probes import ProbeResult

LOOPBACK = "127.0.0.1"
# The member epochs with a meaning of their own (ConsumerGroupHeartbeatRequest.json); record/
# reads Kafka's wire, not the vocabulary (tests/test_layers.py).
JOIN_GROUP_MEMBER_EPOCH = 0
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class ErrorCode(IntEnum):
    """The error codes the probes expect (Kafka's `Errors`)."""

    NONE = 0
    UNKNOWN_MEMBER_ID = 25
    INVALID_REQUEST = 42
    INVALID_REGULAR_EXPRESSION = 128
    GROUP_ID_NOT_FOUND = 69
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    NON_EMPTY_GROUP = 68
    UNSUPPORTED_VERSION = 35
    ILLEGAL_GENERATION = 22
    STALE_MEMBER_EPOCH = 113
    UNSUPPORTED_ASSIGNOR = 112
    UNRELEASED_INSTANCE_ID = 111
    FENCED_MEMBER_EPOCH = 110


HEARTBEAT_VERSION = 1
DESCRIBE_VERSION = 1
# OffsetCommit and OffsetFetch v9: the first whose generation id is a member epoch (v10 names
# topics by id, which the oracle reads as v9); a consumer-protocol member may not commit with v8.
OFFSET_VERSION = 9
OLD_COMMIT_VERSION = 8
COMMITTED_OFFSET = 42
DELETE_GROUPS_VERSION = 2
# ListGroups v5: the first with a types filter, which the oracle needs to judge one (a ListGroups
# of consumer groups only lists no classic group).
LIST_GROUPS_VERSION = 5
CONSUMER_TYPE = "consumer"
REBALANCE_TIMEOUT_MS = 30_000
# A member that does not revoke is fenced after this (the rebalance-timeout probe).
SHORT_REBALANCE_TIMEOUT_MS = 1_000
# The group.consumer.max.size of the broker `run_consumer_probes` starts (the max-size probe
# fills a group to it; Kafka's default is 2**31 - 1), and the largest the probe fills.
PROBE_GROUP_MAX_SIZE = 4
LARGEST_GROUP_PROBED = 8
PROBE_BROKER_SETTINGS = {"max_size": PROBE_GROUP_MAX_SIZE}
INT32_MAX = 2**31 - 1
STEP_MS = 100
# groupspec's 4.x brokers' group.consumer.session.timeout.ms (record/kafka/settings.py), and how
# long past a deadline the oracle is sure a timer fired (oracle/trace/kip848.py LATE_MS) plus a
# margin: a probe waiting for a timer waits this long.
SESSION_TIMEOUT_MS = 6_000
TIMER_SURELY_FIRED_MS = 2_500
MAX_ROUNDS = 100
# How long a new topic takes to reach the group coordinator's metadata image (`probe_setup`).
METADATA_PROPAGATION_S = 1.0

Connect = Callable[[str], Coroutine[Any, Any, ProbeClient]]
Owned = dict[str, frozenset[int]]


@dataclass
class Topic:
    """A probe's topic: its name and id (UUID text)."""

    name: str
    topic_id: str


@dataclass
class ProbeSetup:
    """What the probes run on: the topics they subscribe to (every member the first, a
    subscription change the second as well; PARTITIONS partitions each) and the broker's
    group.consumer.max.size."""

    first: Topic
    second: Topic
    group_max_size: int = INT32_MAX

    def header(self) -> list[dict[str, Any]]:
        """The topics as a trace header's consumer-protocol settings list them."""
        return [
            {"name": t.name, "topic_id": t.topic_id, "partitions": PARTITIONS}
            for t in (self.first, self.second)
        ]


@dataclass
class CgMember:
    """A consumer-protocol member on its own connection: its id, epoch and partitions."""

    client: ProbeClient
    group: str
    topic: Topic
    member_id: str
    instance_id: str | None = None
    epoch: int = 0
    previous_epoch: int = -1
    owned: Owned = field(default_factory=dict)
    last_error: int = 0
    # v0: the coordinator generates the member id (the join sends ""); v1: the client does.
    version: int = HEARTBEAT_VERSION

    async def send(self, **fields: Any) -> Any:
        """A ConsumerGroupHeartbeat with `fields` (the member's group and id unless given)."""
        body: dict[str, Any] = {
            "group_id": self.group,
            "member_id": self.member_id,
            "member_epoch": self.epoch,
            "instance_id": None,
            "rack_id": None,
            "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None,
            "subscribed_topic_regex": None,
            "server_assignor": None,
            "topic_partitions": None,
            **fields,
        }
        request_class, response_class = codec.MESSAGES[CONSUMER_GROUP_HEARTBEAT]
        if self.version < 1:
            del body["subscribed_topic_regex"]
        request = codec.build(request_class, body, self.version)
        answer = await self.client.call(request, response_class, self.version)
        self.last_error = answer.error_code
        if answer.error_code == 0:
            if answer.member_id:
                self.member_id = answer.member_id
            if answer.member_epoch != self.epoch:
                self.previous_epoch = self.epoch
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                self.owned = {
                    str(tp.topic_id): frozenset(tp.partitions)
                    for tp in answer.assignment.topic_partitions
                }
        return answer

    async def join(
        self,
        *,
        assignor: str | None = None,
        rebalance_timeout_ms: int = REBALANCE_TIMEOUT_MS,
        topics: tuple[Topic, ...] = (),
    ) -> Any:
        """Join (epoch 0) subscribing to `topics` (the member's own topic by default)."""
        self.epoch = JOIN_GROUP_MEMBER_EPOCH
        return await self.send(
            member_epoch=JOIN_GROUP_MEMBER_EPOCH,
            instance_id=self.instance_id,
            rebalance_timeout_ms=rebalance_timeout_ms,
            subscribed_topic_names=[t.name for t in topics or (self.topic,)],
            server_assignor=assignor,
            topic_partitions=[],
        )

    async def heartbeat(self, *, epoch: int | None = None, owned: Owned | None = None) -> Any:
        """A heartbeat at `epoch` (its own by default) reporting `owned` (what it holds)."""
        held = self.owned if owned is None else owned
        return await self.send(
            member_epoch=self.epoch if epoch is None else epoch,
            topic_partitions=[
                {"topic_id": topic_id, "partitions": sorted(parts)}
                for topic_id, parts in held.items()
            ],
        )

    async def subscribe(self, *topics: Topic, owned: Owned | None = None) -> Any:
        """A heartbeat changing the subscription to `topics`, reporting `owned` (what it holds
        by default)."""
        held = self.owned if owned is None else owned
        return await self.send(
            member_epoch=self.epoch,
            subscribed_topic_names=[t.name for t in topics],
            topic_partitions=[
                {"topic_id": topic_id, "partitions": sorted(parts)}
                for topic_id, parts in held.items()
            ],
        )

    async def leave(self, epoch: int = LEAVE_GROUP_MEMBER_EPOCH) -> Any:
        """Leave (-1), or as a static member for now (-2)."""
        return await self.send(member_epoch=epoch, instance_id=self.instance_id)


async def commit(
    client: ProbeClient,
    group: str,
    topic: Topic,
    partitions: frozenset[int] | set[int],
    epoch: int,
    member_id: str = "",
    *,
    version: int = OFFSET_VERSION,
) -> int:
    """OffsetCommit of `partitions` of `topic` at `epoch` (generation id, a member epoch from
    v9); the error code of its partitions (they share one)."""
    request_class, response_class = codec.MESSAGES[OFFSET_COMMIT]
    body = {
        "group_id": group,
        "generation_id_or_member_epoch": epoch,
        "member_id": member_id,
        "group_instance_id": None,
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": COMMITTED_OFFSET,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                    for p in sorted(partitions)
                ],
            }
        ],
    }
    answer = await client.call(codec.build(request_class, body, version), response_class, version)
    codes = {p.error_code for t in answer.topics for p in t.partitions}
    if len(codes) != 1:
        raise ProbeStopped(f"OffsetCommit answered its partitions with several errors: {codes}")
    return int(codes.pop())


async def fetch(
    client: ProbeClient, group: str, topic: Topic, epoch: int = -1, member_id: str | None = None
) -> int:
    """OffsetFetch v9 of every partition of `topic` as member `member_id` at `epoch` (none and
    -1: as an admin client); the group's error code."""
    request_class, response_class = codec.MESSAGES[OFFSET_FETCH]
    body = {
        "groups": [
            {
                "group_id": group,
                "member_id": member_id,
                "member_epoch": epoch,
                "topics": [{"name": topic.name, "partition_indexes": list(range(PARTITIONS))}],
            }
        ],
        "require_stable": False,
    }
    request = codec.build(request_class, body, OFFSET_VERSION)
    answer = await client.call(request, response_class, OFFSET_VERSION)
    return int(answer.groups[0].error_code)


async def delete_groups(client: ProbeClient, *groups: str) -> dict[str, int]:
    """DeleteGroups of `groups`; each group's error code."""
    request_class, response_class = codec.MESSAGES[DELETE_GROUPS]
    request = codec.build(request_class, {"groups_names": list(groups)}, DELETE_GROUPS_VERSION)
    answer = await client.call(request, response_class, DELETE_GROUPS_VERSION)
    return {r.group_id: int(r.error_code) for r in answer.results}


async def list_consumer_groups(client: ProbeClient, *states: str) -> dict[str, str]:
    """ListGroups of consumer groups (in `states`, any by default); each listed group's state."""
    request_class, response_class = codec.MESSAGES[LIST_GROUPS]
    body = {"states_filter": list(states), "types_filter": [CONSUMER_TYPE]}
    request = codec.build(request_class, body, LIST_GROUPS_VERSION)
    answer = await client.call(request, response_class, LIST_GROUPS_VERSION)
    if answer.error_code != ErrorCode.NONE:
        raise ProbeStopped(f"ListGroups answered error code {answer.error_code}")
    return {g.group_id: g.group_state for g in answer.groups}


def expect_code(code: int, error: ErrorCode, what: str) -> None:
    """Stop the probe if the broker answered `code`, not `error`."""
    if code != error:
        raise ProbeStopped(f"{what}: expected {error.name}, got error code {code}")


def expect(answer: Any, error: ErrorCode, what: str) -> None:
    """Stop the probe if the broker's answer is not `error`: the next step needs it."""
    if answer.error_code != error:
        raise ProbeStopped(f"{what}: expected {error.name}, got error code {answer.error_code}")


async def settle(*members: CgMember, topics: tuple[Topic, ...] = ()) -> None:
    """Heartbeat every member until their epochs agree and each partition of `topics` (the
    first member's topic by default) has one owner."""
    wanted = sorted(
        (t.topic_id, p) for t in topics or (members[0].topic,) for p in range(PARTITIONS)
    )
    for _ in range(MAX_ROUNDS):
        for member in members:
            await member.heartbeat()
        held = sorted((t, p) for m in members for t, parts in m.owned.items() for p in parts)
        if len({m.epoch for m in members}) == 1 and held == wanted:
            return
        await asyncio.sleep(STEP_MS / 1000)
    raise ProbeStopped(f"the group did not settle: {[(m.epoch, m.owned) for m in members]}")


async def heartbeat_for(seconds: float, *members: CgMember) -> None:
    """Keep `members` heartbeating (each answer must be NONE) for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for member in members:
            expect(await member.heartbeat(), ErrorCode.NONE, "a heartbeat while waiting")
        await asyncio.sleep(STEP_MS / 1000)


async def describe(client: ProbeClient, *groups: str) -> Any:
    """ConsumerGroupDescribe of `groups`."""
    request_class, response_class = codec.MESSAGES[CONSUMER_GROUP_DESCRIBE]
    body = {"group_ids": list(groups), "include_authorized_operations": False}
    request = codec.build(request_class, body, DESCRIBE_VERSION)
    return await client.call(request, response_class, DESCRIBE_VERSION)


def new_id() -> str:
    """A member id as a client generates one."""
    return uuid.uuid4().hex[:22]


# -- the probes -------------------------------------------------------------------------------


async def join_leave_describe(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A member joins, settles and leaves; the group, a missing one and "" are described."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "join")
    await settle(a)
    await describe(a.client, group, f"{group}-missing", "")
    expect(await a.leave(), ErrorCode.NONE, "leave")
    await describe(a.client, group)


async def fencing(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """Epochs ahead are fenced, a rejoin at 0 is taken, unknown ids and groups are refused,
    and a v1 join without a member id is invalid."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "join")
    await settle(a)
    ahead = await a.heartbeat(epoch=a.epoch + 5)
    expect(ahead, ErrorCode.FENCED_MEMBER_EPOCH, "an epoch ahead")
    expect(await a.join(), ErrorCode.NONE, "rejoin at epoch 0")
    await settle(a)
    stranger = CgMember(a.client, group, topic, new_id(), epoch=1)
    expect(await stranger.heartbeat(), ErrorCode.UNKNOWN_MEMBER_ID, "an unknown member")
    lost = CgMember(a.client, f"{group}-missing", topic, new_id(), epoch=1)
    expect(await lost.heartbeat(), ErrorCode.GROUP_ID_NOT_FOUND, "an unknown group")
    anonymous = CgMember(a.client, group, topic, "")
    expect(await anonymous.join(), ErrorCode.INVALID_REQUEST, "a v1 join without member id")
    # On v0 the coordinator names a member that joins without an id.
    old = CgMember(await connect("v0"), group, topic, "", version=0)
    expect(await old.join(), ErrorCode.NONE, "a v0 join without member id")
    await settle(a, old)
    expect(await old.leave(), ErrorCode.NONE, "the v0 member leaves")
    expect(await a.leave(), ErrorCode.NONE, "leave")


async def previous_epoch(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A member one epoch behind, owning only what it is assigned, is still answered."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    b = CgMember(await connect("b"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    expect(await b.join(), ErrorCode.NONE, "b joins")
    await settle(a, b)
    if a.previous_epoch <= 0:
        raise ProbeStopped(f"a has no previous epoch to send: {a.previous_epoch}")
    behind = await a.heartbeat(epoch=a.previous_epoch)
    expect(behind, ErrorCode.NONE, "a heartbeat at the previous epoch")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


async def static_members(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A second member with a static member's instance id is refused while the first holds
    it; once the first leaves with epoch -2, the second replaces it."""
    topic = setup.first
    instance = f"{group}-instance"
    s = CgMember(await connect("s"), group, topic, new_id(), instance_id=instance)
    t = CgMember(await connect("t"), group, topic, new_id(), instance_id=instance)
    expect(await s.join(), ErrorCode.NONE, "s joins")
    await settle(s)
    expect(await t.join(), ErrorCode.UNRELEASED_INSTANCE_ID, "t takes s's instance id")
    expect(await s.leave(LEAVE_GROUP_STATIC_MEMBER_EPOCH), ErrorCode.NONE, "s leaves for now")
    expect(await t.join(), ErrorCode.NONE, "t replaces s")
    await settle(t)
    # s, back with its old member id, finds its instance id taken.
    replaced = await s.send(member_epoch=s.epoch, instance_id=instance, topic_partitions=[])
    expect(replaced, ErrorCode.FENCED_INSTANCE_ID, "s heartbeats as the replaced member")
    stranger = CgMember(s.client, group, topic, new_id(), instance_id=f"{group}-unknown")
    unknown = await stranger.leave(LEAVE_GROUP_STATIC_MEMBER_EPOCH)
    expect(unknown, ErrorCode.UNKNOWN_MEMBER_ID, "an unknown instance id leaves")
    expect(await t.leave(), ErrorCode.NONE, "t leaves")


async def unknown_assignor(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A server assignor the broker does not have is refused; a known one is taken."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(assignor="no-such-assignor"), ErrorCode.UNSUPPORTED_ASSIGNOR, "join")
    expect(await a.join(assignor="range"), ErrorCode.NONE, "join with range")
    await settle(a)
    expect(await a.leave(), ErrorCode.NONE, "leave")


async def rebalance_timeout(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A member told to revoke that keeps reporting its partitions is fenced once its
    rebalance timeout passes."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    b = CgMember(await connect("b"), group, topic, new_id())
    expect(await a.join(rebalance_timeout_ms=SHORT_REBALANCE_TIMEOUT_MS), ErrorCode.NONE, "a")
    await settle(a)
    held = dict(a.owned)
    expect(await b.join(), ErrorCode.NONE, "b joins")
    deadline = time.monotonic() + 3 * SHORT_REBALANCE_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        answer = await a.heartbeat(owned=held)
        await b.heartbeat()
        if answer.error_code != 0:
            break
        await asyncio.sleep(STEP_MS / 1000)
    if a.last_error == 0:
        raise ProbeStopped("a was not fenced by its rebalance timeout")
    await settle(b)
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


async def invalid_requests(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """Each branch of the heartbeat's validation (Kafka 4.3.0 GroupCoordinatorService
    .throwIfConsumerGroupHeartbeatRequestIsInvalid) is answered INVALID_REQUEST before the
    group is read; a valid join then creates the group."""
    topic = setup.first
    client = await connect("a")
    a = CgMember(client, group, topic, new_id())
    old = CgMember(client, group, topic, "", version=0)
    join: dict[str, Any] = {
        "member_epoch": JOIN_GROUP_MEMBER_EPOCH,
        "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS,
        "subscribed_topic_names": [topic.name],
        "topic_partitions": [],
    }
    owning = [{"topic_id": topic.topic_id, "partitions": [0]}]
    cases: tuple[tuple[str, CgMember, dict[str, Any]], ...] = (
        ("a v1 join without member id", a, {**join, "member_id": ""}),
        ("a v0 heartbeat without member id", old, {"member_epoch": 1}),
        ("a v0 leave without member id", old, {"member_epoch": LEAVE_GROUP_MEMBER_EPOCH}),
        ("an empty group id", a, {**join, "group_id": ""}),
        ("an empty instance id", a, {**join, "instance_id": ""}),
        ("an empty rack id", a, {**join, "rack_id": ""}),
        ("a join without rebalance timeout", a, {**join, "rebalance_timeout_ms": -1}),
        ("a join without owned partitions", a, {**join, "topic_partitions": None}),
        ("a join owning partitions", a, {**join, "topic_partitions": owning}),
        ("a join without subscription", a, {**join, "subscribed_topic_names": None}),
        (
            "a static leave without instance id",
            a,
            {"member_epoch": LEAVE_GROUP_STATIC_MEMBER_EPOCH},
        ),
        ("an epoch below -2", a, {"member_epoch": LEAVE_GROUP_STATIC_MEMBER_EPOCH - 1}),
    )
    for what, member, fields in cases:
        expect(await member.send(**fields), ErrorCode.INVALID_REQUEST, what)
    expect(await a.join(), ErrorCode.NONE, "a valid join")
    await settle(a)
    expect(await a.leave(), ErrorCode.NONE, "leave")


async def static_timers(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """A static member told to revoke leaves for now (-2) and is replaced by a new member id:
    the old id's rebalance timeout and session timeout, which the replacement leaves armed,
    fire later and find no member to fence; a member that joins and goes silent is fenced when
    its session expires."""
    topic = setup.first
    instance = f"{group}-instance"
    s = CgMember(await connect("s"), group, topic, new_id(), instance_id=instance)
    b = CgMember(await connect("b"), group, topic, new_id())
    joined = await s.join(rebalance_timeout_ms=SHORT_REBALANCE_TIMEOUT_MS)
    expect(joined, ErrorCode.NONE, "s joins")
    await settle(s)
    held = dict(s.owned)
    expect(await b.join(), ErrorCode.NONE, "b joins")
    for _ in range(MAX_ROUNDS):
        expect(await s.heartbeat(owned=held), ErrorCode.NONE, "s keeps its partitions")
        if s.owned != held:
            break
        await b.heartbeat()
        await asyncio.sleep(STEP_MS / 1000)
    else:
        raise ProbeStopped("s was never told to revoke")
    expect(await s.leave(LEAVE_GROUP_STATIC_MEMBER_EPOCH), ErrorCode.NONE, "s leaves for now")
    t = CgMember(await connect("t"), group, topic, new_id(), instance_id=instance)
    expect(await t.join(), ErrorCode.NONE, "t replaces s")
    await settle(t, b)
    # A dynamic member joins and goes silent: its session expires and it is fenced.
    silent = CgMember(await connect("c"), group, topic, new_id())
    expect(await silent.join(), ErrorCode.NONE, "c joins")
    await heartbeat_for((SESSION_TIMEOUT_MS + TIMER_SURELY_FIRED_MS) / 1000, t, b)
    expect(await t.leave(), ErrorCode.NONE, "t leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


async def subscription_change(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """Two members of both topics; the first, told to revoke and still reporting every
    partition, narrows its subscription to the first topic: the second topic's partitions join
    those it must revoke (while it reconciles, a subscription change narrows what it holds at
    its epoch, CurrentAssignmentBuilder); it reports them a while before releasing them, and
    later subscribes to both again."""
    first, second = setup.first, setup.second
    both = (first, second)
    a = CgMember(await connect("a"), group, first, new_id())
    b = CgMember(await connect("b"), group, first, new_id())
    # The range assignor gives each member part of every topic (the uniform one may give a
    # member one whole topic, and then narrowing to it takes nothing away).
    expect(await a.join(topics=both, assignor="range"), ErrorCode.NONE, "a joins both topics")
    await settle(a, topics=both)
    held = dict(a.owned)
    expect(await b.join(topics=both, assignor="range"), ErrorCode.NONE, "b joins both topics")
    for _ in range(MAX_ROUNDS):
        expect(await a.heartbeat(owned=held), ErrorCode.NONE, "a keeps its partitions")
        if a.owned != held:
            break
        await b.heartbeat()
        await asyncio.sleep(STEP_MS / 1000)
    else:
        raise ProbeStopped("a was never told to revoke")
    told = dict(a.owned)
    expect(await a.subscribe(first, owned=held), ErrorCode.NONE, "a narrows to the first topic")
    if a.owned == told:
        raise ProbeStopped("a's narrowed subscription did not shrink its assignment")
    expect(await a.heartbeat(owned=held), ErrorCode.NONE, "a still reports every partition")
    await settle(a, b, topics=both)
    expect(await a.subscribe(first, second), ErrorCode.NONE, "a subscribes to both again")
    await settle(a, b, topics=both)
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


async def max_size(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """group.consumer.max.size members join; one more (with an id of its own, or none on v0)
    is refused with GROUP_MAX_SIZE_REACHED while a member rejoining is not; once one leaves,
    the newcomer is taken."""
    size = setup.group_max_size
    if size > LARGEST_GROUP_PROBED:
        raise ProbeStopped(
            f"needs a broker with group.consumer.max.size at most {LARGEST_GROUP_PROBED}, this "
            f"one has {size} (`groupspec probe --consumer-protocol` starts one with "
            f"{PROBE_GROUP_MAX_SIZE})"
        )
    topic = setup.first
    members = [CgMember(await connect(f"m{i}"), group, topic, new_id()) for i in range(size)]
    for member in members:
        expect(await member.join(), ErrorCode.NONE, "a member joins")
    await settle(*members)
    extra = CgMember(await connect("extra"), group, topic, new_id())
    expect(await extra.join(), ErrorCode.GROUP_MAX_SIZE_REACHED, "one member too many")
    anonymous = CgMember(extra.client, group, topic, "", version=0)
    expect(await anonymous.join(), ErrorCode.GROUP_MAX_SIZE_REACHED, "a v0 join too many")
    expect(await members[0].join(), ErrorCode.NONE, "a member rejoins at epoch 0")
    await settle(*members)
    expect(await members[-1].leave(), ErrorCode.NONE, "a member leaves")
    expect(await extra.join(), ErrorCode.NONE, "the newcomer, once there is room")
    stayed = [*members[:-1], extra]
    await settle(*stayed)
    for member in stayed:
        expect(await member.leave(), ErrorCode.NONE, "a member leaves")


async def commit_epochs(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """OffsetCommit and OffsetFetch of members by member epoch: at the member's epoch, above
    it, and (KIP-1251, Kafka 4.3+) below it for partitions held since then, for one it no
    longer holds and for one assigned after it; from an unknown member, as an admin client, and
    with v8; then of the Empty group."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    b = CgMember(await connect("b"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    first_epoch = a.epoch
    mine = a.owned[topic.topic_id]
    at = (a.epoch, a.member_id)
    expect_code(await commit(a.client, group, topic, mine, *at), ErrorCode.NONE, "at its epoch")
    newer = (a.epoch + 1, a.member_id)
    code = await commit(a.client, group, topic, mine, *newer)
    expect_code(code, ErrorCode.STALE_MEMBER_EPOCH, "a commit above the member's epoch")
    expect_code(await fetch(a.client, group, topic, *at), ErrorCode.NONE, "a fetch at its epoch")
    code = await fetch(a.client, group, topic, *newer)
    expect_code(code, ErrorCode.STALE_MEMBER_EPOCH, "a fetch at another epoch")
    expect(await b.join(), ErrorCode.NONE, "b joins")
    await settle(a, b)
    if a.epoch == first_epoch:
        raise ProbeStopped("a's epoch did not move when b joined")
    kept, given = a.owned[topic.topic_id], b.owned[topic.topic_id]
    old = (first_epoch, a.member_id)
    code = await commit(a.client, group, topic, kept, *old)
    expect_code(code, ErrorCode.NONE, "a commits what it held since an older epoch")
    code = await commit(a.client, group, topic, given, *old)
    expect_code(code, ErrorCode.STALE_MEMBER_EPOCH, "a commits what it gave away")
    before = (first_epoch, b.member_id)
    code = await commit(b.client, group, topic, given, *before)
    expect_code(code, ErrorCode.STALE_MEMBER_EPOCH, "b commits at an epoch before its partitions")
    stranger = (a.epoch, new_id())
    code = await commit(a.client, group, topic, kept, *stranger)
    expect_code(code, ErrorCode.UNKNOWN_MEMBER_ID, "a commit from an unknown member")
    code = await fetch(a.client, group, topic, *stranger)
    expect_code(code, ErrorCode.UNKNOWN_MEMBER_ID, "a fetch from an unknown member")
    code = await commit(a.client, group, topic, kept, -1)
    expect_code(code, ErrorCode.UNKNOWN_MEMBER_ID, "an admin commit to a group with members")
    code = await commit(a.client, group, topic, kept, *at, version=OLD_COMMIT_VERSION)
    expect_code(code, ErrorCode.UNSUPPORTED_VERSION, "a member's commit with v8")
    expect_code(await fetch(a.client, group, topic), ErrorCode.NONE, "an admin fetch")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")
    code = await commit(a.client, group, topic, kept, -1)
    expect_code(code, ErrorCode.NONE, "an admin commit to the Empty group")
    expect_code(await fetch(a.client, group, topic), ErrorCode.NONE, "an admin fetch")


async def offsets_of_unknown_groups(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """OffsetCommit (v9 and v8) and OffsetFetch of a group the coordinator does not hold, and of
    the empty group id (an unknown group too), each named first by a ConsumerGroupHeartbeat (the
    oracle judges the offsets of the groups it has seen a heartbeat of)."""
    topic = setup.first
    client = await connect("a")
    missing = f"{group}-missing"
    lost = CgMember(client, missing, topic, new_id(), epoch=1)
    expect(await lost.heartbeat(), ErrorCode.GROUP_ID_NOT_FOUND, "a heartbeat to no group")
    partitions = {0}
    code = await commit(client, missing, topic, partitions, 1, lost.member_id)
    expect_code(code, ErrorCode.GROUP_ID_NOT_FOUND, "a v9 commit to no group")
    old = OLD_COMMIT_VERSION
    code = await commit(client, missing, topic, partitions, 1, lost.member_id, version=old)
    expect_code(code, ErrorCode.ILLEGAL_GENERATION, "a v8 commit to no group")
    expect_code(await fetch(client, missing, topic), ErrorCode.NONE, "a fetch of no group")
    nameless = CgMember(client, "", topic, new_id())
    expect(await nameless.join(), ErrorCode.INVALID_REQUEST, "a join with an empty group id")
    # An empty group id is an unknown group, not INVALID_GROUP_ID (docs/protocol.md §12.17).
    code = await commit(client, "", topic, partitions, 1, nameless.member_id)
    expect_code(code, ErrorCode.GROUP_ID_NOT_FOUND, "a commit with an empty group id")
    code = await fetch(client, "", topic)
    expect_code(code, ErrorCode.NONE, "a fetch with an empty group id")


async def deleting(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """DeleteGroups of a consumer group with a member (NON_EMPTY_GROUP), of it once Empty (its
    records become tombstones), and of it once gone (GROUP_ID_NOT_FOUND); a join then creates it
    afresh."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    deleted = await delete_groups(a.client, group)
    expect_code(deleted[group], ErrorCode.NON_EMPTY_GROUP, "deleting a group with a member")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    deleted = await delete_groups(a.client, group)
    expect_code(deleted[group], ErrorCode.NONE, "deleting the Empty group")
    deleted = await delete_groups(a.client, group)
    expect_code(deleted[group], ErrorCode.GROUP_ID_NOT_FOUND, "deleting it again")
    expect(await a.join(), ErrorCode.NONE, "a joins the group afresh")
    await settle(a)
    expect(await a.leave(), ErrorCode.NONE, "a leaves")


async def listing(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """ListGroups of consumer groups (the types filter "consumer"): the Stable group listed, left
    out by a filter of Empty groups and kept by one of Stable groups; Empty once its member
    left."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    expect(await a.join(), ErrorCode.NONE, "a joins")
    await settle(a)
    listed = await list_consumer_groups(a.client)
    if listed.get(group) != "Stable":
        raise ProbeStopped(f"the Stable group is not listed as such: {listed.get(group)}")
    if group in await list_consumer_groups(a.client, "Empty"):
        raise ProbeStopped("a filter of Empty groups listed the Stable group")
    if group not in await list_consumer_groups(a.client, "Stable"):
        raise ProbeStopped("a filter of Stable groups left the Stable group out")
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    if (await list_consumer_groups(a.client, "Empty")).get(group) != "Empty":
        raise ProbeStopped("the group its member left is not listed as Empty")


async def regex_subscriptions(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """Regular-expression subscriptions (v1): a join with an expression RE2/J does not compile
    (INVALID_REGULAR_EXPRESSION); a join with an expression matching the first topic only, whose
    partitions arrive once the broker has resolved it; a second member joining with the same,
    already resolved, expression; that member dropping it for topic names; both leaving (the
    last subscriber's leave deletes the resolution)."""
    topic = setup.first
    # The whole name must match (RE2/J `matches`): the second topic's name only begins alike.
    regex = topic.name
    a = CgMember(await connect("a"), group, topic, new_id())
    invalid = await a.send(
        member_epoch=JOIN_GROUP_MEMBER_EPOCH,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
        subscribed_topic_regex="(",
        topic_partitions=[],
    )
    expect(invalid, ErrorCode.INVALID_REGULAR_EXPRESSION, "a join with an invalid expression")
    joined = await a.send(
        member_epoch=JOIN_GROUP_MEMBER_EPOCH,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
        subscribed_topic_regex=regex,
        topic_partitions=[],
    )
    expect(joined, ErrorCode.NONE, "a joins with an expression")
    await settle(a)
    b = CgMember(await connect("b"), group, topic, new_id())
    joined = await b.send(
        member_epoch=JOIN_GROUP_MEMBER_EPOCH,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
        subscribed_topic_regex=regex,
        topic_partitions=[],
    )
    expect(joined, ErrorCode.NONE, "b joins with the same expression")
    await settle(a, b)
    named = await b.send(
        subscribed_topic_names=[topic.name],
        subscribed_topic_regex="",
        topic_partitions=[
            {"topic_id": topic_id, "partitions": sorted(parts)}
            for topic_id, parts in b.owned.items()
        ],
    )
    expect(named, ErrorCode.NONE, "b drops the expression for the topic's name")
    await settle(a, b)
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


async def stale_owned_report(connect: Connect, group: str, setup: ProbeSetup) -> None:
    """The coordinator half of the stale-owned-partitions finding (docs/kafka.md): a member
    given every partition at its join heartbeats at that epoch, once a second member's join has
    moved the target on, reporting owned partitions that omit what it must now revoke (the
    Java consumer's full heartbeat after a reset of its sent fields, sent while it still
    reconciles: its `currentAssignment` is still the join's empty one). Kafka takes the report
    as a revocation: the member moves to the next epoch at once and the second member is given
    the partitions the first never said it released."""
    topic = setup.first
    a = CgMember(await connect("a"), group, topic, new_id())
    b = CgMember(await connect("b"), group, topic, new_id())
    expect(await a.join(assignor="range"), ErrorCode.NONE, "a joins")
    given = a.owned.get(topic.topic_id, frozenset())
    if given != frozenset(range(PARTITIONS)):
        raise ProbeStopped(f"a's join was not given every partition: {a.owned}")
    joined_epoch = a.epoch
    expect(await b.join(assignor="range"), ErrorCode.NONE, "b joins")
    if b.owned.get(topic.topic_id):
        raise ProbeStopped(f"b was given a's partitions before a revoked: {b.owned}")
    stale = await a.heartbeat(owned={})
    expect(stale, ErrorCode.NONE, "a's heartbeat reporting nothing owned at its join's epoch")
    if a.epoch <= joined_epoch:
        raise ProbeStopped(f"a was kept at epoch {a.epoch} to revoke (Kafka would be safe here)")
    released = given - a.owned.get(topic.topic_id, frozenset())
    if not released:
        raise ProbeStopped(f"a's new assignment takes nothing away: {a.owned}")
    expect(await b.heartbeat(), ErrorCode.NONE, "b's heartbeat")
    if b.owned.get(topic.topic_id, frozenset()) != released:
        raise ProbeStopped(f"b was not given {sorted(released)} a never revoked: {b.owned}")
    await settle(a, b)
    expect(await a.leave(), ErrorCode.NONE, "a leaves")
    expect(await b.leave(), ErrorCode.NONE, "b leaves")


ProbeFunction = Callable[[Connect, str, ProbeSetup], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class ConsumerProbe:
    """A scripted exchange and the rules (spec/kip848/rules.py) it exercises on Kafka 4.4.0:
    tests/test_kafka_consumer_protocol.py checks each is in its judged trace."""

    name: str
    run: ProbeFunction
    rules: tuple[str, ...]


# What every probe that creates a group, lets it settle and empties it again shows: the
# group created, its target computed, each member's subscription, reconciliation to Stable,
# leaves, and the records of all of it.
GROUP_LIFECYCLE = (
    "cg_assignment.computed",
    "cg_heartbeat.group_created",
    "cg_heartbeat.last_member_fenced",
    "cg_heartbeat.member_fenced",
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
    "cg_record.member_tombstones",
    "cg_record.target_epoch",
    "cg_record.target_member",
)
# What a second member joining a settled group shows: the first revokes before the second
# gets its partitions.
REVOCATION = (
    "cg_reconcile.rebalance_timeout_armed",
    "cg_reconcile.revoke_first",
    "cg_reconcile.to_unreleased",
)

CONSUMER_PROBES: dict[str, ConsumerProbe] = {
    p.name: p
    for p in (
        ConsumerProbe(
            "cg-join-leave-describe",
            join_leave_describe,
            (
                *GROUP_LIFECYCLE,
                "cg_describe.group",
                "cg_describe.invalid_group_id",
                "cg_describe.unknown_group",
                "cg_heartbeat.join_client_member_id",
            ),
        ),
        ConsumerProbe(
            "cg-fencing",
            fencing,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.fenced_member_epoch",
                "cg_heartbeat.invalid_request",
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.join_coordinator_member_id",
                "cg_heartbeat.rejoin_known_member",
                "cg_heartbeat.unknown_group",
                "cg_heartbeat.unknown_member_id",
            ),
        ),
        ConsumerProbe(
            "cg-invalid-requests",
            invalid_requests,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.invalid_request",
                "cg_heartbeat.join_client_member_id",
            ),
        ),
        ConsumerProbe(
            "cg-previous-epoch",
            previous_epoch,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.previous_epoch_accepted",
            ),
        ),
        ConsumerProbe(
            "cg-static",
            static_members,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.fenced_instance_id",
                "cg_heartbeat.new_static_member",
                "cg_heartbeat.static_member_replaced",
                "cg_heartbeat.static_member_temporarily_left",
                "cg_heartbeat.unknown_static_member",
                "cg_heartbeat.unreleased_instance_id",
            ),
        ),
        ConsumerProbe(
            "cg-static-timers",
            static_timers,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.new_static_member",
                "cg_heartbeat.static_member_replaced",
                "cg_heartbeat.static_member_temporarily_left",
                "cg_timer.rebalance_timeout_stale",
                "cg_timer.session_expired",
                "cg_timer.session_expired_no_member",
            ),
        ),
        ConsumerProbe(
            "cg-unknown-assignor",
            unknown_assignor,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.unsupported_assignor",
            ),
        ),
        ConsumerProbe(
            "cg-rebalance-timeout",
            rebalance_timeout,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.unknown_member_id",
                "cg_reconcile.still_revoking",
                "cg_timer.rebalance_timeout_expired",
            ),
        ),
        ConsumerProbe(
            "cg-subscription",
            subscription_change,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_reconcile.still_revoking",
                "cg_reconcile.subscription_narrowed",
            ),
        ),
        ConsumerProbe(
            "cg-max-size",
            max_size,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.group_max_size_reached",
                "cg_heartbeat.join_client_member_id",
                "cg_heartbeat.rejoin_known_member",
            ),
        ),
        ConsumerProbe(
            "cg-commit-epochs",
            commit_epochs,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_offset_commit.admin_empty_group",
                "cg_offset_commit.admin_non_empty_group",
                "cg_offset_commit.assigned_by_epoch",
                "cg_offset_commit.assigned_later",
                "cg_offset_commit.epoch_matches",
                "cg_offset_commit.epoch_newer",
                "cg_offset_commit.partition_not_owned",
                "cg_offset_commit.unknown_member",
                "cg_offset_commit.unsupported_version",
                "cg_offset_fetch.member",
                "cg_offset_fetch.stale_member_epoch",
                "cg_offset_fetch.unknown_member",
                "cg_offset_fetch.without_member",
            ),
        ),
        ConsumerProbe(
            "cg-list-groups",
            listing,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.join_client_member_id",
                "cg_list_groups.listed",
                "cg_list_groups.filtered_out",
            ),
        ),
        ConsumerProbe(
            "cg-delete-groups",
            deleting,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.join_client_member_id",
                "cg_delete_groups.non_empty",
                "cg_delete_groups.deleted",
                "cg_delete_groups.unknown_group",
                "cg_record.group_tombstones",
            ),
        ),
        ConsumerProbe(
            "cg-regex",
            regex_subscriptions,
            (
                *GROUP_LIFECYCLE,
                *REVOCATION,
                "cg_heartbeat.join_client_member_id",
                "cg_regex.invalid",
                "cg_regex.subscribed_unresolved",
                "cg_regex.resolution_started",
                "cg_regex.resolved_changed",
                "cg_regex.subscribed_resolved",
                "cg_regex.unsubscribed",
                "cg_regex.tombstone",
                "cg_record.regex",
            ),
        ),
        ConsumerProbe(
            "cg-stale-owned",
            stale_owned_report,
            (
                *GROUP_LIFECYCLE,
                "cg_heartbeat.join_client_member_id",
                "cg_reconcile.to_unreleased",
            ),
        ),
        ConsumerProbe(
            "cg-offsets-unknown-groups",
            offsets_of_unknown_groups,
            (
                "cg_heartbeat.invalid_request",
                "cg_heartbeat.unknown_group",
                "cg_offset_commit.unknown_group",
                "cg_offset_commit.unknown_group_old_version",
                "cg_offset_fetch.unknown_group",
            ),
        ),
    )
}


# The consumer-protocol rules no client can drive against one Kafka 4.x broker as groupspec starts
# it, and why (docs/kafka.md, "Consumer-protocol probes"): they are outside the denominator of
# the probes' coverage. A family's reason covers each of its rules.
_FAILOVER = (
    "the coordinator's __consumer_offsets partition moving away and back (a cluster whose "
    "leadership moves, record/kafka/cluster.py), which no client request causes"
)
_POLICY = (
    "a group.consumer.migration.policy without it (Kafka 4.x's is bidirectional), a static "
    "broker setting no client can change"
)
NOT_ON_ONE_BROKER_FAMILIES: dict[str, str] = {
    "cg_failover.": _FAILOVER,
    "cg_replay.": f"replaying the group's records after {_FAILOVER}",
    "cg_protocol_disabled.": (
        "a broker that does not serve the consumer protocol (Kafka 3.x, or "
        "group.coordinator.rebalance.protocols without consumer)"
    ),
}
NOT_ON_ONE_BROKER: dict[str, str] = {
    "cg_heartbeat.unsupported_version": "Kafka 3.9's profile (ConsumerGroupHeartbeat v0 only)",
    "cg_assignment.no_interval": "the 3.9 and 4.0-4.2 profiles (no assignment interval)",
    "cg_offset_commit.epoch_mismatch": (
        "the 3.9 and 4.0-4.2 profiles (4.3 and later judge an older epoch by KIP-1251)"
    ),
    "cg_assignment.deferred": (
        "group.consumer.assignment.interval.ms above 0: groupspec's brokers compute every target "
        "at once, so that the oracle need not guess when one is computed"
    ),
    "cg_convert.upgrade_disabled": _POLICY,
    "cg_convert.downgrade_disabled": _POLICY,
    "cg_convert.downgrade_too_large": (
        "group.classic.max.size smaller than a consumer group's classic members, a static "
        "broker setting groupspec's brokers leave at Kafka's default"
    ),
    "cg_heartbeat.static_member_left_revoking": (
        "KAFKA-20641's proposed fix (apache/kafka#22473, open), which no released broker has"
    ),
}
# Rules a client can drive against one broker that the consumer-protocol oracle does not judge
# yet. Classic members inside a consumer group and the downgrade are judged with the group
# (probes_consumer_classic.py); the conversions from a classic group are not: the oracle follows
# a group from its first ConsumerGroupHeartbeat, so a group that starts classic is the classic
# oracle's, and the consumer-protocol oracle would take a heartbeat to it for one to a new
# group. They count in the denominator.
_FROM_CLASSIC = (
    "the oracle does not judge yet: a ConsumerGroupHeartbeat to a group that started classic "
    "(the classic oracle's; the consumer-protocol oracle follows a group from its first "
    "ConsumerGroupHeartbeat and does not hold the classic group it would convert)"
)
NOT_JUDGED_YET_FAMILIES: dict[str, str] = {}
NOT_JUDGED_YET: dict[str, str] = {
    rule: _FROM_CLASSIC
    for rule in (
        "cg_convert.empty_classic_replaced",
        "cg_convert.not_a_consumer_group",
        "cg_convert.upgrade",
        "cg_convert.upgrade_join_refused",
        "cg_convert.upgrade_not_consumer_protocol",
        "cg_convert.upgrade_parked_answered",
        "cg_convert.upgrade_too_large",
        "cg_convert.upgrade_unreadable",
    )
}
# Drivable, and judged, but no probe shows them: what they need costs more than a probe may take.
NOT_JUDGED_YET.update(
    {
        "cg_regex.resolved_unchanged": (
            "no probe yet: it needs a second resolution of an expression, which Kafka starts no "
            "sooner than 10 s after the first (and then only for a new expression or past "
            "group.consumer.regex.refresh.interval.ms), more than a probe may wait in CI"
        ),
        "cg_regex.resolution_dropped": (
            "no probe yet: it needs the member to leave within the milliseconds its expression "
            "takes to resolve, a race a probe cannot win reliably"
        ),
    }
)


def not_on_one_broker(rule_id: str) -> str | None:
    """Why no client can drive consumer-protocol rule `rule_id` against one Kafka 4.x broker,
    or None if one can."""
    if rule_id in NOT_ON_ONE_BROKER:
        return NOT_ON_ONE_BROKER[rule_id]
    return next(
        (why for f, why in NOT_ON_ONE_BROKER_FAMILIES.items() if rule_id.startswith(f)), None
    )


def not_judged_yet(rule_id: str) -> str | None:
    """Why no probe shows rule `rule_id`, which a client can drive, or None."""
    if rule_id in NOT_JUDGED_YET:
        return NOT_JUDGED_YET[rule_id]
    return next((why for f, why in NOT_JUDGED_YET_FAMILIES.items() if rule_id.startswith(f)), None)


def probe_setup(broker: KafkaBroker) -> ProbeSetup:
    """Two new topics for probes (each probe then uses a group of its own), once the group
    coordinator can know it: the coordinator reads topics from its own copy of the metadata
    image, updated a moment after CreateTopics answers and the topic is described, and a group
    that subscribes before then is first assigned nothing and later rebalanced when the topic
    appears (a topic-metadata change, which the specification does not model, docs/protocol.md
    §12.13)."""
    stem = f"cg-probe-{uuid.uuid4().hex[:8]}"
    names = (stem, f"{stem}-second")
    create_topics(broker.bootstrap, names)
    ids = topic_ids(broker.bootstrap, names)
    time.sleep(METADATA_PROPAGATION_S)
    first, second = (Topic(name, ids[name]) for name in names)
    return ProbeSetup(first, second, broker.consumer_groups.get("max_size", INT32_MAX))


def record_consumer_probe(
    broker: KafkaBroker, probe: ConsumerProbe, folder: Path, setup: ProbeSetup
) -> Path:
    """Run `probe` through a recording proxy in front of `broker` on `setup` (`probe_setup`);
    the trace's path. Raises ProbeStopped (or a connection error) if
    the broker answered a step otherwise than the probe needs; the trace is kept."""
    suffix = uuid.uuid4().hex[:8]
    header = TraceHeader(
        broker.describe(),
        broker.header_settings(),
        broker.consumer_group_header(setup.header()),
    )
    path = folder / f"{probe.name}.jsonl"
    return record_exchange(
        broker.address,
        path,
        header,
        probe.name,
        lambda connect: probe.run(connect, f"{probe.name}-{suffix}", setup),
    )


def record_exchange(
    upstream: Address,
    path: Path,
    header: TraceHeader,
    name: str,
    body: Callable[[Connect], Coroutine[Any, Any, None]],
) -> Path:
    """Run `body` with a `connect` that opens probe clients (named `name`-...) through a
    recording proxy in front of `upstream`, writing the trace to `path`; every client is closed
    after, and the path returned."""
    recorder = RecorderThread(
        ProxyConfig(Address(LOOPBACK, 0), upstream, advertise_self=True), path, header
    ).start()
    clients: list[ProbeClient] = []

    async def connect(client_name: str) -> ProbeClient:
        reader, writer = await asyncio.open_connection(LOOPBACK, recorder.port)
        client = ProbeClient(reader, writer, f"{name}-{client_name}")
        clients.append(client)
        return client

    async def run() -> None:
        try:
            await body(connect)
        finally:
            for client in clients:
                client.close()
            await asyncio.sleep(0.2)  # the recorder sees the last frames and the closes

    try:
        asyncio.run(run())
    finally:
        recorder.stop()
    return path


def run_consumer_probes(
    folder: Path,
    names: list[str] | None = None,
    broker: KafkaBroker | None = None,
    probes: Mapping[str, ConsumerProbe] = CONSUMER_PROBES,
) -> list[ProbeResult]:
    """Run the consumer-protocol probes `names` of `probes` (all by default) against `broker`,
    or a Kafka 4.x broker started for them (with PROBE_BROKER_SETTINGS) and stopped after
    (KafkaSetupError, BrokerStartError if it cannot start); one trace each in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    owned = broker is None
    target = KafkaBroker(consumer_groups=PROBE_BROKER_SETTINGS) if broker is None else broker
    if owned:
        target.start()
    try:
        setup = probe_setup(target)
        results = []
        for name in names or list(probes):
            probe = probes[name]
            result = ProbeResult(name, folder / f"{name}.jsonl")
            try:
                record_consumer_probe(target, probe, folder, setup)
            except (TimeoutError, OSError, asyncio.IncompleteReadError, ProbeStopped) as error:
                result.error = f"{type(error).__name__}: {error}"
            results.append(result)
        return results
    finally:
        if owned:
            target.stop()
