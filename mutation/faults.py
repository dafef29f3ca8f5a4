"""Semantic faults written by hand from the group coordinator's history, as patches of spec/.

Beside the mutants cosmic-ray generates (one operator swapped), the campaign judges faults of
the kind Kafka's own JIRA history holds: a check dropped, a state forgotten, a timer armed with
the wrong timeout, a write skipped. Each is a small patch of one module (`old` replaced by
`new`, which must occur exactly once), applied in a scratch copy like any mutant and judged by
the reference presets alone (`groupspec mutation --faults`). Where the fault is a real Kafka
bug, `reference` names its KAFKA issue; the others are the same kind of mistake in code paths
whose history has no number we could tie to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .mutants import SPEC_DIR


class FaultPatchError(ValueError):
    """A fault's patch does not apply: its text is not in the module exactly once."""


@dataclass(frozen=True)
class HandFault:
    """A fault: its name, the Kafka issue it re-creates (or ""), the request type or timer it
    is about, the module of spec/ it patches, the text it replaces and the replacement, and what
    goes wrong."""

    name: str
    reference: str
    area: str
    module: str
    old: str
    new: str
    breaks: str

    @property
    def ident(self) -> str:
        """The fault's name (stable across runs)."""
        return self.name

    def source(self, spec_dir: Path = SPEC_DIR) -> str:
        """The module's text with the patch applied."""
        original = (spec_dir / self.module).read_text(encoding="utf-8")
        count = original.count(self.old)
        if count != 1:
            raise FaultPatchError(
                f"{self.name}: the text to replace occurs {count} times in {self.module}"
            )
        return original.replace(self.old, self.new)

    @property
    def lines(self) -> range:
        """The module's lines the patch replaces (the code that runs when the fault does)."""
        original = (SPEC_DIR / self.module).read_text(encoding="utf-8")
        start = original[: original.index(self.old)].count("\n") + 1
        return range(start, start + self.old.count("\n") + 1)


FAULTS: tuple[HandFault, ...] = (
    # -- JoinGroup -----------------------------------------------------------------------------
    HandFault(
        "static-rejoin-only-in-stable",
        "KAFKA-8500",
        "JoinGroup",
        "join.py",
        "        if existing_member_id is not None:\n",
        "        if existing_member_id is not None and group.state is STABLE:\n",
        "a static member rejoining with no member id outside Stable is added as a second member "
        "of its instance id",
    ),
    HandFault(
        "static-rejoin-in-completing-without-rebalance",
        "KAFKA-9801",
        "JoinGroup",
        "join.py",
        "        step.fire(JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES)\n"
        "        return prepare_rebalance(step, group)\n",
        "        step.fire(JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES)\n"
        "        return maybe_complete_join_phase(step, group)\n",
        "a static member replaced while the generation awaits its assignment starts no "
        "rebalance: the leader's assignment names the old member id",
    ),
    HandFault(
        "static-replacement-not-persisted",
        "KAFKA-10284",
        "JoinGroup",
        "join.py",
        "        failure = step.write([group_metadata_record(group, assignments)])\n",
        "        failure = None\n",
        "a static replacement in a Stable group is kept in memory only: a failover reloads the "
        "old member id",
    ),
    HandFault(
        "max-size-off-by-one",
        "KAFKA-9885",
        "JoinGroup",
        "join.py",
        "    return member is not None or len(group.members) < config.group_max_size\n",
        "    return member is not None or len(group.members) <= config.group_max_size\n",
        "a group at group.max.size admits one more member",
    ),
    HandFault(
        "new-member-session-timeout",
        "KAFKA-9232",
        "JoinGroup",
        "join.py",
        "    group = schedule_heartbeat(step, group, member_id, step.config.new_member_join_timeout_ms)\n",
        "    group = schedule_heartbeat(step, group, member_id)\n",
        "a new member parked in JoinGroup expires after its session timeout instead of the "
        "new-member join timeout",
    ),
    HandFault(
        "stable-follower-new-subscription-ignored",
        "",
        "JoinGroup",
        "join.py",
        "        if not member.matches(request.protocols):\n"
        "            step.fire(JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS)\n",
        "        if False:\n"
        "            step.fire(JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS)\n",
        "a follower rejoining a Stable group with a new subscription is answered with the old "
        "generation and no rebalance",
    ),
    HandFault(
        "pending-member-unknown",
        "",
        "JoinGroup",
        "join.py",
        "    if group.is_pending_member(member_id):\n"
        "        if request.group_instance_id is not None:\n",
        "    if False:\n        if request.group_instance_id is not None:\n",
        "a member handed an id with MEMBER_ID_REQUIRED (KIP-394) is refused when it joins with it",
    ),
    # -- the join phase ------------------------------------------------------------------------
    HandFault(
        "completed-join-keeps-laggards",
        "",
        "JoinGroup",
        "rebalance.py",
        "        if not member.is_awaiting_join and not member.is_static:\n",
        "        if not member.is_awaiting_join and member.is_static:\n",
        "a completed join keeps the dynamic members that did not rejoin and drops static ones",
    ),
    HandFault(
        "leader-not-rejoined-kept",
        "",
        "JoinGroup",
        "rebalance.py",
        "    if leader is not None and leader.is_awaiting_join:\n        return group, True\n",
        "    if leader is not None:\n        return group, True\n",
        "a leader that did not rejoin stays the new generation's leader",
    ),
    HandFault(
        "protocol-not-supported-by-all",
        "",
        "JoinGroup",
        "rebalance.py",
        "    candidates = group.candidate_protocols()\n"
        "    votes = Counter(member.vote(candidates) for member in group.members)\n",
        "    candidates = frozenset(group.supported_protocol_counts())\n"
        "    votes = Counter(member.vote(candidates) for member in group.members)\n",
        "the protocol vote counts protocols some members do not support",
    ),
    HandFault(
        "empty-group-generation-reset",
        "KAFKA-2720",
        "JoinGroup",
        "rebalance.py",
        "    group = replace(group, protocol_name=None, subscribed_topics=None)\n",
        "    group = replace(group, protocol_name=None, subscribed_topics=None, generation_id=0)\n",
        "a group that becomes Empty goes back to generation 0, so an old member's commit can "
        "match a later generation",
    ),
    HandFault(
        "parked-syncs-kept-on-rebalance",
        "",
        "SyncGroup",
        "rebalance.py",
        "    if group.state is COMPLETING_REBALANCE:\n"
        "        group = reset_and_propagate_assignment_error(step, group, ErrorCode.REBALANCE_IN_PROGRESS)\n",
        "    if False:\n"
        "        group = reset_and_propagate_assignment_error(step, group, ErrorCode.REBALANCE_IN_PROGRESS)\n",
        "a rebalance that starts while SyncGroups are parked leaves them parked",
    ),
    HandFault(
        "removed-leader-kept",
        "",
        "LeaveGroup",
        "rebalance.py",
        "    was_leader = group.is_leader(member_id)\n",
        "    was_leader = False\n",
        "a leader that leaves or is removed stays the group's leader",
    ),
    # -- SyncGroup -----------------------------------------------------------------------------
    HandFault(
        "no-pending-sync-timer",
        "KAFKA-12890",
        "SyncGroup",
        "rebalance.py",
        "        sync_timer=SyncTimer(sync_deadline, group.generation_id),\n",
        "        sync_timer=None,\n",
        "no timer removes the members of a generation that never send SyncGroup",
    ),
    HandFault(
        "stable-sync-empty-assignment",
        "",
        "SyncGroup",
        "sync.py",
        "            ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment\n",
        '            ErrorCode.NONE, group.protocol_type, group.protocol_name, b""\n',
        "a follower syncing after the group became Stable gets an empty assignment",
    ),
    HandFault(
        "sync-in-preparing-accepted",
        "",
        "SyncGroup",
        "sync.py",
        "    if group.state is PREPARING_REBALANCE:\n"
        "        step.fire(SYNC_PREPARING_REBALANCE_IN_PROGRESS)\n",
        "    if False:\n        step.fire(SYNC_PREPARING_REBALANCE_IN_PROGRESS)\n",
        "a SyncGroup during a rebalance is served as if the group were Stable",
    ),
    # -- Heartbeat -----------------------------------------------------------------------------
    HandFault(
        "heartbeat-hides-rebalance",
        "",
        "Heartbeat",
        "heartbeat.py",
        "    if group.state is PREPARING_REBALANCE:\n"
        "        step.fire(HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS)\n",
        "    if False:\n        step.fire(HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS)\n",
        "a heartbeat during a rebalance is answered NONE: the member never learns to rejoin",
    ),
    HandFault(
        "heartbeat-generation-unchecked",
        "",
        "Heartbeat",
        "heartbeat.py",
        "    error = validate_member_and_generation(\n"
        "        group, request.member_id, request.group_instance_id, request.generation_id\n"
        "    )\n"
        "    if error is not None:\n"
        "        step.fire(HEARTBEAT_INVALID_MEMBER_OR_GENERATION)\n",
        "    error = validate_member_and_generation(\n"
        "        group, request.member_id, request.group_instance_id, group.generation_id\n"
        "    )\n"
        "    if error is not None:\n"
        "        step.fire(HEARTBEAT_INVALID_MEMBER_OR_GENERATION)\n",
        "a heartbeat from an old generation is accepted",
    ),
    # -- LeaveGroup ----------------------------------------------------------------------------
    HandFault(
        "leave-without-rebalance",
        "",
        "LeaveGroup",
        "leave.py",
        "        if group.state in (STABLE, COMPLETING_REBALANCE):\n"
        "            group = prepare_rebalance(step, group)\n",
        "        if False:\n            group = prepare_rebalance(step, group)\n",
        "a member leaving a Stable group starts no rebalance: its partitions are assigned to "
        "nobody",
    ),
    HandFault(
        "leave-by-instance-ignores-member-id",
        "",
        "LeaveGroup",
        "leave.py",
        "    error = validate_member(group, identity.member_id, identity.group_instance_id)\n"
        "    if error is not None:\n"
        "        step.fire(LEAVE_INVALID_MEMBER)\n",
        "    error = validate_member(group, identity.member_id, None)\n"
        "    if error is not None:\n"
        "        step.fire(LEAVE_INVALID_MEMBER)\n",
        "a replaced static member's LeaveGroup removes it without FENCED_INSTANCE_ID",
    ),
    # -- OffsetCommit and retention ------------------------------------------------------------
    HandFault(
        "commit-generation-unchecked",
        "KAFKA-2555",
        "OffsetCommit",
        "offsets.py",
        "        error = validate_member_and_generation(\n"
        "            group, request.member_id, request.group_instance_id, request.generation_id\n"
        "        )\n",
        "        error = validate_member_and_generation(\n"
        "            group, request.member_id, request.group_instance_id, group.generation_id\n"
        "        )\n",
        "an OffsetCommit is accepted whatever its generation: a zombie overwrites its partition's "
        "new owner's progress",
    ),
    HandFault(
        "commit-while-completing",
        "",
        "OffsetCommit",
        "offsets.py",
        "    if group.state is COMPLETING_REBALANCE:\n"
        "        return ErrorCode.REBALANCE_IN_PROGRESS\n    return None\n",
        "    return None\n",
        "a commit is accepted while the new generation awaits its assignment",
    ),
    HandFault(
        "offsets-of-active-group-expire",
        "KAFKA-4682",
        "OffsetRetentionCheck",
        "offsets.py",
        "        if group.state is EMPTY:\n            became_empty = group.current_state_timestamp_ms\n",
        "        if True:\n            became_empty = group.current_state_timestamp_ms\n",
        "the offsets of a group with members expire as if it were Empty (KIP-211)",
    ),
    # -- timers --------------------------------------------------------------------------------
    HandFault(
        "join-timer-completes-without-rejoin",
        "",
        "JoinTimerExpired",
        "rebalance.py",
        "    if not has_leader and group.members:\n",
        "    if False:\n",
        "the join timer completes a rebalance no member rejoined",
    ),
    HandFault(
        "sync-timer-removes-synced-members",
        "",
        "SyncTimerExpired",
        "timers.py",
        "    for member_id in sorted(group.pending_sync_members):\n",
        "    for member_id in sorted(member.member_id for member in group.members):\n",
        "the sync timer removes the members that did sync as well",
    ),
    HandFault(
        "parked-member-expires",
        "",
        "HeartbeatExpired",
        "timers.py",
        "    if member.has_satisfied_heartbeat():\n",
        "    if False:\n",
        "a member parked in JoinGroup or SyncGroup is removed when its session timer fires",
    ),
    # -- failover and admin --------------------------------------------------------------------
    HandFault(
        "load-forgets-members",
        "",
        "FinishLoading",
        "persistence.py",
        "        state=STABLE if members else EMPTY,\n",
        "        state=EMPTY,\n",
        "a loaded group comes back Empty though its record has members",
    ),
    HandFault(
        "delete-non-empty-group",
        "",
        "DeleteGroups",
        "admin.py",
        "    if group.state is not EMPTY:\n        step.fire(DELETE_NON_EMPTY_GROUP)\n",
        "    if False:\n        step.fire(DELETE_NON_EMPTY_GROUP)\n",
        "DeleteGroups deletes a group with members",
    ),
)
