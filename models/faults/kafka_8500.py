"""KAFKA-8500: a static rejoin during PreparingRebalance leaves the old member id in the group.

A static member that restarted rejoins with an unknown member id; during PreparingRebalance the
buggy coordinator added a member with a new id instead of replacing the old one, so the old id
stayed a member, unfenced.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec import Input, Outcome
from groupspec.spec.state import CoordinatorState, Group
from groupspec.vocabulary.group_state import PREPARING_REBALANCE
from groupspec.vocabulary.requests import JoinGroupRequest, Received

from ..world_state import GROUP_ID, evolve
from .switch import Bug, FaultSwitch

NAME = "KAFKA-8500"


class StaticRejoinUnfenced(FaultSwitch):
    """A static rejoin in PreparingRebalance keeps the replaced member id as a member."""

    name = NAME
    summary = "static rejoin in PreparingRebalance leaves the old member id"
    bug = Bug(
        "KAFKA-8500",
        "KAFKA-8500",
        "a static member rejoining with an unknown member id during PreparingRebalance got a "
        "new member id while the old one stayed in the group, unfenced",
        NAME,
        "InstanceMapConsistent",
        "static-2",
        {},
        11,
    )

    def coordinator_outcome(
        self, before: CoordinatorState, event: Input, outcome: Outcome
    ) -> Outcome:
        """The old member stays beside the new one (the coordinator added instead of
        replacing)."""
        if not isinstance(event, Received):
            return outcome
        return evolve(outcome, state=_keep_replaced(before, event.request, outcome.state))


def _keep_replaced(
    before: CoordinatorState, request: object, after: CoordinatorState
) -> CoordinatorState:
    old_group = before.group(GROUP_ID)
    new_group = after.group(GROUP_ID)
    if (
        not isinstance(request, JoinGroupRequest)
        or request.member_id
        or request.group_instance_id is None
        or old_group is None
        or new_group is None
        or old_group.state is not PREPARING_REBALANCE
    ):
        return after
    old_id = old_group.static_member_id(request.group_instance_id)
    if old_id is None or new_group.has_member(old_id):
        return after
    old_member = old_group.member(old_id)
    assert old_member is not None
    members = tuple(sorted((*new_group.members, old_member), key=lambda m: m.member_id))
    group: Group = replace(new_group, members=members)
    groups = tuple(group if g.group_id == GROUP_ID else g for g in after.groups)
    return replace(after, groups=groups)


SWITCH = StaticRejoinUnfenced()
