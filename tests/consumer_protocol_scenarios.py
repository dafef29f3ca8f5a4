"""Real consumers of KIP-848's protocol, end to end against one broker (Apache Kafka 4.x or
`groupspec serve`): confluent-kafka and Kafka's Java consumer with `group.protocol=consumer`
consume records exactly once while members join one by one, leave, restart as the same static
member, crash, and change their subscription (docs/serve.md, "End-to-end tests of the consumer
protocol (KIP-848)").

Each consumer runs with `--callbacks` (record/workload/consumer.py, JavaClient.java): it says
when a rebalance callback starts to hold partitions and when one has committed what was read and
given partitions up, with CLOCK_MONOTONIC times that compare across processes. From those the
run checks that no partition is ever held by two consumers at once; from the records read, that
every record produced was read exactly once.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from groupspec.record.workload.consumer_protocol import PARTITIONS  # create_topics' count
from groupspec.record.workload.java_client import java_client_command
from groupspec.record.workload.members import CONSUMER_MODULE, WorkloadError, parse_json_line
from groupspec.record.workload.steps import produce

CLIENTS = ("confluent", "java")
CONSUMER, CLASSIC = "consumer", "classic"
RECORDS_PER_STEP = 16
STEPS = 7  # steps of `run_exactly_once` that produce records
MIXED_STEPS = 5  # of `run_mixed`
WAIT_S = 90.0  # a ceiling against hangs (a crash is fenced after a 6 s session), never a verdict
STABLE_S = 1.0  # how long a hand-out must hold to count as settled
STOP_WAIT_S = 60.0
# Hand-overs between consumers every run makes at least: in `run_exactly_once` b's join, s's
# join, b's leave, a's crash and c's join each move one or more (the static member's restart
# gives its partitions back to itself); in `run_mixed` j's join, k's join and leave, j's leave.
MIN_HAND_OVERS = 5

TopicPartition = tuple[str, int]


@dataclass
class Holding:
    """One consumer holding one partition from `start` to `end` (CLOCK_MONOTONIC ns)."""

    member: str
    start: int
    end: int | None = None


@dataclass
class Consumer:
    """A consumer process with `--callbacks`, and what it said."""

    name: str
    process: subprocess.Popen[str]
    holdings: dict[TopicPartition, list[Holding]] = field(default_factory=dict)
    values: list[str] = field(default_factory=list)
    read: list[tuple[int, int]] = field(default_factory=list)
    committed: dict[int, int] = field(default_factory=dict)
    subscribed: threading.Event = field(default_factory=threading.Event)
    lines: list[str] = field(default_factory=list)
    exited_ns: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def held(self) -> frozenset[TopicPartition]:
        """The partitions it holds now, as its callbacks said."""
        with self.lock:
            return frozenset(
                tp for tp, spans in self.holdings.items() if spans and spans[-1].end is None
            )

    def take(self, line: str) -> None:
        """Read one line of its output."""
        self.lines.append(line.rstrip("\n"))
        event = parse_json_line(line)
        if event is None:
            return
        with self.lock:
            kind = event["ev"]
            if kind == "gained":
                for topic, partition in event["tps"]:
                    spans = self.holdings.setdefault((topic, partition), [])
                    spans.append(Holding(self.name, int(event["t"])))
            elif kind == "released":
                for topic, partition in event["tps"]:
                    spans = self.holdings.get((topic, partition), [])
                    if spans and spans[-1].end is None:
                        spans[-1].end = int(event["t"])
            elif kind == "record":
                self.values.append(str(event["v"]))
                self.read.append((int(event["p"]), int(event["o"])))
            elif kind == "committed":
                for partition, offset in event["offsets"].items():
                    self.committed[int(partition)] = int(offset)
            elif kind == "subscribed":
                self.subscribed.set()

    def finished(self) -> None:
        """The process has exited: whatever it still held, it held until now."""
        self.exited_ns = time.monotonic_ns()
        with self.lock:
            for spans in self.holdings.values():
                if spans and spans[-1].end is None:
                    spans[-1].end = self.exited_ns

    def tail(self) -> str:
        """Its last lines, for a failure's report."""
        return "\n".join(self.lines[-25:])


def _command(
    client: str,
    bootstrap: str,
    group: str,
    topic: str,
    then_topic: str,
    instance_id: str,
    protocol: str,
) -> list[str]:
    flags = [f"--group-protocol={protocol}", "--callbacks", f"--then-topic={then_topic}"]
    if protocol == CLASSIC:
        # Incremental hand-overs, as the callbacks make them (an eager classic member would
        # give everything up at each rebalance).
        flags.append("--assignor=cooperative-sticky")
    if instance_id:
        flags.append(f"--instance-id={instance_id}")
    if client == "java":
        return java_client_command("consume", bootstrap, group, topic, *flags)
    return [sys.executable, "-m", CONSUMER_MODULE, client, bootstrap, group, topic, *flags]


def _hangup_handled_by_default() -> None:
    # Under nohup SIGHUP is inherited ignored, and a JVM keeps it so: the subscription change
    # would never arrive (as record/workload/consumer_protocol.py says).
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@dataclass
class ExactlyOnceRun:
    """One client's consumers in one group over two topics of PARTITIONS partitions each."""

    client: str
    bootstrap: str
    group: str
    topics: tuple[str, str]
    live: dict[str, Consumer] = field(default_factory=dict)
    everyone: list[Consumer] = field(default_factory=list)
    produced: list[str] = field(default_factory=list)
    produce_steps: int = 0
    topic: str = ""

    def __post_init__(self) -> None:
        self.topic = self.topics[0]

    # -- steps ------------------------------------------------------------------------------

    def start(
        self, name: str, instance_id: str = "", client: str = "", protocol: str = CONSUMER
    ) -> None:
        """Start consumer `name` (static if `instance_id`) of `client` (the run's by default)
        speaking `protocol`'s group protocol."""
        command = _command(
            client or self.client,
            self.bootstrap,
            self.group,
            self.topic,
            self.topics[1],
            instance_id,
            protocol,
        )
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_hangup_handled_by_default,
        )
        consumer = Consumer(name, process)
        self.live[name] = consumer
        self.everyone.append(consumer)
        threading.Thread(target=self._read, args=(consumer,), daemon=True).start()

    def stop(self, name: str) -> None:
        """SIGTERM: the consumer revokes, commits and leaves (a static one leaves for now)."""
        consumer = self.live.pop(name)
        consumer.process.send_signal(signal.SIGTERM)
        try:
            consumer.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            consumer.process.kill()
            consumer.process.wait()
            raise WorkloadError(f"{self.client} consumer {name} did not close") from None
        self._join_reader(consumer)

    def kill(self, name: str) -> None:
        """SIGKILL once it has committed all it read: its session expires on the broker."""
        consumer = self.live[name]
        self._wait(lambda: self._committed_all(consumer), f"{name} to commit what it read")
        self.live.pop(name)
        consumer.process.kill()
        consumer.process.wait()
        self._join_reader(consumer)

    def resubscribe(self) -> None:
        """Move every live consumer to the second topic (SIGHUP)."""
        for consumer in self.live.values():
            consumer.process.send_signal(signal.SIGHUP)
        for consumer in self.live.values():
            self._wait(consumer.subscribed.is_set, f"{consumer.name} to resubscribe")
        self.topic = self.topics[1]

    def produce_and_consume(self, tag: str) -> None:
        """Produce RECORDS_PER_STEP records to the current topic; wait until all were read."""
        values = produce(self.bootstrap, self.topic, tag, RECORDS_PER_STEP, PARTITIONS)
        self.produced.extend(values)
        self.produce_steps += 1
        wanted = set(values)
        self._wait(lambda: wanted <= set(self._counts()), f"the records {tag}-* to be read")

    def settle(self) -> None:
        """Until every partition of the current topic is held by exactly one live consumer,
        each live consumer holding one when there are enough, for STABLE_S."""
        since: list[float] = []

        def settled() -> bool:
            if not self._handed_out():
                since.clear()
                return False
            since[:] = since or [time.monotonic()]
            return time.monotonic() - since[0] >= STABLE_S

        self._wait(settled, f"a hand-out over {sorted(self.live)}")

    def close(self) -> None:
        """Stop every live consumer (SIGTERM), then kill any left."""
        for name in list(self.live):
            self.stop(name)
        for consumer in self.everyone:
            if consumer.process.poll() is None:
                consumer.process.kill()
                consumer.process.wait()
                self._join_reader(consumer)

    # -- verdicts ---------------------------------------------------------------------------

    def _spans(self) -> dict[TopicPartition, list[Holding]]:
        """Every partition's holdings, in the order they started."""
        spans: dict[TopicPartition, list[Holding]] = {}
        for consumer in self.everyone:
            with consumer.lock:
                for tp, held in consumer.holdings.items():
                    spans.setdefault(tp, []).extend(held)
        return {tp: sorted(held, key=lambda h: h.start) for tp, held in sorted(spans.items())}

    def hand_overs(self) -> list[float]:
        """The gap (ms) between each release and the next consumer's gain of that partition,
        for every partition that moved between two consumers."""
        gaps = []
        for held in self._spans().values():
            for before, after in itertools.pairwise(held):
                if before.member != after.member and before.end is not None:
                    gaps.append((after.start - before.end) / 1e6)
        return gaps

    def twice_held(self) -> list[str]:
        """Every moment two consumers held one partition at once (empty when none did)."""
        found = []
        for tp, ordered in self._spans().items():
            for before, after in itertools.pairwise(ordered):
                end = before.end if before.end is not None else time.monotonic_ns()
                if after.start < end:
                    overlap_ms = (end - after.start) / 1e6
                    found.append(
                        f"{tp[0]}[{tp[1]}] held by {before.member} and {after.member} at once "
                        f"for {overlap_ms:.1f} ms"
                    )
        return found

    def not_read_once(self) -> dict[str, int]:
        """Each record produced that was not read exactly once, with how often it was read
        (a value read that was never produced counts too)."""
        counts = self._counts()
        wrong = {v: counts[v] for v in self.produced if counts[v] != 1}
        wrong.update({v: n for v, n in counts.items() if v not in set(self.produced)})
        return wrong

    def report(self) -> str:
        """Every consumer's held partitions and last lines (for a failure's message)."""
        return "\n".join(f"--- {c.name}: {sorted(c.held())}\n{c.tail()}" for c in self.everyone)

    # -- internals --------------------------------------------------------------------------

    def _counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for consumer in self.everyone:
            with consumer.lock:
                counts.update(consumer.values)
        return counts

    def _handed_out(self) -> bool:
        live = list(self.live.values())
        if not live or any(c.process.poll() is not None for c in live):
            return False
        held = [c.held() for c in live]
        every = [tp for h in held for tp in h]
        wanted = [(self.topic, p) for p in range(PARTITIONS)]
        if sorted(every) != wanted:
            return False
        return len(live) > PARTITIONS or all(held)

    @staticmethod
    def _committed_all(consumer: Consumer) -> bool:
        with consumer.lock:
            return all(consumer.committed.get(p, -1) > o for p, o in consumer.read)

    def _wait(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.05)
        raise WorkloadError(f"{self.client}: timed out waiting for {what}\n{self.report()}")

    @staticmethod
    def _read(consumer: Consumer) -> None:
        assert consumer.process.stdout is not None
        for line in consumer.process.stdout:
            consumer.take(line)
        consumer.process.wait()
        consumer.finished()

    @staticmethod
    def _join_reader(consumer: Consumer) -> None:
        deadline = time.monotonic() + 10
        while consumer.exited_ns is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if consumer.exited_ns is None:
            consumer.finished()


def run_exactly_once(
    client: str, bootstrap: str, group: str, topics: tuple[str, str]
) -> ExactlyOnceRun:
    """The whole scenario with `client`'s consumers; the run, for its verdicts. Raises
    WorkloadError (with every consumer's last lines) if a step does not happen."""
    run = ExactlyOnceRun(client, bootstrap, group, topics)
    try:
        run.start("a")
        run.settle()
        run.produce_and_consume("one")
        run.start("b")  # members join one by one
        run.settle()
        run.produce_and_consume("two")
        run.start("s", instance_id=f"{group}-static")
        run.settle()
        run.produce_and_consume("three")
        run.stop("b")  # a dynamic member leaves
        run.settle()
        run.produce_and_consume("four")
        run.stop("s")  # the static member leaves for now and comes back as itself
        run.start("s", instance_id=f"{group}-static")
        run.settle()
        run.produce_and_consume("five")
        run.kill("a")  # a crash: its partitions move once its session expires
        run.settle()
        run.produce_and_consume("six")
        run.start("c")
        run.settle()
        run.resubscribe()  # a subscription change: every member moves to the second topic
        run.settle()
        run.produce_and_consume("seven")
    finally:
        run.close()
    return run


def check_never_twice_held(run: ExactlyOnceRun) -> None:
    """Assert no partition was held twice at once, and that there were hand-overs to judge."""
    assert run.twice_held() == [], run.report()
    assert len(run.hand_overs()) >= MIN_HAND_OVERS, run.hand_overs()


def check_read_exactly_once(run: ExactlyOnceRun, steps: int) -> None:
    """Assert the run produced records at its `steps` steps and each was read exactly once."""
    assert run.produce_steps == steps
    assert len(run.produced) == steps * RECORDS_PER_STEP
    assert run.not_read_once() == {}, run.report()


RUNS = (*CLIENTS, "mixed")


def run_scenario(name: str, bootstrap: str, topics: tuple[str, str]) -> ExactlyOnceRun:
    """Run `name` (a client's `run_exactly_once`, or `mixed`) in group `eo-NAME`."""
    if name == "mixed":
        return run_mixed(bootstrap, f"eo-{name}", topics)
    return run_exactly_once(name, bootstrap, f"eo-{name}", topics)


def run_mixed(bootstrap: str, group: str, topics: tuple[str, str]) -> ExactlyOnceRun:
    """A mixed group: consumer-protocol members of both clients, and a classic confluent-kafka
    member (cooperative-sticky) that joins it and leaves. Raises WorkloadError if a step does
    not happen."""
    run = ExactlyOnceRun("mixed", bootstrap, group, topics)
    try:
        run.start("a", client="confluent")
        run.settle()
        run.produce_and_consume("one")
        run.start("j", client="java")
        run.settle()
        run.produce_and_consume("two")
        run.start("k", client="confluent", protocol=CLASSIC)  # a classic consumer joins
        run.settle()
        run.produce_and_consume("three")
        run.stop("k")
        run.settle()
        run.produce_and_consume("four")
        run.stop("j")
        run.settle()
        run.produce_and_consume("five")
    finally:
        run.close()
    return run
