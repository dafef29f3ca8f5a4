"""Third-party assignors through the adapter: kafka-python's four, and malformed callables.

kafka-python's assignors are held to exactly the properties ours are (`check_assignment` under
their protocol name), on the scenario suite and on Hypothesis-generated groups. A violation is a
FINDING about kafka-python, not a reason to weaken a check: each known one is listed in
`FINDINGS` and pinned by a test marked `xfail(strict=True)` that asserts the property holds, so
the suite stays green, the finding stays documented, and a kafka-python release that fixes it
turns the test into an unexpected pass (a failure) that someone will notice.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.oracle.assignor.adapter import (
    AssignorOutputError,
    CallableAssignor,
    PlainMembers,
    PlainPartitionCounts,
    plain_members,
    protocol_name_of,
)
from groupspec.oracle.assignor.assignor_scenarios import (
    ASSIGNOR_ERROR,
    SCENARIOS,
    AssignorRaisedError,
    Consumer,
    GroupRunner,
    Step,
    protocol_for,
    run_scenario,
)
from groupspec.oracle.assignor.kafka_python import (
    KAFKA_PYTHON_PROTOCOLS,
    KafkaPythonMissingError,
    kafka_python_assignor,
    kafka_python_assignors,
    kafka_python_available,
)
from groupspec.spec.assignment import (
    Cluster,
    GroupSubscription,
    Member,
    RebalanceProtocol,
    Subscription,
)
from groupspec.spec.assignors.properties import check_assignment
from groupspec.spec.assignors.registry import ASSIGNORS
from groupspec.spec.assignors.sticky_user_data import encode_sticky_user_data
from groupspec.vocabulary.requests import TopicPartition

needs_kafka_python = pytest.mark.skipif(
    not kafka_python_available(), reason="kafka-python is not installed"
)
TP = TopicPartition


@pytest.fixture(autouse=True)
def _quiet_kafka_python() -> Iterator[None]:
    # kafka-python logs (and prints, without a handler) warnings for inputs we feed on purpose.
    logger = logging.getLogger("kafka")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


# ---------------------------------------------------------------------------------------------
# Known findings about kafka-python 3.0.12


@dataclass(frozen=True)
class KnownFinding:
    """A property kafka-python's assignor violates, where, and why."""

    assignor: str  # protocol name
    properties: frozenset[str]
    reason: str


GROUPBY_RANGE = KnownFinding(
    "range",
    frozenset({"RangeBalance", "RangeOrder"}),
    "kafka-python range orders members with itertools.groupby over the unsorted member list "
    "and keeps one group per key in a dict: when static and dynamic members interleave in the "
    "JoinGroup member list, every run of a kind but the last is dropped and those members get "
    "no partitions of the topic",
)
GROUPBY_ROUNDROBIN = KnownFinding(
    "roundrobin",
    frozenset({"RoundRobinBalance"}),
    "kafka-python roundrobin builds its member cycle with the same groupby: interleaved static "
    "and dynamic members are dropped from the cycle and get nothing, even under identical "
    "subscriptions",
)
ROUNDROBIN_KEYERROR = KnownFinding(
    "roundrobin",
    frozenset({ASSIGNOR_ERROR}),
    "kafka-python roundrobin raises KeyError((instance_id, member_id)) when the member whose "
    "turn it is does not subscribe to the partition's topic: the skip loop binds "
    "`member_id = next(member_iter)`, a (group_instance_id, member_id) tuple",
)
COOPERATIVE_NO_GENERATION = KnownFinding(
    "cooperative-sticky",
    frozenset({"StickyRetention", "StickyRetentionOptimal"}),
    "kafka-python cooperative-sticky sends ConsumerProtocolSubscription v1 (no GenerationId) "
    "and no generation in user data, so its leader cannot resolve a partition two members "
    "claim by generation (KIP-792): every claim has generation -1, the first claimant in member "
    "order keeps it, and the member that owned it in the latest generation loses it",
)
FINDINGS = (GROUPBY_RANGE, GROUPBY_ROUNDROBIN, ROUNDROBIN_KEYERROR, COOPERATIVE_NO_GENERATION)


def _interleaved(step: Step) -> bool:
    """Whether static and dynamic members interleave in member-id order (the groupby finding)."""
    kinds = [c.instance_id is not None for c in sorted(step.consumers, key=lambda c: c.member_id)]
    runs = sum(1 for i, kind in enumerate(kinds) if i == 0 or kind != kinds[i - 1])
    return runs > 2


def _identical(step: Step) -> bool:
    return len({c.topics for c in step.consumers}) <= 1


def explained(protocol: str, step: Step) -> frozenset[str]:
    """The properties the known findings allow kafka-python's `protocol` assignor to violate here."""
    allowed: set[str] = set()
    if protocol == "range" and _interleaved(step):
        allowed |= GROUPBY_RANGE.properties
    if protocol == "roundrobin" and _interleaved(step):
        allowed |= GROUPBY_ROUNDROBIN.properties
    if protocol == "roundrobin" and not _identical(step):
        allowed |= ROUNDROBIN_KEYERROR.properties
    return frozenset(allowed)


def _settle(assignor, step: Step, states=None, generation: int = 5):
    runner = GroupRunner(
        assignor, protocol_for(assignor), states=dict(states or {}), generation=generation
    )
    try:
        group, assignment, _rounds = runner.settle(step, "test")
    except AssignorRaisedError as error:
        return runner, None, None, str(error)
    return runner, group, assignment, None


def _violated(runner: GroupRunner, raised: str | None) -> frozenset[str]:
    names = {finding.property for finding in runner.findings}
    if raised is not None:
        names.add(ASSIGNOR_ERROR)
    return frozenset(names)


# ---------------------------------------------------------------------------------------------
# The adapter: plain-data shapes and malformed output


def _group() -> GroupSubscription:
    return GroupSubscription.of(
        Cluster.of({"a": 4, "b": 2}),
        [
            Member("m1", Subscription.of(["a", "b"], [TP("a", 0)], 3, "r1", b"ud"), "instance-1"),
            Member("m2", Subscription.of(["a"])),
        ],
    )


def _returning(result: object) -> CallableAssignor:
    return CallableAssignor("garbage", lambda members, counts: result)  # type: ignore[arg-type,return-value]


def test_the_callable_gets_the_documented_plain_data():
    seen: list[tuple[PlainMembers, PlainPartitionCounts]] = []

    def record(members: PlainMembers, counts: PlainPartitionCounts) -> dict[str, list]:
        seen.append((members, counts))
        return {"m1": [("a", 0), ("b", 1)], "m2": [["a", 1]]}

    assignment = CallableAssignor("recorder", record).assign(_group())
    members, counts = seen[0]
    assert counts == {"a": 4, "b": 2}
    assert list(members) == ["m1", "m2"]
    assert members["m1"] == {
        "topics": ["a", "b"],
        "owned_partitions": [("a", 0)],
        "generation": 3,
        "instance_id": "instance-1",
        "rack": "r1",
        "user_data": b"ud",
    }
    assert members["m2"]["generation"] == -1 and members["m2"]["instance_id"] is None
    assert assignment.as_dict() == {"m1": (TP("a", 0), TP("b", 1)), "m2": (TP("a", 1),)}


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([("a", 0)], "expected a mapping of member id to partitions, got list"),
        ({"m9": [("a", 0)]}, "unknown member 'm9' (group members: m1, m2)"),
        ({7: [("a", 0)]}, "member id 7 is not a str"),
        ({"m1": "a0"}, "member 'm1': expected a list of (topic, partition) pairs, got str"),
        ({"m1": 3}, "member 'm1': expected a list of (topic, partition) pairs, got int"),
        ({"m1": {"a": 0}}, "member 'm1': expected a list of (topic, partition) pairs, got dict"),
        (
            {"m1": [("a", 0), "a1"]},
            "member 'm1', entry 1 ('a1'): expected a (topic, partition) pair",
        ),
        (
            {"m1": [("a", 0, 1)]},
            "member 'm1', entry 0 (('a', 0, 1)): expected a (topic, partition) pair",
        ),
        ({"m2": [(0, 1)]}, "member 'm2', entry 0 ((0, 1)): topic must be a str, got int"),
        ({"m2": [("a", "1")]}, "partition of topic 'a' must be an int, got str"),
        ({"m2": [("a", 1.0)]}, "partition of topic 'a' must be an int, got float"),
        ({"m2": [("a", True)]}, "partition of topic 'a' must be an int, got bool"),
        ({"m2": [("a", None)]}, "member 'm2', entry 0 (('a', None)): partition of topic 'a'"),
    ],
)
def test_malformed_output_gets_an_error_naming_the_place(result, message):
    with pytest.raises(AssignorOutputError) as caught:
        _returning(result).assign(_group())
    assert "assignor 'garbage'" in str(caught.value)
    assert message in str(caught.value)


def test_members_left_out_get_an_empty_entry():
    assignment = _returning({"m2": [("a", 0)]}).assign(_group())
    assert assignment.as_dict() == {"m1": (), "m2": (TP("a", 0),)}


def test_well_formed_but_wrong_output_is_left_to_the_property_checks():
    group = _group()
    result = {"m1": [("a", 0), ("a", 0), ("a", 9)], "m2": [("b", 0)]}
    assignment = _returning(result).assign(group)
    violated = {v.property for v in check_assignment("range", group, assignment)}
    assert {"PartitionsExist", "NoDoubleAssignment", "SubscribedTopicsOnly"} <= violated


def test_user_data_must_be_bytes():
    assignor = CallableAssignor(
        "bad-user-data",
        lambda members, counts: {},
        user_data=lambda owned, generation: "text",  # type: ignore[arg-type,return-value]
    )
    with pytest.raises(AssignorOutputError, match="user data must be bytes or None, got str"):
        assignor.subscription_user_data((), -1)


def test_user_data_function_gets_plain_owned_partitions():
    calls = []
    assignor = CallableAssignor(
        "echo",
        lambda members, counts: {},
        user_data=lambda owned, generation: calls.append((owned, generation)) or b"x",
    )
    assert assignor.subscription_user_data((TP("a", 1),), 4) == b"x"
    assert calls == [([("a", 1)], 4)]
    assert CallableAssignor("none", lambda m, c: {}).subscription_user_data((), -1) is None


def test_protocol_name_defaults_to_the_name():
    assert protocol_name_of(CallableAssignor("range", lambda m, c: {})) == "range"
    assert (
        protocol_name_of(CallableAssignor("x:range", lambda m, c: {}, protocol_name="range"))
        == "range"
    )
    assert protocol_name_of(ASSIGNORS["sticky"]) == "sticky"
    with pytest.raises(ValueError, match="at least one protocol"):
        CallableAssignor("none", lambda m, c: {}, supported_protocols=())


def test_a_callable_goes_through_the_scenario_measurements():
    def everything_to_the_first(members: PlainMembers, counts: PlainPartitionCounts) -> dict:
        first = next(iter(members))
        return {
            first: [
                (topic, number)
                for topic, count in counts.items()
                if topic in members[first]["topics"]
                for number in range(count)
            ]
        }

    hog = CallableAssignor("hog", everything_to_the_first, protocol_name="roundrobin")
    result = run_scenario(SCENARIOS[1], hog)  # scale-out
    assert result.spread == 18
    assert {f.property for f in result.findings} == {"RoundRobinBalance"}
    # c1 holds all 18; a balanced assignment leaves it 5 at most
    assert result.moves == 0 and result.optimal_moves == 13 and result.gap == -13


def test_a_crashing_or_garbage_callable_is_reported_not_raised():
    def crash(members: PlainMembers, counts: PlainPartitionCounts) -> dict:
        raise RuntimeError("boom")

    crashed = run_scenario(SCENARIOS[0], CallableAssignor("crash", crash))
    assert [(f.property, f.round) for f in crashed.findings] == [(ASSIGNOR_ERROR, "measured")]
    assert "RuntimeError: boom" in crashed.findings[0].detail
    assert crashed.moves is None and crashed.spread is None and crashed.gap is None
    garbage = run_scenario(SCENARIOS[1], _returning({"c1": [("orders", "0")]}))
    assert garbage.findings[0].property == ASSIGNOR_ERROR
    assert "AssignorOutputError" in garbage.findings[0].detail
    assert garbage.findings[0].round == "before 1"


# ---------------------------------------------------------------------------------------------
# kafka-python's adapters


def test_missing_kafka_python_gets_a_clear_error(monkeypatch):
    import groupspec.oracle.assignor.client_shims as module

    def no_kafka(name: str) -> object:
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")

    monkeypatch.setattr(module.importlib, "import_module", no_kafka)
    with pytest.raises(KafkaPythonMissingError, match=r"pip install kafka-python"):
        kafka_python_assignors()
    assert not kafka_python_available()


def test_unknown_kafka_python_protocol():
    with pytest.raises(ValueError, match="known: range, roundrobin, sticky, cooperative-sticky"):
        kafka_python_assignor("uniform")


@needs_kafka_python
def test_kafka_python_names_and_protocols():
    assignors = kafka_python_assignors()
    assert [a.name for a in assignors] == [f"kafka-python:{p}" for p in KAFKA_PYTHON_PROTOCOLS]
    assert [protocol_name_of(a) for a in assignors] == list(KAFKA_PYTHON_PROTOCOLS)
    protocols = {a.name: a.supported_protocols for a in assignors}
    assert protocols["kafka-python:range"] == (RebalanceProtocol.EAGER,)
    assert protocols["kafka-python:sticky"] == (RebalanceProtocol.EAGER,)
    assert protocols["kafka-python:cooperative-sticky"] == (RebalanceProtocol.COOPERATIVE,)


@needs_kafka_python
def test_sticky_user_data_is_what_the_members_own_instance_sends():
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    sticky = kafka_python_assignor("sticky")
    assert sticky.subscription_user_data((), -1) is None  # a fresh consumer sends none
    data = sticky.subscription_user_data((TP("a", 2), TP("b", 0)), 7)
    assert data is not None
    parsed = StickyPartitionAssignor.parse_member_metadata(
        ConsumerProtocolSubscription(version=0, topics=["a", "b"], user_data=data)
    )
    assert sorted(parsed.partitions) == [("a", 2), ("b", 0)] and parsed.generation == 7
    # cooperative-sticky carries ownership in the subscription field, not in user data
    assert (
        kafka_python_assignor("cooperative-sticky").subscription_user_data((TP("a", 2),), 7) is None
    )
    assert kafka_python_assignor("range").subscription_user_data((TP("a", 2),), 7) is None


@needs_kafka_python
def test_the_leader_sees_each_members_subscription_version():
    seen = {}
    cooperative = kafka_python_assignor("cooperative-sticky")
    original = cooperative.function

    def spy(members: PlainMembers, counts: PlainPartitionCounts):
        seen.update(members)
        return original(members, counts)

    group = GroupSubscription.of(
        Cluster.of({"a": 2}), [Member("m1", Subscription.of(["a"], [TP("a", 0)], 4))]
    )
    CallableAssignor("spy", spy, cooperative.supported_protocols).assign(group)
    assert seen["m1"]["generation"] == 4 and plain_members(group)["m1"]["generation"] == 4
    from groupspec.oracle.assignor.kafka_python import _load, _wire_subscription

    wire = _wire_subscription(_load("cooperative-sticky"), plain_members(group)["m1"])
    # v1 has OwnedPartitions but no GenerationId: the leader reads -1 (finding below).
    assert wire.version == 1 and wire.generation_id == -1
    assert [(t.topic, list(t.partitions)) for t in wire.owned_partitions] == [("a", [0])]


@needs_kafka_python
def test_kafka_python_range_and_roundrobin_match_ours_on_the_scenarios():
    for protocol in ("range", "roundrobin"):
        theirs = kafka_python_assignor(protocol)
        for scenario in SCENARIOS:
            if scenario.name == "uneven-subscriptions" and protocol == "roundrobin":
                continue  # ROUNDROBIN_KEYERROR
            ours_result = run_scenario(scenario, ASSIGNORS[protocol])
            their_result = run_scenario(scenario, theirs)
            assert their_result.assignment == ours_result.assignment, (protocol, scenario.name)


# ---------------------------------------------------------------------------------------------
# kafka-python on the scenario suite

_EXPECTED_SCENARIO_FINDINGS = {("uneven-subscriptions", "roundrobin"): ROUNDROBIN_KEYERROR}


def _scenario_cases() -> list:
    cases = []
    for scenario in SCENARIOS:
        for protocol in KAFKA_PYTHON_PROTOCOLS:
            finding = _EXPECTED_SCENARIO_FINDINGS.get((scenario.name, protocol))
            marks = (
                [pytest.mark.xfail(strict=True, raises=AssertionError, reason=finding.reason)]
                if finding
                else []
            )
            cases.append(
                pytest.param(scenario, protocol, marks=marks, id=f"{scenario.name}-{protocol}")
            )
    return cases


@needs_kafka_python
@pytest.mark.parametrize(("scenario", "protocol"), _scenario_cases())
def test_kafka_python_on_the_scenario_suite(scenario, protocol):
    result = run_scenario(scenario, kafka_python_assignor(protocol))
    assert not result.findings, result.findings
    assert result.converged and result.rounds <= 2
    if scenario.name != "uneven-subscriptions":
        assert result.spread is not None and result.spread <= 1
    if protocol in ("sticky", "cooperative-sticky"):
        assert result.balanced
        assert result.gap is not None and result.gap >= 0


@needs_kafka_python
def test_the_roundrobin_scenario_finding_is_exactly_the_keyerror():
    result = run_scenario(
        next(s for s in SCENARIOS if s.name == "uneven-subscriptions"),
        kafka_python_assignor("roundrobin"),
    )
    assert [(f.property, f.round) for f in result.findings] == [(ASSIGNOR_ERROR, "before 1")]
    assert result.findings[0].detail.startswith("KeyError: (None, ")


# ---------------------------------------------------------------------------------------------
# Each finding, pinned: the property should hold and does not in kafka-python 3.0.12

# m1 (dynamic), m2 (static), m3 (dynamic): interleaved in the member list kafka-python receives.
_MIXED = Step(
    (("t", 6),),
    (Consumer("m1", ("t",)), Consumer("m2", ("t",), instance_id="i2"), Consumer("m3", ("t",))),
)


@needs_kafka_python
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=GROUPBY_RANGE.reason)
def test_finding_range_with_interleaved_static_and_dynamic_members():
    runner, _, assignment, raised = _settle(kafka_python_assignor("range"), _MIXED)
    assert raised is None and assignment is not None
    assert assignment.partitions_of("m1"), "m1 was dropped from the member order"
    assert not runner.findings, runner.findings


@needs_kafka_python
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=GROUPBY_ROUNDROBIN.reason)
def test_finding_roundrobin_with_interleaved_static_and_dynamic_members():
    runner, _, assignment, raised = _settle(kafka_python_assignor("roundrobin"), _MIXED)
    assert raised is None and assignment is not None
    assert assignment.partitions_of("m1"), "m1 was dropped from the member cycle"
    assert not runner.findings, runner.findings


@needs_kafka_python
def test_the_interleaving_findings_are_what_the_checks_report():
    for protocol, finding in (("range", GROUPBY_RANGE), ("roundrobin", GROUPBY_ROUNDROBIN)):
        runner, _, assignment, raised = _settle(kafka_python_assignor(protocol), _MIXED)
        assert raised is None and assignment is not None
        assert assignment.partitions_of("m1") == ()
        assert _violated(runner, raised) == finding.properties
        # ours, on the same input, is fine
        ours, _, _, _ = _settle(ASSIGNORS[protocol], _MIXED)
        assert not ours.findings


@needs_kafka_python
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=ROUNDROBIN_KEYERROR.reason)
def test_finding_roundrobin_with_differing_subscriptions():
    # m1 takes a-0; b-0 is m2's turn, who does not subscribe to b: the skip loop crashes.
    step = Step((("a", 1), ("b", 1)), (Consumer("m1", ("a", "b")), Consumer("m2", ("a",))))
    runner, _, _assignment, raised = _settle(kafka_python_assignor("roundrobin"), step)
    assert raised is None, raised
    assert not runner.findings


# a: stale incarnation (generation 4) still claims t0-0..2, which b owns since generation 5.
_STALE_CLAIM_STEP = Step((("t0", 6),), tuple(Consumer(m, ("t0",)) for m in "abc"))
_STALE_CLAIM_STATES = {
    "a": ((TP("t0", 0), TP("t0", 1), TP("t0", 2)), 4),
    "b": ((TP("t0", 0), TP("t0", 1), TP("t0", 2)), 5),
    "c": ((TP("t0", 3), TP("t0", 4), TP("t0", 5)), 5),
}


@needs_kafka_python
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=COOPERATIVE_NO_GENERATION.reason)
def test_finding_cooperative_sticky_ignores_generations():
    runner, _, _assignment, raised = _settle(
        kafka_python_assignor("cooperative-sticky"), _STALE_CLAIM_STEP, _STALE_CLAIM_STATES
    )
    assert raised is None
    assert not runner.findings, runner.findings


@needs_kafka_python
def test_the_generation_finding_is_what_the_checks_report():
    runner, _, assignment, _ = _settle(
        kafka_python_assignor("cooperative-sticky"), _STALE_CLAIM_STEP, _STALE_CLAIM_STATES
    )
    assert assignment is not None
    assert len(set(assignment.partitions_of("b")) & set(_STALE_CLAIM_STATES["b"][0])) == 1
    assert _violated(runner, None) == COOPERATIVE_NO_GENERATION.properties
    ours, _, our_assignment, _ = _settle(
        ASSIGNORS["cooperative-sticky"], _STALE_CLAIM_STEP, _STALE_CLAIM_STATES
    )
    assert not ours.findings
    assert our_assignment is not None and len(our_assignment.partitions_of("b")) == 2


@needs_kafka_python
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="kafka-python's sticky user data (StickyAssignorUserData via ApiData.encode) starts "
    "with an int16 version that Java's StickyAssignor neither writes nor reads: in a group "
    "mixing Java and kafka-python consumers, each side's leader fails to parse the other's "
    "previous assignment and silently drops it (no stickiness for those members)",
)
def test_finding_sticky_user_data_is_not_javas_layout():
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    owned = (TP("a", 0), TP("a", 1))
    java_layout = encode_sticky_user_data(owned, 4)  # Java's schema v1: no version prefix
    parsed = StickyPartitionAssignor.parse_member_metadata(
        ConsumerProtocolSubscription(version=0, topics=["a"], user_data=java_layout)
    )
    assert sorted(parsed.partitions) == [("a", 0), ("a", 1)], parsed
    assert kafka_python_assignor("sticky").subscription_user_data(owned, 4) == java_layout


@needs_kafka_python
def test_the_user_data_finding_is_a_two_byte_version_header():
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    owned = (TP("a", 0), TP("a", 1))
    theirs = kafka_python_assignor("sticky").subscription_user_data(owned, 4)
    assert theirs == struct.pack(">h", 1) + encode_sticky_user_data(owned, 4)
    parsed = StickyPartitionAssignor.parse_member_metadata(
        ConsumerProtocolSubscription(
            version=0, topics=["a"], user_data=encode_sticky_user_data(owned, 4)
        )
    )
    assert parsed.partitions == [] and parsed.generation == -1


# ---------------------------------------------------------------------------------------------
# Hypothesis: random groups with a realistic previous ownership

TOPICS = ("t0", "t1", "t2", "t3", "t4")


@st.composite
def groups_with_ownership(draw: st.DrawFn) -> tuple[Step, dict]:
    """A group (≤ 5 topics, ≤ 60 partitions, ≤ 12 members) and a disjoint previous ownership."""
    topic_count = draw(st.integers(1, 5))
    partitions = tuple((TOPICS[i], draw(st.integers(0, 12))) for i in range(topic_count))
    topics = [topic for topic, _ in partitions]
    identical = draw(st.booleans())
    with_static = draw(st.booleans())
    consumers = []
    for index in range(draw(st.integers(1, 12))):
        subscribed = (
            topics
            if identical
            else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
        )
        static = with_static and draw(st.booleans())
        consumers.append(
            Consumer(f"m{index:02d}", tuple(sorted(subscribed)), f"s{index}" if static else None)
        )
    # Each partition was owned by one member that subscribes to its topic, or by nobody;
    # a member that never had an assignment is new (generation -1).
    owned: dict[str, list[TopicPartition]] = {}
    for topic, count in partitions:
        candidates = [c.identity for c in consumers if topic in c.topics]
        for number in range(count):
            owner = draw(st.sampled_from([None, *candidates]))
            if owner is not None:
                owned.setdefault(owner, []).append(TP(topic, number))
    new = draw(st.sets(st.sampled_from([c.identity for c in consumers])))
    states = {
        c.identity: (tuple(sorted(owned.get(c.identity, []))), 5)
        for c in consumers
        if c.identity not in new or c.identity in owned
    }
    return Step(partitions, tuple(consumers)), states


_HYPOTHESIS = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@needs_kafka_python
@pytest.mark.parametrize("protocol", KAFKA_PYTHON_PROTOCOLS)
@_HYPOTHESIS
@given(case=groups_with_ownership())
def test_kafka_python_holds_its_properties_on_random_groups(protocol, case):
    step, states = case
    runner, group, assignment, raised = _settle(kafka_python_assignor(protocol), step, states)
    unexplained = _violated(runner, raised) - explained(protocol, step)
    assert not unexplained, (runner.findings, raised)
    if assignment is not None and protocol == "cooperative-sticky":
        # converged: nothing withheld after the follow-up rebalances
        assert set(assignment.owners()) == set(group.subscribed_partitions)


@needs_kafka_python
@pytest.mark.parametrize("protocol", ["range", "roundrobin"])
@_HYPOTHESIS
@given(case=groups_with_ownership())
def test_kafka_python_range_and_roundrobin_equal_ours_unless_a_finding_applies(protocol, case):
    step, states = case
    if _interleaved(step):
        return  # GROUPBY_RANGE / GROUPBY_ROUNDROBIN
    _, _, theirs, raised = _settle(kafka_python_assignor(protocol), step, states)
    if raised is not None and protocol == "roundrobin" and not _identical(step):
        return  # ROUNDROBIN_KEYERROR
    _, _, ours, _ = _settle(ASSIGNORS[protocol], step, states)
    assert raised is None, raised
    assert theirs == ours


@needs_kafka_python
@pytest.mark.parametrize("protocol", ["sticky", "cooperative-sticky"])
def test_reconstructed_member_state_equals_a_long_lived_member_instance(protocol):
    """Each member's instance, kept across rounds as a kafka-python consumer keeps it, sends the
    subscription the adapter reconstructs from (owned partitions, generation)."""
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment,
        ConsumerProtocolSubscription,
    )

    cls = StickyPartitionAssignor if protocol == "sticky" else CooperativeStickyAssignor
    assignor = kafka_python_assignor(protocol)
    scenario = next(s for s in SCENARIOS if s.name == "uneven-subscriptions")
    runner = GroupRunner(assignor, protocol_for(assignor))
    instances: dict[str, object] = {}
    for step in (*scenario.before, scenario.after, scenario.after):
        group = runner.group_for(step)
        for consumer in step.consumers:
            instance = instances.setdefault(consumer.member_id, cls())
            sent = ConsumerProtocolSubscription.decode(
                instance.metadata(set(consumer.topics)).encode()  # type: ignore[attr-defined]
            )
            subscription = group.member(consumer.member_id).subscription
            assert (sent.user_data or None) == subscription.user_data
            if protocol == "cooperative-sticky":
                owned = sorted((t.topic, p) for t in sent.owned_partitions for p in t.partitions)
                assert owned == [(tp.topic, tp.partition) for tp in subscription.owned_partitions]
        _, assignment = runner.round(step, "test")
        for consumer in step.consumers:
            by_topic: dict[str, list[int]] = {}
            for tp in assignment.partitions_of(consumer.member_id):
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            instances[consumer.member_id].on_assignment(  # type: ignore[attr-defined]
                ConsumerProtocolAssignment(0, sorted(by_topic.items()), b""), runner.generation
            )
