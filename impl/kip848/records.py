"""What a consumer-protocol group writes to `__consumer_offsets`, and how the groups are rebuilt
from it after a restart.

The records follow Kafka 4.3.0's `ConsumerGroup*Key/Value` kinds: the group epoch, each
member's metadata (subscription by names and regular expression, instance and rack id,
rebalance timeout, assignor), each member's target assignment, the target assignment's epoch and
time, each member's current assignment (epochs, state, assigned and pending partitions with
KIP-1251's assignment epochs), each regular expression's resolution (its topics and when:
ConsumerGroupRegularExpression), and the committed offsets. A key's latest record wins and a None value is a tombstone, so the
log compacts as Kafka's does. `RecordWriter` writes, after each change, the records whose value
differs from what it last wrote for the group; `replay` rebuilds the coordinator's groups and
offsets from every record written.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from groupspec.vocabulary.requests import JoinGroupProtocol, TopicPartition

from .offsets import CommittedOffset
from .runtime import Runtime
from .state import ClassicMetadata, Group, Member, MemberState, ResolvedRegex

GROUP_EPOCH = "group"
MEMBER_METADATA = "member"
TARGET_MEMBER = "target"
TARGET_EPOCH = "target-epoch"
CURRENT_ASSIGNMENT = "current"
REGEX = "regex"
OFFSET = "offset"

# A record key: (kind, group id, and the member id or the regular expression), or an offset's
# (kind, topic, partition).
RecordKey = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupRecord:
    """One record of a consumer-protocol group: its key and JSON-ready value (None: a
    tombstone)."""

    group_id: str
    key: RecordKey
    value: Any


RecordSink = Callable[[str, list[ConsumerGroupRecord]], None]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _partitions(partitions: Iterable[TopicPartition]) -> list[list[Any]]:
    return [[p.topic, p.partition] for p in sorted(partitions)]


def _read_partitions(raw: Any) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(str(topic), int(number)) for topic, number in raw)


def group_records(
    group: Group | None, offsets: dict[TopicPartition, CommittedOffset] | None
) -> dict[RecordKey, Any]:
    """Every record that describes the group and its offsets now, by key."""
    records: dict[RecordKey, Any] = {}
    if group is not None:
        group_id = group.group_id
        records[(GROUP_EPOCH, group_id)] = [
            group.group_epoch,
            [[name, partitions] for name, partitions in group.metadata_hash],
        ]
        records[(TARGET_EPOCH, group_id)] = [group.assignment_epoch, group.assignment_timestamp_ms]
        for member_id, member in group.members.items():
            records[(MEMBER_METADATA, group_id, member_id)] = [
                member.instance_id,
                member.rack_id,
                sorted(member.subscribed_topic_names),
                member.rebalance_timeout_ms,
                member.server_assignor,
                member.client_id,
                member.client_host,
                None
                if member.classic is None
                else [
                    member.classic.session_timeout_ms,
                    [[p.name, _b64(p.metadata)] for p in member.classic.protocols],
                ],
                member.subscribed_topic_regex,
            ]
            records[(CURRENT_ASSIGNMENT, group_id, member_id)] = [
                member.member_epoch,
                member.previous_member_epoch,
                member.state.value,
                _partitions(member.assigned),
                _partitions(member.pending_revocation),
                [[p.topic, p.partition, e] for p, e in sorted(member.assignment_epochs.items())],
            ]
        for member_id, partitions in group.target.items():
            records[(TARGET_MEMBER, group_id, member_id)] = _partitions(partitions)
        for regex, resolved in group.resolved_regexes.items():
            records[(REGEX, group_id, regex)] = [sorted(resolved.topics), resolved.timestamp_ms]
    for partition, committed in (offsets or {}).items():
        key = (OFFSET, partition.topic, partition.partition)
        records[key] = [
            committed.offset,
            committed.leader_epoch,
            committed.metadata,
            committed.commit_timestamp_ms,
        ]
    return records


class RecordWriter:
    """Writes each group's changed records to `sink`, remembering what it wrote."""

    __slots__ = ("_sink", "_written")

    def __init__(self, sink: RecordSink) -> None:
        self._sink = sink
        self._written: dict[str, dict[RecordKey, Any]] = {}

    def remember(self, group_id: str, records: dict[RecordKey, Any]) -> None:
        """Take `records` as already written (what a replay loaded)."""
        if records:
            self._written[group_id] = records

    def write(self, rt: Runtime, group_id: str) -> None:
        """Write the records of `group_id` that changed since the last write, tombstones for
        the keys that are gone."""
        now = group_records(rt.groups.get(group_id), rt.offsets.get(group_id))
        before = self._written.get(group_id, {})
        changes = [ConsumerGroupRecord(group_id, key, None) for key in before if key not in now]
        changes.extend(
            ConsumerGroupRecord(group_id, key, value)
            for key, value in now.items()
            if before.get(key, _ABSENT) != value
        )
        if not changes:
            return
        self._sink(group_id, changes)
        if now:
            self._written[group_id] = now
        else:
            self._written.pop(group_id, None)


_ABSENT = object()


def compact(records: Iterable[ConsumerGroupRecord]) -> dict[str, dict[RecordKey, Any]]:
    """The latest value of every key, by group id (tombstoned keys dropped)."""
    latest: dict[str, dict[RecordKey, Any]] = {}
    for record in records:
        keys = latest.setdefault(record.group_id, {})
        if record.value is None:
            keys.pop(record.key, None)
        else:
            keys[record.key] = record.value
    return {group_id: keys for group_id, keys in latest.items() if keys}


def replay(rt: Runtime, compacted: dict[str, dict[RecordKey, Any]]) -> None:
    """Rebuild the groups and offsets of `compacted` (see `compact`) into `rt`; arms no timer."""
    for group_id, keys in compacted.items():
        offsets = {
            TopicPartition(str(key[1]), int(key[2])): CommittedOffset(
                int(value[0]), int(value[1]), str(value[2]), int(value[3])
            )
            for key, value in keys.items()
            if key[0] == OFFSET
        }
        if offsets:
            rt.offsets[group_id] = offsets
        epoch_value = keys.get((GROUP_EPOCH, group_id))
        if epoch_value is None:
            continue
        # A file written before the record carried the metadata hash holds a bare epoch: its
        # hash is unknown, as a Kafka 4.0 record's is to 4.1+ (metadataHash 0).
        epoch, metadata_hash = (epoch_value, ()) if isinstance(epoch_value, int) else epoch_value
        group = Group(group_id)
        group.group_epoch = int(epoch)
        group.metadata_hash = tuple((str(name), int(count)) for name, count in metadata_hash)
        assignment_epoch, timestamp = keys.get((TARGET_EPOCH, group_id), (epoch, 0))
        group.assignment_epoch = int(assignment_epoch)
        group.assignment_timestamp_ms = int(timestamp)
        for key, value in keys.items():
            if key[0] == MEMBER_METADATA:
                group.add(_member(key[2], value, keys.get((CURRENT_ASSIGNMENT, group_id, key[2]))))
            elif key[0] == TARGET_MEMBER:
                group.target[key[2]] = _read_partitions(value)
            elif key[0] == REGEX:
                topics, timestamp_ms = value
                group.resolved_regexes[str(key[2])] = ResolvedRegex(
                    frozenset(map(str, topics)), int(timestamp_ms)
                )
        for member in group.members.values():
            group.refresh_subscription(member)
        group.set_assignment_epoch(group.assignment_epoch)
        rt.groups[group_id] = group


def _member(member_id: str, metadata: Any, current: Any) -> Member:
    member = Member(member_id)
    instance_id, rack_id, topics, rebalance_timeout_ms, assignor, client_id, host, classic = (
        metadata[:8]
    )
    # Records written before regular expressions were served have none.
    member.subscribed_topic_regex = str(metadata[8]) if len(metadata) > 8 else ""
    member.instance_id = instance_id
    member.rack_id = rack_id
    member.subscribed_topic_names = frozenset(topics)
    member.rebalance_timeout_ms = int(rebalance_timeout_ms)
    member.server_assignor = assignor
    member.client_id, member.client_host = str(client_id), str(host)
    if classic is not None:
        session_timeout_ms, protocols = classic
        member.classic = ClassicMetadata(
            int(session_timeout_ms),
            tuple(JoinGroupProtocol(str(name), _unb64(data)) for name, data in protocols),
        )
    if current is not None:
        epoch, previous, state, assigned, pending, epochs = current
        member.member_epoch = int(epoch)
        member.previous_member_epoch = int(previous)
        member.state = MemberState(state)
        member.assigned = _read_partitions(assigned)
        member.pending_revocation = _read_partitions(pending)
        member.assignment_epochs = {
            TopicPartition(str(topic), int(number)): int(at) for topic, number, at in epochs
        }
    return member
