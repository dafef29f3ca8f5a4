"""KAFKA-2555, KAFKA-9823: offset commits are not fenced by generation.

The coordinator checks only that an OffsetCommit's member id is known, not its generation: a
member evicted while it stalled commits offsets of partitions that the next generation gave to
another member. The world models this by letting the coordinator read a commit that carries a
generation as if a current member sent it at the current generation.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary.requests import OffsetCommitRequest, Request

from ..world_state import GROUP_ID
from .switch import Bug, FaultSwitch

NAME = "KAFKA-2555"


class UnfencedCommit(FaultSwitch):
    """The coordinator does not fence an OffsetCommit by generation."""

    name = NAME
    summary = "OffsetCommit accepted without checking its generation"
    rewrites_requests = True
    bug = Bug(
        "KAFKA-2555",
        "KAFKA-2555, KAFKA-9823",
        "offset commits not fenced by generation: a member evicted while stalled commits "
        "offsets of partitions that now belong to the next generation",
        NAME,
        "NoZombieCommit",
        "eager-2",
        {},
        23,
    )

    def request_seen(self, coordinator: CoordinatorState, request: Request) -> Request:
        """A commit with a generation reads as a current member's at the current generation (a
        fenced member's commit goes through)."""
        group = coordinator.group(GROUP_ID)
        if (
            not isinstance(request, OffsetCommitRequest)
            or request.generation_id < 0
            or group is None
            or not group.members
        ):
            return request
        member_id = request.member_id
        if not group.has_member(member_id):
            member_id = group.members[0].member_id
        member = group.member(member_id)
        assert member is not None
        return replace(
            request,
            generation_id=group.generation_id,
            member_id=member_id,
            group_instance_id=member.group_instance_id,
        )


SWITCH = UnfencedCommit()
