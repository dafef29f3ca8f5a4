"""The named group scenarios a workload runs, each with real consumer processes.

- `dynamic`: three consumers join and consume with commits; a fourth joins; one leaves
  (LeaveGroup); one is killed (its session expires); an admin client describes and lists the
  groups and fetches the offsets.
- `static`: three static members (group.instance.id) join and consume; one restarts with its
  instance id (a static rejoin); one is killed (session expiry); the admin step.
- `cooperative`: `dynamic` with the cooperative-sticky assignor (incremental rebalances).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .admins import GroupAdmin, admin_step
from .members import Member, java_member, python_member
from .steps import produce, wait_balanced, wait_committed, wait_consumed

ALL_CLIENTS = frozenset({"kafka-python", "aiokafka", "confluent", "java"})
RECORDS_PER_PARTITION = 6  # each batch: this many records on every partition (first: twice)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario's name, what it does, and how its consumers are configured."""

    name: str
    summary: str
    assignor: str = "range"
    static: bool = False
    clients: frozenset[str] = ALL_CLIENTS


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario(
            "dynamic",
            "3 consumers join and commit; a 4th joins; one leaves; one is killed; admin calls",
        ),
        Scenario(
            "static",
            "3 static members join and commit; one restarts with its instance id; one is "
            "killed; admin calls",
            static=True,
        ),
        Scenario(
            "cooperative",
            "dynamic, with the cooperative-sticky assignor",
            assignor="cooperative-sticky",
            clients=ALL_CLIENTS - {"aiokafka"},  # aiokafka has no cooperative assignor
        ),
    )
}


@dataclass
class GroupRun:
    """One scenario's group: where it runs and what it has produced so far."""

    client: str
    bootstrap: str
    group: str
    topic: str
    partitions: int
    scenario: Scenario
    consumer_options: dict[str, str] = field(default_factory=dict)
    producer_options: dict[str, Any] = field(default_factory=dict)
    expected: Counter[int] = field(default_factory=Counter)
    members: list[Member] = field(default_factory=list)
    everyone: list[Member] = field(default_factory=list)

    def join(self, name: str, instance_id: str = "") -> Member:
        """Start a consumer process named `name` (a static member if `instance_id`)."""
        options = {"assignor": self.scenario.assignor}
        if instance_id:
            options["instance_id"] = instance_id
        if self.client == "java":  # Kafka's own consumer needs none of kafka-python's options
            member = java_member(name, self.bootstrap, self.group, self.topic, **options)
        else:
            options.update(self.consumer_options)
            member = python_member(
                name, self.client, self.bootstrap, self.group, self.topic, **options
            )
        self.members.append(member)
        self.everyone.append(member)
        return member

    def balanced(self) -> None:
        """Wait until the live members share every partition."""
        wait_balanced(self.members, self.everyone, self.partitions)

    def batch(self, tag: str, per_partition: int = RECORDS_PER_PARTITION) -> None:
        """Produce `per_partition` records on every partition; wait until all are read."""
        count = per_partition * self.partitions
        values = produce(
            self.bootstrap, self.topic, tag, count, self.partitions, **self.producer_options
        )
        for partition in range(self.partitions):
            self.expected[partition] += per_partition
        wait_consumed(values, self.everyone, f"the {tag!r} records")

    def committed(self, what: str) -> None:
        """Wait until every record produced so far is committed."""
        wait_committed(self.everyone, dict(self.expected), what)

    def end(self) -> None:
        """Stop the live members (gracefully), then make sure every process is gone."""
        for member in self.members:
            member.stop()
        for member in self.everyone:
            member.kill()


def run_scenario(run: GroupRun, admin: GroupAdmin) -> list[str]:
    """Run `run.scenario`; returns the admin step's lines. Raises WorkloadError (with the
    members' output) if a step does not happen."""
    try:
        if run.scenario.static:
            _static(run)
        else:
            _dynamic(run)
        run.committed("every record committed")
        return admin_step(admin, run.group)
    finally:
        run.end()


def _dynamic(run: GroupRun) -> None:
    for i in range(3):
        run.join(f"m{i}")
    run.balanced()
    run.batch("a", 2 * RECORDS_PER_PARTITION)
    run.committed("the first records committed")
    run.join("m3")  # a member joins
    run.balanced()
    run.batch("b")
    run.members.pop(0).stop()  # one leaves cleanly (LeaveGroup)
    run.balanced()
    run.batch("c")
    run.members.pop(0).kill()  # one dies: its session expires
    run.balanced()
    run.batch("d")


def _static(run: GroupRun) -> None:
    instance = [f"{run.group}-s{i}" for i in range(3)]
    for i in range(3):
        run.join(f"s{i}", instance[i])
    run.balanced()
    run.batch("a", 2 * RECORDS_PER_PARTITION)
    run.committed("the first records committed")
    run.members.pop(0).stop()  # a static member closes (no LeaveGroup) ...
    run.join("s0-again", instance[0])  # ... and comes back with its instance id
    run.balanced()
    run.batch("b")
    run.members.pop(0).kill()  # s1 dies: its session expires
    run.balanced()
    run.batch("c")
