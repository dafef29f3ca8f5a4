"""The Kafka version profiles of the specification: each place where the Scala GroupCoordinator
(profile "3.x") and the Java group coordinator (profile "4.x", the default) answer differently
is driven once under each profile, and the observable difference (a response, or when a timer
fires) is asserted together with the rule that names which release's behaviour applied."""

from __future__ import annotations

import pytest
from coordinator_driver import (
    COMPLETING,
    GROUP,
    PREPARING,
    Driver,
    join_request,
    response_to,
)

from groupspec.cli.main import main
from groupspec.spec import HeartbeatExpired, JoinTimerExpired
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.rules import (
    REACHABLE_RULE_IDS,
    RULES,
    VERSION_PROFILE_RULE_IDS,
    reachable_rule_ids,
)
from groupspec.vocabulary.errors import ErrorCode, InvalidConfigError
from groupspec.vocabulary.requests import OffsetCommitPartition, OffsetCommitRequest, Received

SCALA = "3.x"
JAVA = "4.x"


def _by_profile(java_rule: str, scala_rule: str) -> pytest.MarkDecorator:
    """Run a test under both profiles with the rule each must fire (`is_java` tells which)."""
    return pytest.mark.parametrize(
        ("version", "rule", "is_java"), [(JAVA, java_rule, True), (SCALA, scala_rule, False)]
    )


def _session_deadline(driver: Driver, member_id: str) -> int:
    return driver.armed()[HeartbeatExpired(GROUP, member_id)]


def test_the_default_profile_is_the_java_coordinator_and_others_are_refused():
    assert CoordinatorConfig().kafka_version == JAVA
    with pytest.raises(InvalidConfigError, match=r"kafka_version must be one of 4\.x, 3\.x"):
        CoordinatorConfig(kafka_version="2.0")


def test_version_profile_rules_are_named_for_their_release_and_kept_out_of_the_default_totals():
    scala_only = [rule for rule in RULES if rule.kafka_versions == (SCALA,)]
    assert {rule.rule_id for rule in scala_only} == VERSION_PROFILE_RULE_IDS
    assert len(scala_only) == 5
    for rule in scala_only:
        assert rule.rule_id.endswith(".kafka_3x") and rule.profile_only == "Kafka 3.x profile only"
    assert not VERSION_PROFILE_RULE_IDS & REACHABLE_RULE_IDS
    # The default rules the Scala coordinator has no branch for are outside its totals.
    java_only = {rule.rule_id for rule in RULES if rule.kafka_versions == (JAVA,)}
    assert java_only == {
        "join.group_created",
        "join.new_group_write_failed",
        "sync.stable_returns_assignment",
        "commit.unknown_group_with_generation",
    }
    assert reachable_rule_ids(SCALA) == (REACHABLE_RULE_IDS - java_only) | VERSION_PROFILE_RULE_IDS


@_by_profile("sync.stable_returns_assignment", "sync.stable_returns_assignment.kafka_3x")
def test_a_sync_in_stable_renews_the_session_only_under_the_scala_coordinator(
    version, rule, is_java
):
    driver = Driver(group_initial_rebalance_delay_ms=0, kafka_version=version)
    (member,) = driver.form_stable({"client": "a"})
    before = _session_deadline(driver, member)
    _, out = driver.sync(member, at=4_000)
    assert out.rules[-1] == rule
    assert _session_deadline(driver, member) == (before if is_java else 4_000 + 10_000)


@pytest.mark.parametrize(
    ("version", "api_version", "error", "rule"),
    [
        (JAVA, 9, ErrorCode.GROUP_ID_NOT_FOUND, "commit.unknown_group_with_generation"),
        (JAVA, 8, ErrorCode.ILLEGAL_GENERATION, "commit.unknown_group_with_generation"),
        (SCALA, 9, ErrorCode.ILLEGAL_GENERATION, "commit.unknown_group_with_generation.kafka_3x"),
        (SCALA, 8, ErrorCode.ILLEGAL_GENERATION, "commit.unknown_group_with_generation.kafka_3x"),
    ],
)
def test_a_commit_to_an_unknown_group_with_a_generation(version, api_version, error, rule):
    driver = Driver(kafka_version=version)
    request = OffsetCommitRequest(
        GROUP,
        (OffsetCommitPartition("t", 0, 5),),
        generation_id=1,
        member_id="m",
        api_version=api_version,
    )
    ref, out = driver.send("committer", request)
    assert {p.error_code for p in response_to(out, ref).partitions} == {error}
    assert rule in out.rules
    assert driver.state.group(GROUP) is None


@_by_profile(
    "rebalance.join_completed_after_removal", "rebalance.initial_delay_kept_after_removal.kafka_3x"
)
def test_an_expiry_during_the_initial_delay_completes_the_join_only_under_the_java_coordinator(
    version, rule, is_java
):
    # a joins; b only fetches its member id and never comes back, so its pending-member expiry
    # (its session timeout, 10 s) falls inside the 20 s initial-rebalance delay.
    driver = Driver(group_initial_rebalance_delay_ms=20_000, kafka_version=version)
    a, a_ref, _ = driver.join("a", at=0)
    _, out = driver.send("b", join_request("b"), at=0)
    pending = out.responses[0].body.member_id
    expiry = driver.step(HeartbeatExpired(GROUP, pending), at=10_000)
    assert rule in expiry.rules
    answered = response_to(expiry, a_ref)
    if is_java:
        assert driver.group.state is COMPLETING and answered is not None
        return
    assert driver.group.state is PREPARING and answered is None
    completion = driver.step(JoinTimerExpired(GROUP), at=20_000)
    assert response_to(completion, a_ref).error_code is ErrorCode.NONE
    assert driver.group.state is COMPLETING and driver.member_ids() == {a}


@_by_profile(
    "rebalance.initial_delay_extended", "join.new_member_does_not_extend_initial_delay.kafka_3x"
)
def test_a_new_member_extends_the_initial_delay_past_generation_0_only_under_the_java_coordinator(
    version, rule, is_java
):
    driver = Driver(kafka_version=version)
    (first,) = driver.form_stable({"client": "a"})
    # The only member's session runs out: the group empties at generation 2.
    driver.step(HeartbeatExpired(GROUP, first), at=_session_deadline(driver, first))
    assert driver.group.generation_id == 2 and not driver.group.members
    start = driver.now
    _, a_ref, _ = driver.join("a2", at=start)
    _, _, joined = driver.join("b", at=start + 1_000)
    fired = driver.step(JoinTimerExpired(GROUP), at=start + 3_000)
    assert rule in joined.rules + fired.rules
    if is_java:
        assert driver.group.state is PREPARING and response_to(fired, a_ref) is None
        assert driver.group.join_timer.deadline_ms == start + 6_000
    else:
        assert driver.group.state is COMPLETING
        assert response_to(fired, a_ref).error_code is ErrorCode.NONE


def test_at_generation_0_both_coordinators_extend_the_initial_delay():
    for version in (JAVA, SCALA):
        driver = Driver(kafka_version=version)
        _, a_ref, _ = driver.join("a", at=0)
        driver.join("b", at=1_000)
        fired = driver.step(JoinTimerExpired(GROUP), at=3_000)
        assert "rebalance.initial_delay_extended" in fired.rules, version
        assert response_to(fired, a_ref) is None


@_by_profile("join.group_created", "join.group_created.kafka_3x")
def test_a_group_a_join_creates_is_persisted_only_by_the_java_coordinator(version, rule, is_java):
    # Every append may fail: the Java coordinator's join of a new group can fail with it (the
    # group is rolled back); the Scala coordinator writes nothing, so its join always proceeds.
    driver = Driver(write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS,), kafka_version=version)
    ref = driver.next_ref("a")
    outcomes = driver.outcomes(Received(ref, join_request("a")))
    assert all(rule in outcome.rules for outcome in outcomes)
    answers = {response_to(outcome, ref).error_code for outcome in outcomes}
    expected = {ErrorCode.MEMBER_ID_REQUIRED}
    assert answers == (expected | {ErrorCode.COORDINATOR_NOT_AVAILABLE} if is_java else expected)
    # Where the join succeeds, the group survives a coordinator move only if it was written.
    (created,) = [o for o in outcomes if response_to(o, ref).error_code in expected]
    driver.state = created.state
    driver.reload()
    assert (driver.state.group(GROUP) is not None) is is_java


def test_the_checker_explores_a_3x_world_and_counts_that_releases_rules(capsys):
    argv = ["check", "eager-2", "--set", "clients=1", "--set", "kafka_version=3.x"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # 92 default coordinator rules, less the 4 the Scala coordinator lacks, plus its 5.
    assert "verdict: pass" in out and "(coordinator 20/93, consumer" in out
    assert main([*argv[:-1], "kafka_version=2.x"]) == 2
    assert "kafka_version: must be one of 4.x, 3.x, got '2.x'" in capsys.readouterr().err
