"""The in-memory partitioned record log behind Produce, ListOffsets and Fetch.

Records are kept as the v2 record batches producers send, with the base offset rewritten on
append (a broker's one edit: the batch CRC covers only the bytes after it). A fetch returns whole
batches starting with the one holding the fetch offset; clients skip records below it.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import struct
from dataclasses import dataclass, field

# Offsets inside a v2 record batch (Kafka's DefaultRecordBatch).
_BASE_OFFSET = 0
_BATCH_LENGTH = 8
_MAGIC = 16
_LAST_OFFSET_DELTA = 23
_MAX_TIMESTAMP = 35
_HEADER_SIZE = 61

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1


class InvalidBatchError(ValueError):
    """Produced bytes that are not a sequence of whole v2 record batches."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One stored record batch: its offsets, newest timestamp, and bytes."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes


def split_batches(records: bytes) -> list[tuple[int, int, bytes]]:
    """(record count, max timestamp, bytes) per v2 batch in `records`; raises on anything else."""
    batches: list[tuple[int, int, bytes]] = []
    position = 0
    while position < len(records):
        if len(records) - position < _HEADER_SIZE:
            raise InvalidBatchError(f"{len(records) - position} trailing bytes are not a batch")
        (length,) = struct.unpack_from(">i", records, position + _BATCH_LENGTH)
        end = position + 12 + length
        if length < _HEADER_SIZE - 12 or end > len(records):
            raise InvalidBatchError(f"batch length {length} does not fit the produced bytes")
        if records[position + _MAGIC] != 2:
            raise InvalidBatchError(f"magic {records[position + _MAGIC]} (only v2 batches)")
        (delta,) = struct.unpack_from(">i", records, position + _LAST_OFFSET_DELTA)
        (max_ts,) = struct.unpack_from(">q", records, position + _MAX_TIMESTAMP)
        if delta < 0:
            raise InvalidBatchError(f"negative last offset delta {delta}")
        batches.append((delta + 1, max_ts, bytes(records[position:end])))
        position = end
    return batches


@dataclass(slots=True)
class PartitionLog:
    """One partition: batches in offset order and the next offset to assign."""

    batches: list[Batch] = field(default_factory=list)
    bases: list[int] = field(default_factory=list)
    high_watermark: int = 0

    def append(self, batches: list[tuple[int, int, bytes]]) -> int:
        """Append already-split batches; returns the base offset of the first."""
        first = self.high_watermark
        for count, max_ts, data in batches:
            base = self.high_watermark
            stored = struct.pack(">q", base) + data[8:]
            self.batches.append(Batch(base, base + count - 1, max_ts, stored))
            self.bases.append(base)
            self.high_watermark = base + count
        return first

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding `offset`, up to `max_bytes` (at least one batch)."""
        index = bisect.bisect_right(self.bases, offset) - 1
        index = max(index, 0)
        out: list[bytes] = []
        size = 0
        for batch in self.batches[index:]:
            if batch.last_offset < offset:
                continue
            if out and size + len(batch.data) > max_bytes:
                break
            out.append(batch.data)
            size += len(batch.data)
        return b"".join(out)

    def offset_for_timestamp(self, timestamp: int) -> int:
        """ListOffsets: earliest (-2), latest (-1), or the first batch at or after `timestamp`."""
        if timestamp == EARLIEST_TIMESTAMP:
            return 0
        if timestamp == LATEST_TIMESTAMP:
            return self.high_watermark
        for batch in self.batches:
            if batch.max_timestamp >= timestamp:
                return batch.base_offset
        return self.high_watermark


class TopicStore:
    """Every topic's partitions, plus a wake-up for fetches waiting for data."""

    def __init__(self) -> None:
        self.topics: dict[str, list[PartitionLog]] = {}
        self._appended = asyncio.Event()

    def create(self, name: str, partitions: int) -> None:
        """Create `name` with `partitions` empty partitions (the caller checks it is new)."""
        self.topics[name] = [PartitionLog() for _ in range(partitions)]

    def partition(self, topic: str, index: int) -> PartitionLog | None:
        """The partition, or None if the topic or partition does not exist."""
        partitions = self.topics.get(topic)
        if partitions is None or not 0 <= index < len(partitions):
            return None
        return partitions[index]

    def notify(self) -> None:
        """Wake every fetch waiting for new records."""
        self._appended.set()
        self._appended = asyncio.Event()

    async def wait_for_append(self, timeout_s: float) -> None:
        """Wait until something is appended or `timeout_s` passes."""
        event = self._appended
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout_s)
