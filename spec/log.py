"""The `__consumer_offsets` log: record types and its compacted contents (reference §6).

The topic is compacted and a coordinator rebuilds its groups by reading the latest value of each
key, so the specification keeps exactly that view: one value per key, a tombstone removes the key.
Replay of a compacted log and of the full log yield the same groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hashing import partition_for


@dataclass(frozen=True, order=True)
class GroupMetadataKey:
    """Key of a group-metadata record."""

    group_id: str


@dataclass(frozen=True, order=True)
class OffsetCommitKey:
    """Key of an offset-commit record."""

    group_id: str
    topic: str
    partition: int


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class GroupMetadataValue:
    """The group-metadata record: generation, protocol, leader and members with assignments."""

    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader: str | None
    current_state_timestamp_ms: int | None
    members: tuple[GroupMetadataMemberValue, ...]


@dataclass(frozen=True)
class OffsetCommitValue:
    """A committed offset, in memory and in the log."""

    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None


LogKey = GroupMetadataKey | OffsetCommitKey
LogValue = GroupMetadataValue | OffsetCommitValue


def _sort_key(key: LogKey) -> tuple[str, int, str, int]:
    if isinstance(key, GroupMetadataKey):
        return (key.group_id, 0, "", 0)
    return (key.group_id, 1, key.topic, key.partition)


@dataclass(frozen=True)
class OffsetsLog:
    """The compacted `__consumer_offsets` topic: the latest value of every live key."""

    entries: tuple[tuple[LogKey, LogValue], ...] = ()

    def get(self, key: LogKey) -> LogValue | None:
        """The latest value written under `key`, or None if absent or tombstoned."""
        for existing, value in self.entries:
            if existing == key:
                return value
        return None

    def append(self, key: LogKey, value: LogValue | None) -> OffsetsLog:
        """The log after appending `value` under `key` (None is a tombstone)."""
        kept = [(k, v) for k, v in self.entries if k != key]
        if value is not None:
            kept.append((key, value))
        kept.sort(key=lambda entry: _sort_key(entry[0]))
        return OffsetsLog(tuple(kept))

    def records_of_partition(
        self, partition: int, num_partitions: int
    ) -> tuple[tuple[LogKey, LogValue], ...]:
        """Every live record that belongs to offsets-topic `partition`."""
        return tuple(
            (key, value)
            for key, value in self.entries
            if partition_for(key.group_id, num_partitions) == partition
        )

    def group_ids(self) -> frozenset[str]:
        """Every group with at least one live record."""
        return frozenset(key.group_id for key, _ in self.entries)
