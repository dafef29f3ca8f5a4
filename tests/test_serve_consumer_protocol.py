"""`groupspec serve` speaking the consumer protocol (KIP-848) over the wire: a scripted exchange
of ConsumerGroupHeartbeats (the consumer-protocol probes' member, record/workload/
probes_consumer.py) joins two members, reconciles them, describes the group, commits and
fetches offsets by member epoch, lists and deletes groups, and restarts the server on the same
data directory, after which the group and its offsets are still there; a member subscribing
with a regular expression gets the partitions of the topic it matches once the server resolved
it, and the group keeps its resolution across a restart (and librdkafka subscribing with one
reads only the matching topic); a classic consumer shares a consumer
group with a consumer-protocol member, static ones too (a classic restart with the same instance
id replaces the old member, and a server restart keeps the replacement); a group id changes
protocol when Empty."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kafka.protocol.consumer.group import (
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from serve_support import ServerThread, serve_config

from groupspec.cli.main import main
from groupspec.cli.serve_command import consumer_group_config
from groupspec.impl.server.apis import topic_id
from groupspec.record.workload.consumer_protocol import PARTITIONS
from groupspec.record.workload.probe_client import ProbeClient, ProbeMember, subscription
from groupspec.record.workload.probes_consumer import (
    REBALANCE_TIMEOUT_MS,
    CgMember,
    Topic,
    describe,
    settle,
)
from groupspec.spec.consumer_protocol import decode_assignment
from groupspec.vocabulary.errors import ErrorCode

TOPIC = "cg-serve"
GROUP = "cg-serve-group"
# A second topic, which the regular expression of the regex test does not match.
OTHER_TOPIC = "cg-other"


@pytest.fixture
def server(tmp_path):
    thread = ServerThread(serve_config(topics={TOPIC: PARTITIONS}, data_dir=tmp_path)).start()
    yield thread
    thread.stop()


async def connect(port: int, name: str) -> ProbeClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return ProbeClient(reader, writer, name)


async def commit(
    client: ProbeClient, member: CgMember, offsets: dict[int, int], epoch: int | None = None
) -> Any:
    """OffsetCommit v9 of `offsets` at the member's epoch (or `epoch`)."""
    partitions = [
        OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
            partition_index=p, committed_offset=o, committed_leader_epoch=-1, committed_metadata=""
        )
        for p, o in offsets.items()
    ]
    request = OffsetCommitRequest(
        group_id=GROUP,
        generation_id_or_member_epoch=member.epoch if epoch is None else epoch,
        member_id=member.member_id,
        group_instance_id=None,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=TOPIC, partitions=partitions)],
    )
    answer = await client.call(request, OffsetCommitResponse, 9)
    return {p.partition_index: p.error_code for t in answer.topics for p in t.partitions}


async def fetch(client: ProbeClient, member_id: str | None, epoch: int) -> tuple[int, dict]:
    """OffsetFetch v9 of every committed offset of the group, as `member_id` at `epoch`."""
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequest.OffsetFetchRequestGroup(
                group_id=GROUP, member_id=member_id, member_epoch=epoch, topics=None
            )
        ],
        require_stable=False,
    )
    answer = await client.call(request, OffsetFetchResponse, 9)
    (group,) = answer.groups
    offsets = {p.partition_index: p.committed_offset for t in group.topics for p in t.partitions}
    return group.error_code, offsets


def owned_partitions(member: CgMember) -> set[int]:
    return {p for parts in member.owned.values() for p in parts}


async def settle_shared(a: CgMember, b: CgMember) -> None:
    """Heartbeat both until each holds a share: the target that gives b its share may wait for
    group.consumer.assignment.interval.ms (KIP-1263) after the one a got alone."""
    for _ in range(50):
        await settle(a, b)
        if owned_partitions(a) and owned_partitions(b):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"no share for both: {a.owned} {b.owned}")


def test_two_members_reconcile_commit_and_survive_a_restart(server):
    topic = Topic(TOPIC, str(topic_id(TOPIC)))

    async def before_restart() -> tuple[dict[int, int], str]:
        admin = await connect(server.port, "admin")
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a")
        b = CgMember(await connect(server.port, "b"), GROUP, topic, "member-b")
        assert (await a.join()).error_code == 0
        await settle(a)
        assert owned_partitions(a) == set(range(PARTITIONS))
        assert (await b.join()).error_code == 0
        await settle_shared(a, b)
        assert owned_partitions(a) | owned_partitions(b) == set(range(PARTITIONS))
        assert owned_partitions(a) and owned_partitions(b)
        assert not owned_partitions(a) & owned_partitions(b)

        described = (await describe(admin, GROUP)).groups[0]
        assert described.error_code == 0 and described.group_state == "Stable"
        assert sorted(m.member_id for m in described.members) == ["member-a", "member-b"]
        clients = {m.member_id: (m.client_id, m.client_host) for m in described.members}
        assert clients == {"member-a": ("a", "/127.0.0.1"), "member-b": ("b", "/127.0.0.1")}
        for m in described.members:
            for entry in m.assignment.topic_partitions:
                assert entry.topic_name == TOPIC

        # Commits by member epoch: the member's own partitions at its epoch pass; a newer
        # epoch and an unknown member do not.
        mine = {p: 10 + p for p in owned_partitions(a)}
        assert set((await commit(admin, a, mine)).values()) == {0}
        theirs = {p: 20 + p for p in owned_partitions(b)}
        assert set((await commit(admin, b, theirs)).values()) == {0}
        stale = await commit(admin, a, mine, epoch=a.epoch + 1)
        assert set(stale.values()) == {int(ErrorCode.STALE_MEMBER_EPOCH)}
        ghost = CgMember(admin, GROUP, topic, "ghost", epoch=1)
        assert set((await commit(admin, ghost, {0: 1})).values()) == {
            int(ErrorCode.UNKNOWN_MEMBER_ID)
        }
        error, offsets = await fetch(admin, a.member_id, a.epoch)
        assert error == 0 and offsets == {**mine, **theirs}
        error, _ = await fetch(admin, a.member_id, a.epoch + 1)
        assert error == int(ErrorCode.STALE_MEMBER_EPOCH)

        listed = await admin.list_groups(version=5)
        assert [(g.group_id, g.group_state, g.group_type) for g in listed.groups] == [
            (GROUP, "Stable", "consumer")
        ]
        assert [r.error_code for r in (await admin.delete(GROUP)).results] == [
            int(ErrorCode.NON_EMPTY_GROUP)
        ]
        for client in (admin, a.client, b.client):
            client.close()
        return {**mine, **theirs}, a.member_id

    committed, member_id = asyncio.run(before_restart())
    server.restart()

    async def after_restart() -> None:
        admin = await connect(server.port, "admin")
        described = (await describe(admin, GROUP)).groups[0]
        assert described.error_code == 0
        assert sorted(m.member_id for m in described.members) == ["member-a", "member-b"]
        epochs = {m.member_id: m.member_epoch for m in described.members}
        error, offsets = await fetch(admin, member_id, epochs[member_id])
        assert error == 0 and offsets == committed
        # An admin fetch (no member) reads them too.
        error, offsets = await fetch(admin, None, -1)
        assert error == 0 and offsets == committed
        admin.close()

    asyncio.run(after_restart())


@pytest.fixture
def two_topic_server(tmp_path):
    topics = {TOPIC: PARTITIONS, OTHER_TOPIC: PARTITIONS}
    thread = ServerThread(serve_config(topics=topics, data_dir=tmp_path)).start()
    yield thread
    thread.stop()


async def regex_join(member: CgMember, regex: str) -> Any:
    """A join (epoch 0) subscribing with the regular expression `regex` only."""
    return await member.send(
        member_epoch=0,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
        subscribed_topic_regex=regex,
        topic_partitions=[],
    )


def test_a_regex_subscription_gets_the_matching_topic_and_survives_a_restart(two_topic_server):
    server = two_topic_server
    topic = Topic(TOPIC, str(topic_id(TOPIC)))
    regex = "cg-s.*"  # matches cg-serve, not cg-other

    async def before_restart() -> tuple[int, set[int]]:
        admin = await connect(server.port, "admin")
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a")
        refused = await regex_join(a, "cg-(?=s)")  # a look-ahead: RE2 has none
        assert refused.error_code == int(ErrorCode.INVALID_REGULAR_EXPRESSION)
        joined = await regex_join(a, regex)
        # Nothing yet: the server resolves the expression after answering the join.
        assert joined.error_code == 0 and owned_partitions(a) == set()
        await settle(a)
        assert owned_partitions(a) == set(range(PARTITIONS))
        assert set(a.owned) == {topic.topic_id}
        (described,) = (await describe(admin, GROUP)).groups
        assert described.group_state == "Stable"
        assert [(m.member_id, m.subscribed_topic_regex) for m in described.members] == [
            ("member-a", regex)
        ]
        for client in (admin, a.client):
            client.close()
        return described.group_epoch, owned_partitions(a)

    epoch, owned = asyncio.run(before_restart())
    server.restart()

    async def after_restart() -> None:
        admin = await connect(server.port, "admin")
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a", epoch=epoch)
        a.owned = {topic.topic_id: frozenset(owned)}
        # A lost resolution would be started again by these heartbeats, and its completion
        # would bump the group epoch: the epoch stays, the partitions too.
        for _ in range(5):
            assert (await a.heartbeat()).error_code == 0
            await asyncio.sleep(0.1)
        (described,) = (await describe(admin, GROUP)).groups
        assert described.group_epoch == epoch and a.epoch == epoch
        assert [(m.member_id, m.subscribed_topic_regex) for m in described.members] == [
            ("member-a", regex)
        ]
        # A second member with the same, resolved, expression shares the topic at once.
        b = CgMember(await connect(server.port, "b"), GROUP, topic, "member-b")
        assert (await regex_join(b, regex)).error_code == 0
        await settle_shared(a, b)
        assert owned_partitions(a) | owned_partitions(b) == set(range(PARTITIONS))
        for client in (admin, a.client, b.client):
            client.close()

    asyncio.run(after_restart())


def test_librdkafka_subscribing_with_a_regex_consumes_the_matching_topic(two_topic_server):
    """confluent-kafka with group.protocol=consumer, subscribing to "^cg-s.*" (librdkafka 2.16
    sends it to the broker as SubscribedTopicRegex, in parentheses), reads the records of the
    topic the expression matches, and only those."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    bootstrap = f"127.0.0.1:{two_topic_server.port}"
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for partition in range(PARTITIONS):
        producer.produce(TOPIC, value=b"wanted", partition=partition)
        producer.produce(OTHER_TOPIC, value=b"unwanted", partition=partition)
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "regex-group",
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["^cg-s.*"])
    read: list[tuple[str, int]] = []
    for _ in range(150):  # polls of 0.2 s at most: the records arrive within a few
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            read.append((message.topic(), message.partition()))
        if len(read) == PARTITIONS:
            break
    assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
    server = two_topic_server.server
    assert server is not None and server.consumer_groups is not None
    group = server.consumer_groups.coordinator.group("regex-group")
    assert group is not None
    assert [m.subscribed_topic_regex for m in group.members.values()] == ["(^cg-s.*)"]
    assert set(group.resolved_regexes) == {"(^cg-s.*)"}
    consumer.close()
    assert sorted(read) == [(TOPIC, p) for p in range(PARTITIONS)]
    assert assigned == {(TOPIC, p) for p in range(PARTITIONS)}
    # Its leave was the last subscriber's: the resolution is deleted.
    assert not group.members and not group.resolved_regexes


def test_an_empty_consumer_group_is_deleted_with_its_offsets(server):
    topic = Topic(TOPIC, str(topic_id(TOPIC)))

    async def run() -> None:
        admin = await connect(server.port, "admin")
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a")
        assert (await a.join()).error_code == 0
        await settle(a)
        assert set((await commit(admin, a, {0: 5})).values()) == {0}
        assert (await a.leave()).error_code == 0
        listed = await admin.list_groups(states=["empty"], version=5)
        assert [(g.group_id, g.group_type) for g in listed.groups] == [(GROUP, "consumer")]
        results = (await admin.delete(GROUP, "no-such-group")).results
        assert [(r.group_id, r.error_code) for r in results] == [
            (GROUP, 0),
            ("no-such-group", int(ErrorCode.GROUP_ID_NOT_FOUND)),
        ]
        error, offsets = await fetch(admin, None, -1)
        assert error == 0 and offsets == {}
        for client in (admin, a.client):
            client.close()

    asyncio.run(run())
    server.restart()

    async def after_restart() -> None:
        admin = await connect(server.port, "admin")
        assert (await describe(admin, GROUP)).groups[0].error_code == int(
            ErrorCode.GROUP_ID_NOT_FOUND
        )
        admin.close()

    asyncio.run(after_restart())


def test_a_group_id_changes_protocol_only_when_empty_and_keeps_its_offsets(server):
    """An Empty classic group (here one that only holds an admin's commits) becomes a consumer
    group on a consumer-protocol join, and an Empty consumer group a classic one on a JoinGroup;
    the offsets stay with the group id both ways."""
    topic = Topic(TOPIC, str(topic_id(TOPIC)))

    async def run() -> None:
        admin = await connect(server.port, "admin")
        answer = await admin.commit(GROUP, {0: 7, 1: 8})
        assert {p.error_code for t in answer.topics for p in t.partitions} == {0}
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a")
        assert (await a.join()).error_code == 0
        error, offsets = await fetch(admin, None, -1)
        assert error == 0 and offsets == {0: 7, 1: 8}
        listed = await admin.list_groups(version=5)
        assert [(g.group_id, g.group_type) for g in listed.groups] == [(GROUP, "consumer")]

        assert (await a.leave()).error_code == 0
        joined = await admin.call(classic_join(), JoinGroupResponse, 5)
        assert joined.error_code == int(ErrorCode.MEMBER_ID_REQUIRED)
        fetched = await admin.fetch(GROUP, None)
        assert {
            p.partition_index: p.committed_offset for t in fetched.topics for p in t.partitions
        } == {0: 7, 1: 8}
        listed = await admin.list_groups(version=5)
        assert [(g.group_id, g.group_type) for g in listed.groups] == [(GROUP, "classic")]
        for client in (admin, a.client):
            client.close()

    asyncio.run(run())


def classic_join(instance: str | None = None) -> JoinGroupRequest:
    """A classic consumer's first JoinGroup v5 for the group."""
    return JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")],
        reason=None,
    )


async def classic_share(c: ProbeMember, a: CgMember) -> set[int]:
    """Join, sync and heartbeat the classic member `c` until it and `a` hold every partition
    between them (never one both); the partitions `c` holds."""
    held: set[int] = set()
    for _ in range(100):
        joined = await c.join(5)
        assert joined.error_code == 0 and joined.generation_id > 0
        synced = await c.sync(5)
        if synced.error_code == 0:
            partitions, _ = decode_assignment(bytes(synced.assignment))
            held = {p.partition for p in partitions if p.topic == TOPIC}
        while synced.error_code == 0:
            await a.heartbeat()
            assert not owned_partitions(a) & held, (a.owned, held)
            if held and owned_partitions(a) | held == set(range(PARTITIONS)):
                return held
            beat = await c.heartbeat(3)
            if beat.error_code == int(ErrorCode.REBALANCE_IN_PROGRESS):
                break
            assert beat.error_code == 0
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no share for both: {a.owned} {held}")


def test_a_classic_member_shares_a_consumer_group(server):
    """A classic consumer (JoinGroup, SyncGroup, Heartbeat) joins a group of a
    consumer-protocol member: it gets a generation equal to its member epoch, its share of the
    partitions from SyncGroup once the other member revoked them, REBALANCE_IN_PROGRESS when it
    must rejoin; no partition is ever held by both; its leave gives everything back."""
    topic = Topic(TOPIC, str(topic_id(TOPIC)))

    async def run() -> None:
        admin = await connect(server.port, "admin")
        a = CgMember(await connect(server.port, "a"), GROUP, topic, "member-a")
        assert (await a.join()).error_code == 0
        await settle(a)
        c = ProbeMember(
            await connect(server.port, "c"), GROUP, protocols=(("range", subscription(TOPIC)),)
        )
        assert (await c.join(5)).error_code == int(ErrorCode.MEMBER_ID_REQUIRED)
        held = await classic_share(c, a)
        assert held and owned_partitions(a) and not owned_partitions(a) & held
        described = (await describe(admin, GROUP)).groups[0]
        types = {m.member_id: m.member_type for m in described.members}
        assert types == {"member-a": 1, c.member_id: 0}
        # Its commit at its generation (the member epoch) is accepted, at any version; at
        # another generation it is ILLEGAL_GENERATION (Kafka 4.0's validateMemberEpoch).
        answer = await c.commit({p: 3 for p in held}, version=9)
        assert {p.error_code for t in answer.topics for p in t.partitions} == {0}
        answer = await c.commit({p: 4 for p in held}, version=7)
        assert {p.error_code for t in answer.topics for p in t.partitions} == {0}
        answer = await c.commit({p: 5 for p in held}, generation=c.generation + 1, version=7)
        assert {p.error_code for t in answer.topics for p in t.partitions} == {
            int(ErrorCode.ILLEGAL_GENERATION)
        }
        assert (await c.leave()).error_code == 0
        for _ in range(100):
            await a.heartbeat()
            if owned_partitions(a) == set(range(PARTITIONS)):
                break
            await asyncio.sleep(0.05)
        assert owned_partitions(a) == set(range(PARTITIONS))
        for client in (admin, a.client, c.client):
            client.close()

    asyncio.run(run())


def test_static_members_of_both_protocols_share_a_consumer_group(server):
    """A static consumer-protocol member and a static classic member (another instance id) share
    a consumer group: the classic one joins without a MEMBER_ID_REQUIRED round. A classic
    restart (a new connection, the same instance id, no member id) replaces the old member: the
    new id takes its partitions at once, the old id is fenced, and a server restart keeps the
    replacement."""
    topic = Topic(TOPIC, str(topic_id(TOPIC)))
    metadata = (("range", subscription(TOPIC)),)

    async def before_restart() -> tuple[str, set[int]]:
        admin = await connect(server.port, "admin")
        s = CgMember(await connect(server.port, "s"), GROUP, topic, "member-s", "instance-s")
        assert (await s.join()).error_code == 0
        await settle(s)
        c = ProbeMember(await connect(server.port, "c"), GROUP, "instance-c", protocols=metadata)
        held = await classic_share(c, s)
        assert c.member_id.startswith("instance-c-")
        described = (await describe(admin, GROUP)).groups[0]
        members = {m.member_id: (m.instance_id, m.member_type) for m in described.members}
        assert members == {"member-s": ("instance-s", 1), c.member_id: ("instance-c", 0)}

        # The classic consumer restarts: its new incarnation joins with the instance id only.
        restarted = ProbeMember(
            await connect(server.port, "c2"), GROUP, "instance-c", protocols=metadata
        )
        joined = await restarted.join(5)
        assert joined.error_code == 0 and restarted.member_id not in ("", c.member_id)
        synced = await restarted.sync(5)
        assert synced.error_code == 0
        partitions, _ = decode_assignment(bytes(synced.assignment))
        assert {p.partition for p in partitions if p.topic == TOPIC} == held
        assert (await c.heartbeat(3)).error_code == int(ErrorCode.FENCED_INSTANCE_ID)
        # A rejoin naming another id than the holder's is fenced too.
        stale = await c.join(5, member_id=c.member_id)
        assert stale.error_code == int(ErrorCode.FENCED_INSTANCE_ID)
        assert (await restarted.heartbeat(3)).error_code == 0
        await s.heartbeat()
        assert not owned_partitions(s) & held
        described = (await describe(admin, GROUP)).groups[0]
        members = {m.member_id: (m.instance_id, m.member_type) for m in described.members}
        assert members == {"member-s": ("instance-s", 1), restarted.member_id: ("instance-c", 0)}
        for client in (admin, s.client, c.client, restarted.client):
            client.close()
        return restarted.member_id, held

    member_id, held = asyncio.run(before_restart())
    server.restart()

    async def after_restart() -> None:
        admin = await connect(server.port, "admin")
        described = (await describe(admin, GROUP)).groups[0]
        members = {m.member_id: m.instance_id for m in described.members}
        assert members == {"member-s": "instance-s", member_id: "instance-c"}
        assigned = {
            m.member_id: {p for t in m.assignment.topic_partitions for p in t.partitions}
            for m in described.members
        }
        assert assigned[member_id] == held
        admin.close()

    asyncio.run(after_restart())


def test_consumer_group_settings_come_from_the_command_line(capsys):
    config = consumer_group_config(
        [
            "session_timeout_ms=6000",
            "assignors=range,uniform",
            "assignment_interval_ms=0",
            "regex_refresh_interval_ms=60000",
        ]
    )
    assert config.session_timeout_ms == 6000 and config.default_assignor == "range"
    assert config.assignment_interval_ms == 0 and config.regex_refresh_interval_ms == 60_000
    bad_settings = (
        "topics=t",
        "session_timeout_ms=soon",
        "assignors=sticky",
        "max_size=0",
        "regex_refresh_interval_ms=0",
    )
    for bad in bad_settings:
        assert main(["serve", "--port", "0", "--consumer-group-setting", bad]) == 2
        assert "groupspec serve:" in capsys.readouterr().err
