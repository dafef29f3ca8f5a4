"""The `__consumer_offsets` log as the coordinator keeps it: compacted, one view per partition.

The topic is compacted and a coordinator rebuilds its groups from the latest value of each key,
so the store holds exactly that: per offsets partition, per group, the latest group-metadata
record and the latest value of every committed offset. A tombstone (value None) removes its key.
Offset values are immutable and shared with the in-memory groups, so the log costs a dict slot
per offset, not a copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """A committed offset, in memory and in the log."""

    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None


@dataclass(frozen=True, slots=True)
class GroupMetadataMemberValue:
    """A member as stored in the group-metadata record."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """The group-metadata record: generation, protocol, leader and members with assignments."""

    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader: str | None
    current_state_timestamp_ms: int | None
    members: tuple[GroupMetadataMemberValue, ...]


EMPTY_GROUP_RECORD = GroupMetadataValue("", 0, None, None, None, ())


@dataclass(frozen=True, slots=True)
class GroupMetadataWrite:
    """Write (or with None, tombstone) a group's metadata record."""

    group_id: str
    value: GroupMetadataValue | None


@dataclass(frozen=True, slots=True)
class OffsetWrite:
    """Write (or with None, tombstone) one committed offset."""

    group_id: str
    topic: str
    partition: int
    value: OffsetCommitValue | None


LogRecord = GroupMetadataWrite | OffsetWrite


class GroupLog:
    """The live records of one group: its metadata record and its committed offsets."""

    __slots__ = ("metadata", "offsets")

    def __init__(self) -> None:
        self.metadata: GroupMetadataValue | None = None
        self.offsets: dict[tuple[str, int], OffsetCommitValue] = {}


class OffsetsLog:
    """The compacted contents of every `__consumer_offsets` partition."""

    __slots__ = ("_partitions",)

    def __init__(self) -> None:
        self._partitions: dict[int, dict[str, GroupLog]] = {}

    def append(self, partition: int, records: Sequence[LogRecord]) -> None:
        """Apply `records` to `partition` in order; a None value removes its key."""
        groups = self._partitions.setdefault(partition, {})
        for record in records:
            entry = groups.get(record.group_id)
            if entry is None:
                if record.value is None:
                    continue  # a tombstone for a key that is not there
                entry = groups[record.group_id] = GroupLog()
            if isinstance(record, GroupMetadataWrite):
                entry.metadata = record.value
            elif record.value is None:
                entry.offsets.pop((record.topic, record.partition), None)
            else:
                entry.offsets[record.topic, record.partition] = record.value
            if entry.metadata is None and not entry.offsets:
                del groups[record.group_id]  # compaction: nothing left under this group

    def groups_in(self, partition: int) -> Iterator[tuple[str, GroupLog]]:
        """Every group with live records in `partition`, with those records."""
        yield from self._partitions.get(partition, {}).items()

    def entries(self) -> Iterator[tuple[int, str, GroupLog]]:
        """Every (partition, group id, records) held, for inspection."""
        for partition, groups in self._partitions.items():
            for group_id, entry in groups.items():
                yield partition, group_id, entry
