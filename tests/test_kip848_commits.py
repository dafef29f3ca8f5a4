"""The KIP-848 consumer's commits (spec/kip848/consumer/commits.py): sent at the latest member
epoch, retried at a newer epoch on STALE_MEMBER_EPOCH, otherwise done."""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848.consumer.commits import Commit, commit, on_commit_response
from groupspec.spec.kip848.consumer.machine import ConsumerState, KafkaConsumer
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import TopicPartition

T00 = TopicPartition("t0", 0)
STABLE = KafkaConsumer("c1", state=ConsumerState.STABLE, member_epoch=3, owned=(T00,))


def test_a_member_commits_what_it_holds_at_its_latest_epoch():
    step = commit(STABLE)
    assert step is not None and step.rule == "cg_client.commit.sent"
    assert step.commit == Commit("c1", 3, (T00,))
    request = step.commit.request("g")
    assert (request.generation_id, request.member_id, request.api_version) == (3, "c1", 9)


def test_no_commit_without_partitions_or_epoch():
    assert commit(replace(STABLE, owned=())) is None
    assert commit(replace(STABLE, state=ConsumerState.FENCED, member_epoch=0)) is None


def test_a_stale_commit_is_retried_at_the_newer_epoch_only():
    sent = Commit("c1", 2, (T00,))
    retried = on_commit_response(STABLE, sent, ErrorCode.STALE_MEMBER_EPOCH)
    assert retried.rule == "cg_client.commit.retried" and retried.commit == Commit("c1", 3, (T00,))
    same = on_commit_response(STABLE, Commit("c1", 3, (T00,)), ErrorCode.STALE_MEMBER_EPOCH)
    assert (same.rule, same.commit) == ("cg_client.commit.failed", None)
    assert on_commit_response(STABLE, sent, ErrorCode.NONE).rule == "cg_client.commit.completed"
    other = on_commit_response(STABLE, sent, ErrorCode.UNKNOWN_MEMBER_ID)
    assert (other.rule, other.commit) == ("cg_client.commit.failed", None)
