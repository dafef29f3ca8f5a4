"""The group scenarios every real client runs against `groupspec serve` (see docs/serve.md).

Three consumers share a 6-partition topic (clean run: every record exactly once, offsets
committed), a fourth joins, one stops, one is killed (its partitions move after its session
timeout), and the committed offsets survive a server restart.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from kafka import KafkaAdminClient, KafkaProducer
from serve_support import Member, ServerThread, wait_until

PARTITIONS = 6
STABLE_S = 1.0


def produce(bootstrap: str, topic: str, tag: str, count: int) -> list[str]:
    """Send `count` records round-robin over the partitions; returns their values."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    values = [f"{tag}-{i}" for i in range(count)]
    for i, value in enumerate(values):
        producer.send(topic, value=value.encode(), partition=i % PARTITIONS)
    producer.flush(30)
    producer.close()
    return values


def consumed(members: list[Member]) -> Counter[str]:
    return Counter(value for m in members for _, _, value in m.snapshot())


def wait_balanced(live: list[Member], everyone: list[Member]) -> None:
    """Until the live members' assignments are disjoint, non-empty and cover every partition
    for a while (dead members' last reports are ignored)."""

    def balanced() -> bool:
        sets = [m.assignment for m in live]
        if not all(m.ready and m.alive for m in live) or not all(sets):
            return False
        union = frozenset().union(*sets)
        return union == frozenset(range(PARTITIONS)) and sum(map(len, sets)) == PARTITIONS

    since: list[float] = []

    def stably_balanced() -> bool:
        if not balanced():
            since.clear()
            return False
        if not since:
            since.append(time.monotonic())
        return time.monotonic() - since[0] >= STABLE_S

    try:
        wait_until(stably_balanced, f"a balanced assignment over {len(live)} members")
    except AssertionError:
        report = "\n".join(f"--- {m.name}: {sorted(m.assignment)}\n{m.tail()}" for m in everyone)
        raise AssertionError(f"no balanced assignment over {len(live)} members\n{report}") from None


def committed(bootstrap: str, group: str) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        offsets = admin.list_group_offsets(group)[group]
    finally:
        admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items()}


def run_group_scenario(
    server: ServerThread,
    make_member: Callable[[str], Member],
    topic: str,
    group: str,
    *,
    kill: bool = True,
) -> None:
    """The whole scenario; raises AssertionError with the members' output on failure."""
    bootstrap = server.bootstrap
    members = [make_member(f"m{i}") for i in range(3)]
    everyone = list(members)
    try:
        wait_balanced(members, everyone)

        # A clean run: every record consumed exactly once, every offset committed.
        first = produce(bootstrap, topic, "a", 60)
        wait_until(lambda: set(first) <= set(consumed(everyone)), "the first 60 records")
        counts = consumed(everyone)
        assert all(counts[v] == 1 for v in first), {v: counts[v] for v in first if counts[v] != 1}
        wait_until(
            lambda: committed(bootstrap, group) == dict.fromkeys(range(PARTITIONS), 10),
            "offsets 10 committed on every partition",
        )

        # A fourth member joins: four members share the six partitions.
        members.append(make_member("m3"))
        everyone.append(members[-1])
        wait_balanced(members, everyone)
        second = produce(bootstrap, topic, "b", 24)
        wait_until(lambda: set(second) <= set(consumed(everyone)), "the records after a join")

        # One member stops: the other three take its partitions.
        members.pop(0).stop()
        wait_balanced(members, everyone)
        third = produce(bootstrap, topic, "c", 24)
        wait_until(lambda: set(third) <= set(consumed(everyone)), "the records after a stop")

        if kill:
            # One member is killed: its partitions move once its session times out.
            members.pop(0).kill()
            wait_balanced(members, everyone)
            fourth = produce(bootstrap, topic, "d", 24)
            wait_until(lambda: set(fourth) <= set(consumed(everyone)), "the records after a kill")

        total = 60 + 24 + 24 + (24 if kill else 0)
        expected = dict.fromkeys(range(PARTITIONS), total // PARTITIONS)
        wait_until(lambda: committed(bootstrap, group) == expected, "every offset committed")
    finally:
        for member in members:
            member.stop()
        for member in everyone:
            member.kill()

    # Committed offsets survive a restart (the coordinator reloads the offsets file).
    server.restart()
    assert committed(server.bootstrap, group) == expected
