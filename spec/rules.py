"""The catalog of specification rules: every rule a step can fire, with its reference section.

Rule ids are what coverage reports count and what docs/spec.md indexes; `Step.fire` refuses an
id that is not listed here, so the catalog cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """A named rule of the protocol, where the reference states it, and what it does."""

    rule_id: str
    section: str
    summary: str
    # Kafka keeps this check for races between its threads (a request holding a group that
    # another thread just killed). Steps of the spec are atomic, so only a state built by hand
    # reaches it; coverage reports list such rules apart.
    defensive: bool = False


RULES: tuple[Rule, ...] = (
    # Coordinator-level checks
    Rule(
        "coordinator.invalid_group_id",
        "§2.0",
        "Join/Sync/Heartbeat/Leave with an empty group id get INVALID_GROUP_ID.",
    ),
    Rule(
        "coordinator.check_failed",
        "§2.0",
        "The group's offsets partition is led elsewhere (NOT_COORDINATOR) or still loading (COORDINATOR_LOAD_IN_PROGRESS; Heartbeat remaps to NONE, SyncGroup to REBALANCE_IN_PROGRESS).",
    ),
    Rule(
        "find_coordinator.found",
        "§6",
        "FindCoordinator names this broker for a group whose partition it leads (even while loading).",
    ),
    Rule(
        "find_coordinator.not_available",
        "§6",
        "FindCoordinator for a partition this broker does not lead: COORDINATOR_NOT_AVAILABLE.",
    ),
    # JoinGroup
    Rule(
        "join.invalid_session_timeout",
        "§2.2.1",
        "Session timeout outside [group.min, group.max]: INVALID_SESSION_TIMEOUT.",
    ),
    Rule(
        "join.unknown_group_with_member_id",
        "§2.2.2",
        "Unknown group and a non-empty member id: UNKNOWN_MEMBER_ID.",
    ),
    Rule(
        "join.group_created",
        "§1, §2.2.2",
        'JoinGroup with member id "" creates the group: Empty, generation 0; an empty group record is written.',
    ),
    Rule(
        "join.new_group_write_failed",
        "§2.0, §6",
        "The new group's record could not be written: the group is not created; the join gets the mapped error.",
    ),
    Rule(
        "join.group_max_size_reached",
        "§2.2.3",
        'Group-size admission failed: the member id is removed and GROUP_MAX_SIZE_REACHED returned with member id "".',
    ),
    Rule(
        "join.new_member.group_dead",
        "§2.2.4",
        "New member joining a Dead group: COORDINATOR_NOT_AVAILABLE.",
        defensive=True,
    ),
    Rule(
        "join.new_member.inconsistent_protocol",
        "§2.2.4",
        "New member whose protocol type/names the group cannot support: INCONSISTENT_GROUP_PROTOCOL.",
    ),
    Rule(
        "join.static_member_replaced",
        "§9",
        'Static member joins with member id "" and a known instance id: replacement.',
    ),
    Rule(
        "join.new_static_member_added",
        "§2.2.4",
        "Static member with an unknown instance id is added at once (no MEMBER_ID_REQUIRED).",
    ),
    Rule(
        "join.new_dynamic_member.member_id_required",
        "§2.2.4",
        "Dynamic member on JoinGroup v4+: new id becomes a pending member with a session-timeout expiry; MEMBER_ID_REQUIRED carries it.",
    ),
    Rule(
        "join.new_dynamic_member_added_v0_to_v3",
        "§2.2.4",
        "Dynamic member on JoinGroup v0-v3 is added at once.",
    ),
    Rule(
        "join.existing_member.group_dead",
        "§2.2.5",
        "Known member id joining a Dead group: COORDINATOR_NOT_AVAILABLE.",
        defensive=True,
    ),
    Rule(
        "join.existing_member.inconsistent_protocol",
        "§2.2.5",
        "Known member offering protocols the group cannot support: INCONSISTENT_GROUP_PROTOCOL.",
    ),
    Rule(
        "join.pending_member_with_instance_id",
        "§2.2.5",
        "A pending (dynamic) member id sent with an instance id: Kafka's IllegalStateException, UNKNOWN_SERVER_ERROR.",
    ),
    Rule(
        "join.pending_member_joined",
        "§2.2.5",
        "A pending member rejoins with its id and becomes a real member.",
    ),
    Rule(
        "join.existing_member.invalid_member",
        "§2.1",
        "Member validation failed: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID.",
    ),
    Rule(
        "join.existing_member.preparing_parked",
        "§2.2.5",
        "PreparingRebalance: update protocols and timeouts, park the join, try to complete the join phase.",
    ),
    Rule(
        "join.existing_member.completing_same_protocols",
        "§2.2.5",
        "CompletingRebalance with identical protocols: immediate success at the current generation (the leader gets the member list).",
    ),
    Rule(
        "join.existing_member.completing_changed_protocols",
        "§2.2.5",
        "CompletingRebalance with different protocols: update and rebalance.",
    ),
    Rule(
        "join.existing_member.stable_leader_rebalances",
        "§2.2.5",
        "Stable: a JoinGroup from the leader always rebalances.",
    ),
    Rule(
        "join.existing_member.stable_follower_changed_protocols",
        "§2.2.5",
        "Stable: a follower rejoining with changed protocols rebalances.",
    ),
    Rule(
        "join.existing_member.stable_follower_unchanged",
        "§2.2.5",
        "Stable: an unchanged follower gets the current generation at once, empty member list.",
    ),
    Rule(
        "join.existing_member.empty_group",
        "§2.2.5",
        "Empty: UNKNOWN_MEMBER_ID (unreachable: validation fails first, as in Kafka).",
        defensive=True,
    ),
    Rule(
        "join.static_replacement.stable_no_rebalance",
        "§9",
        "Stable and the re-selected protocol is unchanged: no rebalance, no generation bump, group record written; v9+ leader gets skipAssignment, before v9 the old leader id is returned.",
    ),
    Rule(
        "join.static_replacement.protocol_changed_rebalance",
        "§9",
        "Stable and the protocol would change: rebalance.",
    ),
    Rule(
        "join.static_replacement.write_failed_reverted",
        "§9",
        'The replacement\'s group record failed: the replacement is reverted and the error returned with member id "".',
    ),
    Rule(
        "join.static_replacement.completing_rebalances",
        "§9",
        "CompletingRebalance: a static replacement always rebalances.",
    ),
    Rule(
        "join.static_replacement.preparing",
        "§9",
        "PreparingRebalance: the replacement is parked; try to complete the join phase.",
    ),
    # Rebalance machinery
    Rule(
        "rebalance.prepare",
        "§3 prepareRebalance",
        "Enter PreparingRebalance: from Completing fail parked syncs and clear assignments; clear pending-sync set and sync timer.",
    ),
    Rule(
        "rebalance.initial_delay_armed",
        "§3 step 5",
        "Initial rebalance (from Empty): join timer = initial delay, remaining = max(rebalance timeout - delay, 0).",
    ),
    Rule(
        "rebalance.join_timer_armed",
        "§3 step 4",
        "Normal rebalance with members still to join: join timer = group rebalance timeout.",
    ),
    Rule(
        "rebalance.join_completed_early",
        "§3 step 4",
        "Everyone joined (and not the initial rebalance): complete the join phase now.",
    ),
    Rule(
        "rebalance.join_completed_after_removal",
        "§3 timers",
        "A removal by expiry left everyone joined: complete the join phase (even during the initial rebalance).",
    ),
    Rule(
        "rebalance.initial_delay_extended",
        "§3 step 5",
        "Initial delay fired with a new member added and time remaining: re-arm with min(delay, remaining).",
    ),
    Rule(
        "rebalance.dynamic_member_not_rejoined_removed",
        "§3 completing 2",
        "Join completion removes every dynamic member that did not rejoin; static members are kept.",
    ),
    Rule(
        "rebalance.leader_reelected",
        "§3 completing 3",
        "The leader did not rejoin: a rejoined member (implementation-defined) becomes leader.",
    ),
    Rule(
        "rebalance.no_member_rejoined_join_timer_rearmed",
        "§3 completing 3",
        "No member rejoined but members remain: stay Preparing and re-arm the join timer.",
    ),
    Rule(
        "rebalance.completed_to_completing",
        "§3 completing 4",
        "Next generation with members: protocol selected, CompletingRebalance, joins answered, heartbeats reset, everyone pending-sync, sync timer armed.",
    ),
    Rule(
        "rebalance.completed_to_empty",
        "§3 completing 4",
        "Next generation without members: protocol cleared, Empty, group record written.",
    ),
    # SyncGroup
    Rule("sync.unknown_or_empty_group", "§2.3", "Group missing or Empty: UNKNOWN_MEMBER_ID."),
    Rule("sync.group_dead", "§2.3", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True),
    Rule(
        "sync.invalid_member_or_generation", "§2.3", "Member validation or generation check failed."
    ),
    Rule(
        "sync.inconsistent_protocol",
        "§2.3",
        "Protocol type or name given and different from the group's: INCONSISTENT_GROUP_PROTOCOL.",
    ),
    Rule(
        "sync.preparing_rebalance_in_progress", "§2.3", "PreparingRebalance: REBALANCE_IN_PROGRESS."
    ),
    Rule(
        "sync.completing_follower_parked",
        "§2.3",
        "CompletingRebalance, follower: parked until the leader's assignment is stored.",
    ),
    Rule(
        "sync.leader_assignment_stored_group_stable",
        "§2.3",
        "Leader's assignment (gaps filled with empty) persisted: every parked sync answered, group Stable.",
    ),
    Rule(
        "sync.leader_assignment_write_failed",
        "§2.3",
        "Leader's assignment write failed: parked syncs get the mapped error, then rebalance.",
    ),
    Rule(
        "sync.parked_answered_with_error",
        "§2.3",
        "Assignments cleared and every parked SyncGroup answered with an error.",
    ),
    Rule(
        "sync.stable_returns_assignment",
        "§2.3",
        "Stable: the stored assignment is returned at once.",
    ),
    # Heartbeat
    Rule("heartbeat.unknown_group", "§2.4", "Group missing: UNKNOWN_MEMBER_ID."),
    Rule("heartbeat.group_dead", "§2.4", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True),
    Rule(
        "heartbeat.invalid_member_or_generation",
        "§2.4",
        "Member validation or generation check failed (a pending member is unknown).",
    ),
    Rule("heartbeat.empty_group", "§2.4", "Empty: UNKNOWN_MEMBER_ID.", defensive=True),
    Rule(
        "heartbeat.preparing_rebalance_in_progress",
        "§2.4",
        "PreparingRebalance: session timer reset, REBALANCE_IN_PROGRESS.",
    ),
    Rule("heartbeat.accepted", "§2.4", "CompletingRebalance or Stable: session timer reset, NONE."),
    # LeaveGroup
    Rule(
        "leave.unknown_group",
        "§2.5",
        "Group missing: top-level NONE, every member UNKNOWN_MEMBER_ID.",
    ),
    Rule("leave.group_dead", "§2.5", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True),
    Rule(
        "leave.removed_by_instance_id",
        "§2.5",
        'Member id "" with a known instance id: that instance\'s member is removed (admin removal).',
    ),
    Rule(
        "leave.no_member_id_unknown_instance", "§2.5", 'Member id "" otherwise: UNKNOWN_MEMBER_ID.'
    ),
    Rule(
        "leave.pending_member_removed", "§2.5", "A pending member id: removed from the pending set."
    ),
    Rule("leave.invalid_member", "§2.5", "Member validation failed for this entry."),
    Rule(
        "leave.member_removed",
        "§2.5",
        "A valid member is removed; its parked join gets UNKNOWN_MEMBER_ID.",
    ),
    # Offsets
    Rule(
        "commit.unknown_group_with_generation",
        "§5.1",
        "Unknown group, generation ≥ 0: GROUP_ID_NOT_FOUND on v9+, ILLEGAL_GENERATION before.",
    ),
    Rule(
        "commit.simple_group_created",
        "§5.1",
        "Unknown group, generation < 0: a simple group (Empty, no protocol type) is created.",
    ),
    Rule(
        "commit.rejected_by_fencing",
        "§5.2-6",
        "Fencing rejected the commit: COORDINATOR_NOT_AVAILABLE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS.",
    ),
    Rule(
        "commit.accepted",
        "§5.7",
        "Commit accepted; in Stable or PreparingRebalance the committer's session timer is reset.",
    ),
    Rule(
        "commit.metadata_too_large",
        "§5.8",
        "A partition's metadata exceeds offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE for it, others written.",
    ),
    Rule(
        "commit.write_failed",
        "§2.0",
        "The offsets could not be written: every partition gets the mapped error.",
    ),
    Rule(
        "fetch.unknown_group",
        "§2.7",
        'Missing or Dead group: offset -1, leader epoch -1, metadata "" for every partition.',
    ),
    Rule(
        "fetch.offsets",
        "§2.7",
        "The committed offsets of the requested partitions (-1 where none).",
    ),
    Rule("fetch.all_offsets", "§2.7", "Every committed offset of the group."),
    Rule("retention.check", "§6", "The periodic retention task runs and re-arms."),
    Rule(
        "retention.offsets_expired",
        "§6",
        "Offsets past retention (by the table of §6) are tombstoned.",
    ),
    Rule("retention.empty_group_deleted", "§6", "An Empty group left without offsets is deleted."),
    Rule(
        "retention.write_failed",
        "§6",
        "The tombstones could not be written: nothing expires this round.",
    ),
    # Admin
    Rule("describe.unknown_group", "§2.8", 'Unknown group: state "Dead", NONE, no members.'),
    Rule(
        "describe.stable_group",
        "§2.8",
        "Stable: protocol name and members with metadata and assignment.",
    ),
    Rule(
        "describe.unstable_group", "§2.8", 'Other states: protocol "" and members without metadata.'
    ),
    Rule("list.groups", "§2.8", "ListGroups with case-insensitive state and type filters."),
    Rule("delete.unknown_group", "§2.8", "Missing or Dead: GROUP_ID_NOT_FOUND."),
    Rule("delete.non_empty_group", "§2.8", "Stable/Preparing/Completing: NON_EMPTY_GROUP."),
    Rule(
        "delete.empty_group_deleted",
        "§2.8",
        "Empty: offsets and group tombstoned, group Dead and removed.",
    ),
    Rule("delete.write_failed", "§2.8", "The tombstones could not be written: the mapped error."),
    # Timers
    Rule(
        "timer.pending_member_expired",
        "§3 heartbeat",
        "A pending member's expiry fired: removed; if everyone has now joined, complete the join phase.",
    ),
    Rule(
        "timer.heartbeat_expired_but_satisfied",
        "§3 heartbeat",
        "A member's session timer fired while it is parked in Join/Sync (and not new): kept.",
    ),
    Rule(
        "timer.heartbeat_expired_member_removed",
        "§3 heartbeat",
        "A member's session timer fired: removed (parked join gets UNKNOWN_MEMBER_ID), then rebalance or complete.",
    ),
    Rule(
        "timer.initial_rebalance_delay_expired", "§3 step 5", "The initial-rebalance delay fired."
    ),
    Rule("timer.rebalance_timeout_expired", "§3", "The join timer fired: complete the join phase."),
    Rule(
        "timer.sync_expired_stale",
        "§3 sync timer",
        "The sync timer fired for an old generation or outside Completing/Stable: nothing.",
        defensive=True,
    ),
    Rule(
        "timer.sync_expired_all_synced",
        "§3 sync timer",
        "The sync timer fired after everyone synced: nothing.",
    ),
    Rule(
        "timer.sync_expired_members_removed",
        "§3 sync timer",
        "Members that never sent SyncGroup are removed and a rebalance prepared (even after Stable).",
    ),
    # Coordinator failover
    Rule(
        "partition.unloaded",
        "§1 any → Dead",
        "The offsets partition moves away: its groups go Dead and leave memory.",
    ),
    Rule(
        "partition.unloaded_parked_join_answered",
        "§1 any → Dead",
        "Group was rebalancing: parked joins get NOT_COORDINATOR.",
    ),
    Rule(
        "partition.unloaded_parked_sync_answered",
        "§1 any → Dead",
        "Group was Completing or Stable: parked syncs get NOT_COORDINATOR.",
    ),
    Rule(
        "partition.loading_started",
        "§2.0",
        "The broker leads the partition again; requests get COORDINATOR_LOAD_IN_PROGRESS until loaded.",
    ),
    Rule(
        "partition.loaded",
        "§1, §6",
        "Replay: groups with members come back Stable, others Empty; offsets restored; heartbeats armed.",
    ),
    Rule(
        "partition.loaded_group_over_max_size_rebalances",
        "§1",
        "A loaded group with more members than group.max.size prepares a rebalance.",
    ),
)

RULE_IDS: frozenset[str] = frozenset(rule.rule_id for rule in RULES)
DEFENSIVE_RULE_IDS: frozenset[str] = frozenset(rule.rule_id for rule in RULES if rule.defensive)
