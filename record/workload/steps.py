"""The building blocks of a group scenario: produce records, wait for a balanced assignment,
for records to be read, for offsets to be committed."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .members import Member, WorkloadError, wait_until

STABLE_S = 1.0  # how long an assignment must hold to count as settled


def produce(
    bootstrap: str, topic: str, tag: str, count: int, partitions: int, **options: Any
) -> list[str]:
    """Send `count` records `tag-0`, `tag-1`, ... round-robin over the partitions with a
    kafka-python producer (`options` go to it); returns their values."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, **options)
    values = [f"{tag}-{i}" for i in range(count)]
    try:
        for i, value in enumerate(values):
            producer.send(topic, value=value.encode(), partition=i % partitions)
        producer.flush(30)
    finally:
        producer.close()
    return values


def consumed(members: Iterable[Member]) -> Counter[str]:
    """How many times each value was read, over `members`."""
    return Counter(value for m in members for _, _, value in m.snapshot())


def wait_consumed(values: list[str], everyone: list[Member], what: str) -> None:
    """Until every value in `values` was read by some member."""
    wanted = set(values)
    wait_until(lambda: wanted <= set(consumed(everyone)), what)


def wait_committed(everyone: list[Member], expected: dict[int, int], what: str) -> None:
    """Until the highest offset members committed on each partition is `expected`'s."""

    def done() -> bool:
        highest: dict[int, int] = {}
        for member in everyone:
            for partition, offset in member.commits().items():
                highest[partition] = max(offset, highest.get(partition, offset))
        return highest == expected

    wait_until(done, what)


def wait_balanced(live: list[Member], everyone: list[Member], partitions: int) -> None:
    """Until the live members' assignments are disjoint, non-empty and cover every partition
    for STABLE_S (dead members' last reports are ignored); on failure the error holds every
    member's last output."""

    def balanced() -> bool:
        sets = [m.assignment for m in live]
        if not all(m.ready and m.alive for m in live) or not all(sets):
            return False
        union = frozenset().union(*sets)
        return union == frozenset(range(partitions)) and sum(map(len, sets)) == partitions

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
    except WorkloadError:
        report = "\n".join(f"--- {m.name}: {sorted(m.assignment)}\n{m.tail()}" for m in everyone)
        raise WorkloadError(f"no balanced assignment over {len(live)} members\n{report}") from None
