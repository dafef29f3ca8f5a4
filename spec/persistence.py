"""What the coordinator writes to `__consumer_offsets`, and how it rebuilds groups from it."""

from __future__ import annotations

from collections.abc import Mapping

from groupspec.vocabulary.group_state import EMPTY, STABLE
from groupspec.vocabulary.requests import JoinGroupProtocol, TopicPartition

from .log import (
    GroupMetadataKey,
    GroupMetadataMemberValue,
    GroupMetadataValue,
    LogKey,
    LogValue,
    OffsetCommitKey,
    OffsetCommitValue,
)
from .state import Group, Member


def group_metadata_record(
    group: Group, assignments: Mapping[str, bytes]
) -> tuple[LogKey, LogValue | None]:
    """The group-metadata record for `group`, storing `assignments` (member id -> bytes)."""
    protocol = group.protocol_name or ""
    members = tuple(
        GroupMetadataMemberValue(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            session_timeout_ms=m.session_timeout_ms,
            subscription=m.metadata_for(protocol),
            assignment=assignments.get(m.member_id, b""),
        )
        for m in group.members
    )
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation_id=group.generation_id,
        protocol_name=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp_ms=group.current_state_timestamp_ms,
        members=members,
    )
    return GroupMetadataKey(group.group_id), value


def empty_group_record(group_id: str) -> tuple[LogKey, LogValue | None]:
    """The record Kafka writes when JoinGroup creates a group: generation 0, no members."""
    value = GroupMetadataValue(
        protocol_type="",
        generation_id=0,
        protocol_name=None,
        leader=None,
        current_state_timestamp_ms=None,
        members=(),
    )
    return GroupMetadataKey(group_id), value


def offset_record(
    group_id: str, partition: TopicPartition, value: OffsetCommitValue
) -> tuple[LogKey, LogValue | None]:
    """The offset-commit record for one partition."""
    return OffsetCommitKey(group_id, partition.topic, partition.partition), value


def offset_tombstone(group_id: str, partition: TopicPartition) -> tuple[LogKey, LogValue | None]:
    """The tombstone deleting one partition's committed offset."""
    return OffsetCommitKey(group_id, partition.topic, partition.partition), None


def group_tombstone(group_id: str) -> tuple[LogKey, LogValue | None]:
    """The tombstone deleting a group's metadata."""
    return GroupMetadataKey(group_id), None


def group_from_records(
    group_id: str,
    metadata: GroupMetadataValue | None,
    offsets: tuple[tuple[TopicPartition, OffsetCommitValue], ...],
) -> Group:
    """Rebuild a group from its log records: Stable if the record has members, else Empty.

    Heartbeat deadlines are set by the caller, which knows the time of loading.
    """
    if metadata is None:
        return Group(group_id=group_id, offsets=offsets)
    members = tuple(
        Member(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            session_timeout_ms=m.session_timeout_ms,
            protocol_type=metadata.protocol_type,
            protocols=(JoinGroupProtocol(metadata.protocol_name or "", m.subscription),),
            assignment=m.assignment,
        )
        for m in metadata.members
    )
    return Group(
        group_id=group_id,
        state=STABLE if members else EMPTY,
        generation_id=metadata.generation_id,
        protocol_type=metadata.protocol_type or None,
        protocol_name=metadata.protocol_name,
        leader_id=metadata.leader,
        members=tuple(sorted(members, key=lambda m: m.member_id)),
        offsets=offsets,
        current_state_timestamp_ms=metadata.current_state_timestamp_ms,
    )
