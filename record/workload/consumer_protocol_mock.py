"""confluent-kafka consumers with `group.protocol=consumer` against librdkafka's mock cluster
(docs/kafka.md, "The consumer protocol on librdkafka's mock cluster"), recorded through the
recording proxy, for the consumer-protocol oracle to judge.

The mock (`test.mock.num.brokers`, one broker inside this process, `MockTarget`) serves
ConsumerGroupHeartbeat v1 with its own coordinator (librdkafka's `src/rdkafka_mock_cgrp.c`): a
range-only target, a 30 s session and a 3 s heartbeat interval that Python cannot change
(`rd_kafka_mock_set_group_consumer_*` are C only), so the scenarios here have no crash (its
session would take 30 s to expire). A producer thread writes a record every `PRODUCE_EVERY_S` to
each topic for as long as the scenario runs, so the consumers commit (OffsetCommit with their
member epoch) and fetch the offsets of partitions they take over.

The trace header's consumer-protocol settings are the mock's: its session and heartbeat, the
range assignor only, and the 4.0-4.2 profile (the mock accepts a commit only at the member's
current epoch, as Kafka did before KIP-1251).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.spec.kip848.profiles import KAFKA_4_0
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

from .consumer_protocol import ConsumerGroupRun, Scenario, Step, play
from .probe_client import ProbeClient
from .targets import MockTarget

# rd_kafka_mock_cluster_new's defaults for consumer groups (src/rdkafka_mock.c).
MOCK_SESSION_TIMEOUT_MS = 30_000
MOCK_HEARTBEAT_INTERVAL_MS = 3_000
# The mock's target assignment is range's (rd_kafka_mock_cgrp_consumer_target_assignment_
# calculate_range); it ignores the member's server assignor.
MOCK_ASSIGNORS = ("range",)
PRODUCE_EVERY_S = 0.2
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
        Scenario(
            "subscription-change",
            (
                Step("start", "a"),
                Step("start", "b"),
                Step("resubscribe", "a", settle=False),
                Step("resubscribe", "b"),
                Step("stop", "a"),
                Step("stop", "b"),
            ),
            topics=("orders", "payments"),
        ),
    )
}


@dataclass
class _Producer:
    """Writes a record to each topic every PRODUCE_EVERY_S until stopped."""

    bootstrap: str
    topics: tuple[str, ...]

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "log_level": 3})
        n = 0
        while not self._stop.wait(PRODUCE_EVERY_S):
            for topic in self.topics:
                producer.produce(topic, value=f"r{n}".encode(), partition=n % 4)
            producer.poll(0)
            n += 1
        producer.flush(10)


def mock_header(target: MockTarget, topics: list[dict[str, object]]) -> TraceHeader:
    """The trace header of a run on `target`: its classic settings and its consumer-protocol
    ones (see the module docstring)."""
    consumer_groups = {
        "session_timeout_ms": MOCK_SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": MOCK_HEARTBEAT_INTERVAL_MS,
        "assignment_interval_ms": 0,
        "assignors": list(MOCK_ASSIGNORS),
        "kafka_version": KAFKA_4_0,
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
        producer = _Producer(bootstrap, topics)
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
