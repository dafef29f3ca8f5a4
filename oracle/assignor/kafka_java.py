"""Apache Kafka's own assignors (kafka-clients' RangeAssignor, RoundRobinAssignor,
StickyAssignor, CooperativeStickyAssignor), run by `KafkaAssignors.java` (beside this module) in
one JVM that assigns one group per JSON line.

`KafkaAssignorHarness(java, libs)` starts the JVM with Java 17's source launcher, the class path
taken from a Kafka release's jar folder `libs` (the caller finds both: `record/kafka/install.py`
resolves and caches the jars; this floor does not import it). `assign(name, group)` hands
Kafka's assignor `name` the group as the consumer's leader would (a HashMap of subscriptions,
instance ids set, a fresh assignor instance) and returns its assignment; an exception Kafka's
assignor throws comes back as `KafkaAssignorError`.
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from groupspec.spec.assignment import GroupAssignment, GroupSubscription
from groupspec.vocabulary.requests import TopicPartition

HARNESS = "KafkaAssignors.java"
KAFKA_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
# kafka-clients, the logging API it calls (no binding: nothing is logged), and Jackson for the
# harness's JSON; all of them are among the jars of Kafka's broker.
HARNESS_JARS = (
    "kafka-clients-",
    "slf4j-api-",
    "jackson-databind-",
    "jackson-core-",
    "jackson-annotations-",
)
# Thousands of small groups: the C1 compiler alone starts the JVM (and compiles the source)
# faster, and the whole run is shorter than C2 would need to pay for itself.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m")
STOP_WAIT_S = 30.0


class KafkaAssignorError(Exception):
    """Kafka's assignor threw on this group; the message is Java's exception and its text."""


class HarnessError(RuntimeError):
    """The harness process is not there or did not answer (its standard error included)."""


def harness_classpath(libs: Path) -> str:
    """The harness's class path out of a Kafka release's jar folder `libs`."""
    jars = sorted(str(jar) for jar in libs.glob("*.jar") if jar.name.startswith(HARNESS_JARS))
    found = {prefix for prefix in HARNESS_JARS for jar in jars if Path(jar).name.startswith(prefix)}
    missing = [prefix.rstrip("-") for prefix in HARNESS_JARS if prefix not in found]
    if missing:
        raise HarnessError(f"{libs} has no {', '.join(missing)} jar")
    return ":".join(jars)


def group_request(assignor: str, group: GroupSubscription) -> dict[str, Any]:
    """The harness's JSON for `assignor` on `group`."""
    return {
        "assignor": assignor,
        "partitions": dict(group.cluster.partitions_per_topic),
        "members": [
            {
                "id": member.member_id,
                "topics": list(member.subscription.topics),
                "owned": [[tp.topic, tp.partition] for tp in member.subscription.owned_partitions],
                "generation": member.subscription.generation,
                "instance": member.group_instance_id,
                "user_data": None
                if member.subscription.user_data is None
                else base64.b64encode(member.subscription.user_data).decode("ascii"),
            }
            for member in group.members
        ],
    }


def assignment_from(answer: dict[str, Any]) -> GroupAssignment:
    """A harness answer's assignment (KafkaAssignorError if Kafka's assignor threw)."""
    if "error" in answer:
        raise KafkaAssignorError(answer["error"])
    return GroupAssignment.of(
        {
            member_id: [TopicPartition(topic, number) for topic, number in partitions]
            for member_id, partitions in answer["assignment"].items()
        }
    )


class KafkaAssignorHarness:
    """One JVM running `KafkaAssignors.java`; a context manager that stops it on exit."""

    def __init__(self, java: str, libs: Path) -> None:
        source = resources.files(__package__) / HARNESS
        # Java's standard error (its compiler's and the JVM's messages) goes to a file read
        # back when something fails; a pipe nobody reads could fill up and stall it.
        self._errors: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._process = subprocess.Popen(
            [java, *JVM_OPTIONS, "-cp", harness_classpath(libs), str(source)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
            encoding="utf-8",
        )

    def assign(self, assignor: str, group: GroupSubscription) -> GroupAssignment:
        """Kafka's `assignor` on `group` (KafkaAssignorError if it throws)."""
        return assignment_from(self.ask(group_request(assignor, group)))

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request line, one answer line (HarnessError if the process is gone)."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise HarnessError(
                f"the Kafka assignor harness stopped (exit {self._process.poll()}): "
                f"{self._stderr_tail()}"
            )
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _stderr_tail(self) -> str:
        self._errors.seek(0)
        return " | ".join(self._errors.read().strip().splitlines()[-10:])

    def close(self) -> None:
        """Stop the JVM (its standard input closed, it ends by itself)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._errors.close()

    def __enter__(self) -> KafkaAssignorHarness:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
