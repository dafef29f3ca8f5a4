"""Real consumers of KIP-848's protocol recorded against Apache Kafka 4.x (docs/kafka.md,
"The consumer protocol"): confluent-kafka (librdkafka) and Kafka's Java consumer with
`group.protocol=consumer`, run as processes through the recording proxy, in scenarios of
members joining one by one, leaving, crashing (their session expires) and a static member
restarting.

A scenario is a list of steps over named members; after each step that changes the group it
waits until the group has settled (every partition held by exactly one running member, every
running member holding one when there are enough). The trace's header carries the broker's
classic settings and its consumer-protocol ones with the topics' ids
(`TraceHeader.consumer_groups`), which the consumer-protocol oracle judges with.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from groupspec.record.kafka.broker import KafkaBroker
from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.wire.address import Address
from groupspec.wire.trace_format import TraceHeader

from .java_client import java_client_command

CLIENTS = ("confluent", "java")
PARTITIONS = 4
# How long a step may take to settle: a crashed member is fenced after the 6 s session
# (record/kafka/settings.py), then the others reconcile in a few heartbeats.
SETTLE_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
TOPIC_TIMEOUT_S = 30.0
# How long a new topic takes to reach the group coordinator's own metadata image after it is
# described: a group subscribing before then is first assigned nothing, then rebalanced when
# the topic appears, a topic-metadata change the specification does not model (docs/kafka.md,
# the probes' topic; one campaign run met it as a divergence).
TOPIC_PROPAGATION_S = 1.0
# How often the scenario's producer writes a record to each topic (`Trickle`).
PRODUCE_EVERY_S = 0.2


class ScenarioError(Exception):
    """A scenario that could not run to its end (a client that did not start or settle)."""


@dataclass(frozen=True)
class Step:
    """`start` a member (from its client), `stop` it (SIGTERM: it leaves), `kill` it
    (SIGKILL: its session expires) or `resubscribe` it (SIGHUP: it subscribes to the
    scenario's second topic instead of its first)."""

    action: str
    member: str
    instance_id: str = ""
    # A member started with the classic protocol (group.protocol=classic) joins the consumer
    # group as a classic member (Kafka 4.x translates its JoinGroup onto the group).
    classic: bool = False
    # Wait for the group to settle after the step; a static member that leaves keeps its
    # partitions until its session expires, so its restart comes before the group settles.
    settle: bool = True


@dataclass(frozen=True)
class Scenario:
    """A named list of steps over one group, whose members subscribe to the first topic (and
    move to the second when resubscribed)."""

    name: str
    steps: tuple[Step, ...]
    topics: tuple[str, ...] = ("orders",)


SCENARIOS = {
    s.name: s
    for s in (
        Scenario(
            "membership",
            (
                Step("start", "a"),
                Step("start", "b"),
                Step("start", "c"),
                Step("stop", "b"),
                Step("kill", "c"),
                Step("stop", "a"),
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
        Scenario(
            # A classic consumer joins the consumer group and leaves it again; the group stays a
            # consumer group throughout (its last member speaks the consumer protocol).
            "mixed",
            (
                Step("start", "a"),
                Step("start", "k", classic=True),
                Step("stop", "k"),
                Step("stop", "a"),
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
    )
}


@dataclass
class _Member:
    name: str
    process: subprocess.Popen[str]
    assigned: frozenset[int] | None = None
    topics: frozenset[str] = frozenset()
    subscribed: threading.Event = field(default_factory=threading.Event)
    closed: bool = False
    lines: list[str] = field(default_factory=list)


def _consumer_command(
    client: str,
    bootstrap: str,
    group: str,
    topic: str,
    then_topic: str,
    instance_id: str,
    classic: bool = False,
) -> list[str]:
    # A classic member hands partitions over incrementally (cooperative-sticky), as a consumer
    # migrating to the consumer protocol would; an eager one gives everything up at each rejoin.
    flags = (
        ["--group-protocol=classic", "--assignor=cooperative-sticky"]
        if classic
        else ["--group-protocol=consumer"]
    )
    if then_topic:
        flags.append(f"--then-topic={then_topic}")
    if instance_id:
        flags.append(f"--instance-id={instance_id}")
    if client == "java":
        return java_client_command("consume", bootstrap, group, topic, *flags)
    module = "groupspec.record.workload.consumer"
    return [sys.executable, "-m", module, client, bootstrap, group, topic, *flags]


@dataclass
class ConsumerGroupRun:
    """One scenario's consumers against one bootstrap address (the recording proxy)."""

    client: str
    bootstrap: str
    group: str
    topic: str
    then_topic: str = ""
    members: dict[str, _Member] = field(default_factory=dict)

    def start(self, name: str, instance_id: str, classic: bool = False) -> None:
        """Start member `name` (a classic-protocol consumer if `classic`)."""
        command = _consumer_command(
            self.client,
            self.bootstrap,
            self.group,
            self.topic,
            self.then_topic,
            instance_id,
            classic,
        )
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=_hangup_handled_by_default,
        )
        member = _Member(name, process)
        self.members[name] = member
        threading.Thread(target=self._read, args=(member,), daemon=True).start()

    def stop(self, name: str, kill: bool = False) -> None:
        """Stop member `name`: SIGTERM (it leaves the group) or SIGKILL (it vanishes)."""
        member = self.members.pop(name)
        member.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            member.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            member.process.kill()
            member.process.wait()
            raise ScenarioError(f"{self.client} member {name} did not close") from None

    def resubscribe(self, name: str) -> None:
        """Move member `name` to the second topic; once every member has moved, the group
        settles on that topic."""
        member = self.members[name]
        member.process.send_signal(signal.SIGHUP)
        if not member.subscribed.wait(STOP_TIMEOUT_S):
            raise ScenarioError(f"{self.client} member {name} did not resubscribe")
        if all(m.subscribed.is_set() for m in self.members.values()):
            self.topic = self.then_topic

    def settle(self) -> None:
        """Wait until every partition is held by one running member (see the module)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._settled():
                return
            for member in self.members.values():
                if member.process.poll() is not None:
                    raise ScenarioError(
                        f"{self.client} member {member.name} exited: {member.lines[-3:]}"
                    )
            time.sleep(0.1)
        held = {m.name: sorted(m.assigned or ()) for m in self.members.values()}
        raise ScenarioError(f"{self.client}: the group did not settle: {held}")

    def close(self) -> None:
        """Kill what is still running."""
        for name in list(self.members):
            member = self.members.pop(name)
            member.process.kill()
            member.process.wait()

    def _settled(self) -> bool:
        running = list(self.members.values())
        if not running:
            return True
        held = [m.assigned for m in running]
        if any(h is None for h in held):
            return False
        if any(m.topics - {self.topic} for m in running):
            return False
        sets = [h for h in held if h is not None]
        every = [p for h in sets for p in h]
        if sorted(every) != list(range(PARTITIONS)):
            return False
        return len(running) > PARTITIONS or all(sets)

    @staticmethod
    def _read(member: _Member) -> None:
        stream: IO[str] | None = member.process.stdout
        assert stream is not None
        for line in stream:
            member.lines.append(line.strip())
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("ev") == "assigned":
                member.assigned = frozenset(event["partitions"])
                member.topics = frozenset(event.get("topics", ()))
            elif event.get("ev") == "subscribed":
                member.subscribed.set()


@dataclass
class Trickle:
    """Writes a record to each of `topics` every `every_s`, round the partitions, from `start`
    until `stop`: the consumers then consume and commit (OffsetCommit at their member epoch),
    and fetch the offsets of the partitions they take over."""

    bootstrap: str
    topics: tuple[str, ...]
    every_s: float = PRODUCE_EVERY_S

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        """Start writing, on a thread of its own."""
        self._thread.start()

    def stop(self) -> None:
        """Stop writing and wait for the records in flight."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "log_level": 3})
        n = 0
        while not self._stop.wait(self.every_s):
            for topic in self.topics:
                producer.produce(topic, value=f"r{n}".encode(), partition=n % PARTITIONS)
            producer.poll(0)
            n += 1
        producer.flush(STOP_TIMEOUT_S)


def topic_ids(bootstrap: str, names: tuple[str, ...]) -> dict[str, str]:
    """The topic id of each topic, as a UUID's text (how a trace spells it)."""
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    ids = {}
    for name in names:
        described = _described_topic(admin, name, TopicCollection)
        raw = described.topic_id
        high = raw.get_most_significant_bits() & (2**64 - 1)
        low = raw.get_least_significant_bits() & (2**64 - 1)
        ids[name] = str(uuid.UUID(int=(high << 64) | low))
    return ids


def _described_topic(admin: Any, name: str, collection: Any) -> Any:
    """The description of a topic just created: the broker knows it once its metadata has
    propagated, which may take a moment after CreateTopics answered."""
    from confluent_kafka import KafkaError, KafkaException

    deadline = time.monotonic() + TOPIC_TIMEOUT_S
    while True:
        try:
            return admin.describe_topics(collection([name]))[name].result(30)
        except KafkaException as error:
            unknown = error.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
            if not unknown or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def create_topics(bootstrap: str, names: tuple[str, ...]) -> None:
    """Create each topic with PARTITIONS partitions."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names])
    for future in futures.values():
        future.result(30)


def record_scenario(
    broker: KafkaBroker, client: str, scenario: Scenario, folder: Path, tag: str = ""
) -> Path:
    """Run `scenario` with `client`'s consumers through a recording proxy in front of `broker`;
    the trace's path. Raises ScenarioError if it cannot run to its end (the trace is kept)."""
    suffix = tag or uuid.uuid4().hex[:8]
    group = f"cp-{client}-{scenario.name}-{suffix}"
    topics = tuple(f"{t}-{suffix}" for t in scenario.topics)
    create_topics(broker.bootstrap, topics)
    ids = topic_ids(broker.bootstrap, topics)
    time.sleep(TOPIC_PROPAGATION_S)
    header = TraceHeader(
        broker.describe(),
        broker.header_settings(),
        broker.consumer_group_header(
            [{"name": t, "topic_id": ids[t], "partitions": PARTITIONS} for t in topics]
        ),
    )
    path = folder / f"{client}-{scenario.name}.jsonl"
    recorder = RecorderThread(
        ProxyConfig(Address("127.0.0.1", 0), broker.address, advertise_self=True), path, header
    ).start()
    then_topic = topics[1] if len(topics) > 1 else ""
    run = ConsumerGroupRun(client, recorder.address, group, topics[0], then_topic)
    producer = Trickle(broker.bootstrap, topics)
    producer.start()
    try:
        play(run, scenario)
    finally:
        run.close()
        producer.stop()
        recorder.stop()
    return path


def _hangup_handled_by_default() -> None:
    # A runner started under nohup passes SIGHUP on ignored, and a JVM whose SIGHUP is ignored
    # keeps it so (sun.misc.Signal.handle is refused): the subscription change never arrives.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def play(run: ConsumerGroupRun, scenario: Scenario) -> None:
    """Take `scenario`'s steps with `run`'s consumers, settling where a step says."""
    for step in scenario.steps:
        if step.action == "start":
            run.start(step.member, step.instance_id, step.classic)
        elif step.action == "resubscribe":
            run.resubscribe(step.member)
        else:
            run.stop(step.member, kill=step.action == "kill")
        if step.settle:
            run.settle()
