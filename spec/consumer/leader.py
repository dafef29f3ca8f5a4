"""The leader's part: compute every member's assignment (ConsumerCoordinator.onLeaderElected,
validateCooperativeAssignment; reference §7, §8)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.requests import SyncGroupAssignment
from groupspec.vocabulary.responses import JoinGroupResponse

from ..assignment import GroupAssignment, GroupSubscription, Member, RebalanceProtocol
from ..consumer_protocol import SubscriptionDecodeError, decode_subscription, encode_assignment
from .context import StepContext
from .membership import fail
from .outcome import fatal
from .rules import (
    CLIENT_LEADER_ASSIGNED,
    CLIENT_LEADER_COOPERATIVE_ASSIGNMENT_VALIDATED,
    CLIENT_LEADER_ILLEGAL_COOPERATIVE_ASSIGNMENT,
    CLIENT_LEADER_SKIP_ASSIGNMENT,
    CLIENT_LEADER_SUBSCRIPTION_UNDECODABLE,
    CLIENT_LEADER_UNKNOWN_ASSIGNOR,
)
from .state import ConsumerState, metadata_snapshot

# The built-in cooperative assignor enforces the cooperative invariant itself, so the leader
# skips the cross-check for it (ConsumerCoordinator.COOPERATIVE_STICKY_ASSIGNOR_NAME).
COOPERATIVE_STICKY = "cooperative-sticky"


def on_leader_elected(
    ctx: StepContext, state: ConsumerState, body: JoinGroupResponse
) -> tuple[ConsumerState, tuple[SyncGroupAssignment, ...]]:
    """Decode every member's subscription, run the selected assignor, encode the result.

    With skipAssignment (a returning static leader, JoinGroup v9+) the leader sends no
    assignments and keeps its own. A failure here (unknown assignor, undecodable metadata, an
    assignment breaking the cooperative rules) is fatal, as Kafka rethrows it from poll().
    """
    assignor = ctx.setup.assignor(body.protocol_name)
    if assignor is None:
        ctx.fire(CLIENT_LEADER_UNKNOWN_ASSIGNOR)
        return fail(ctx, state, fatal("JoinGroup", None, "IllegalStateException")), ()
    try:
        members = tuple(
            Member(m.member_id, decode_subscription(m.metadata), m.group_instance_id)
            for m in body.members
        )
    except SubscriptionDecodeError:
        ctx.fire(CLIENT_LEADER_SUBSCRIPTION_UNDECODABLE)
        return fail(ctx, state, fatal("JoinGroup", None, "SchemaException")), ()
    group_topics = tuple(sorted({t for m in members for t in m.subscription.topics}))
    # The leader watches the whole group's topics from now on (updateGroupSubscription).
    snapshot = metadata_snapshot(state.cluster, group_topics)
    state = replace(state, is_leader=True, assignment_snapshot=snapshot)
    if body.skip_assignment:
        ctx.fire(CLIENT_LEADER_SKIP_ASSIGNMENT)
        return state, ()
    group = GroupSubscription.of(state.cluster, members)
    result = assignor.assign(group)
    if ctx.setup.protocol is RebalanceProtocol.COOPERATIVE and assignor.name != COOPERATIVE_STICKY:
        if not _valid_cooperative(group, result):
            ctx.fire(CLIENT_LEADER_ILLEGAL_COOPERATIVE_ASSIGNMENT)
            return fail(ctx, state, fatal("JoinGroup", None, "IllegalStateException")), ()
        ctx.fire(CLIENT_LEADER_COOPERATIVE_ASSIGNMENT_VALIDATED)
    ctx.fire(CLIENT_LEADER_ASSIGNED)
    user_data = dict(result.user_data)
    assignments = tuple(
        SyncGroupAssignment(member_id, encode_assignment(partitions, user_data.get(member_id)))
        for member_id, partitions in result.assignments
    )
    return state, assignments


def _valid_cooperative(group: GroupSubscription, result: GroupAssignment) -> bool:
    """Whether the assignment passes the shared cooperative check (spec/assignors/cooperative)."""
    # Imported here: the assignor package is developed alongside and only the leader needs it.
    from ..assignors.cooperative import (
        IllegalCooperativeAssignmentError,
        validate_cooperative_assignment,
    )

    try:
        validate_cooperative_assignment(group, result)
    except IllegalCooperativeAssignmentError:
        return False
    return True
