"""The rules of the KIP-848 consumer (`group.protocol=consumer`): every rule its steps fire.

The same `ConsumerRule` shape as the classic consumer's catalog (`spec/consumer/rules.py`): a
rule id, the Java method of Kafka's clients module that shows the behaviour, the section of
docs/protocol.md (§12.14) and a summary. The methods are those of Kafka's `clients` module
(`org.apache.kafka.clients.consumer.internals`): `AbstractMembershipManager`,
`ConsumerMembershipManager`, `AbstractHeartbeatRequestManager` and
`ConsumerHeartbeatRequestManager` (its `HeartbeatState`), read at commit 1eb7644 of Kafka's
trunk (October 2024, the code that became 4.0.0). `groupspec rules --side kip848-consumer`
lists them and docs/kip-848.md indexes them.

The `cg_rdkafka.*` rules are librdkafka's consumer (`group.protocol=consumer`) where it differs
from the Java one (spec/kip848/consumer/librdkafka.py); their "Java" column names the C function
of librdkafka's `src/rdkafka_cgrp.c` at tag v2.15.0 that shows the behaviour.
"""

from __future__ import annotations

from ...consumer.rules import ConsumerRule

_SECTION = "§12.14"


def _rule(rule_id: str, java: str, summary: str) -> ConsumerRule:
    return ConsumerRule(rule_id, java, _SECTION, summary)


# Joining and subscriptions
CG_CLIENT_SUBSCRIBE_JOINING = _rule(
    "cg_client.subscribe.joining",
    "AbstractMembershipManager.onConsumerPoll",
    "An Unsubscribed consumer subscribed and polled: Joining at epoch 0.",
)
CG_CLIENT_SUBSCRIBE_CHANGED = _rule(
    "cg_client.subscribe.changed",
    "AbstractMembershipManager.onSubscriptionUpdated",
    "A member changed its subscription: its next heartbeat carries the new topic names (or pattern); it keeps its partitions until the coordinator revokes them.",
)
# Heartbeats sent
CG_CLIENT_HEARTBEAT_JOIN_SENT = _rule(
    "cg_client.heartbeat.join_sent",
    "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData",
    "Joining: a heartbeat at epoch 0 with every field (rebalance timeout, subscription, no owned partitions), sent at once.",
)
CG_CLIENT_HEARTBEAT_SENT = _rule(
    "cg_client.heartbeat.sent",
    "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData",
    "Stable, Reconciling or PrepareLeaving: a heartbeat on the interval, carrying only the fields that changed since the last one sent.",
)
CG_CLIENT_HEARTBEAT_ACK_SENT = _rule(
    "cg_client.heartbeat.ack_sent",
    "AbstractMembershipManager.onHeartbeatRequestGenerated",
    "Acknowledging: a heartbeat at once with the reconciled partitions; Stable if the target is reached, else Reconciling again.",
)
CG_CLIENT_HEARTBEAT_LEAVE_SENT = _rule(
    "cg_client.heartbeat.leave_sent",
    "AbstractMembershipManager.onHeartbeatRequestGenerated",
    "Leaving: a heartbeat at epoch -1 at once; Unsubscribed after it (Stale if the poll timer expired).",
)
CG_CLIENT_HEARTBEAT_FAILED = _rule(
    "cg_client.heartbeat.failed",
    "AbstractHeartbeatRequestManager.onFailure",
    "A heartbeat got no response (lost, timed out): the sent fields are forgotten, so the next heartbeat carries them all again.",
)
# Responses
CG_CLIENT_RESPONSE_NEW_ASSIGNMENT = _rule(
    "cg_client.response.new_assignment",
    "AbstractMembershipManager.processAssignmentReceived",
    "A response with an assignment other than the one reconciled: the member id and epoch are taken, the target replaced, Reconciling.",
)
CG_CLIENT_RESPONSE_SAME_ASSIGNMENT = _rule(
    "cg_client.response.same_assignment",
    "AbstractMembershipManager.processAssignmentReceived",
    "A response with the assignment already reconciled: the epoch is taken; a Joining or Reconciling member is Stable.",
)
CG_CLIENT_RESPONSE_EPOCH = _rule(
    "cg_client.response.epoch",
    "ConsumerMembershipManager.onHeartbeatSuccess",
    "A response without an assignment: the member id and epoch are taken, nothing else changes.",
)
CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED = _rule(
    "cg_client.response.assignment_ignored",
    "ConsumerMembershipManager.onHeartbeatSuccess",
    "PrepareLeaving: the epoch is taken but a new assignment is ignored (the member cannot take one).",
)
CG_CLIENT_RESPONSE_NOT_IN_GROUP = _rule(
    "cg_client.response.not_in_group",
    "ConsumerMembershipManager.onHeartbeatSuccess",
    "Leaving, Unsubscribed, Fenced, Fatal or Stale: a successful response is ignored.",
)
# Errors
CG_CLIENT_ERROR_FENCED = _rule(
    "cg_client.error.fenced",
    "AbstractMembershipManager.transitionToFenced",
    "FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: Fenced at epoch 0, keeping its partitions until the lost callback runs.",
)
CG_CLIENT_ERROR_FENCED_LEAVING = _rule(
    "cg_client.error.fenced_leaving",
    "AbstractMembershipManager.transitionToFenced",
    "Fenced while PrepareLeaving or Leaving (or already Unsubscribed): Unsubscribed, without rejoining.",
)
CG_CLIENT_ERROR_FATAL = _rule(
    "cg_client.error.fatal",
    "AbstractHeartbeatRequestManager.handleFatalFailure",
    "Any other error (GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, ...): Fatal; the partitions are lost (onPartitionsLost), or, when it was preparing to leave, released by the leave's revocation callback, which completes.",
)
CG_CLIENT_FENCED_PARTITIONS_LOST = _rule(
    "cg_client.fenced.partitions_lost",
    "AbstractMembershipManager.transitionToFenced",
    "Fenced: onPartitionsLost runs, the assignment is cleared, then Joining at epoch 0 with the same member id.",
)
# Reconciliation
CG_CLIENT_RECONCILE_REVOKED = _rule(
    "cg_client.reconcile.revoked",
    "AbstractMembershipManager.revokeAndAssign",
    "Reconciling with partitions the target no longer has: onPartitionsRevoked runs, then they are released.",
)
CG_CLIENT_RECONCILE_ASSIGNED = _rule(
    "cg_client.reconcile.assigned",
    "AbstractMembershipManager.revokeAndAssign",
    "Reconciling with nothing left to revoke: onPartitionsAssigned for the added ones, the assignment is effective, Acknowledging.",
)
# Leaving, and the poll timer
CG_CLIENT_LEAVE_PREPARE = _rule(
    "cg_client.leave.prepare",
    "AbstractMembershipManager.leaveGroup",
    "unsubscribe() or close() of a member: PrepareLeaving.",
)
CG_CLIENT_LEAVE_RELEASED = _rule(
    "cg_client.leave.released",
    "AbstractMembershipManager.leaveGroup",
    "PrepareLeaving: onPartitionsRevoked for every partition, the assignment cleared, epoch -1, Leaving.",
)
CG_CLIENT_LEAVE_NOT_IN_GROUP = _rule(
    "cg_client.leave.not_in_group",
    "AbstractMembershipManager.leaveGroup",
    "unsubscribe() while Fenced: the assignment is cleared and the consumer is Unsubscribed without a leave heartbeat.",
)
CG_CLIENT_POLL_EXPIRED = _rule(
    "cg_client.poll.expired",
    "AbstractMembershipManager.transitionToSendingLeaveGroup",
    "max.poll.interval.ms passed without poll(): through PrepareLeaving to Leaving at epoch -1 without callbacks, still holding the partitions.",
)
CG_CLIENT_STALE_PARTITIONS_LOST = _rule(
    "cg_client.stale.partitions_lost",
    "AbstractMembershipManager.transitionToStale",
    "Stale: onPartitionsLost runs and the assignment is cleared.",
)
CG_CLIENT_STALE_REJOIN = _rule(
    "cg_client.stale.rejoin",
    "AbstractMembershipManager.maybeRejoinStaleMember",
    "A Stale consumer that released its partitions polls again: Joining at epoch 0.",
)
CG_CLIENT_ERROR_COORDINATOR = _rule(
    "cg_client.error.coordinator",
    "AbstractHeartbeatRequestManager.onErrorResponse",
    "NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS: the coordinator is looked up again (or waited for) and the heartbeat retried with every field; the membership does not change.",
)

# Offset commits (spec/kip848/consumer/commits.py; CommitRequestManager)
CG_CLIENT_COMMIT_SENT = _rule(
    "cg_client.commit.sent",
    "CommitRequestManager.OffsetCommitRequestState.buildRequest",
    "A member holding partitions commits their positions with OffsetCommit v9 at its latest member epoch.",
)
CG_CLIENT_COMMIT_COMPLETED = _rule(
    "cg_client.commit.completed",
    "CommitRequestManager.OffsetCommitRequestState.onResponse",
    "The commit was accepted: done.",
)
CG_CLIENT_COMMIT_RETRIED = _rule(
    "cg_client.commit.retried",
    "CommitRequestManager.isStaleEpochErrorAndValidEpochAvailable",
    "STALE_MEMBER_EPOCH while the member knows a newer epoch: the latest positions are committed again at that epoch.",
)
CG_CLIENT_COMMIT_FAILED = _rule(
    "cg_client.commit.failed",
    "CommitRequestManager.OffsetCommitRequestState.onResponse",
    "Any other error, or STALE_MEMBER_EPOCH with no newer epoch (or nothing held): the commit fails.",
)

# Committed-offset fetches (spec/kip848/consumer/offset_fetches.py; CommitRequestManager)
CG_CLIENT_FETCH_SENT = _rule(
    "cg_client.fetch.sent",
    "OffsetsRequestManager.initWithCommittedOffsetsIfNeeded",
    "A member given partitions fetches their committed offsets with OffsetFetch v9, carrying its member id and latest member epoch.",
)
CG_CLIENT_FETCH_COMPLETED = _rule(
    "cg_client.fetch.completed",
    "CommitRequestManager.OffsetFetchRequestState.onResponse",
    "The fetch was answered with the committed offsets: the positions are initialized from them.",
)
CG_CLIENT_FETCH_RETRIED = _rule(
    "cg_client.fetch.retried",
    "CommitRequestManager.fetchOffsetsWithRetries",
    "STALE_MEMBER_EPOCH while the member knows a newer epoch, or a coordinator error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) while it is in the group: the same partitions are fetched again at its latest epoch.",
)
CG_CLIENT_FETCH_FAILED = _rule(
    "cg_client.fetch.failed",
    "CommitRequestManager.OffsetFetchRequestState.onFailure",
    "UNKNOWN_MEMBER_ID, or STALE_MEMBER_EPOCH with no newer epoch (or no epoch left): the fetch fails.",
)

# librdkafka's consumer where it differs (spec/kip848/consumer/librdkafka.py; src/rdkafka_cgrp.c
# at librdkafka v2.15.0).
CG_RDKAFKA_HEARTBEAT_FULL_SENT = _rule(
    "cg_rdkafka.heartbeat.full_sent",
    "rd_kafka_cgrp_consumer_group_heartbeat",
    "Joining, or the first heartbeat after a coordinator error or a lost request: a full ConsumerGroupHeartbeat, always v1, with group.instance.id, max.poll.interval.ms as rebalance timeout, the subscription (its topic names beside its combined pattern, an empty SubscribedTopicRegex when it has none), and the assignment it holds.",
)
CG_RDKAFKA_HEARTBEAT_SENT = _rule(
    "cg_rdkafka.heartbeat.sent",
    "rd_kafka_cgrp_consumer_group_heartbeat",
    "Stable or Reconciling: a heartbeat on the interval with the member id and epoch, a changed subscription (names and pattern) and nothing else: not even group.instance.id, which only a full heartbeat carries.",
)
CG_RDKAFKA_HEARTBEAT_ACK_SENT = _rule(
    "cg_rdkafka.heartbeat.ack_sent",
    "rd_kafka_cgrp_consumer_group_heartbeat",
    "Reconciled: a heartbeat at once carrying the reconciled assignment, without group.instance.id; a target kept meanwhile is reconciled only once the acknowledgement is answered.",
)
CG_RDKAFKA_HEARTBEAT_LEAVE_SENT = _rule(
    "cg_rdkafka.heartbeat.leave_sent",
    "rd_kafka_cgrp_consumer_leave",
    "Leaving: the leave (epoch -1, or -2 with group.instance.id) goes out at once, even while a heartbeat is in flight.",
)
CG_RDKAFKA_LEAVE_PREPARE = _rule(
    "cg_rdkafka.leave.prepare",
    "rd_kafka_cgrp_consumer_heartbeat_preconditions_met",
    "unsubscribe() or close() of a member: PrepareLeaving, sending no heartbeat until its leave.",
)
CG_RDKAFKA_RESPONSE_SAME_ASSIGNMENT = _rule(
    "cg_rdkafka.response.same_assignment",
    "rd_kafka_cgrp_consumer_is_new_assignment_different",
    "A response with the assignment being reconciled (none in progress: the one held): only the member id and epoch are taken, a target kept for later is dropped; a Joining member stays Joining.",
)
CG_RDKAFKA_RESPONSE_POSTPONED = _rule(
    "cg_rdkafka.response.postponed",
    "rd_kafka_cgrp_consumer_handle_next_assignment",
    "A new assignment while a reconciliation is in progress: kept as the next target, reconciled after the current one is acknowledged.",
)
CG_RDKAFKA_RESPONSE_NEXT_STARTED = _rule(
    "cg_rdkafka.response.next_started",
    "rd_kafka_cgrp_handle_ConsumerGroupHeartbeat",
    "The acknowledgement is answered while a next target is kept: its reconciliation starts.",
)
CG_RDKAFKA_ERROR_LOAD_RETRIED = _rule(
    "cg_rdkafka.error.load_in_progress_retried",
    "rd_kafka_cgrp_handle_ConsumerGroupHeartbeat",
    "COORDINATOR_LOAD_IN_PROGRESS: the same heartbeat is sent again as it was, not a full one; a member leaving or out of the group drops it.",
)
CG_RDKAFKA_SUBSCRIBE_CHANGED = _rule(
    "cg_rdkafka.subscribe.changed",
    "rd_kafka_cgrp_consumer_subscribe",
    "A member not leaving (Joining, Reconciling, Acknowledging, Stable or Fenced) subscribes again without unsubscribing: its topic names and the one pattern combined from its ^ entries (empty when none) replace the subscription; it may switch between patterns and names, which the Java consumer refuses.",
)
CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_SENT = _rule(
    "cg_rdkafka.heartbeat.subscription_sent",
    "rd_kafka_cgrp_consumer_group_heartbeat",
    "A heartbeat that is not full carries a changed subscription: the topic names and SubscribedTopicRegex together, the empty string when the subscription has no pattern (which drops the member's expression at the coordinator).",
)
CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_POSTPONED = _rule(
    "cg_rdkafka.heartbeat.subscription_postponed",
    "rd_kafka_cgrp_consumer_group_heartbeat",
    "A heartbeat while a reconciliation's revocation or assignment is under way leaves a changed subscription out; a later heartbeat outside the reconciliation carries it.",
)

KIP848_CONSUMER_RULES: tuple[ConsumerRule, ...] = (
    CG_CLIENT_SUBSCRIBE_JOINING,
    CG_CLIENT_SUBSCRIBE_CHANGED,
    CG_CLIENT_HEARTBEAT_JOIN_SENT,
    CG_CLIENT_HEARTBEAT_SENT,
    CG_CLIENT_HEARTBEAT_ACK_SENT,
    CG_CLIENT_HEARTBEAT_LEAVE_SENT,
    CG_CLIENT_HEARTBEAT_FAILED,
    CG_CLIENT_RESPONSE_NEW_ASSIGNMENT,
    CG_CLIENT_RESPONSE_SAME_ASSIGNMENT,
    CG_CLIENT_RESPONSE_EPOCH,
    CG_CLIENT_RESPONSE_ASSIGNMENT_IGNORED,
    CG_CLIENT_RESPONSE_NOT_IN_GROUP,
    CG_CLIENT_ERROR_FENCED,
    CG_CLIENT_ERROR_FENCED_LEAVING,
    CG_CLIENT_ERROR_FATAL,
    CG_CLIENT_FENCED_PARTITIONS_LOST,
    CG_CLIENT_RECONCILE_REVOKED,
    CG_CLIENT_RECONCILE_ASSIGNED,
    CG_CLIENT_LEAVE_PREPARE,
    CG_CLIENT_LEAVE_RELEASED,
    CG_CLIENT_LEAVE_NOT_IN_GROUP,
    CG_CLIENT_POLL_EXPIRED,
    CG_CLIENT_STALE_PARTITIONS_LOST,
    CG_CLIENT_STALE_REJOIN,
    CG_CLIENT_ERROR_COORDINATOR,
    CG_CLIENT_COMMIT_SENT,
    CG_CLIENT_COMMIT_COMPLETED,
    CG_CLIENT_COMMIT_RETRIED,
    CG_CLIENT_COMMIT_FAILED,
    CG_CLIENT_FETCH_SENT,
    CG_CLIENT_FETCH_COMPLETED,
    CG_CLIENT_FETCH_RETRIED,
    CG_CLIENT_FETCH_FAILED,
    CG_RDKAFKA_HEARTBEAT_FULL_SENT,
    CG_RDKAFKA_HEARTBEAT_SENT,
    CG_RDKAFKA_HEARTBEAT_ACK_SENT,
    CG_RDKAFKA_HEARTBEAT_LEAVE_SENT,
    CG_RDKAFKA_LEAVE_PREPARE,
    CG_RDKAFKA_RESPONSE_SAME_ASSIGNMENT,
    CG_RDKAFKA_RESPONSE_POSTPONED,
    CG_RDKAFKA_RESPONSE_NEXT_STARTED,
    CG_RDKAFKA_ERROR_LOAD_RETRIED,
    CG_RDKAFKA_SUBSCRIBE_CHANGED,
    CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_SENT,
    CG_RDKAFKA_HEARTBEAT_SUBSCRIPTION_POSTPONED,
)
KIP848_CONSUMER_RULE_IDS: frozenset[str] = frozenset(r.rule_id for r in KIP848_CONSUMER_RULES)
