"""Shared member validation (reference §2.1)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode

from .state import Group


def validate_member(
    group: Group, member_id: str, group_instance_id: str | None
) -> ErrorCode | None:
    """ClassicGroup.validateMember: None if valid, else UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID."""
    if group_instance_id is not None:
        current = group.static_member_id(group_instance_id)
        if current is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if current != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
        return None
    if not group.has_member(member_id):
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def validate_member_and_generation(
    group: Group, member_id: str, group_instance_id: str | None, generation_id: int
) -> ErrorCode | None:
    """Member validation followed by the generation check (Sync, Heartbeat, OffsetCommit)."""
    error = validate_member(group, member_id, group_instance_id)
    if error is not None:
        return error
    if generation_id != group.generation_id:
        return ErrorCode.ILLEGAL_GENERATION
    return None
