"""Regular-expression subscriptions of the consumer protocol (spec/kip848/regex.py,
docs/protocol.md §12.18): what a member subscribing with an expression is assigned and when, the
group epoch waiting for the broker's resolution, the expressions refused, the resolution kept
across a failover, and the consumer-protocol oracle judging Apache Kafka 4.4.0's own trace of
them. The configured topics are t0 (two partitions) and t1 (one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kip848_helpers import answer, beat, only, send, tps
from kip848_regex_scenarios import (
    EMPTY,
    RESOLVED,
    a_joined_with_regex,
    a_resolved,
    regex_join,
)

from groupspec.oracle.trace.validate import validate_trace
from groupspec.spec.kip848.invariants import check_state
from groupspec.spec.kip848.regex import REGEX_BATCH_REFRESH_MIN_INTERVAL_MS, compiles_as_re2
from groupspec.spec.kip848.replay import durability_problems
from groupspec.vocabulary.errors import ErrorCode

TRACES = Path(__file__).parent / "traces"


def test_a_member_gets_what_its_expression_matches_once_the_broker_resolved_it():
    joined = a_joined_with_regex("t.*")
    assert answer(joined).assignment is not None
    assert answer(joined).assignment.topic_partitions == ()
    group = joined.state.group("g")
    assert group is not None and group.regex_resolution == ("t.*",)
    state = a_resolved("t.*")
    group = state.group("g")
    assert group is not None
    member = group.member("a")
    assert member is not None and member.assigned == tps("t0-0", "t0-1", "t1-0")
    assert check_state(state) == []


def test_the_group_epoch_waits_for_the_resolution():
    joined = a_joined_with_regex()
    before = joined.state.group("g")
    assert before is not None
    resolved = only(send(joined.state, RESOLVED, 1_000))
    after = resolved.state.group("g")
    assert after is not None and after.group_epoch == before.group_epoch + 1
    assert after.resolved_regex("t0") is not None
    assert after.resolved_regex("t0").topics == ("t0",)


def test_an_expression_matching_nothing_resolves_without_a_new_epoch():
    joined = a_joined_with_regex("x.*")
    resolved = only(send(joined.state, RESOLVED, 1_000))
    group = resolved.state.group("g")
    assert group is not None and group.group_epoch == joined.state.group("g").group_epoch
    assert "cg_regex.resolved_unchanged" in resolved.rules


@pytest.mark.parametrize("pattern", ["(", "t(?=0)", "(t)\\1", "t*+", "(?>t)"])
def test_an_expression_re2_does_not_compile_is_refused_and_changes_nothing(pattern):
    refused = only(send(EMPTY, regex_join("a", pattern)))
    assert answer(refused).error_code is ErrorCode.INVALID_REGULAR_EXPRESSION
    assert refused.state == EMPTY


@pytest.mark.parametrize("pattern", ["t.*", "t[01]", "orders|payments", "(?P<n>t)0"])
def test_re2_expressions_compile(pattern):
    assert compiles_as_re2(pattern)


def test_no_second_resolution_starts_within_ten_seconds_of_the_last():
    state = a_resolved()  # resolved at 1 s
    early = only(send(state, regex_join("b", "t1"), 1_000 + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS))
    group = early.state.group("g")
    assert group is not None and group.regex_resolution is None
    assert "cg_regex.subscribed_unresolved" in early.rules
    # A later heartbeat finds b's expression unresolved and starts the resolution of both.
    later = only(send(early.state, beat("b", answer(early).member_epoch), 12_000))
    group = later.state.group("g")
    assert group is not None and group.regex_resolution == ("t0", "t1")


def test_the_resolution_survives_a_failover():
    state = a_resolved("t.*")
    assert durability_problems(state, state.log) == []
    group = state.group("g")
    assert group is not None and group.resolved_regexes


def test_kafkas_own_regex_subscriptions_pass_with_every_event_judged():
    # Apache Kafka 4.4.0, probe cg-regex (record/workload/probes_consumer.py).
    verdict = validate_trace(TRACES / "kip848-regex.jsonl", {"kafka_version": "4.x"}, shrink=False)
    assert verdict.passed, verdict.divergences[:1]
    assert verdict.judged_fraction == 1.0
    assert {"cg_regex.invalid", "cg_regex.resolved_changed", "cg_regex.tombstone"} <= verdict.rules
