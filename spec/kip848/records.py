"""The records a consumer-protocol group writes to `__consumer_offsets` (docs/protocol.md §12.16).

Kafka's group coordinator keeps no state it has not written: every change a handler makes is a
list of records, appended to the group's `__consumer_offsets` partition and replayed into memory
(`GroupMetadataManager.replay`, spec/kip848/replay.py). The record kinds and their fields follow
the schemas `group-coordinator/src/main/resources/common/message/ConsumerGroup*Key/Value.json`
(Kafka 4.1.0 added the metadata hash to the group record, 4.3.0 the assignment timestamp to the
target-assignment metadata record).

`records_between` is a pure function of one step: from the group before and after it, the
records Kafka writes, in Kafka's order (`GroupMetadataManager.consumerGroupHeartbeat`,
`removeMember`, `TargetAssignmentBuilder.build`, `ConsumerGroup.createGroupTombstoneRecords`):
the removed members' tombstones (current assignment, target assignment, subscription), each new
or changed member's subscription, the group epoch, each changed target-assignment entry, the
target-assignment epoch, each changed current assignment. A static replacement is written by
Kafka's `replaceMember` as the old id's tombstones followed by the new id's three records; here
the new id's target and current assignment come after the group epoch instead, which replays to
the same group because the records have different keys.

`appended` keeps them as the configuration's `log_cleaning` says: cleaned to the last value of
each key (`compacted`), or every record in the order written, tombstones included, as a load
finds a small group's records in the active segment Kafka's log cleaner never cleans.

A regular expression's resolution is its own record (`ConsumerGroupRegularExpression`, keyed by
group and expression: the topics and the resolution's timestamp; the metadata image's version is
not kept), written after the members' subscriptions and before the group epoch, as
`handleRegularExpressionsResult` and `maybeUpdateRegularExpressions` write it.
Not written because the state does not keep it: client id and host. The partition-metadata record (`ConsumerGroupPartitionMetadata`) is no
longer written since Kafka 4.1.0 (KIP-1101 replaced it by the metadata hash); it is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.vocabulary.requests import TopicPartition

from .config import ACTIVE_SEGMENT_LOG, ConsumerGroupConfig
from .state import (
    INITIAL_ASSIGNMENT_EPOCH,
    INITIAL_GROUP_EPOCH,
    NO_ASSIGNMENT_TIMESTAMP,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupsState,
    MemberState,
)


# Keys: one per record kind, as the *Key.json schemas (the group id, and the member id where the
# record is per member).
@dataclass(frozen=True, order=True)
class GroupMetadataKey:
    """ConsumerGroupMetadataKey: the group's epoch record."""

    group_id: str


@dataclass(frozen=True, order=True)
class MemberMetadataKey:
    """ConsumerGroupMemberMetadataKey: one member's subscription record."""

    group_id: str
    member_id: str


@dataclass(frozen=True, order=True)
class TargetAssignmentMemberKey:
    """ConsumerGroupTargetAssignmentMemberKey: one member's target assignment."""

    group_id: str
    member_id: str


@dataclass(frozen=True, order=True)
class TargetAssignmentMetadataKey:
    """ConsumerGroupTargetAssignmentMetadataKey: the target assignment's epoch."""

    group_id: str


@dataclass(frozen=True, order=True)
class CurrentAssignmentKey:
    """ConsumerGroupCurrentMemberAssignmentKey: one member's current assignment."""

    group_id: str
    member_id: str


@dataclass(frozen=True, order=True)
class RegexKey:
    """ConsumerGroupRegularExpressionKey: one regular expression's resolution."""

    group_id: str
    regex: str


@dataclass(frozen=True)
class RegexValue:
    """The topics a regular expression resolved to, and when it was resolved."""

    topics: tuple[str, ...]
    timestamp_ms: int


@dataclass(frozen=True)
class GroupMetadataValue:
    """The group epoch and the metadata hash of the topics the group subscribes to.

    Kafka hashes each subscribed topic's id, name, partition count and racks; the stand-in here is
    the subscribed topics with their partition counts, which changes exactly when that hash does
    (up to hash collisions) in a cluster whose racks do not change."""

    epoch: int
    metadata_hash: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class MemberMetadataValue:
    """What the member subscribes with: instance and rack id, topics, timeout, assignor."""

    instance_id: str | None
    rack_id: str | None
    subscribed_topic_names: tuple[str, ...]
    rebalance_timeout_ms: int
    server_assignor: str | None
    subscribed_topic_regex: str = ""
    # A classic member's session timeout and protocols (the record's ClassicMemberMetadata,
    # written for members that joined with JoinGroup: Kafka 4.x, docs/protocol.md §12.15).
    classic: ClassicMemberMetadata | None = None


@dataclass(frozen=True)
class TargetAssignmentMemberValue:
    """The member's partitions in the target assignment."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class TargetAssignmentMetadataValue:
    """The epoch of the target assignment and when it was computed (KIP-1263, Kafka 4.3.0)."""

    assignment_epoch: int
    assignment_timestamp_ms: int


@dataclass(frozen=True)
class CurrentAssignmentValue:
    """Where the member is in its reconciliation: its epochs, state and partitions."""

    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned: tuple[TopicPartition, ...]
    pending_revocation: tuple[TopicPartition, ...]
    # KIP-1251 (4.3+): the epoch each assigned partition was assigned at, which the record's
    # assigned partitions carry from Kafka 4.3.0 (docs/protocol.md §12.17).
    assignment_epochs: tuple[tuple[TopicPartition, int], ...] = ()


RecordKey = (
    GroupMetadataKey
    | MemberMetadataKey
    | TargetAssignmentMemberKey
    | TargetAssignmentMetadataKey
    | CurrentAssignmentKey
    | RegexKey
)
RecordValue = (
    GroupMetadataValue
    | MemberMetadataValue
    | TargetAssignmentMemberValue
    | TargetAssignmentMetadataValue
    | CurrentAssignmentValue
    | RegexValue
)


@dataclass(frozen=True)
class Record:
    """One record: a key and its value, or None for a tombstone."""

    key: RecordKey
    value: RecordValue | None

    @property
    def is_tombstone(self) -> bool:
        """Whether the record deletes its key."""
        return self.value is None


# -- values of a group's parts ------------------------------------------------------------------


def member_metadata_value(member: ConsumerGroupMember) -> MemberMetadataValue:
    """The subscription record's value for `member`."""
    return MemberMetadataValue(
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        server_assignor=member.server_assignor,
        subscribed_topic_regex=member.subscribed_topic_regex,
        classic=member.classic,
    )


def current_assignment_value(member: ConsumerGroupMember) -> CurrentAssignmentValue:
    """The current-assignment record's value for `member`."""
    return CurrentAssignmentValue(
        member_epoch=member.member_epoch,
        previous_member_epoch=member.previous_member_epoch,
        state=member.state,
        assigned=tuple(sorted(member.assigned)),
        pending_revocation=tuple(sorted(member.pending_revocation)),
        assignment_epochs=member.assignment_epochs,
    )


# -- the records of one step --------------------------------------------------------------------


def member_tombstones(group_id: str, member_id: str) -> tuple[Record, ...]:
    """A removed member's three tombstones in the order Kafka's `removeMember` writes them
    (replay refuses a subscription tombstone before the other two)."""
    return (
        Record(CurrentAssignmentKey(group_id, member_id), None),
        Record(TargetAssignmentMemberKey(group_id, member_id), None),
        Record(MemberMetadataKey(group_id, member_id), None),
    )


def group_tombstones(group: ConsumerGroup) -> tuple[Record, ...]:
    """A deleted group's tombstones in ConsumerGroup.createGroupTombstoneRecords' order."""
    gid = group.group_id
    ids = [m.member_id for m in group.iter_members()]
    return (
        *(Record(CurrentAssignmentKey(gid, i), None) for i in ids),
        *(Record(TargetAssignmentMemberKey(gid, i), None) for i in ids),
        Record(TargetAssignmentMetadataKey(gid), None),
        *(Record(MemberMetadataKey(gid, i), None) for i in ids),
        *(Record(RegexKey(gid, r.regex), None) for r in group.resolved_regexes),
        Record(GroupMetadataKey(gid), None),
    )


def records_between(
    config: ConsumerGroupConfig, before: ConsumerGroup | None, after: ConsumerGroup | None
) -> tuple[Record, ...]:
    """The records one step writes for a group that was `before` and is `after` (None: no
    such group), in Kafka's order. A step that changes nothing durable writes nothing."""
    if after is None:
        return () if before is None else group_tombstones(before)
    gid = after.group_id
    old_members = before.members if before is not None else {}
    new_members = after.members
    old_target = before.target if before is not None else {}
    new_target = after.target
    records: list[Record] = []
    for member_id in sorted(set(old_members) - set(new_members)):
        records += member_tombstones(gid, member_id)
    for member_id, member in sorted(new_members.items()):
        old = old_members.get(member_id)
        if old is None or member_metadata_value(old) != member_metadata_value(member):
            records.append(Record(MemberMetadataKey(gid, member_id), member_metadata_value(member)))
    records += _regex_records(before, after)
    old_epoch = before.group_epoch if before is not None else INITIAL_GROUP_EPOCH
    if after.group_epoch != old_epoch:
        value = GroupMetadataValue(after.group_epoch, after.metadata_hash)
        records.append(Record(GroupMetadataKey(gid), value))
    for member_id, partitions in sorted(new_target.items()):
        if old_target.get(member_id) != partitions:
            value_t = TargetAssignmentMemberValue(tuple(sorted(partitions)))
            records.append(Record(TargetAssignmentMemberKey(gid, member_id), value_t))
    for member_id in sorted(
        set(old_target) - set(new_target) - (set(old_members) - set(new_members))
    ):
        # A target entry gone while its member stays: the entry's tombstone.
        records.append(Record(TargetAssignmentMemberKey(gid, member_id), None))
    old_assignment = (
        (before.assignment_epoch, before.assignment_timestamp_ms)
        if before is not None
        else (INITIAL_ASSIGNMENT_EPOCH, NO_ASSIGNMENT_TIMESTAMP)
    )
    if (after.assignment_epoch, after.assignment_timestamp_ms) != old_assignment:
        value_m = TargetAssignmentMetadataValue(
            after.assignment_epoch, after.assignment_timestamp_ms
        )
        records.append(Record(TargetAssignmentMetadataKey(gid), value_m))
    for member_id, member in sorted(new_members.items()):
        old = old_members.get(member_id)
        if old is None or current_assignment_value(old) != current_assignment_value(member):
            value_c = current_assignment_value(member)
            records.append(Record(CurrentAssignmentKey(gid, member_id), value_c))
    return tuple(records)


def _regex_records(before: ConsumerGroup | None, after: ConsumerGroup) -> list[Record]:
    """The resolutions the step deleted (tombstones) and wrote (new or re-resolved)."""
    old = {r.regex: r for r in before.resolved_regexes} if before is not None else {}
    new = {r.regex: r for r in after.resolved_regexes}
    gid = after.group_id
    records = [Record(RegexKey(gid, regex), None) for regex in sorted(set(old) - set(new))]
    for regex, resolved in sorted(new.items()):
        if old.get(regex) != resolved:
            value = RegexValue(resolved.topics, resolved.timestamp_ms)
            records.append(Record(RegexKey(gid, regex), value))
    return records


def compacted(log: tuple[Record, ...], written: tuple[Record, ...]) -> tuple[Record, ...]:
    """The log after `written` is appended and compacted: the last value of each key, no
    tombstones, ordered by key. Replaying live values of distinct keys commutes (each replay
    branch touches its own key's part of the group), so the order carries nothing: a log the
    cleaner has cleaned to its end (and whose tombstones outlived delete.retention.ms)."""
    latest = {record.key: record for record in log}
    for record in written:
        if record.value is None:
            latest.pop(record.key, None)
        else:
            latest[record.key] = record
    return tuple(latest[key] for key in sorted(latest, key=_key_order))


def appended(
    config: ConsumerGroupConfig, log: tuple[Record, ...], written: tuple[Record, ...]
) -> tuple[Record, ...]:
    """The log after `written` is appended, as a coordinator loading it would find it
    (`config.log_cleaning`): cleaned (`compacted`), or every record in the order written,
    tombstones included, when they all sit in the active segment the cleaner never cleans."""
    if config.log_cleaning == ACTIVE_SEGMENT_LOG:
        return log + written
    return compacted(log, written)


def _key_order(key: RecordKey) -> tuple[str, str, str]:
    member = getattr(key, "member_id", getattr(key, "regex", ""))
    return (key.group_id, type(key).__name__, member)


def rewritten_with_records(
    config: ConsumerGroupConfig, written: ConsumerGroupsState, rewritten: ConsumerGroupsState
) -> ConsumerGroupsState:
    """`rewritten` (a step's outcome another coordinator changed, as a seeded fault does) with
    the records of its changes to `written`'s groups appended to the log, so that the log stays
    that coordinator's own."""
    if rewritten.groups_by_id == written.groups_by_id:
        return rewritten
    ids = {g.group_id for g in written.iter_groups()} | {
        g.group_id for g in rewritten.iter_groups()
    }
    records: list[Record] = []
    for gid in sorted(ids):
        records += records_between(config, written.group(gid), rewritten.group(gid))
    return replace(rewritten, log=appended(config, written.log, tuple(records)))
