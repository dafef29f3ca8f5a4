"""An empty group id in a consumer-protocol OffsetCommit or OffsetFetch is an unknown group, not
INVALID_GROUP_ID: Kafka 4.3.0's GroupCoordinatorService.commitOffsets and fetchOffsets refuse
only a null group id (which the non-nullable schema fields never carry), and Kafka 4.4.0 answers
a v9 commit to "" at epoch 1 with GROUP_ID_NOT_FOUND (the cg-offsets-unknown-groups probe,
tests/test_kafka_consumer_protocol.py)."""

from __future__ import annotations

from kip848_offset_scenarios import EMPTY, ask, commit, commit_error, committed, fetch_answer

from groupspec.spec.kip848.rules import KIP848_RULE_IDS
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import OffsetFetchRequest, TopicPartition


def test_a_commit_to_the_empty_group_id_is_a_commit_to_an_unknown_group():
    outcome = ask(EMPTY, commit("a", 1, "t0-0", group_id=""))
    assert commit_error(outcome) is ErrorCode.GROUP_ID_NOT_FOUND
    assert "cg_offset_commit.unknown_group" in outcome.rules


def test_a_fetch_of_the_empty_group_id_finds_no_offsets():
    outcome = ask(committed(), OffsetFetchRequest("", (TopicPartition("t0", 0),)))
    answer = fetch_answer(outcome)
    assert answer.error_code is ErrorCode.NONE
    assert [entry.committed_offset for entry in answer.partitions] == [-1]
    assert "cg_offset_fetch.unknown_group" in outcome.rules


def test_no_rule_answers_invalid_group_id_to_offsets():
    assert "cg_offset_commit.invalid_group_id" not in KIP848_RULE_IDS
    assert "cg_offset_fetch.invalid_group_id" not in KIP848_RULE_IDS
