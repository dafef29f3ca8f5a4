"""The catalog of consumer (client-side) rules: every behaviour a consumer step can take.

Each rule names the Java method of Kafka's client that shows the behaviour and the reference
section that states it. Each rule is a module-level constant named after its id in upper snake
case (`client.coordinator.marked_unknown` is `CLIENT_COORDINATOR_MARKED_UNKNOWN`); handlers fire
the constant. `Effects.fire` refuses a rule missing from `CONSUMER_RULES`, and a test checks that
every rule is fired somewhere, so coverage reports can list which client rules a run reached.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConsumerRule:
    """A named client rule: the Java method showing it, the reference section, a summary."""

    rule_id: str
    java: str
    section: str
    summary: str


CLIENT_DISCOVERY_FIND_COORDINATOR_SENT = ConsumerRule(
    "client.discovery.find_coordinator_sent",
    "AbstractCoordinator.lookupCoordinator",
    "§6",
    "Poll with no known coordinator sends FindCoordinator (key = group id).",
)
CLIENT_DISCOVERY_LOOKUP_PENDING = ConsumerRule(
    "client.discovery.lookup_pending",
    "AbstractCoordinator.lookupCoordinator",
    "§6",
    "A FindCoordinator is already in flight: poll waits for it instead of sending another.",
)
CLIENT_DISCOVERY_FOUND = ConsumerRule(
    "client.discovery.found",
    "FindCoordinatorResponseHandler.onSuccess",
    "§6",
    "FindCoordinator answered NONE: the coordinator is known (and the session timer restarts).",
)
CLIENT_DISCOVERY_RETRIABLE_ERROR = ConsumerRule(
    "client.discovery.retriable_error",
    "AbstractCoordinator.ensureCoordinatorReady",
    "§6",
    "FindCoordinator failed retriably (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, ...): the next poll looks up again.",
)
CLIENT_DISCOVERY_FATAL = ConsumerRule(
    "client.discovery.fatal",
    "FindCoordinatorResponseHandler.onFailure",
    "§6",
    "FindCoordinator failed with GROUP_AUTHORIZATION_FAILED or another non-retriable error: fatal.",
)
CLIENT_COORDINATOR_MARKED_UNKNOWN = ConsumerRule(
    "client.coordinator.marked_unknown",
    "AbstractCoordinator.markCoordinatorUnknown",
    "§5, §6",
    "The coordinator is forgotten and every request in flight to it fails as disconnected.",
)
CLIENT_COORDINATOR_DISCONNECTED = ConsumerRule(
    "client.coordinator.disconnected",
    "CoordinatorResponseHandler.onFailure",
    "§6",
    "The connection dropped (DisconnectException): the coordinator is marked unknown.",
)
CLIENT_COORDINATOR_JOIN_FUTURE_FAILED = ConsumerRule(
    "client.coordinator.join_future_failed",
    "AbstractCoordinator.joinGroupIfNeeded",
    "§6",
    "A JoinGroup/SyncGroup in flight failed with the connection: rejoin (generation kept) on the next poll.",
)
CLIENT_COORDINATOR_COMMIT_FAILED = ConsumerRule(
    "client.coordinator.commit_failed",
    "ConsumerCoordinator.commitOffsetsAsync",
    "§5",
    "An OffsetCommit in flight failed with the connection: RetriableCommitFailedException.",
)
CLIENT_POLL_NOTHING_TO_DO = ConsumerRule(
    "client.poll.nothing_to_do",
    "ConsumerCoordinator.poll",
    "§3",
    "Coordinator known and no rejoin needed or pending: poll sends nothing.",
)
CLIENT_POLL_JOIN_IN_FLIGHT = ConsumerRule(
    "client.poll.join_in_flight",
    "AbstractCoordinator.initiateJoinGroup",
    "§3",
    "A JoinGroup or SyncGroup is still in flight: poll waits for it (one join future at a time).",
)
CLIENT_POLL_REJOIN_METADATA_CHANGED = ConsumerRule(
    "client.poll.rejoin_metadata_changed",
    "ConsumerCoordinator.rejoinNeededOrPending",
    "§7.3",
    "The leader's metadata snapshot (partition counts of the group's topics) changed since it assigned: rejoin.",
)
CLIENT_POLL_REJOIN_SUBSCRIPTION_CHANGED = ConsumerRule(
    "client.poll.rejoin_subscription_changed",
    "ConsumerCoordinator.rejoinNeededOrPending",
    "§7",
    "The subscription differs from the one of the last JoinGroup: rejoin.",
)
CLIENT_PREPARE_PARTITIONS_LOST = ConsumerRule(
    "client.prepare.partitions_lost",
    "ConsumerCoordinator.onJoinPrepare",
    "§7.1",
    "Before joining with a reset generation or member id: every owned partition is lost (onPartitionsLost).",
)
CLIENT_PREPARE_RESET_NOTHING_OWNED = ConsumerRule(
    "client.prepare.reset_nothing_owned",
    "ConsumerCoordinator.onJoinPrepare",
    "§7.1",
    "Before joining with a reset generation or member id, owning nothing: no callback.",
)
CLIENT_PREPARE_EAGER_REVOKE_ALL = ConsumerRule(
    "client.prepare.eager_revoke_all",
    "ConsumerCoordinator.onJoinPrepare",
    "§7.1",
    "EAGER: revoke every owned partition before joining (onPartitionsRevoked, even when empty).",
)
CLIENT_PREPARE_COOPERATIVE_REVOKE_UNSUBSCRIBED = ConsumerRule(
    "client.prepare.cooperative_revoke_unsubscribed",
    "ConsumerCoordinator.onJoinPrepare",
    "§7.1",
    "COOPERATIVE: revoke only partitions of topics no longer subscribed before joining.",
)
CLIENT_PREPARE_COOPERATIVE_KEEP_OWNED = ConsumerRule(
    "client.prepare.cooperative_keep_owned",
    "ConsumerCoordinator.onJoinPrepare",
    "§7.1",
    "COOPERATIVE: every owned partition is still subscribed; keep them all through the join.",
)
CLIENT_JOIN_SENT_WITHOUT_MEMBER_ID = ConsumerRule(
    "client.join.sent_without_member_id",
    "AbstractCoordinator.sendJoinGroupRequest",
    "§2.2, §7",
    'JoinGroup with member id "" (new or reset member), every assignor\'s subscription in preference order.',
)
CLIENT_JOIN_SENT_WITH_MEMBER_ID = ConsumerRule(
    "client.join.sent_with_member_id",
    "AbstractCoordinator.sendJoinGroupRequest",
    "§2.2, §7",
    "JoinGroup with the member id held (rejoin, or the id MEMBER_ID_REQUIRED handed out).",
)
CLIENT_JOIN_MEMBER_ID_REQUIRED = ConsumerRule(
    "client.join.member_id_required",
    "JoinGroupResponseHandler.handle",
    "§2.2.4",
    "MEMBER_ID_REQUIRED: adopt the given member id (no generation) and join again.",
)
CLIENT_JOIN_UNKNOWN_MEMBER_ID_RESET = ConsumerRule(
    "client.join.unknown_member_id_reset",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    "UNKNOWN_MEMBER_ID with the generation unchanged: reset generation and member id, rejoin.",
)
CLIENT_JOIN_UNKNOWN_MEMBER_ID_STALE = ConsumerRule(
    "client.join.unknown_member_id_stale",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    "UNKNOWN_MEMBER_ID for an older generation: just rejoin.",
)
CLIENT_JOIN_COORDINATOR_LOST = ConsumerRule(
    "client.join.coordinator_lost",
    "JoinGroupResponseHandler.handle",
    "§6",
    "COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR: mark the coordinator unknown, rediscover, rejoin.",
)
CLIENT_JOIN_RETRY = ConsumerRule(
    "client.join.retry",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    "COORDINATOR_LOAD_IN_PROGRESS or REBALANCE_IN_PROGRESS: retry the join on the next poll.",
)
CLIENT_JOIN_FATAL_ERROR = ConsumerRule(
    "client.join.fatal_error",
    "JoinGroupResponseHandler.handle",
    "§2.2, §9",
    "FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, INVALID_GROUP_ID, GROUP_AUTHORIZATION_FAILED, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_VERSION: fatal.",
)
CLIENT_JOIN_UNEXPECTED_ERROR = ConsumerRule(
    "client.join.unexpected_error",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    "Any other JoinGroup error (ILLEGAL_GENERATION, UNKNOWN_SERVER_ERROR, ...): KafkaException, fatal.",
)
CLIENT_JOIN_INCONSISTENT_PROTOCOL_TYPE = ConsumerRule(
    "client.join.inconsistent_protocol_type",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    'JoinGroup succeeded with a protocol type other than "consumer": fatal INCONSISTENT_GROUP_PROTOCOL.',
)
CLIENT_JOIN_RESPONSE_AFTER_RESET = ConsumerRule(
    "client.join.response_after_reset",
    "JoinGroupResponseHandler.handle",
    "§3",
    "JoinGroup succeeded but the member is no longer PreparingRebalance (UnjoinedGroupException): retry, the new id is dropped.",
)
CLIENT_JOIN_JOINED_AS_LEADER = ConsumerRule(
    "client.join.joined_as_leader",
    "JoinGroupResponseHandler.handle",
    "§2.2",
    "Joined as leader: CompletingRebalance with the new generation; compute the assignment and SyncGroup.",
)
CLIENT_JOIN_JOINED_AS_FOLLOWER = ConsumerRule(
    "client.join.joined_as_follower",
    "AbstractCoordinator.onJoinFollower",
    "§2.2",
    "Joined as follower: CompletingRebalance with the new generation; SyncGroup without assignments.",
)
CLIENT_LEADER_ASSIGNED = ConsumerRule(
    "client.leader.assigned",
    "ConsumerCoordinator.onLeaderElected",
    "§7, §8",
    "The leader decoded every subscription, ran the selected assignor and sends the encoded assignments.",
)
CLIENT_LEADER_SKIP_ASSIGNMENT = ConsumerRule(
    "client.leader.skip_assignment",
    "ConsumerCoordinator.onLeaderElected",
    "§9",
    "skipAssignment (returning static leader, v9+): SyncGroup without assignments.",
)
CLIENT_LEADER_UNKNOWN_ASSIGNOR = ConsumerRule(
    "client.leader.unknown_assignor",
    "ConsumerCoordinator.onLeaderElected",
    "§4",
    "The coordinator selected a protocol this member does not offer: IllegalStateException, fatal.",
)
CLIENT_LEADER_SUBSCRIPTION_UNDECODABLE = ConsumerRule(
    "client.leader.subscription_undecodable",
    "ConsumerProtocol.deserializeSubscription",
    "§7",
    "A member's metadata is not a ConsumerProtocolSubscription: fatal.",
)
CLIENT_LEADER_COOPERATIVE_ASSIGNMENT_VALIDATED = ConsumerRule(
    "client.leader.cooperative_assignment_validated",
    "ConsumerCoordinator.validateCooperativeAssignment",
    "§7",
    "COOPERATIVE with an assignor other than cooperative-sticky: no partition is both revoked and added.",
)
CLIENT_LEADER_ILLEGAL_COOPERATIVE_ASSIGNMENT = ConsumerRule(
    "client.leader.illegal_cooperative_assignment",
    "ConsumerCoordinator.validateCooperativeAssignment",
    "§7",
    "The assignor moved a partition straight from one owner to another under COOPERATIVE: IllegalStateException, fatal.",
)
CLIENT_SYNC_STABLE = ConsumerRule(
    "client.sync.stable",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "SyncGroup NONE in CompletingRebalance: the member is Stable and no rejoin is pending.",
)
CLIENT_SYNC_RESPONSE_AFTER_RESET = ConsumerRule(
    "client.sync.response_after_reset",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "SyncGroup NONE after the generation was reset meanwhile: fail the round as ILLEGAL_GENERATION, rejoin.",
)
CLIENT_SYNC_INCONSISTENT_PROTOCOL = ConsumerRule(
    "client.sync.inconsistent_protocol",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "SyncGroup NONE with another protocol type or name than joined: fatal INCONSISTENT_GROUP_PROTOCOL.",
)
CLIENT_SYNC_REBALANCE_IN_PROGRESS = ConsumerRule(
    "client.sync.rebalance_in_progress",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "REBALANCE_IN_PROGRESS: rejoin with the generation kept.",
)
CLIENT_SYNC_RESET_GENERATION = ConsumerRule(
    "client.sync.reset_generation",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION for the current generation: reset (member id too for UNKNOWN_MEMBER_ID), rejoin.",
)
CLIENT_SYNC_STALE_ERROR = ConsumerRule(
    "client.sync.stale_error",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION for an older generation: just rejoin.",
)
CLIENT_SYNC_COORDINATOR_LOST = ConsumerRule(
    "client.sync.coordinator_lost",
    "SyncGroupResponseHandler.handle",
    "§6",
    "COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR: mark the coordinator unknown, rejoin.",
)
CLIENT_SYNC_FATAL_ERROR = ConsumerRule(
    "client.sync.fatal_error",
    "SyncGroupResponseHandler.handle",
    "§2.3, §9",
    "GROUP_AUTHORIZATION_FAILED or FENCED_INSTANCE_ID: fatal.",
)
CLIENT_SYNC_UNEXPECTED_ERROR = ConsumerRule(
    "client.sync.unexpected_error",
    "SyncGroupResponseHandler.handle",
    "§2.3",
    "Any other SyncGroup error: KafkaException, fatal.",
)
CLIENT_SYNC_UNKNOWN_ASSIGNOR = ConsumerRule(
    "client.sync.unknown_assignor",
    "ConsumerCoordinator.onJoinComplete",
    "§4",
    "The generation's protocol names no configured assignor: IllegalStateException, fatal.",
)
CLIENT_SYNC_ASSIGNMENT_TOO_SHORT = ConsumerRule(
    "client.sync.assignment_too_short",
    "ConsumerCoordinator.onJoinComplete",
    "§2.3",
    "The assignment has fewer than 2 bytes (the leader gave this member nothing): IllegalStateException, fatal.",
)
CLIENT_SYNC_ASSIGNMENT_UNDECODABLE = ConsumerRule(
    "client.sync.assignment_undecodable",
    "ConsumerProtocol.deserializeAssignment",
    "§7",
    "The assignment is not a ConsumerProtocolAssignment: fatal.",
)
CLIENT_SYNC_ASSIGNMENT_MISMATCH = ConsumerRule(
    "client.sync.assignment_mismatch",
    "ConsumerCoordinator.onJoinComplete",
    "§7.2",
    "The assignment names topics outside the current subscription: rejoin instead of adopting it.",
)
CLIENT_SYNC_COOPERATIVE_REVOKE_AND_REJOIN = ConsumerRule(
    "client.sync.cooperative_revoke_and_rejoin",
    "ConsumerCoordinator.onJoinComplete",
    "§7.2",
    "COOPERATIVE: owned partitions not assigned any more are revoked, and a follow-up rebalance requested.",
)
CLIENT_SYNC_ASSIGNMENT_ADOPTED = ConsumerRule(
    "client.sync.assignment_adopted",
    "ConsumerCoordinator.onJoinComplete",
    "§7.2",
    "The assignment becomes the owned partitions; onPartitionsAssigned gets the added ones (even none).",
)
CLIENT_HEARTBEAT_SENT = ConsumerRule(
    "client.heartbeat.sent",
    "AbstractCoordinator.sendHeartbeatRequest",
    "§2.4, §3",
    "Heartbeat interval elapsed in CompletingRebalance/Stable: send Heartbeat with the current generation.",
)
CLIENT_HEARTBEAT_OK = ConsumerRule(
    "client.heartbeat.ok",
    "HeartbeatResponseHandler.handle",
    "§2.4",
    "Heartbeat NONE: the session is alive.",
)
CLIENT_HEARTBEAT_COORDINATOR_LOST = ConsumerRule(
    "client.heartbeat.coordinator_lost",
    "HeartbeatResponseHandler.handle",
    "§6",
    "COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR: mark the coordinator unknown.",
)
CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_REJOIN = ConsumerRule(
    "client.heartbeat.rebalance_in_progress_rejoin",
    "HeartbeatResponseHandler.handle",
    "§2.4",
    "REBALANCE_IN_PROGRESS while Stable: request a rejoin (still counts as a heartbeat).",
)
CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_IGNORED = ConsumerRule(
    "client.heartbeat.rebalance_in_progress_ignored",
    "HeartbeatResponseHandler.handle",
    "§2.4",
    "REBALANCE_IN_PROGRESS while already rebalancing: ignored.",
)
CLIENT_HEARTBEAT_RESET_GENERATION = ConsumerRule(
    "client.heartbeat.reset_generation",
    "HeartbeatResponseHandler.handle",
    "§2.4",
    "ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID for the current generation: reset (member id too for UNKNOWN_MEMBER_ID), rejoin.",
)
CLIENT_HEARTBEAT_FENCED = ConsumerRule(
    "client.heartbeat.fenced",
    "HeartbeatThread.run",
    "§9",
    "FENCED_INSTANCE_ID for the current generation: reset and fatal (raised from the next poll).",
)
CLIENT_HEARTBEAT_STALE_ERROR_IGNORED = ConsumerRule(
    "client.heartbeat.stale_error_ignored",
    "HeartbeatResponseHandler.handle",
    "§2.4",
    "A generation error answering an older generation's heartbeat: ignored.",
)
CLIENT_HEARTBEAT_FAILED_RETRY = ConsumerRule(
    "client.heartbeat.failed_retry",
    "HeartbeatThread.run",
    "§2.4",
    "Any other heartbeat error (authorization included): this heartbeat failed, the thread retries.",
)
CLIENT_HEARTBEAT_SESSION_TIMEOUT = ConsumerRule(
    "client.heartbeat.session_timeout",
    "HeartbeatThread.run",
    "§3",
    "No successful heartbeat within session.timeout.ms: mark the coordinator unknown.",
)
CLIENT_POLL_TIMEOUT_EXPIRED = ConsumerRule(
    "client.poll_timeout.expired",
    "AbstractCoordinator.handlePollTimeoutExpiry",
    "§3",
    "max.poll.interval.ms expired: maybeLeaveGroup, then reset generation and member id and rejoin on the next poll.",
)
CLIENT_LEAVE_SENT = ConsumerRule(
    "client.leave.sent",
    "AbstractCoordinator.maybeLeaveGroup",
    "§2.5",
    "A dynamic member with an id, joined, with a known coordinator sends LeaveGroup.",
)
CLIENT_LEAVE_SKIPPED_STATIC = ConsumerRule(
    "client.leave.skipped_static",
    "AbstractCoordinator.maybeLeaveGroup",
    "§9",
    "Static members never send LeaveGroup.",
)
CLIENT_LEAVE_SKIPPED_NOT_MEMBER = ConsumerRule(
    "client.leave.skipped_not_member",
    "AbstractCoordinator.maybeLeaveGroup",
    "§2.5",
    "No LeaveGroup: unjoined, no member id, or no coordinator.",
)
CLIENT_LEAVE_ACKNOWLEDGED = ConsumerRule(
    "client.leave.acknowledged",
    "LeaveGroupResponseHandler.handle",
    "§2.5",
    "LeaveGroup NONE: nothing more to do.",
)
CLIENT_LEAVE_ERROR_IGNORED = ConsumerRule(
    "client.leave.error_ignored",
    "LeaveGroupResponseHandler.handle",
    "§2.5",
    "LeaveGroup failed: logged only, leaving is best effort.",
)
CLIENT_CLOSE_CLOSED = ConsumerRule(
    "client.close.closed",
    "AbstractCoordinator.close",
    "§2.5",
    "close(): onLeavePrepare, maybeLeaveGroup, and the consumer is closed.",
)
CLIENT_CLOSE_PARTITIONS_REVOKED = ConsumerRule(
    "client.close.partitions_revoked",
    "ConsumerCoordinator.onLeavePrepare",
    "§7",
    "Closing as a Stable member: owned partitions are revoked.",
)
CLIENT_CLOSE_PARTITIONS_LOST = ConsumerRule(
    "client.close.partitions_lost",
    "ConsumerCoordinator.onLeavePrepare",
    "§7",
    "Closing with a reset generation or mid-rebalance: owned partitions are lost.",
)
CLIENT_RESPONSE_IGNORED_AFTER_END = ConsumerRule(
    "client.response.ignored_after_end",
    "AbstractCoordinator.close",
    "§3",
    "A response arriving after the consumer closed or failed fatally is ignored.",
)
CLIENT_COMMIT_SENT = ConsumerRule(
    "client.commit.sent",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "Stable member commits with its generation, member id and instance id.",
)
CLIENT_COMMIT_NOTHING_TO_COMMIT = ConsumerRule(
    "client.commit.nothing_to_commit",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "No offsets: the commit succeeds without a request.",
)
CLIENT_COMMIT_INVALID_OFFSET = ConsumerRule(
    "client.commit.invalid_offset",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "A negative offset: IllegalArgumentException, nothing sent.",
)
CLIENT_COMMIT_COORDINATOR_UNKNOWN = ConsumerRule(
    "client.commit.coordinator_unknown",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "No coordinator known: the commit fails retriably (COORDINATOR_NOT_AVAILABLE).",
)
CLIENT_COMMIT_REFUSED_REBALANCING = ConsumerRule(
    "client.commit.refused_rebalancing",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "Not Stable but rebalancing: RebalanceInProgressException, nothing sent.",
)
CLIENT_COMMIT_REFUSED_NOT_MEMBER = ConsumerRule(
    "client.commit.refused_not_member",
    "ConsumerCoordinator.sendOffsetCommitRequest",
    "§5",
    "Not Stable and not rebalancing (unjoined): CommitFailedException, nothing sent.",
)
CLIENT_COMMIT_SUCCEEDED = ConsumerRule(
    "client.commit.succeeded",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "Every partition NONE: the commit succeeded.",
)
CLIENT_COMMIT_ERROR_RAISED = ConsumerRule(
    "client.commit.error_raised",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "GROUP_AUTHORIZATION_FAILED, OFFSET_METADATA_TOO_LARGE or an unexpected error: raised to the caller.",
)
CLIENT_COMMIT_RETRIABLE = ConsumerRule(
    "client.commit.retriable",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "COORDINATOR_LOAD_IN_PROGRESS / UNKNOWN_TOPIC_OR_PARTITION: retriable failure.",
)
CLIENT_COMMIT_COORDINATOR_LOST = ConsumerRule(
    "client.commit.coordinator_lost",
    "OffsetCommitResponseHandler.handle",
    "§5, §6",
    "COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / REQUEST_TIMED_OUT: mark the coordinator unknown, retriable failure.",
)
CLIENT_COMMIT_FENCED = ConsumerRule(
    "client.commit.fenced",
    "OffsetCommitResponseHandler.handle",
    "§5, §9",
    "FENCED_INSTANCE_ID for the current generation: fatal.",
)
CLIENT_COMMIT_FENCED_STALE = ConsumerRule(
    "client.commit.fenced_stale",
    "OffsetCommitResponseHandler.handle",
    "§5, §9",
    "FENCED_INSTANCE_ID for an older generation: RebalanceInProgressException if PreparingRebalance, else CommitFailedException.",
)
CLIENT_COMMIT_REBALANCE_IN_PROGRESS = ConsumerRule(
    "client.commit.rebalance_in_progress",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "REBALANCE_IN_PROGRESS: request a rejoin, keep the generation, RebalanceInProgressException.",
)
CLIENT_COMMIT_STALE_GENERATION_REBALANCING = ConsumerRule(
    "client.commit.stale_generation_rebalancing",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION for an older generation while PreparingRebalance: RebalanceInProgressException.",
)
CLIENT_COMMIT_RESET_GENERATION = ConsumerRule(
    "client.commit.reset_generation",
    "OffsetCommitResponseHandler.handle",
    "§5",
    "UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION otherwise: reset (member id too for UNKNOWN_MEMBER_ID), rejoin, CommitFailedException.",
)
CLIENT_SUBSCRIPTION_CHANGED = ConsumerRule(
    "client.subscription.changed",
    "KafkaConsumer.subscribe",
    "§7",
    "subscribe() with other topics: the next poll rejoins.",
)
CLIENT_SUBSCRIPTION_UNCHANGED = ConsumerRule(
    "client.subscription.unchanged",
    "KafkaConsumer.subscribe",
    "§7",
    "subscribe() with the same topics: nothing changes.",
)
CLIENT_METADATA_UPDATED = ConsumerRule(
    "client.metadata.updated",
    "ConsumerCoordinator.maybeUpdateSubscriptionMetadata",
    "§7.3",
    "New cluster metadata replaces the snapshot the leader compares against.",
)


CONSUMER_RULES: tuple[ConsumerRule, ...] = (
    CLIENT_DISCOVERY_FIND_COORDINATOR_SENT,
    CLIENT_DISCOVERY_LOOKUP_PENDING,
    CLIENT_DISCOVERY_FOUND,
    CLIENT_DISCOVERY_RETRIABLE_ERROR,
    CLIENT_DISCOVERY_FATAL,
    CLIENT_COORDINATOR_MARKED_UNKNOWN,
    CLIENT_COORDINATOR_DISCONNECTED,
    CLIENT_COORDINATOR_JOIN_FUTURE_FAILED,
    CLIENT_COORDINATOR_COMMIT_FAILED,
    CLIENT_POLL_NOTHING_TO_DO,
    CLIENT_POLL_JOIN_IN_FLIGHT,
    CLIENT_POLL_REJOIN_METADATA_CHANGED,
    CLIENT_POLL_REJOIN_SUBSCRIPTION_CHANGED,
    CLIENT_PREPARE_PARTITIONS_LOST,
    CLIENT_PREPARE_RESET_NOTHING_OWNED,
    CLIENT_PREPARE_EAGER_REVOKE_ALL,
    CLIENT_PREPARE_COOPERATIVE_REVOKE_UNSUBSCRIBED,
    CLIENT_PREPARE_COOPERATIVE_KEEP_OWNED,
    CLIENT_JOIN_SENT_WITHOUT_MEMBER_ID,
    CLIENT_JOIN_SENT_WITH_MEMBER_ID,
    CLIENT_JOIN_MEMBER_ID_REQUIRED,
    CLIENT_JOIN_UNKNOWN_MEMBER_ID_RESET,
    CLIENT_JOIN_UNKNOWN_MEMBER_ID_STALE,
    CLIENT_JOIN_COORDINATOR_LOST,
    CLIENT_JOIN_RETRY,
    CLIENT_JOIN_FATAL_ERROR,
    CLIENT_JOIN_UNEXPECTED_ERROR,
    CLIENT_JOIN_INCONSISTENT_PROTOCOL_TYPE,
    CLIENT_JOIN_RESPONSE_AFTER_RESET,
    CLIENT_JOIN_JOINED_AS_LEADER,
    CLIENT_JOIN_JOINED_AS_FOLLOWER,
    CLIENT_LEADER_ASSIGNED,
    CLIENT_LEADER_SKIP_ASSIGNMENT,
    CLIENT_LEADER_UNKNOWN_ASSIGNOR,
    CLIENT_LEADER_SUBSCRIPTION_UNDECODABLE,
    CLIENT_LEADER_COOPERATIVE_ASSIGNMENT_VALIDATED,
    CLIENT_LEADER_ILLEGAL_COOPERATIVE_ASSIGNMENT,
    CLIENT_SYNC_STABLE,
    CLIENT_SYNC_RESPONSE_AFTER_RESET,
    CLIENT_SYNC_INCONSISTENT_PROTOCOL,
    CLIENT_SYNC_REBALANCE_IN_PROGRESS,
    CLIENT_SYNC_RESET_GENERATION,
    CLIENT_SYNC_STALE_ERROR,
    CLIENT_SYNC_COORDINATOR_LOST,
    CLIENT_SYNC_FATAL_ERROR,
    CLIENT_SYNC_UNEXPECTED_ERROR,
    CLIENT_SYNC_UNKNOWN_ASSIGNOR,
    CLIENT_SYNC_ASSIGNMENT_TOO_SHORT,
    CLIENT_SYNC_ASSIGNMENT_UNDECODABLE,
    CLIENT_SYNC_ASSIGNMENT_MISMATCH,
    CLIENT_SYNC_COOPERATIVE_REVOKE_AND_REJOIN,
    CLIENT_SYNC_ASSIGNMENT_ADOPTED,
    CLIENT_HEARTBEAT_SENT,
    CLIENT_HEARTBEAT_OK,
    CLIENT_HEARTBEAT_COORDINATOR_LOST,
    CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_REJOIN,
    CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_IGNORED,
    CLIENT_HEARTBEAT_RESET_GENERATION,
    CLIENT_HEARTBEAT_FENCED,
    CLIENT_HEARTBEAT_STALE_ERROR_IGNORED,
    CLIENT_HEARTBEAT_FAILED_RETRY,
    CLIENT_HEARTBEAT_SESSION_TIMEOUT,
    CLIENT_POLL_TIMEOUT_EXPIRED,
    CLIENT_LEAVE_SENT,
    CLIENT_LEAVE_SKIPPED_STATIC,
    CLIENT_LEAVE_SKIPPED_NOT_MEMBER,
    CLIENT_LEAVE_ACKNOWLEDGED,
    CLIENT_LEAVE_ERROR_IGNORED,
    CLIENT_CLOSE_CLOSED,
    CLIENT_CLOSE_PARTITIONS_REVOKED,
    CLIENT_CLOSE_PARTITIONS_LOST,
    CLIENT_RESPONSE_IGNORED_AFTER_END,
    CLIENT_COMMIT_SENT,
    CLIENT_COMMIT_NOTHING_TO_COMMIT,
    CLIENT_COMMIT_INVALID_OFFSET,
    CLIENT_COMMIT_COORDINATOR_UNKNOWN,
    CLIENT_COMMIT_REFUSED_REBALANCING,
    CLIENT_COMMIT_REFUSED_NOT_MEMBER,
    CLIENT_COMMIT_SUCCEEDED,
    CLIENT_COMMIT_ERROR_RAISED,
    CLIENT_COMMIT_RETRIABLE,
    CLIENT_COMMIT_COORDINATOR_LOST,
    CLIENT_COMMIT_FENCED,
    CLIENT_COMMIT_FENCED_STALE,
    CLIENT_COMMIT_REBALANCE_IN_PROGRESS,
    CLIENT_COMMIT_STALE_GENERATION_REBALANCING,
    CLIENT_COMMIT_RESET_GENERATION,
    CLIENT_SUBSCRIPTION_CHANGED,
    CLIENT_SUBSCRIPTION_UNCHANGED,
    CLIENT_METADATA_UPDATED,
)

CONSUMER_RULE_IDS: frozenset[str] = frozenset(rule.rule_id for rule in CONSUMER_RULES)
