"""The two timers of a member: the session timeout, re-armed by every heartbeat, and the
rebalance timeout, armed only while the member revokes (scheduleConsumerGroupSessionTimeout,
scheduleConsumerGroupRebalanceTimeout)."""

from __future__ import annotations

from .fencing import fence_member
from .runtime import Runtime
from .state import Group


def on_session_timeout(rt: Runtime, group: Group, member_id: str) -> None:
    """The member's session timed out: fence it, if it is still a member."""
    del group.session_deadlines[member_id]
    if member_id in group.members:
        fence_member(rt, group, member_id)


def on_rebalance_timeout(rt: Runtime, group: Group, member_id: str) -> None:
    """The member did not finish revoking in time: fence it, if still at the armed epoch."""
    epoch, _ = group.rebalance_deadlines.pop(member_id)
    member = group.members.get(member_id)
    if member is not None and member.member_epoch == epoch:
        fence_member(rt, group, member_id)


def on_classic_timeout(rt: Runtime, group: Group, kind: int, member_id: str) -> None:
    """A classic member did not rejoin (join timeout) or sync (sync timeout) in time: fence it
    (fencing cancels all its timers; the member is present while one is armed)."""
    del group.classic_deadlines[(kind, member_id)]
    if member_id in group.members:
        fence_member(rt, group, member_id)
