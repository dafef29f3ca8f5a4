"""The rules of mixed groups (docs/protocol.md §12.15): classic-protocol members inside a
consumer-protocol group (`classic_members.py`) and the online conversions between a classic group
and a consumer group under group.consumer.migration.policy (`conversion.py`).

They belong to the KIP-848 catalog: `rules.KIP848_RULES` appends `MIXED_RULES`, so the
consumer-protocol step fires them and `groupspec rules --side kip848` lists them.
"""

from __future__ import annotations

from ..rules import Rule

_SECTION = "§12.15"
__all__ = [
    "CG_CLASSIC_EMPTY_CONSUMER_GROUP_REPLACED",
    "CG_CLASSIC_FENCED_INSTANCE_ID",
    "CG_CLASSIC_HEARTBEAT_OK",
    "CG_CLASSIC_HEARTBEAT_REJOIN",
    "CG_CLASSIC_ILLEGAL_GENERATION",
    "CG_CLASSIC_JOIN_ANSWERED",
    "CG_CLASSIC_JOIN_GROUP_MAX_SIZE_REACHED",
    "CG_CLASSIC_JOIN_INCONSISTENT_PROTOCOL",
    "CG_CLASSIC_JOIN_KNOWN_MEMBER",
    "CG_CLASSIC_JOIN_MEMBER_ID_REQUIRED",
    "CG_CLASSIC_JOIN_NEW_MEMBER",
    "CG_CLASSIC_JOIN_TIMEOUT_ARMED",
    "CG_CLASSIC_LEAVE",
    "CG_CLASSIC_NOT_CLASSIC_MEMBER",
    "CG_CLASSIC_OFFSET_COMMIT",
    "CG_CLASSIC_OFFSET_FETCH",
    "CG_CLASSIC_STATIC_MEMBER_REPLACED",
    "CG_CLASSIC_STATIC_NEW_MEMBER",
    "CG_CLASSIC_SYNC_ASSIGNMENT",
    "CG_CLASSIC_SYNC_INCONSISTENT_PROTOCOL",
    "CG_CLASSIC_SYNC_REBALANCE_IN_PROGRESS",
    "CG_CLASSIC_TIMER_JOIN_EXPIRED",
    "CG_CLASSIC_TIMER_SYNC_EXPIRED",
    "CG_CLASSIC_UNKNOWN_MEMBER",
    "CG_CONVERT_DOWNGRADE",
    "CG_CONVERT_DOWNGRADE_DISABLED",
    "CG_CONVERT_DOWNGRADE_ON_REPLACEMENT",
    "CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE",
    "CG_CONVERT_DOWNGRADE_TOO_LARGE",
    "CG_CONVERT_EMPTY_CLASSIC_REPLACED",
    "CG_CONVERT_NOT_A_CONSUMER_GROUP",
    "CG_CONVERT_UPGRADE",
    "CG_CONVERT_UPGRADE_DISABLED",
    "CG_CONVERT_UPGRADE_JOIN_REFUSED",
    "CG_CONVERT_UPGRADE_NOT_CONSUMER_PROTOCOL",
    "CG_CONVERT_UPGRADE_PARKED_ANSWERED",
    "CG_CONVERT_UPGRADE_TOO_LARGE",
    "CG_CONVERT_UPGRADE_UNREADABLE",
]


def _rule(rule_id: str, summary: str, *, defensive: bool = False) -> Rule:
    return Rule(rule_id, _SECTION, summary, defensive=defensive)


# JoinGroup of a classic member (classicGroupJoinToConsumerGroup)
CG_CLASSIC_JOIN_GROUP_MAX_SIZE_REACHED = _rule(
    "cg_classic.join_group_max_size_reached",
    "A JoinGroup to a consumer group holding group.consumer.max.size members, from a member id it does not hold: GROUP_MAX_SIZE_REACHED.",
)
CG_CLASSIC_JOIN_INCONSISTENT_PROTOCOL = _rule(
    "cg_classic.join_inconsistent_protocol",
    'A JoinGroup whose protocol type is not "consumer", or none of whose protocol names every classic member of the group offers: INCONSISTENT_GROUP_PROTOCOL.',
)
CG_CLASSIC_JOIN_MEMBER_ID_REQUIRED = _rule(
    "cg_classic.join_member_id_required",
    "A dynamic JoinGroup (v4+) without a member id: MEMBER_ID_REQUIRED with a fresh id, and nothing stored (a consumer group keeps no pending members).",
)
CG_CLASSIC_JOIN_NEW_MEMBER = _rule(
    "cg_classic.join_new_member",
    "A JoinGroup with a member id the group does not hold: a new member using the classic protocol, subscribed to the topics of its first protocol's subscription.",
)
CG_CLASSIC_JOIN_KNOWN_MEMBER = _rule(
    "cg_classic.join_known_member",
    "A JoinGroup from a current member: its subscription and classic metadata are updated; no epoch check (the generation is not part of a join).",
)
CG_CLASSIC_JOIN_ANSWERED = _rule(
    "cg_classic.join_answered",
    "The join is answered at once: the member's epoch (after reconciliation) as the generation, no leader, no member list; its join timeout is cancelled, its session and sync timeouts armed.",
)
# SyncGroup, Heartbeat and LeaveGroup of a classic member
CG_CLASSIC_UNKNOWN_MEMBER = _rule(
    "cg_classic.unknown_member",
    "A SyncGroup, Heartbeat or LeaveGroup entry naming a member id (or instance id) the consumer group does not hold: UNKNOWN_MEMBER_ID.",
)
CG_CLASSIC_FENCED_INSTANCE_ID = _rule(
    "cg_classic.fenced_instance_id",
    "A SyncGroup, Heartbeat or LeaveGroup entry whose instance id another member id holds: FENCED_INSTANCE_ID.",
)
CG_CLASSIC_NOT_CLASSIC_MEMBER = _rule(
    "cg_classic.not_classic_member",
    "A SyncGroup or Heartbeat from a member that uses the consumer protocol: UNKNOWN_MEMBER_ID.",
)
CG_CLASSIC_ILLEGAL_GENERATION = _rule(
    "cg_classic.illegal_generation",
    "A SyncGroup or Heartbeat whose generation is not the member's epoch: ILLEGAL_GENERATION.",
)
CG_CLASSIC_OFFSET_COMMIT = _rule(
    "cg_classic.offset_commit",
    "An OffsetCommit from a classic member of a consumer group: any version, its generation checked as a member epoch, each refusal ILLEGAL_GENERATION where a consumer-protocol member gets STALE_MEMBER_EPOCH.",
)
CG_CLASSIC_OFFSET_FETCH = _rule(
    "cg_classic.offset_fetch",
    "An OffsetFetch naming a classic member of a consumer group: its generation must be the member epoch (ILLEGAL_GENERATION otherwise).",
)
CG_CLASSIC_STATIC_NEW_MEMBER = _rule(
    "cg_classic.static_new_member",
    "A JoinGroup with a group instance id no member holds, and no member id: a new static classic member (no MEMBER_ID_REQUIRED round for a static member).",
)
CG_CLASSIC_STATIC_MEMBER_REPLACED = _rule(
    "cg_classic.static_member_replaced",
    "A JoinGroup with no member id and an instance id a member holds: the new member id takes that member's place and target at epoch 0, whatever protocol the old one spoke and whether it left or not.",
)
CG_CLASSIC_SYNC_INCONSISTENT_PROTOCOL = _rule(
    "cg_classic.sync_inconsistent_protocol",
    'A SyncGroup naming a protocol type other than "consumer" or a protocol name other than the member\'s first: INCONSISTENT_GROUP_PROTOCOL.',
)
CG_CLASSIC_SYNC_REBALANCE_IN_PROGRESS = _rule(
    "cg_classic.sync_rebalance_in_progress",
    "A SyncGroup from a member behind the assignment epoch and not revoking: REBALANCE_IN_PROGRESS, so it rejoins.",
)
CG_CLASSIC_SYNC_ASSIGNMENT = _rule(
    "cg_classic.sync_assignment",
    "A valid SyncGroup: the member's assigned partitions (not those pending revocation) in the consumer protocol; its sync timeout is cancelled and its session timeout re-armed.",
)
CG_CLASSIC_HEARTBEAT_REJOIN = _rule(
    "cg_classic.heartbeat_rejoin",
    "A Heartbeat from a member behind the assignment epoch, revoking, or unreleased with every awaited partition now free: REBALANCE_IN_PROGRESS (the session timeout is re-armed first).",
)
CG_CLASSIC_HEARTBEAT_OK = _rule(
    "cg_classic.heartbeat_ok",
    "Any other valid Heartbeat: NONE, and the member's session timeout is re-armed.",
)
CG_CLASSIC_JOIN_TIMEOUT_ARMED = _rule(
    "cg_classic.join_timeout_armed",
    "A member told to rejoin gets a join timeout for its rebalance timeout, unless one is armed.",
)
CG_CLASSIC_LEAVE = _rule(
    "cg_classic.leave",
    "A LeaveGroup to a consumer group: every valid entry's member (of either protocol) is fenced together, the group epoch bumped once.",
)
CG_CLASSIC_TIMER_JOIN_EXPIRED = _rule(
    "cg_classic.timer_join_expired",
    "A classic member's join timeout fired (it did not rejoin in time): the member is fenced.",
)
CG_CLASSIC_TIMER_SYNC_EXPIRED = _rule(
    "cg_classic.timer_sync_expired",
    "A classic member's sync timeout fired (it did not sync after joining in time): the member is fenced.",
)
CG_CLASSIC_EMPTY_CONSUMER_GROUP_REPLACED = _rule(
    "cg_classic.empty_consumer_group_replaced",
    "A JoinGroup to an Empty consumer group: the consumer group is deleted and the classic coordinator handles the join (a new classic group).",
)

# Conversions (convertToConsumerGroup, convertToClassicGroup)
CG_CONVERT_NOT_A_CONSUMER_GROUP = _rule(
    "cg_convert.not_a_consumer_group",
    "A ConsumerGroupHeartbeat other than a join (epoch != 0) for a classic group: GROUP_ID_NOT_FOUND.",
)
CG_CONVERT_EMPTY_CLASSIC_REPLACED = _rule(
    "cg_convert.empty_classic_replaced",
    "A join (epoch 0) for an Empty classic group: the classic group is deleted and a new consumer group created, whatever the migration policy.",
)
CG_CONVERT_UPGRADE_DISABLED = _rule(
    "cg_convert.upgrade_disabled",
    "A join for a non-empty classic group while the policy does not enable upgrades: GROUP_ID_NOT_FOUND, nothing changes.",
)
CG_CONVERT_UPGRADE_NOT_CONSUMER_PROTOCOL = _rule(
    "cg_convert.upgrade_not_consumer_protocol",
    'A join for a non-empty classic group whose protocol type is not "consumer": GROUP_ID_NOT_FOUND, nothing changes.',
)
CG_CONVERT_UPGRADE_TOO_LARGE = _rule(
    "cg_convert.upgrade_too_large",
    "A join for a classic group with more members than group.consumer.max.size: GROUP_ID_NOT_FOUND, nothing changes.",
)
CG_CONVERT_UPGRADE_UNREADABLE = _rule(
    "cg_convert.upgrade_unreadable",
    "A join for a classic group whose member metadata does not decode, or whose assignment carries assignor user data (a custom assignor): GROUP_ID_NOT_FOUND, nothing changes.",
)
CG_CONVERT_UPGRADE = _rule(
    "cg_convert.upgrade",
    "A join for a non-empty classic group under an upgrade policy: the group becomes a consumer group at group and assignment epoch = its generation, each member Stable at that epoch with its classic assignment as assignment and target, session timeouts armed; the join then proceeds.",
)
CG_CONVERT_UPGRADE_PARKED_ANSWERED = _rule(
    "cg_convert.upgrade_parked_answered",
    "An upgrade of a rebalancing classic group answers every parked JoinGroup and SyncGroup with REBALANCE_IN_PROGRESS.",
)
CG_CONVERT_UPGRADE_JOIN_REFUSED = _rule(
    "cg_convert.upgrade_join_refused",
    "The join that triggered an upgrade is refused by the consumer group: the conversion is discarded with it (its records are never written), but the parked requests stay answered and unparked (Kafka completes them in memory first).",
)
CG_CONVERT_DOWNGRADE = _rule(
    "cg_convert.downgrade",
    "Fencing the last consumer-protocol members leaves only classic members under a downgrade policy: the group becomes a classic group at generation = group epoch, each member's target as its assignment, and starts a rebalance.",
)
CG_CONVERT_DOWNGRADE_ON_REPLACEMENT = _rule(
    "cg_convert.downgrade_on_replacement",
    "A static classic member replaces the last member that did not use the classic protocol: the group becomes a classic group at the group epoch, the newcomer taking the replaced member's assignment; Stable when the target assignment was up to date.",
)
CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE = _rule(
    "cg_convert.downgrade_on_replacement_rebalance",
    "The same, when the newcomer's subscription moved the group epoch past the target assignment: the classic group prepares a rebalance instead of keeping the stale assignment (KAFKA-19546).",
)
CG_CONVERT_DOWNGRADE_DISABLED = _rule(
    "cg_convert.downgrade_disabled",
    "Only classic members would remain but the policy does not enable downgrades: the members are fenced and the group stays a consumer group.",
)
CG_CONVERT_DOWNGRADE_TOO_LARGE = _rule(
    "cg_convert.downgrade_too_large",
    "Only classic members would remain but more than group.classic.max.size: the members are fenced and the group stays a consumer group.",
)


MIXED_RULES: tuple[Rule, ...] = (
    CG_CLASSIC_JOIN_GROUP_MAX_SIZE_REACHED,
    CG_CLASSIC_JOIN_INCONSISTENT_PROTOCOL,
    CG_CLASSIC_JOIN_MEMBER_ID_REQUIRED,
    CG_CLASSIC_JOIN_NEW_MEMBER,
    CG_CLASSIC_JOIN_KNOWN_MEMBER,
    CG_CLASSIC_JOIN_ANSWERED,
    CG_CLASSIC_UNKNOWN_MEMBER,
    CG_CLASSIC_FENCED_INSTANCE_ID,
    CG_CLASSIC_NOT_CLASSIC_MEMBER,
    CG_CLASSIC_ILLEGAL_GENERATION,
    CG_CLASSIC_SYNC_INCONSISTENT_PROTOCOL,
    CG_CLASSIC_STATIC_NEW_MEMBER,
    CG_CLASSIC_STATIC_MEMBER_REPLACED,
    CG_CLASSIC_OFFSET_COMMIT,
    CG_CLASSIC_OFFSET_FETCH,
    CG_CLASSIC_SYNC_REBALANCE_IN_PROGRESS,
    CG_CLASSIC_SYNC_ASSIGNMENT,
    CG_CLASSIC_HEARTBEAT_REJOIN,
    CG_CLASSIC_HEARTBEAT_OK,
    CG_CLASSIC_JOIN_TIMEOUT_ARMED,
    CG_CLASSIC_LEAVE,
    CG_CLASSIC_TIMER_JOIN_EXPIRED,
    CG_CLASSIC_TIMER_SYNC_EXPIRED,
    CG_CLASSIC_EMPTY_CONSUMER_GROUP_REPLACED,
    CG_CONVERT_NOT_A_CONSUMER_GROUP,
    CG_CONVERT_EMPTY_CLASSIC_REPLACED,
    CG_CONVERT_UPGRADE_DISABLED,
    CG_CONVERT_UPGRADE_NOT_CONSUMER_PROTOCOL,
    CG_CONVERT_UPGRADE_TOO_LARGE,
    CG_CONVERT_UPGRADE_UNREADABLE,
    CG_CONVERT_UPGRADE,
    CG_CONVERT_UPGRADE_PARKED_ANSWERED,
    CG_CONVERT_UPGRADE_JOIN_REFUSED,
    CG_CONVERT_DOWNGRADE,
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT,
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE,
    CG_CONVERT_DOWNGRADE_DISABLED,
    CG_CONVERT_DOWNGRADE_TOO_LARGE,
)
