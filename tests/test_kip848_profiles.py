"""The version profiles of the consumer-protocol coordinator (spec/kip848/profiles.py): each
difference between Kafka 3.9, 4.0-4.2 and 4.3+ shown with both outcomes, and the profile-only
rules tagged with their profiles."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_helpers import CONFIG, answer, join, only, send, tps
from kip848_offset_scenarios import (
    EMPTY,
    SPEC_3_9,
    SPEC_4_0,
    SPEC_4_3,
    ask,
    commit,
    commit_error,
    two_stable,
)

from groupspec.spec.kip848 import ConsumerGroupConfig, ConsumerGroupCoordinatorSpec
from groupspec.spec.kip848.profiles import KAFKA_3_9, KAFKA_4_0, KAFKA_4_3, KIP848_PROFILES
from groupspec.spec.kip848.rules import KIP848_RULES
from groupspec.vocabulary.errors import ErrorCode, InvalidConfigError
from groupspec.vocabulary.requests import TopicPartition


def test_a_commit_at_an_older_epoch_is_stale_before_4_3_and_accepted_from_4_3():
    # a holds t0-0 since epoch 2 and moved to epoch 3 (KAFKA-20066's lagging commit).
    request = commit("a", 2, "t0-0")
    assert (
        commit_error(ask(two_stable(SPEC_4_0), request, SPEC_4_0)) is ErrorCode.STALE_MEMBER_EPOCH
    )
    assert commit_error(ask(two_stable(SPEC_4_3), request, SPEC_4_3)) is ErrorCode.NONE


def test_a_commit_for_a_partition_assigned_after_the_epoch_is_stale_in_every_profile():
    request = commit("b", 2, "t0-1")  # b got t0-1 at epoch 3
    for spec in (SPEC_4_0, SPEC_4_3):
        assert commit_error(ask(two_stable(spec), request, spec)) is ErrorCode.STALE_MEMBER_EPOCH


def test_only_4_3_records_the_epoch_each_partition_was_assigned_at():
    a_4_3 = two_stable(SPEC_4_3).group("g").member("a")
    a_4_0 = two_stable(SPEC_4_0).group("g").member("a")
    assert a_4_3 is not None and a_4_0 is not None
    assert dict(a_4_3.assignment_epochs) == {p: 2 for p in tps("t0-0", "t1-0")}
    assert a_4_3.member_epoch == 3 and a_4_0.assignment_epochs == ()
    b = two_stable(SPEC_4_3).group("g").member("b")
    assert b is not None and b.assignment_epoch_of(TopicPartition("t0", 1)) == 3


def test_heartbeat_v1_is_unsupported_in_3_9_only():
    assert answer(only(send(EMPTY, join("a", api_version=1), spec=SPEC_3_9))).error_code is (
        ErrorCode.UNSUPPORTED_VERSION
    )
    assert answer(only(send(EMPTY, join("", api_version=0), spec=SPEC_3_9))).error_code is (
        ErrorCode.NONE
    )
    assert answer(only(send(EMPTY, join("a", api_version=1), spec=SPEC_4_0))).error_code is (
        ErrorCode.NONE
    )


@pytest.mark.parametrize(("version", "deferred"), [(KAFKA_4_0, False), (KAFKA_4_3, True)])
def test_the_assignment_interval_defers_a_target_from_4_3_only(version, deferred):
    spec = ConsumerGroupCoordinatorSpec(
        replace(CONFIG, kafka_version=version, assignment_interval_ms=1_000)
    )
    state = only(send(EMPTY, join("a"), now_ms=5, spec=spec)).state
    outcome = send(state, join("b"), now_ms=10, spec=spec)[0]
    group = outcome.state.group("g")
    assert group is not None
    assert (group.assignment_epoch < group.group_epoch) is deferred
    assert ("cg_assignment.deferred" in outcome.rules) is deferred
    assert ("cg_assignment.no_interval" in outcome.rules) is not deferred


def test_profile_only_rules_name_their_profiles():
    tagged = {rule.rule_id: rule.kafka_versions for rule in KIP848_RULES if rule.profile_only}
    assert tagged == {
        "cg_heartbeat.unsupported_version": (KAFKA_3_9,),
        "cg_assignment.no_interval": (KAFKA_3_9, KAFKA_4_0),
        "cg_offset_commit.epoch_mismatch": (KAFKA_3_9, KAFKA_4_0),
        "cg_offset_commit.epoch_newer": (KAFKA_4_3,),
        "cg_offset_commit.assigned_by_epoch": (KAFKA_4_3,),
        "cg_offset_commit.partition_not_owned": (KAFKA_4_3,),
        "cg_offset_commit.assigned_later": (KAFKA_4_3,),
    }
    assert all(set(versions) <= set(KIP848_PROFILES) for versions in tagged.values())


def test_an_unknown_profile_is_refused_naming_it():
    with pytest.raises(InvalidConfigError, match=r"kafka_version must be one of 3\.9, 4\.0-4\.2"):
        ConsumerGroupConfig(kafka_version="4.1")
