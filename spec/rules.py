"""The catalog of specification rules: every rule a step can fire, with its reference section.

Each rule is a module-level constant named after its id in upper snake case
(`join.static_member_replaced` is `JOIN_STATIC_MEMBER_REPLACED`); handlers fire the constant, so
a misspelt rule is an import error. Rule ids are what coverage reports count and what
docs/spec.md indexes; `Step.fire` refuses a rule that is not listed in `RULES`, so the catalog
cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import KAFKA_3X, KAFKA_4X, KAFKA_VERSIONS


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
    # The Kafka version profiles (CoordinatorConfig.kafka_version) whose coordinator has this
    # branch; most rules hold for every release (docs/protocol.md §11.2).
    kafka_versions: tuple[str, ...] = tuple(KAFKA_VERSIONS)

    @property
    def profile_only(self) -> str:
        """'Kafka 3.x profile only' for a rule of some releases' coordinator, else ''."""
        if self.kafka_versions == tuple(KAFKA_VERSIONS):
            return ""
        return f"Kafka {', '.join(self.kafka_versions)} profile only"


# Coordinator-level checks
COORDINATOR_INVALID_GROUP_ID = Rule(
    "coordinator.invalid_group_id",
    "§2.0",
    "Join/Sync/Heartbeat/Leave with an empty group id get INVALID_GROUP_ID.",
)
COORDINATOR_CHECK_FAILED = Rule(
    "coordinator.check_failed",
    "§2.0",
    "The group's offsets partition is led elsewhere (NOT_COORDINATOR) or still loading (COORDINATOR_LOAD_IN_PROGRESS; Heartbeat remaps to NONE, SyncGroup to REBALANCE_IN_PROGRESS).",
)
FIND_COORDINATOR_FOUND = Rule(
    "find_coordinator.found",
    "§6",
    "FindCoordinator names this broker for a group whose partition it leads (even while loading).",
)
FIND_COORDINATOR_NOT_AVAILABLE = Rule(
    "find_coordinator.not_available",
    "§6",
    "FindCoordinator for a partition this broker does not lead: COORDINATOR_NOT_AVAILABLE.",
)

# JoinGroup
JOIN_INVALID_SESSION_TIMEOUT = Rule(
    "join.invalid_session_timeout",
    "§2.2.1",
    "Session timeout outside [group.min, group.max]: INVALID_SESSION_TIMEOUT.",
)
JOIN_UNKNOWN_GROUP_WITH_MEMBER_ID = Rule(
    "join.unknown_group_with_member_id",
    "§2.2.2",
    "Unknown group and a non-empty member id: UNKNOWN_MEMBER_ID.",
)
JOIN_GROUP_CREATED = Rule(
    "join.group_created",
    "§1, §2.2.2",
    'JoinGroup with member id "" creates the group: Empty, generation 0; an empty group record is written.',
    kafka_versions=(KAFKA_4X,),
)
JOIN_GROUP_CREATED_KAFKA_3X = Rule(
    "join.group_created.kafka_3x",
    "§11.2",
    'Scala GroupCoordinator: JoinGroup with member id "" creates the group in memory only (Empty, generation 0); no record is written, so no append can fail it and a coordinator move before its first rebalance forgets it.',
    kafka_versions=(KAFKA_3X,),
)
JOIN_NEW_GROUP_WRITE_FAILED = Rule(
    "join.new_group_write_failed",
    "§2.0, §6",
    "The new group's record could not be written: the group is not created; the join gets the mapped error.",
    kafka_versions=(KAFKA_4X,),
)
JOIN_GROUP_MAX_SIZE_REACHED = Rule(
    "join.group_max_size_reached",
    "§2.2.3",
    'Group-size admission failed: the member id is removed and GROUP_MAX_SIZE_REACHED returned with member id "".',
)
JOIN_NEW_MEMBER_GROUP_DEAD = Rule(
    "join.new_member.group_dead",
    "§2.2.4",
    "New member joining a Dead group: COORDINATOR_NOT_AVAILABLE.",
    defensive=True,
)
JOIN_NEW_MEMBER_INCONSISTENT_PROTOCOL = Rule(
    "join.new_member.inconsistent_protocol",
    "§2.2.4",
    "New member whose protocol type/names the group cannot support: INCONSISTENT_GROUP_PROTOCOL.",
)
JOIN_STATIC_MEMBER_REPLACED = Rule(
    "join.static_member_replaced",
    "§9",
    'Static member joins with member id "" and a known instance id: replacement.',
)
JOIN_NEW_STATIC_MEMBER_ADDED = Rule(
    "join.new_static_member_added",
    "§2.2.4",
    "Static member with an unknown instance id is added at once (no MEMBER_ID_REQUIRED).",
)
JOIN_NEW_DYNAMIC_MEMBER_MEMBER_ID_REQUIRED = Rule(
    "join.new_dynamic_member.member_id_required",
    "§2.2.4",
    "Dynamic member on JoinGroup v4+: new id becomes a pending member with a session-timeout expiry; MEMBER_ID_REQUIRED carries it.",
)
JOIN_NEW_DYNAMIC_MEMBER_ADDED_V0_TO_V3 = Rule(
    "join.new_dynamic_member_added_v0_to_v3",
    "§2.2.4",
    "Dynamic member on JoinGroup v0-v3 is added at once.",
)
JOIN_NEW_MEMBER_DOES_NOT_EXTEND_INITIAL_DELAY_KAFKA_3X = Rule(
    "join.new_member_does_not_extend_initial_delay.kafka_3x",
    "§11.2",
    "Scala GroupCoordinator: a member joining the initial rebalance of a group past generation 0 does not mark a new member added, so the initial delay is not extended for it.",
    kafka_versions=(KAFKA_3X,),
)
JOIN_EXISTING_MEMBER_GROUP_DEAD = Rule(
    "join.existing_member.group_dead",
    "§2.2.5",
    "Known member id joining a Dead group: COORDINATOR_NOT_AVAILABLE.",
    defensive=True,
)
JOIN_EXISTING_MEMBER_INCONSISTENT_PROTOCOL = Rule(
    "join.existing_member.inconsistent_protocol",
    "§2.2.5",
    "Known member offering protocols the group cannot support: INCONSISTENT_GROUP_PROTOCOL.",
)
JOIN_PENDING_MEMBER_WITH_INSTANCE_ID = Rule(
    "join.pending_member_with_instance_id",
    "§2.2.5",
    "A pending (dynamic) member id sent with an instance id: Kafka's IllegalStateException, UNKNOWN_SERVER_ERROR.",
)
JOIN_PENDING_MEMBER_JOINED = Rule(
    "join.pending_member_joined",
    "§2.2.5",
    "A pending member rejoins with its id and becomes a real member.",
)
JOIN_EXISTING_MEMBER_INVALID_MEMBER = Rule(
    "join.existing_member.invalid_member",
    "§2.1",
    "Member validation failed: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID.",
)
JOIN_EXISTING_MEMBER_PREPARING_PARKED = Rule(
    "join.existing_member.preparing_parked",
    "§2.2.5",
    "PreparingRebalance: update protocols and timeouts, park the join, try to complete the join phase.",
)
JOIN_EXISTING_MEMBER_COMPLETING_SAME_PROTOCOLS = Rule(
    "join.existing_member.completing_same_protocols",
    "§2.2.5",
    "CompletingRebalance with identical protocols: immediate success at the current generation (the leader gets the member list).",
)
JOIN_EXISTING_MEMBER_COMPLETING_CHANGED_PROTOCOLS = Rule(
    "join.existing_member.completing_changed_protocols",
    "§2.2.5",
    "CompletingRebalance with different protocols: update and rebalance.",
)
JOIN_EXISTING_MEMBER_STABLE_LEADER_REBALANCES = Rule(
    "join.existing_member.stable_leader_rebalances",
    "§2.2.5",
    "Stable: a JoinGroup from the leader always rebalances.",
)
JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS = Rule(
    "join.existing_member.stable_follower_changed_protocols",
    "§2.2.5",
    "Stable: a follower rejoining with changed protocols rebalances.",
)
JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_UNCHANGED = Rule(
    "join.existing_member.stable_follower_unchanged",
    "§2.2.5",
    "Stable: an unchanged follower gets the current generation at once, empty member list.",
)
JOIN_EXISTING_MEMBER_EMPTY_GROUP = Rule(
    "join.existing_member.empty_group",
    "§2.2.5",
    "Empty: UNKNOWN_MEMBER_ID (unreachable: validation fails first, as in Kafka).",
    defensive=True,
)
JOIN_STATIC_REPLACEMENT_STABLE_NO_REBALANCE = Rule(
    "join.static_replacement.stable_no_rebalance",
    "§9",
    "Stable and the re-selected protocol is unchanged: no rebalance, no generation bump, group record written; v9+ leader gets skipAssignment, before v9 the old leader id is returned.",
)
JOIN_STATIC_REPLACEMENT_PROTOCOL_CHANGED_REBALANCE = Rule(
    "join.static_replacement.protocol_changed_rebalance",
    "§9",
    "Stable and the protocol would change: rebalance.",
)
JOIN_STATIC_REPLACEMENT_WRITE_FAILED_REVERTED = Rule(
    "join.static_replacement.write_failed_reverted",
    "§9",
    'The replacement\'s group record failed: the replacement is reverted and the error returned with member id "".',
)
JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES = Rule(
    "join.static_replacement.completing_rebalances",
    "§9",
    "CompletingRebalance: a static replacement always rebalances.",
)
JOIN_STATIC_REPLACEMENT_PREPARING = Rule(
    "join.static_replacement.preparing",
    "§9",
    "PreparingRebalance: the replacement is parked; try to complete the join phase.",
)

# Rebalance machinery
REBALANCE_PREPARE = Rule(
    "rebalance.prepare",
    "§3 prepareRebalance",
    "Enter PreparingRebalance: from Completing fail parked syncs and clear assignments; clear pending-sync set and sync timer.",
)
REBALANCE_INITIAL_DELAY_ARMED = Rule(
    "rebalance.initial_delay_armed",
    "§3 step 5",
    "Initial rebalance (from Empty): join timer = initial delay, remaining = max(rebalance timeout - delay, 0).",
)
REBALANCE_JOIN_TIMER_ARMED = Rule(
    "rebalance.join_timer_armed",
    "§3 step 4",
    "Normal rebalance with members still to join: join timer = group rebalance timeout.",
)
REBALANCE_JOIN_COMPLETED_EARLY = Rule(
    "rebalance.join_completed_early",
    "§3 step 4",
    "Everyone joined (and not the initial rebalance): complete the join phase now.",
)
REBALANCE_JOIN_COMPLETED_AFTER_REMOVAL = Rule(
    "rebalance.join_completed_after_removal",
    "§3 timers",
    "A removal by expiry left everyone joined: complete the join phase (even during the initial rebalance).",
)
REBALANCE_INITIAL_DELAY_KEPT_AFTER_REMOVAL_KAFKA_3X = Rule(
    "rebalance.initial_delay_kept_after_removal.kafka_3x",
    "§11.2",
    "Scala GroupCoordinator: a removal by expiry that leaves everyone joined during the initial-rebalance delay does not complete the join phase; the delay runs out first.",
    kafka_versions=(KAFKA_3X,),
)
REBALANCE_INITIAL_DELAY_EXTENDED = Rule(
    "rebalance.initial_delay_extended",
    "§3 step 5",
    "Initial delay fired with a new member added and time remaining: re-arm with min(delay, remaining).",
)
REBALANCE_DYNAMIC_MEMBER_NOT_REJOINED_REMOVED = Rule(
    "rebalance.dynamic_member_not_rejoined_removed",
    "§3 completing 2",
    "Join completion removes every dynamic member that did not rejoin; static members are kept.",
)
REBALANCE_LEADER_REELECTED = Rule(
    "rebalance.leader_reelected",
    "§3 completing 3",
    "The leader did not rejoin: a rejoined member (implementation-defined) becomes leader.",
)
REBALANCE_NO_MEMBER_REJOINED_JOIN_TIMER_REARMED = Rule(
    "rebalance.no_member_rejoined_join_timer_rearmed",
    "§3 completing 3",
    "No member rejoined but members remain: stay Preparing and re-arm the join timer.",
)
REBALANCE_COMPLETED_TO_COMPLETING = Rule(
    "rebalance.completed_to_completing",
    "§3 completing 4",
    "Next generation with members: protocol selected, CompletingRebalance, joins answered, heartbeats reset, everyone pending-sync, sync timer armed.",
)
REBALANCE_COMPLETED_TO_EMPTY = Rule(
    "rebalance.completed_to_empty",
    "§3 completing 4",
    "Next generation without members: protocol cleared, Empty, group record written.",
)

# SyncGroup
SYNC_UNKNOWN_OR_EMPTY_GROUP = Rule(
    "sync.unknown_or_empty_group", "§2.3", "Group missing or Empty: UNKNOWN_MEMBER_ID."
)
SYNC_GROUP_DEAD = Rule(
    "sync.group_dead", "§2.3", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True
)
SYNC_INVALID_MEMBER_OR_GENERATION = Rule(
    "sync.invalid_member_or_generation", "§2.3", "Member validation or generation check failed."
)
SYNC_INCONSISTENT_PROTOCOL = Rule(
    "sync.inconsistent_protocol",
    "§2.3",
    "Protocol type or name given and different from the group's: INCONSISTENT_GROUP_PROTOCOL.",
)
SYNC_PREPARING_REBALANCE_IN_PROGRESS = Rule(
    "sync.preparing_rebalance_in_progress", "§2.3", "PreparingRebalance: REBALANCE_IN_PROGRESS."
)
SYNC_COMPLETING_FOLLOWER_PARKED = Rule(
    "sync.completing_follower_parked",
    "§2.3",
    "CompletingRebalance, follower: parked until the leader's assignment is stored.",
)
SYNC_LEADER_ASSIGNMENT_STORED_GROUP_STABLE = Rule(
    "sync.leader_assignment_stored_group_stable",
    "§2.3",
    "Leader's assignment (gaps filled with empty) persisted: every parked sync answered, group Stable.",
)
SYNC_LEADER_ASSIGNMENT_WRITE_FAILED = Rule(
    "sync.leader_assignment_write_failed",
    "§2.3",
    "Leader's assignment write failed: parked syncs get the mapped error, then rebalance.",
)
SYNC_PARKED_ANSWERED_WITH_ERROR = Rule(
    "sync.parked_answered_with_error",
    "§2.3",
    "Assignments cleared and every parked SyncGroup answered with an error.",
)
SYNC_STABLE_RETURNS_ASSIGNMENT = Rule(
    "sync.stable_returns_assignment",
    "§2.3",
    "Stable: the stored assignment is returned at once.",
    kafka_versions=(KAFKA_4X,),
)
SYNC_STABLE_RETURNS_ASSIGNMENT_KAFKA_3X = Rule(
    "sync.stable_returns_assignment.kafka_3x",
    "§11.2",
    "Scala GroupCoordinator: a SyncGroup in Stable returns the member's assignment and also renews its session timer.",
    kafka_versions=(KAFKA_3X,),
)

# Heartbeat
HEARTBEAT_UNKNOWN_GROUP = Rule(
    "heartbeat.unknown_group", "§2.4", "Group missing: UNKNOWN_MEMBER_ID."
)
HEARTBEAT_GROUP_DEAD = Rule(
    "heartbeat.group_dead", "§2.4", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True
)
HEARTBEAT_INVALID_MEMBER_OR_GENERATION = Rule(
    "heartbeat.invalid_member_or_generation",
    "§2.4",
    "Member validation or generation check failed (a pending member is unknown).",
)
HEARTBEAT_EMPTY_GROUP = Rule(
    "heartbeat.empty_group", "§2.4", "Empty: UNKNOWN_MEMBER_ID.", defensive=True
)
HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS = Rule(
    "heartbeat.preparing_rebalance_in_progress",
    "§2.4",
    "PreparingRebalance: session timer reset, REBALANCE_IN_PROGRESS.",
)
HEARTBEAT_ACCEPTED = Rule(
    "heartbeat.accepted", "§2.4", "CompletingRebalance or Stable: session timer reset, NONE."
)

# LeaveGroup
LEAVE_UNKNOWN_GROUP = Rule(
    "leave.unknown_group",
    "§2.5",
    "Group missing: top-level NONE, every member UNKNOWN_MEMBER_ID.",
)
LEAVE_GROUP_DEAD = Rule(
    "leave.group_dead", "§2.5", "Dead: COORDINATOR_NOT_AVAILABLE.", defensive=True
)
LEAVE_REMOVED_BY_INSTANCE_ID = Rule(
    "leave.removed_by_instance_id",
    "§2.5",
    'Member id "" with a known instance id: that instance\'s member is removed (admin removal).',
)
LEAVE_NO_MEMBER_ID_UNKNOWN_INSTANCE = Rule(
    "leave.no_member_id_unknown_instance", "§2.5", 'Member id "" otherwise: UNKNOWN_MEMBER_ID.'
)
LEAVE_PENDING_MEMBER_REMOVED = Rule(
    "leave.pending_member_removed", "§2.5", "A pending member id: removed from the pending set."
)
LEAVE_INVALID_MEMBER = Rule(
    "leave.invalid_member", "§2.5", "Member validation failed for this entry."
)
LEAVE_MEMBER_REMOVED = Rule(
    "leave.member_removed",
    "§2.5",
    "A valid member is removed; its parked join gets UNKNOWN_MEMBER_ID.",
)

# Offsets
COMMIT_UNKNOWN_GROUP_WITH_GENERATION = Rule(
    "commit.unknown_group_with_generation",
    "§5.1",
    "Unknown group, generation ≥ 0: GROUP_ID_NOT_FOUND on v9+, ILLEGAL_GENERATION before.",
    kafka_versions=(KAFKA_4X,),
)
COMMIT_UNKNOWN_GROUP_WITH_GENERATION_KAFKA_3X = Rule(
    "commit.unknown_group_with_generation.kafka_3x",
    "§11.2",
    "Scala GroupCoordinator: an OffsetCommit to an unknown group with generation >= 0 gets ILLEGAL_GENERATION at every API version.",
    kafka_versions=(KAFKA_3X,),
)
COMMIT_SIMPLE_GROUP_CREATED = Rule(
    "commit.simple_group_created",
    "§5.1",
    "Unknown group, generation < 0: a simple group (Empty, no protocol type) is created.",
)
COMMIT_REJECTED_BY_FENCING = Rule(
    "commit.rejected_by_fencing",
    "§5.2-6",
    "Fencing rejected the commit: COORDINATOR_NOT_AVAILABLE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS.",
)
COMMIT_ACCEPTED = Rule(
    "commit.accepted",
    "§5.7",
    "Commit accepted; in Stable or PreparingRebalance the committer's session timer is reset.",
)
COMMIT_METADATA_TOO_LARGE = Rule(
    "commit.metadata_too_large",
    "§5.8",
    "A partition's metadata exceeds offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE for it, others written.",
)
COMMIT_WRITE_FAILED = Rule(
    "commit.write_failed",
    "§2.0",
    "The offsets could not be written: every partition gets the mapped error.",
)
FETCH_UNKNOWN_GROUP = Rule(
    "fetch.unknown_group",
    "§2.7",
    'Missing or Dead group: offset -1, leader epoch -1, metadata "" for every partition.',
)
FETCH_OFFSETS = Rule(
    "fetch.offsets",
    "§2.7",
    "The committed offsets of the requested partitions (-1 where none).",
)
FETCH_ALL_OFFSETS = Rule("fetch.all_offsets", "§2.7", "Every committed offset of the group.")
RETENTION_CHECK = Rule("retention.check", "§6", "The periodic retention task runs and re-arms.")
RETENTION_OFFSETS_EXPIRED = Rule(
    "retention.offsets_expired",
    "§6",
    "Offsets past retention (by the table of §6) are tombstoned.",
)
RETENTION_EMPTY_GROUP_DELETED = Rule(
    "retention.empty_group_deleted", "§6", "An Empty group left without offsets is deleted."
)
RETENTION_WRITE_FAILED = Rule(
    "retention.write_failed",
    "§6",
    "The tombstones could not be written: nothing expires this round.",
)

# Admin
DESCRIBE_UNKNOWN_GROUP = Rule(
    "describe.unknown_group",
    "§2.8",
    'Unknown group: state "Dead", no members; error NONE, GROUP_ID_NOT_FOUND from v6.',
)
DESCRIBE_STABLE_GROUP = Rule(
    "describe.stable_group",
    "§2.8",
    "Stable: protocol name and members with metadata and assignment.",
)
DESCRIBE_UNSTABLE_GROUP = Rule(
    "describe.unstable_group", "§2.8", 'Other states: protocol "" and members without metadata.'
)
LIST_GROUPS = Rule(
    "list.groups", "§2.8", "ListGroups with case-insensitive state and type filters."
)
DELETE_UNKNOWN_GROUP = Rule("delete.unknown_group", "§2.8", "Missing or Dead: GROUP_ID_NOT_FOUND.")
DELETE_NON_EMPTY_GROUP = Rule(
    "delete.non_empty_group", "§2.8", "Stable/Preparing/Completing: NON_EMPTY_GROUP."
)
DELETE_EMPTY_GROUP_DELETED = Rule(
    "delete.empty_group_deleted",
    "§2.8",
    "Empty: offsets and group tombstoned, group Dead and removed.",
)
DELETE_WRITE_FAILED = Rule(
    "delete.write_failed", "§2.8", "The tombstones could not be written: the mapped error."
)

# Timers
TIMER_PENDING_MEMBER_EXPIRED = Rule(
    "timer.pending_member_expired",
    "§3 heartbeat",
    "A pending member's expiry fired: removed; if everyone has now joined, complete the join phase.",
)
TIMER_HEARTBEAT_EXPIRED_BUT_SATISFIED = Rule(
    "timer.heartbeat_expired_but_satisfied",
    "§3 heartbeat",
    "A member's session timer fired while it is parked in Join/Sync (and not new): kept.",
)
TIMER_HEARTBEAT_EXPIRED_MEMBER_REMOVED = Rule(
    "timer.heartbeat_expired_member_removed",
    "§3 heartbeat",
    "A member's session timer fired: removed (parked join gets UNKNOWN_MEMBER_ID), then rebalance or complete.",
)
TIMER_INITIAL_REBALANCE_DELAY_EXPIRED = Rule(
    "timer.initial_rebalance_delay_expired", "§3 step 5", "The initial-rebalance delay fired."
)
TIMER_REBALANCE_TIMEOUT_EXPIRED = Rule(
    "timer.rebalance_timeout_expired", "§3", "The join timer fired: complete the join phase."
)
TIMER_SYNC_EXPIRED_STALE = Rule(
    "timer.sync_expired_stale",
    "§3 sync timer",
    "The sync timer fired for an old generation or outside Completing/Stable: nothing.",
    defensive=True,
)
TIMER_SYNC_EXPIRED_ALL_SYNCED = Rule(
    "timer.sync_expired_all_synced",
    "§3 sync timer",
    "The sync timer fired after everyone synced: nothing.",
    defensive=True,
)
TIMER_SYNC_EXPIRED_MEMBERS_REMOVED = Rule(
    "timer.sync_expired_members_removed",
    "§3 sync timer",
    "Members that never sent SyncGroup are removed and a rebalance prepared (even after Stable).",
)

# Coordinator failover
PARTITION_UNLOADED = Rule(
    "partition.unloaded",
    "§1 any → Dead",
    "The offsets partition moves away: its groups go Dead and leave memory.",
)
PARTITION_UNLOADED_PARKED_JOIN_ANSWERED = Rule(
    "partition.unloaded_parked_join_answered",
    "§1 any → Dead",
    "Group was rebalancing: parked joins get NOT_COORDINATOR.",
)
PARTITION_UNLOADED_PARKED_SYNC_ANSWERED = Rule(
    "partition.unloaded_parked_sync_answered",
    "§1 any → Dead",
    "Group was Completing or Stable: parked syncs get NOT_COORDINATOR.",
)
PARTITION_LOADING_STARTED = Rule(
    "partition.loading_started",
    "§2.0",
    "The broker leads the partition again; requests get COORDINATOR_LOAD_IN_PROGRESS until loaded.",
)
PARTITION_LOADED = Rule(
    "partition.loaded",
    "§1, §6",
    "Replay: groups with members come back Stable, others Empty; offsets restored; heartbeats armed.",
)
PARTITION_LOADED_GROUP_OVER_MAX_SIZE_REBALANCES = Rule(
    "partition.loaded_group_over_max_size_rebalances",
    "§1",
    "A loaded group with more members than group.max.size prepares a rebalance.",
)


RULES: tuple[Rule, ...] = (
    # Coordinator-level checks
    COORDINATOR_INVALID_GROUP_ID,
    COORDINATOR_CHECK_FAILED,
    FIND_COORDINATOR_FOUND,
    FIND_COORDINATOR_NOT_AVAILABLE,
    # JoinGroup
    JOIN_INVALID_SESSION_TIMEOUT,
    JOIN_UNKNOWN_GROUP_WITH_MEMBER_ID,
    JOIN_GROUP_CREATED,
    JOIN_GROUP_CREATED_KAFKA_3X,
    JOIN_NEW_GROUP_WRITE_FAILED,
    JOIN_GROUP_MAX_SIZE_REACHED,
    JOIN_NEW_MEMBER_GROUP_DEAD,
    JOIN_NEW_MEMBER_INCONSISTENT_PROTOCOL,
    JOIN_STATIC_MEMBER_REPLACED,
    JOIN_NEW_STATIC_MEMBER_ADDED,
    JOIN_NEW_DYNAMIC_MEMBER_MEMBER_ID_REQUIRED,
    JOIN_NEW_DYNAMIC_MEMBER_ADDED_V0_TO_V3,
    JOIN_NEW_MEMBER_DOES_NOT_EXTEND_INITIAL_DELAY_KAFKA_3X,
    JOIN_EXISTING_MEMBER_GROUP_DEAD,
    JOIN_EXISTING_MEMBER_INCONSISTENT_PROTOCOL,
    JOIN_PENDING_MEMBER_WITH_INSTANCE_ID,
    JOIN_PENDING_MEMBER_JOINED,
    JOIN_EXISTING_MEMBER_INVALID_MEMBER,
    JOIN_EXISTING_MEMBER_PREPARING_PARKED,
    JOIN_EXISTING_MEMBER_COMPLETING_SAME_PROTOCOLS,
    JOIN_EXISTING_MEMBER_COMPLETING_CHANGED_PROTOCOLS,
    JOIN_EXISTING_MEMBER_STABLE_LEADER_REBALANCES,
    JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS,
    JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_UNCHANGED,
    JOIN_EXISTING_MEMBER_EMPTY_GROUP,
    JOIN_STATIC_REPLACEMENT_STABLE_NO_REBALANCE,
    JOIN_STATIC_REPLACEMENT_PROTOCOL_CHANGED_REBALANCE,
    JOIN_STATIC_REPLACEMENT_WRITE_FAILED_REVERTED,
    JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES,
    JOIN_STATIC_REPLACEMENT_PREPARING,
    # Rebalance machinery
    REBALANCE_PREPARE,
    REBALANCE_INITIAL_DELAY_ARMED,
    REBALANCE_JOIN_TIMER_ARMED,
    REBALANCE_JOIN_COMPLETED_EARLY,
    REBALANCE_JOIN_COMPLETED_AFTER_REMOVAL,
    REBALANCE_INITIAL_DELAY_KEPT_AFTER_REMOVAL_KAFKA_3X,
    REBALANCE_INITIAL_DELAY_EXTENDED,
    REBALANCE_DYNAMIC_MEMBER_NOT_REJOINED_REMOVED,
    REBALANCE_LEADER_REELECTED,
    REBALANCE_NO_MEMBER_REJOINED_JOIN_TIMER_REARMED,
    REBALANCE_COMPLETED_TO_COMPLETING,
    REBALANCE_COMPLETED_TO_EMPTY,
    # SyncGroup
    SYNC_UNKNOWN_OR_EMPTY_GROUP,
    SYNC_GROUP_DEAD,
    SYNC_INVALID_MEMBER_OR_GENERATION,
    SYNC_INCONSISTENT_PROTOCOL,
    SYNC_PREPARING_REBALANCE_IN_PROGRESS,
    SYNC_COMPLETING_FOLLOWER_PARKED,
    SYNC_LEADER_ASSIGNMENT_STORED_GROUP_STABLE,
    SYNC_LEADER_ASSIGNMENT_WRITE_FAILED,
    SYNC_PARKED_ANSWERED_WITH_ERROR,
    SYNC_STABLE_RETURNS_ASSIGNMENT,
    SYNC_STABLE_RETURNS_ASSIGNMENT_KAFKA_3X,
    # Heartbeat
    HEARTBEAT_UNKNOWN_GROUP,
    HEARTBEAT_GROUP_DEAD,
    HEARTBEAT_INVALID_MEMBER_OR_GENERATION,
    HEARTBEAT_EMPTY_GROUP,
    HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS,
    HEARTBEAT_ACCEPTED,
    # LeaveGroup
    LEAVE_UNKNOWN_GROUP,
    LEAVE_GROUP_DEAD,
    LEAVE_REMOVED_BY_INSTANCE_ID,
    LEAVE_NO_MEMBER_ID_UNKNOWN_INSTANCE,
    LEAVE_PENDING_MEMBER_REMOVED,
    LEAVE_INVALID_MEMBER,
    LEAVE_MEMBER_REMOVED,
    # Offsets
    COMMIT_UNKNOWN_GROUP_WITH_GENERATION,
    COMMIT_UNKNOWN_GROUP_WITH_GENERATION_KAFKA_3X,
    COMMIT_SIMPLE_GROUP_CREATED,
    COMMIT_REJECTED_BY_FENCING,
    COMMIT_ACCEPTED,
    COMMIT_METADATA_TOO_LARGE,
    COMMIT_WRITE_FAILED,
    FETCH_UNKNOWN_GROUP,
    FETCH_OFFSETS,
    FETCH_ALL_OFFSETS,
    RETENTION_CHECK,
    RETENTION_OFFSETS_EXPIRED,
    RETENTION_EMPTY_GROUP_DELETED,
    RETENTION_WRITE_FAILED,
    # Admin
    DESCRIBE_UNKNOWN_GROUP,
    DESCRIBE_STABLE_GROUP,
    DESCRIBE_UNSTABLE_GROUP,
    LIST_GROUPS,
    DELETE_UNKNOWN_GROUP,
    DELETE_NON_EMPTY_GROUP,
    DELETE_EMPTY_GROUP_DELETED,
    DELETE_WRITE_FAILED,
    # Timers
    TIMER_PENDING_MEMBER_EXPIRED,
    TIMER_HEARTBEAT_EXPIRED_BUT_SATISFIED,
    TIMER_HEARTBEAT_EXPIRED_MEMBER_REMOVED,
    TIMER_INITIAL_REBALANCE_DELAY_EXPIRED,
    TIMER_REBALANCE_TIMEOUT_EXPIRED,
    TIMER_SYNC_EXPIRED_STALE,
    TIMER_SYNC_EXPIRED_ALL_SYNCED,
    TIMER_SYNC_EXPIRED_MEMBERS_REMOVED,
    # Coordinator failover
    PARTITION_UNLOADED,
    PARTITION_UNLOADED_PARKED_JOIN_ANSWERED,
    PARTITION_UNLOADED_PARKED_SYNC_ANSWERED,
    PARTITION_LOADING_STARTED,
    PARTITION_LOADED,
    PARTITION_LOADED_GROUP_OVER_MAX_SIZE_REBALANCES,
)

RULE_IDS: frozenset[str] = frozenset(rule.rule_id for rule in RULES)
DEFENSIVE_RULE_IDS: frozenset[str] = frozenset(rule.rule_id for rule in RULES if rule.defensive)
# Rules of another Kafka release's coordinator, never fired under the default `kafka_version`.
VERSION_PROFILE_RULE_IDS: frozenset[str] = frozenset(
    rule.rule_id for rule in RULES if KAFKA_4X not in rule.kafka_versions
)


def reachable_rule_ids(kafka_version: str = KAFKA_4X) -> frozenset[str]:
    """The rules a closed world of the `kafka_version` coordinator can be expected to reach:
    those of its release, defensive ones excepted."""
    return frozenset(
        rule.rule_id
        for rule in RULES
        if kafka_version in rule.kafka_versions and not rule.defensive
    )


# What a closed world of the default coordinator can be expected to reach.
REACHABLE_RULE_IDS: frozenset[str] = reachable_rule_ids()
