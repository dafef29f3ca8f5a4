"""Regular-expression subscriptions in the optimized consumer-protocol coordinator
(impl/kip848/regex.py) on its own: the resolution queued on the timer heap and completed by
`advance`, the records that rebuild the expressions and resolutions after a restart (records
written before expressions were served load too), a topic created later resolved again, and
ConsumerGroupDescribe echoing the member's expression. (The differential runs of
tests/test_kip848_impl_differential.py hold the rest to the specification.)"""

from __future__ import annotations

from typing import Any

from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinator,
    RegexResolutionCompleted,
    Topic,
)
from groupspec.impl.kip848.records import GROUP_EPOCH, MEMBER_METADATA, ConsumerGroupRecord
from groupspec.impl.kip848.regex import REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
from groupspec.impl.kip848.state import Group
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

TOPICS = (Topic("orders", "orders-id", 2), Topic("payments", "payments-id", 1))


def regex_join(member_id: str, regex: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        "g",
        member_id,
        0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_regex=regex,
        topic_partitions=(),
    )


def beat(member_id: str, epoch: int) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest("g", member_id, epoch, topic_partitions=())


class Harness:
    """A coordinator on a manual clock, its records kept and its answers read one by one."""

    def __init__(self, records: list[ConsumerGroupRecord] | None = None) -> None:
        self.clock = ManualClock(0)
        self.log: list[ConsumerGroupRecord] = []
        self.coordinator = ConsumerGroupCoordinator(
            ConsumerGroupConfig(topics=TOPICS, assignment_interval_ms=0),
            clock=self.clock,
            records=lambda _group, written: self.log.extend(written),
        )
        if records is not None:
            self.log.extend(records)
            self.coordinator.load(records)

    def send(self, request: Any) -> Any:
        self.coordinator.handle("ref", request)
        outbox = self.coordinator.outbox
        assert outbox is not None
        return outbox.take()["ref"]


def test_the_resolution_completes_off_the_request_and_its_epoch_bump_reaches_the_next_beat():
    h = Harness()
    joined = h.send(regex_join("a", "or.*"))
    assert joined.error_code is ErrorCode.NONE
    group = h.coordinator.group("g")
    assert group is not None and group.regex_resolution == ("or.*",)
    epoch = group.group_epoch
    assert h.coordinator.advance() == [RegexResolutionCompleted("g")]
    assert group.group_epoch == epoch + 1 and group.regex_resolution is None
    assert group.resolved_regexes["or.*"].topics == {"orders"}
    answer = h.send(beat("a", joined.member_epoch))
    assert answer.member_epoch == epoch + 1
    member = group.members["a"]
    assert member.assigned == {TopicPartition("orders", 0), TopicPartition("orders", 1)}


def test_an_expression_re2_refuses_changes_nothing():
    h = Harness()
    assert h.send(regex_join("a", "or(?=d)")).error_code is ErrorCode.INVALID_REGULAR_EXPRESSION
    assert h.coordinator.group("g") is None and h.log == []


def _resolved_member() -> tuple[Harness, Group]:
    """A harness whose member a subscribed to pay.* and heartbeat once the pattern resolved."""
    h = Harness()
    joined = h.send(regex_join("a", "pay.*"))
    h.coordinator.advance()
    h.send(beat("a", joined.member_epoch))
    group = h.coordinator.group("g")
    assert group is not None
    return h, group


def test_the_expressions_and_resolutions_survive_a_restart():
    h, before = _resolved_member()
    restarted = Harness(h.log)
    after = restarted.coordinator.group("g")
    assert after is not None
    assert after.resolved_regexes == before.resolved_regexes
    assert after.members["a"].subscribed_topic_regex == "pay.*"
    assert after.members["a"].subscribed_topics == {"payments"}
    assert after.regex_subscribers == {"pay.*": 1}
    # The last subscriber's leave deletes the resolution: its record is tombstoned.
    restarted.send(ConsumerGroupHeartbeatRequest("g", "a", -1))
    assert not after.resolved_regexes
    assert [r.value for r in restarted.log if r.key[0] == "regex"][-1] is None


def test_member_records_written_before_expressions_were_served_load():
    h = Harness()
    h.send(
        ConsumerGroupHeartbeatRequest(
            "g",
            "a",
            0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=("orders",),
            topic_partitions=(),
        )
    )
    old = [
        ConsumerGroupRecord(r.group_id, r.key, r.value[:8])
        if r.key[0] == MEMBER_METADATA and r.value is not None
        else r
        for r in h.log
    ]
    group = Harness(old).coordinator.group("g")
    assert group is not None and group.members["a"].subscribed_topic_regex == ""
    assert group.members["a"].subscribed_topics == {"orders"}


def test_a_topic_created_later_is_resolved_again_after_ten_seconds():
    h = Harness()
    joined = h.send(regex_join("a", ".*s"))
    h.coordinator.advance()
    group = h.coordinator.group("g")
    assert group is not None
    assert group.resolved_regexes[".*s"].topics == {"orders", "payments"}
    h.coordinator.set_topics((*TOPICS, Topic("refunds", "refunds-id", 1)))
    h.clock.advance(REGEX_BATCH_REFRESH_MIN_INTERVAL_MS)
    epoch = h.send(beat("a", joined.member_epoch)).member_epoch
    assert group.regex_resolution is None  # not within 10 s of the last
    h.clock.advance(1)
    h.send(beat("a", epoch))
    assert group.regex_resolution == (".*s",)
    h.coordinator.advance()
    assert group.resolved_regexes[".*s"].topics == {"orders", "payments", "refunds"}


def test_describe_echoes_the_members_expression():
    h = Harness()
    h.send(regex_join("a", "orders"))
    (described,) = h.send(ConsumerGroupDescribeRequest(("g",))).groups
    assert [m.subscribed_topic_regex for m in described.members] == ["orders"]


def test_a_group_epoch_record_written_before_it_carried_the_metadata_hash_loads():
    h, before = _resolved_member()
    assert before.metadata_hash
    old = [
        ConsumerGroupRecord(r.group_id, r.key, r.value[0])
        if r.key[0] == GROUP_EPOCH and r.value is not None
        else r
        for r in h.log
    ]
    after = Harness(old).coordinator.group("g")
    assert after is not None and after.group_epoch == before.group_epoch
    assert after.metadata_hash == ()
