"""aiokafka's three assignors through the adapter: what they are sent, the scenario suite, random
groups, and the findings.

As for kafka-python (tests/test_third_party_assignors.py), a property aiokafka violates is a
FINDING about aiokafka: each is pinned by a strict xfail that asserts the property holds, so the
suite stays green and an aiokafka release that fixes it turns the test into an unexpected pass.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.oracle.assignor.aiokafka_assignors import (
    AIOKAFKA_PROTOCOLS,
    AiokafkaMissingError,
    aiokafka_assignor,
    aiokafka_assignors,
    aiokafka_available,
)
from groupspec.oracle.assignor.assignor_scenarios import (
    SCENARIOS,
    Consumer,
    GroupRunner,
    Scenario,
    Step,
    play,
    protocol_for,
    run_scenario,
)
from groupspec.oracle.assignor.random_groups import random_scenario
from groupspec.spec.assignment import RebalanceProtocol
from groupspec.spec.assignors.registry import ASSIGNORS
from groupspec.spec.assignors.sticky_user_data import encode_sticky_user_data
from groupspec.vocabulary.requests import TopicPartition

needs_aiokafka = pytest.mark.skipif(not aiokafka_available(), reason="aiokafka is not installed")
TP = TopicPartition

RANGE_IGNORES_INSTANCE_IDS = (
    "aiokafka's range sorts the members of a topic by member id alone: the leader drops every "
    "group.instance.id when it decodes the JoinGroup response, so static members are not put "
    "first in instance-id order as Kafka's RangeAssignor does, and a static member's restart "
    "(new member id) can reshuffle the assignment"
)
STICKY_NO_GENERATION = (
    "aiokafka's consumer never calls StickyPartitionAssignor.on_generation_assignment, so the "
    "sticky user data always carries generation -1: a member that missed a generation claims "
    "its old partitions as if it were current, and the first claimant in member order keeps them"
)
STICKY_CONFLICT_KEPT = (
    "aiokafka's sticky leader gives a partition two members claim in the same generation to "
    "the first claimant (KAFKA-12984, fixed in Kafka 3.1 by treating it as unowned), and then "
    "balances by moving a partition that claimant validly owned"
)
STICKY_CLASS_STATE = (
    "aiokafka's StickyPartitionAssignor keeps the member's assignment in class attributes, so "
    "every consumer of the process shares it: a consumer sends another consumer's partitions "
    "as its own previous assignment"
)


@pytest.fixture(autouse=True)
def _quiet_aiokafka() -> Iterator[None]:
    # aiokafka logs warnings (conflicting claims, unparsable user data) for inputs we feed on purpose.
    logger = logging.getLogger("aiokafka")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


def _settle(assignor, step: Step, states=None, generation: int = 5):
    runner = GroupRunner(
        assignor, protocol_for(assignor), states=dict(states or {}), generation=generation
    )
    group, assignment, _ = runner.settle(step, "test")
    return runner, group, assignment


# ---------------------------------------------------------------------------------------------
# The adapters


def test_missing_aiokafka_gets_a_clear_error(monkeypatch):
    import groupspec.oracle.assignor.client_shims as module

    def no_aiokafka(name: str) -> object:
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")

    monkeypatch.setattr(module.importlib, "import_module", no_aiokafka)
    with pytest.raises(AiokafkaMissingError, match=r"pip install aiokafka"):
        aiokafka_assignors()
    assert not aiokafka_available()


def test_unknown_aiokafka_protocol():
    with pytest.raises(ValueError, match="known: range, roundrobin, sticky"):
        aiokafka_assignor("cooperative-sticky")


@needs_aiokafka
def test_names_and_protocols():
    assignors = aiokafka_assignors()
    assert [a.name for a in assignors] == [f"aiokafka:{p}" for p in AIOKAFKA_PROTOCOLS]
    assert all(a.supported_protocols == (RebalanceProtocol.EAGER,) for a in assignors)


@needs_aiokafka
def test_sticky_user_data_is_javas_layout_with_generation_minus_one():
    sticky = aiokafka_assignor("sticky")
    assert sticky.subscription_user_data((), -1) is None  # a fresh consumer sends none
    owned = (TP("a", 0), TP("a", 1), TP("b", 3))
    # Java's StickyAssignor v1 layout (unlike kafka-python's), but always generation -1.
    assert sticky.subscription_user_data(owned, 7) == encode_sticky_user_data(owned, -1)
    assert sticky.subscription_user_data((), 7) == encode_sticky_user_data((), -1)
    assert aiokafka_assignor("range").subscription_user_data(owned, 7) is None


@needs_aiokafka
def test_the_adapter_leaves_aiokafkas_class_state_alone():
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    before = (StickyPartitionAssignor.member_assignment, StickyPartitionAssignor.generation)
    run_scenario(SCENARIOS[1], aiokafka_assignor("sticky"))
    assert (StickyPartitionAssignor.member_assignment, StickyPartitionAssignor.generation) == before


@needs_aiokafka
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_the_scenario_suite_finds_nothing(scenario: Scenario):
    for assignor in aiokafka_assignors():
        result = run_scenario(scenario, assignor)
        assert not result.findings, (assignor.name, result.findings)
        assert result.converged and result.rounds == 1
        if assignor.name == "aiokafka:sticky":
            assert result.balanced and result.gap is not None and result.gap >= 0


@needs_aiokafka
def test_range_and_roundrobin_equal_ours_on_the_scenarios():
    for protocol in ("range", "roundrobin"):
        for scenario in SCENARIOS:
            ours = run_scenario(scenario, ASSIGNORS[protocol])
            theirs = run_scenario(scenario, aiokafka_assignor(protocol))
            assert theirs.assignment == ours.assignment, (protocol, scenario.name)


# ---------------------------------------------------------------------------------------------
# Random groups: every violation is one of the findings below


def _has_static(scenario: Scenario) -> bool:
    return any(c.instance_id for step in (*scenario.before, scenario.after) for c in step.consumers)


def _disturbed(scenario: Scenario) -> bool:
    return any(step.lagging or step.claims for step in scenario.before)


def explained(protocol: str, scenario: Scenario) -> frozenset[str]:
    """The properties the findings allow aiokafka's `protocol` assignor to violate here."""
    if protocol == "range" and _has_static(scenario):
        return frozenset({"RangeOrder"})
    if protocol == "sticky" and _disturbed(scenario):
        return frozenset({"StickyRetention", "StickyRetentionOptimal"})
    return frozenset()


@needs_aiokafka
@pytest.mark.parametrize("protocol", AIOKAFKA_PROTOCOLS)
@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**31))
def test_random_groups_violate_only_the_findings(protocol: str, seed: int):
    scenario = random_scenario(seed)
    played = play(scenario, aiokafka_assignor(protocol))
    violated = {finding.property for finding in played.runner.findings}
    assert violated <= explained(protocol, scenario), played.runner.findings
    if protocol in ("range", "roundrobin") and not _has_static(scenario):
        assert played.assignment == play(scenario, ASSIGNORS[protocol]).assignment


# ---------------------------------------------------------------------------------------------
# The findings, pinned (aiokafka 0.14)

_DYNAMIC_THEN_STATIC = Step(
    (("t", 3),), (Consumer("a", ("t",)), Consumer("b", ("t",), instance_id="i1"))
)


@needs_aiokafka
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=RANGE_IGNORES_INSTANCE_IDS)
def test_finding_range_puts_static_members_first():
    runner, _, assignment = _settle(aiokafka_assignor("range"), _DYNAMIC_THEN_STATIC)
    assert assignment.partitions_of("b") == (TP("t", 0), TP("t", 1)), assignment
    assert not runner.findings


@needs_aiokafka
def test_the_range_finding_is_what_the_checks_report():
    runner, _, assignment = _settle(aiokafka_assignor("range"), _DYNAMIC_THEN_STATIC)
    assert assignment.partitions_of("a") == (TP("t", 0), TP("t", 1))
    assert {f.property for f in runner.findings} == {"RangeOrder"}
    ours, _, _ = _settle(ASSIGNORS["range"], _DYNAMIC_THEN_STATIC)
    assert not ours.findings


# a missed generation 5: it still claims t-0..2 (generation 4), which b owns since generation 5.
_THREE = Step((("t", 6),), tuple(Consumer(m, ("t",)) for m in "abc"))
_STALE = {
    "a": ((TP("t", 0), TP("t", 1), TP("t", 2)), 4),
    "b": ((TP("t", 0), TP("t", 1), TP("t", 2)), 5),
    "c": ((TP("t", 3), TP("t", 4), TP("t", 5)), 5),
}


@needs_aiokafka
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=STICKY_NO_GENERATION)
def test_finding_sticky_current_owner_keeps_its_partitions():
    _, _, assignment = _settle(aiokafka_assignor("sticky"), _THREE, _STALE)
    kept = set(assignment.partitions_of("b")) & set(_STALE["b"][0])
    assert len(kept) == 2, assignment  # min(3 owned, quota 2), as KIP-792 resolves the claim


@needs_aiokafka
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=STICKY_NO_GENERATION)
def test_finding_the_consumer_passes_the_generation_to_the_assignor():
    from aiokafka.consumer import group_coordinator

    assert "on_generation_assignment" in inspect.getsource(group_coordinator)


@needs_aiokafka
def test_the_generation_finding_gives_the_stale_member_the_partitions():
    _, _, assignment = _settle(aiokafka_assignor("sticky"), _THREE, _STALE)
    assert set(assignment.partitions_of("a")) < set(_STALE["a"][0])  # the stale member's claim
    assert len(set(assignment.partitions_of("b")) & set(_STALE["b"][0])) == 1
    _, _, ours = _settle(ASSIGNORS["sticky"], _THREE, _STALE)
    assert len(set(ours.partitions_of("b")) & set(_STALE["b"][0])) == 2


# a and b both claim t-0 in generation 5; a's valid partitions are t-1 and t-2, b's t-3.
_TWO = Step((("t", 4),), (Consumer("a", ("t",)), Consumer("b", ("t",))))
_CONFLICT = {"a": ((TP("t", 0), TP("t", 1), TP("t", 2)), 5), "b": ((TP("t", 0), TP("t", 3)), 5)}


@needs_aiokafka
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=STICKY_CONFLICT_KEPT)
def test_finding_sticky_conflicting_claim_is_unowned():
    runner, _, _ = _settle(aiokafka_assignor("sticky"), _TWO, _CONFLICT)
    assert not runner.findings, runner.findings


@needs_aiokafka
def test_the_conflict_finding_is_what_the_checks_report():
    runner, _, assignment = _settle(aiokafka_assignor("sticky"), _TWO, _CONFLICT)
    assert assignment.partitions_of("a") == (TP("t", 0), TP("t", 1))  # t-2 given away
    assert {f.property for f in runner.findings} == {"StickyRetention", "StickyRetentionOptimal"}
    ours, _, _ = _settle(ASSIGNORS["sticky"], _TWO, _CONFLICT)
    assert not ours.findings


@needs_aiokafka
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=STICKY_CLASS_STATE)
def test_finding_two_consumers_of_one_process_share_sticky_state():
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

    saved = (StickyPartitionAssignor.member_assignment, StickyPartitionAssignor.generation)
    try:
        # Consumer 1 (group g1) completes a rebalance; consumer 2 (group g2) never has.
        StickyPartitionAssignor.on_assignment(
            ConsumerProtocolMemberAssignment(0, [("a", [0])], b"")
        )
        assert StickyPartitionAssignor.metadata(["b"]).user_data == b""
    finally:
        StickyPartitionAssignor.member_assignment, StickyPartitionAssignor.generation = saved
