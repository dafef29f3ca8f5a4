"""What a group writes to `__consumer_offsets`, and how a group is rebuilt from it."""

from __future__ import annotations

from collections.abc import Mapping

from groupspec.vocabulary.group_state import EMPTY, STABLE
from groupspec.vocabulary.requests import JoinGroupProtocol

from .log import GroupLog, GroupMetadataMemberValue, GroupMetadataValue, GroupMetadataWrite
from .state import Group, Member


def group_metadata_record(group: Group, assignments: Mapping[str, bytes]) -> GroupMetadataWrite:
    """The group-metadata record for `group`, storing `assignments` (member id -> bytes)."""
    protocol = group.protocol_name or ""
    members = tuple(
        GroupMetadataMemberValue(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout_ms,
            m.session_timeout_ms,
            m.metadata_for(protocol),
            assignments.get(m.member_id, b""),
        )
        for m in group.members.values()
    )
    value = GroupMetadataValue(
        group.protocol_type or "",
        group.generation_id,
        group.protocol_name,
        group.leader_id,
        group.current_state_timestamp_ms,
        members,
    )
    return GroupMetadataWrite(group.group_id, value)


def group_from_records(group_id: str, partition: int, entry: GroupLog) -> Group:
    """Rebuild a group from its records: Stable if the record has members, else Empty.

    Session timers are armed by the caller, which knows the time of loading.
    """
    group = Group(group_id, partition)
    group.offsets = dict(entry.offsets)
    record = entry.metadata
    if record is None:
        return group
    for stored in record.members:
        member = Member(
            stored.member_id,
            stored.group_instance_id,
            stored.client_id,
            stored.client_host,
            stored.rebalance_timeout_ms,
            stored.session_timeout_ms,
            record.protocol_type,
            (JoinGroupProtocol(record.protocol_name or "", stored.subscription),),
            stored.assignment,
        )
        group.add_member(member)
    group.state = STABLE if group.members else EMPTY
    group.generation_id = record.generation_id
    group.protocol_type = record.protocol_type or None
    group.protocol_name = record.protocol_name
    group.leader_id = record.leader
    group.current_state_timestamp_ms = record.current_state_timestamp_ms
    return group
