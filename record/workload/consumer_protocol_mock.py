"""confluent-kafka consumers with `group.protocol=consumer` against librdkafka's mock cluster
(docs/kafka.md, "The consumer protocol on librdkafka's mock cluster"), recorded through the
recording proxy, for the consumer-protocol oracle to judge.

The mock (`test.mock.num.brokers`, one broker inside this process, `MockTarget`) serves
ConsumerGroupHeartbeat v1 with its own coordinator (librdkafka's `src/rdkafka_mock_cgrp.c`): a
range-only target, a 30 s session and a 3 s heartbeat interval that Python cannot change
(`rd_kafka_mock_set_group_consumer_*` are C only), so the scenarios here have no crash (its
session would take 30 s to expire). As on Kafka, a producer writes records for as long as the
scenario runs (`Trickle`), so the consumers commit (OffsetCommit with their member epoch) and
fetch the offsets of partitions they take over.

The trace header's consumer-protocol settings are the mock's: its session and heartbeat, the
range assignor only, and the 4.0-4.2 profile (the mock accepts a commit only at the member's
current epoch, as Kafka did before KIP-1251).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

from .consumer_protocol import SCENARIOS, ConsumerGroupRun, Scenario, Step, Trickle, play
from .probe_client import ProbeClient, ProbeStopped
from .probes_consumer import (
    JOIN_GROUP_MEMBER_EPOCH,
    MAX_ROUNDS,
    REBALANCE_TIMEOUT_MS,
    STEP_MS,
    CgMember,
    Connect,
    ErrorCode,
    Topic,
    expect,
    new_id,
    record_exchange,
    settle,
)
from .targets import MockTarget

# rd_kafka_mock_cluster_new's defaults for consumer groups (src/rdkafka_mock.c).
MOCK_SESSION_TIMEOUT_MS = 30_000
MOCK_HEARTBEAT_INTERVAL_MS = 3_000
# The mock's target assignment is range's (rd_kafka_mock_cgrp_consumer_target_assignment_
# calculate_range); it ignores the member's server assignor.
MOCK_ASSIGNORS = ("range",)
# The consumer-protocol profile the mock is judged under (spec/kip848/profiles.py, named as the
# header takes it; record/ does not import the specification, tests/test_layers.py): its commit
# check is the strict one of Kafka 4.0-4.2.
MOCK_PROFILE = "4.0-4.2"
# Metadata v10 is the first to carry topic ids; the mock serves up to v12. (The admin client's
# describe_topics, which `consumer_protocol.topic_ids` uses, gets no answer from the mock.)
METADATA_TOPIC_ID_VERSION = 10

MOCK_SCENARIOS = {
    s.name: s
    for s in (
        Scenario(
            "join-leave",
            (
                Step("start", "a"),
                Step("start", "b"),
                Step("start", "c"),
                Step("stop", "b"),
                Step("stop", "a"),
                Step("stop", "c"),
            ),
        ),
        Scenario(
            "static-restart",
            (
                Step("start", "s", instance_id="static-1"),
                Step("start", "a"),
                Step("stop", "s", settle=False),
                Step("start", "s", instance_id="static-1"),
                Step("stop", "a"),
                Step("stop", "s"),
            ),
        ),
        # The Kafka campaign's own: nothing in it needs what the mock cannot do.
        SCENARIOS["subscription-change"],
    )
}


def mock_header(target: MockTarget, topics: list[dict[str, object]]) -> TraceHeader:
    """The trace header of a run on `target`: its classic settings and its consumer-protocol
    ones (see the module docstring)."""
    consumer_groups = {
        "session_timeout_ms": MOCK_SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": MOCK_HEARTBEAT_INTERVAL_MS,
        "assignment_interval_ms": 0,
        "assignors": list(MOCK_ASSIGNORS),
        "kafka_version": MOCK_PROFILE,
        "topics": topics,
    }
    return TraceHeader(target.describe(), dict(target.coordinator), consumer_groups)


def record_mock_scenario(scenario: Scenario, folder: Path, tag: str = "") -> Path:
    """Run `scenario` with confluent-kafka's consumers against a fresh mock cluster through a
    recording proxy; the trace's path. Raises ScenarioError if it cannot run to its end (the
    trace is kept)."""
    suffix = tag or uuid.uuid4().hex[:8]
    target = MockTarget()
    target.open()
    try:
        bootstrap = str(target.upstream)
        topics = tuple(f"{t}-{suffix}" for t in scenario.topics)
        partitions = {t: target.create_topic(bootstrap, t, 4) for t in topics}
        ids = asyncio.run(mock_topic_ids(target.upstream, topics))
        header = mock_header(
            target,
            [{"name": t, "topic_id": ids[t], "partitions": partitions[t]} for t in topics],
        )
        path = folder / f"mock-{scenario.name}.jsonl"
        recorder = RecorderThread(
            ProxyConfig(Address("127.0.0.1", 0), target.upstream, advertise_self=True),
            path,
            header,
        ).start()
        producer = Trickle(bootstrap, topics)
        producer.start()
        then_topic = topics[1] if len(topics) > 1 else ""
        group = f"cp-mock-{scenario.name}-{suffix}"
        run = ConsumerGroupRun("confluent", recorder.address, group, topics[0], then_topic)
        try:
            play(run, scenario)
        finally:
            run.close()
            producer.stop()
            recorder.stop()
        return path
    finally:
        target.close()


async def mock_topic_ids(address: Address, names: tuple[str, ...]) -> dict[str, str]:
    """The topic id of each topic the mock at `address` holds, as a UUID's text."""
    from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

    reader, writer = await asyncio.open_connection(address.host, address.port)
    client = ProbeClient(reader, writer, "groupspec-mock-metadata")
    try:
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
        answer = await client.call(request, MetadataResponse, METADATA_TOPIC_ID_VERSION)
    finally:
        client.close()
    return {t.name: str(uuid.UUID(str(t.topic_id))) for t in answer.topics if t.name in names}


# -- a probe of the commit's epoch check ---------------------------------------------------------

COMMIT_VERSION = 9
# The mock serves OffsetFetch up to v6, which names no member.
FETCH_VERSION = 6


async def _commit(member: CgMember, epoch: int, offsets: dict[int, int]) -> int:
    """OffsetCommit v9 of `offsets` of the member's topic at `epoch`, no leader epoch and no
    metadata; the first partition's error code."""
    from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse

    entry = OffsetCommitRequest.OffsetCommitRequestTopic
    partitions = [
        entry.OffsetCommitRequestPartition(
            partition_index=p, committed_offset=o, committed_leader_epoch=-1, committed_metadata=""
        )
        for p, o in offsets.items()
    ]
    request = OffsetCommitRequest(
        group_id=member.group,
        generation_id_or_member_epoch=epoch,
        member_id=member.member_id,
        group_instance_id=None,
        topics=[entry(name=member.topic.name, partitions=partitions)],
    )
    answer = await member.client.call(request, OffsetCommitResponse, COMMIT_VERSION)
    return int(answer.topics[0].partitions[0].error_code)


async def _fetch(member: CgMember, partitions: list[int]) -> None:
    """OffsetFetch v6 of `partitions` of the member's topic (no member id, no epoch)."""
    from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse

    topic = OffsetFetchRequest.OffsetFetchRequestTopic(
        name=member.topic.name, partition_indexes=partitions
    )
    request = OffsetFetchRequest(group_id=member.group, topics=[topic], require_stable=False)
    await member.client.call(request, OffsetFetchResponse, FETCH_VERSION)


async def commit_epochs(connect: Connect, group: str, first: Topic, second: Topic) -> None:
    """A member alone takes every partition of `first`, then subscribes to `second` as well: its
    epoch moves on while it keeps `first`'s partitions, assigned at its old epoch. It commits
    one of them at the old epoch (Kafka 4.3+ accepts it, KIP-1251; 4.0-4.2 refuse it), at its
    epoch and at one ahead, then fetches that partition and one never committed, and leaves."""
    a = CgMember(await connect("a"), group, first, new_id())
    # Names with an empty expression, as librdkafka sends them: the mock aborts on names with a
    # null one (`JOIN_WITH_NULL_REGEX`).
    joined = await a.send(
        member_epoch=JOIN_GROUP_MEMBER_EPOCH,
        rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
        subscribed_topic_names=[first.name],
        subscribed_topic_regex="",
        topic_partitions=[],
    )
    expect(joined, ErrorCode.NONE, "join")
    await settle(a)
    old = a.epoch
    await a.send(
        subscribed_topic_names=[first.name, second.name],
        subscribed_topic_regex="",
        topic_partitions=[{"topic_id": t, "partitions": sorted(p)} for t, p in a.owned.items()],
    )
    for _ in range(MAX_ROUNDS):
        if a.epoch > old and second.topic_id in a.owned:
            break
        await asyncio.sleep(STEP_MS / 1000)
        await a.heartbeat()
    else:
        raise ProbeStopped(f"the member did not take {second.name}: {a.epoch} {a.owned}")
    await _commit(a, old, {0: 1})
    await _commit(a, a.epoch, {0: 2})
    await _commit(a, a.epoch + 1, {0: 3})
    await _fetch(a, [0, 1])
    await a.leave()


def record_mock_commit_probe(folder: Path) -> Path:
    """`commit_epochs` against a fresh mock cluster through a recording proxy; the trace's path
    (ProbeStopped if the mock answered a step otherwise than the probe needs)."""
    suffix = uuid.uuid4().hex[:8]
    target = MockTarget()
    target.open()
    try:
        names = (f"orders-{suffix}", f"payments-{suffix}")
        partitions = {t: target.create_topic(str(target.upstream), t, 4) for t in names}
        ids = asyncio.run(mock_topic_ids(target.upstream, names))
        header = mock_header(
            target, [{"name": t, "topic_id": ids[t], "partitions": partitions[t]} for t in names]
        )
        topics = [Topic(n, ids[n]) for n in names]
        group = f"cp-mock-commit-epochs-{suffix}"
        return record_exchange(
            target.upstream,
            folder / "mock-commit-epochs.jsonl",
            header,
            "mock-commit-epochs",
            lambda connect: commit_epochs(connect, group, *topics),
        )
    finally:
        target.close()


async def join_with_null_regex() -> int:
    """A v1 join naming the topic with a null regular expression (as Kafka's Java consumer
    sends it) straight to a fresh mock cluster; the error code it is answered with. The mock
    of librdkafka 2.16 aborts the process instead (docs/kafka.md)."""
    target = MockTarget()
    await asyncio.to_thread(target.open)
    try:
        name = f"orders-{uuid.uuid4().hex[:8]}"
        await asyncio.to_thread(target.create_topic, str(target.upstream), name, 4)
        ids = await mock_topic_ids(target.upstream, (name,))
        reader, writer = await asyncio.open_connection(target.upstream.host, target.upstream.port)
        client = ProbeClient(reader, writer, "mock-null-regex")
        try:
            member = CgMember(
                client, f"cp-mock-null-regex-{name}", Topic(name, ids[name]), new_id()
            )
            answer = await member.join()
        finally:
            client.close()
        return int(answer.error_code)
    finally:
        target.close()
