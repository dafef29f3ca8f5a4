"""A binary heap of timer deadlines with lazy deletion.

Entries are never removed when a timer is re-armed or cancelled: the owner of a timer keeps a
reference to its current entry (or its current deadline), and an entry popped from the heap is
checked against that before it fires. Re-arming a heartbeat therefore costs a field write, not a
heap operation; stale entries are skipped when they surface and swept out by `compact` when they
pile up.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count

# What a timer entry is for; the coordinator dispatches on it when the entry surfaces.
HEARTBEAT = 0  # a member's session timer: target is the Member
PENDING = 1  # a pending member's join deadline: target is the member id
JOIN = 2  # a group's join timer: target is the JoinTimer
SYNC = 3  # a group's pending-sync timer: target is the SyncTimer
RETENTION = 4  # the coordinator-wide offset retention check: target is None

# (deadline_ms, sequence, kind, group or None, target). The sequence makes entries with equal
# deadlines pop in push order and keeps tuple comparison away from groups and targets.
Entry = tuple[int, int, int, object, object]


class TimerHeap:
    """Deadlines in push order among equals; stale entries are filtered by their owners."""

    __slots__ = ("_compacted_size", "_heap", "_sequence")

    def __init__(self) -> None:
        self._heap: list[Entry] = []
        self._sequence = count()
        self._compacted_size = 0

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, deadline_ms: int, kind: int, group: object, target: object) -> Entry:
        """Schedule an entry; returns it so the timer's owner can recognise it later."""
        entry = (deadline_ms, next(self._sequence), kind, group, target)
        heapq.heappush(self._heap, entry)
        return entry

    def entries(self) -> tuple[Entry, ...]:
        """Every entry in the heap, stale ones included, in no particular order."""
        return tuple(self._heap)

    def restore(self, entry: Entry) -> None:
        """Put back an entry popped earlier (same identity, so its owner still recognises it)."""
        heapq.heappush(self._heap, entry)

    def next_deadline(self) -> int | None:
        """The earliest deadline in the heap (possibly of a stale entry), or None if empty."""
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now_ms: int) -> Entry | None:
        """Remove and return the earliest entry if its deadline is at or before `now_ms`."""
        heap = self._heap
        if heap and heap[0][0] <= now_ms:
            return heapq.heappop(heap)
        return None

    def needs_compaction(self) -> bool:
        """Whether the heap has doubled since the last sweep (amortised O(1) per push)."""
        return len(self._heap) > 2 * self._compacted_size + 1024

    def compact(self, is_live: Callable[[Entry], bool]) -> int:
        """Drop every entry `is_live` rejects; returns how many were dropped."""
        before = len(self._heap)
        self._heap = [entry for entry in self._heap if is_live(entry)]
        heapq.heapify(self._heap)
        self._compacted_size = len(self._heap)
        return before - len(self._heap)
