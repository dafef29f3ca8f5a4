"""The optimized coordinator on its own: project rules, typed errors on bad input, the timer
heap's lazy deletion, clocks, policies, and the helpers it re-implements (partition hashing,
subscription decoding), each checked against the spec's version."""

from __future__ import annotations

import ast
import enum
import inspect
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.impl import (
    Coordinator,
    CoordinatorConfig,
    HeartbeatExpired,
    JoinTimerExpired,
    ManualClock,
    MonotonicClock,
    PartitionStateError,
    PolicyError,
    RandomPolicy,
    SequentialIdPolicy,
    TimerNotArmedError,
    UnknownRequestError,
)
from groupspec.impl.consumer_protocol import subscription_topics
from groupspec.impl.hashing import partition_for
from groupspec.spec.assignment import Subscription
from groupspec.spec.consumer_protocol import SubscriptionDecodeError, encode_subscription
from groupspec.spec.consumer_protocol import subscription_topics as spec_subscription_topics
from groupspec.spec.hashing import partition_for as spec_partition_for
from groupspec.vocabulary.errors import ErrorCode, InvalidConfigError, MalformedRequestError
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)

IMPL_DIR = Path(__file__).resolve().parent.parent / "impl"
RANGE = (JoinGroupProtocol("range", b""),)


# -- project rules ----------------------------------------------------------------------------


def _imports(path: Path) -> list[tuple[str, int]]:
    """(module, level) of every import in a file; level > 0 is relative."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level))
    return found


def test_impl_classes_have_slots():
    """Every class the impl instantiates per group, member or request carries __slots__."""
    for name in sorted(p.stem for p in IMPL_DIR.glob("*.py") if p.stem != "__init__"):
        module = __import__(f"groupspec.impl.{name}", fromlist=["_"])
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            if issubclass(cls, BaseException | enum.Enum) or getattr(cls, "_is_protocol", False):
                continue
            assert "__slots__" in cls.__dict__, f"{module.__name__}.{cls.__name__} has no __slots__"


def test_public_functions_have_docstrings():
    for name in sorted(p.stem for p in IMPL_DIR.glob("*.py")):
        module = __import__(f"groupspec.impl.{name}", fromlist=["_"])
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                assert inspect.getdoc(value), f"{module.__name__}.{attribute} has no docstring"


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: JoinGroupRequest("g", 7, "consumer", RANGE, 10_000, 10_000),  # type: ignore[arg-type]
        lambda: JoinGroupRequest("g", "", "consumer", [RANGE[0]], 10_000, 10_000),  # type: ignore[arg-type]
        lambda: JoinGroupRequest("g", "", "consumer", RANGE * 2, 10_000, 10_000),
        lambda: JoinGroupRequest("g", "", "consumer", RANGE, 2**31, 10_000),
        lambda: JoinGroupRequest("g", "", "consumer", RANGE, 10_000, 10_000, api_version=0),
        lambda: JoinGroupRequest(
            "g", "", "consumer", RANGE, 10_000, 10_000, group_instance_id="i", api_version=4
        ),
        lambda: JoinGroupProtocol("range", "not bytes"),  # type: ignore[arg-type]
        lambda: SyncGroupRequest("g", 1, "m", assignments=(SyncGroupAssignment("a", b""),) * 2),
        lambda: HeartbeatRequest("g", True, "m"),  # type: ignore[arg-type]
        lambda: HeartbeatRequest("g", 1, "m", group_instance_id="i", api_version=2),
        lambda: LeaveGroupRequest("g", (MemberIdentity("a"), MemberIdentity("b")), api_version=1),
        lambda: OffsetCommitRequest("g", (OffsetCommitPartition("t", 0, 1),) * 2),
        lambda: OffsetCommitRequest("g", (), retention_time_ms=5, api_version=9),
        lambda: OffsetCommitPartition("t", 0, 2**63),
        lambda: OffsetFetchRequest("g", None, require_stable="yes"),  # type: ignore[arg-type]
        lambda: FindCoordinatorRequest("g", key_type=1),
    ],
)
def test_malformed_requests_raise_a_typed_error_naming_the_field(build):
    with pytest.raises(MalformedRequestError) as raised:
        build()
    assert "." in str(raised.value) and raised.value.field


def test_unknown_inputs_and_unarmed_timers_are_refused():
    coordinator = Coordinator(clock=ManualClock())
    with pytest.raises(UnknownRequestError):
        coordinator.handle("ref", "not a request")  # type: ignore[arg-type]
    with pytest.raises(TimerNotArmedError):
        coordinator.fire(JoinTimerExpired("nope"))
    with pytest.raises(TimerNotArmedError):
        coordinator.fire(HeartbeatExpired("nope", "m"))
    with pytest.raises(UnknownRequestError):
        coordinator.fire("retention")  # type: ignore[arg-type]


def test_partition_moves_that_do_not_fit_are_refused():
    coordinator = Coordinator(
        CoordinatorConfig(offsets_topic_num_partitions=3), clock=ManualClock()
    )
    with pytest.raises(PartitionStateError):
        coordinator.start_loading(1)  # already led
    with pytest.raises(PartitionStateError):
        coordinator.finish_loading(1)  # not loading
    with pytest.raises(PartitionStateError):
        coordinator.unload(3)  # no such partition
    coordinator.unload(1)
    with pytest.raises(PartitionStateError):
        coordinator.unload(1)
    with pytest.raises(ValueError):
        Coordinator(
            CoordinatorConfig(offsets_topic_num_partitions=3), unowned_partitions=frozenset({5})
        )


@pytest.mark.parametrize(
    "fields",
    [
        {"group_max_size": 0},
        {"group_min_session_timeout_ms": 10, "group_max_session_timeout_ms": 5},
        {"offset_metadata_max_bytes": -1},
        {"broker_id": True},
    ],
)
def test_invalid_configs_are_refused(fields):
    with pytest.raises(InvalidConfigError):
        CoordinatorConfig(**fields)


def test_reconfigure_takes_the_new_config_and_refuses_what_cannot_change():
    coordinator = Coordinator(CoordinatorConfig(group_max_size=2), clock=ManualClock())
    coordinator.reconfigure(CoordinatorConfig(group_max_size=1))
    assert coordinator.config.group_max_size == 1
    with pytest.raises(InvalidConfigError, match=r"offsets\.topic\.num\.partitions cannot change"):
        coordinator.reconfigure(CoordinatorConfig(offsets_topic_num_partitions=7))
    with pytest.raises(InvalidConfigError, match=r"must be a groupspec\.impl CoordinatorConfig"):
        coordinator.reconfigure({"group_max_size": 1})  # type: ignore[arg-type]
    assert coordinator.config.group_max_size == 1


def test_a_policy_answering_outside_its_options_is_a_policy_error():
    class Broken(SequentialIdPolicy):
        def new_member_id(self, group_id, prefix):
            return "same"

    coordinator = Coordinator(policy=Broken(), clock=ManualClock())
    join = JoinGroupRequest("g", "", "consumer", RANGE, 10_000, 10_000)
    coordinator.handle("a", join)
    with pytest.raises(PolicyError):
        coordinator.handle("b", join)
    with pytest.raises(InvalidConfigError):
        RandomPolicy(1, 0.5)  # failures wanted, but no error to fail with


def test_clocks():
    clock = ManualClock(5)
    assert clock.advance(10) == 15
    with pytest.raises(ValueError):
        clock.set(14)
    with pytest.raises(ValueError):
        ManualClock(-1)
    real = MonotonicClock()
    first = real.now_ms()
    assert real.now_ms() >= first >= 0


# -- the coordinator's own machinery -----------------------------------------------------------


def _stable_group(
    coordinator: Coordinator, clock: ManualClock, members: int, session: int = 10_000
):
    """Form a Stable group "g" of dynamic members; returns their ids."""
    ids = []
    for index in range(members):
        coordinator.handle(
            ("j", index), JoinGroupRequest("g", "", "consumer", RANGE, session, 30_000)
        )
        member_id = coordinator.outbox.take()[("j", index)].member_id
        coordinator.handle(
            ("k", index), JoinGroupRequest("g", member_id, "consumer", RANGE, session, 30_000)
        )
        ids.append(member_id)
    group = coordinator.group("g")
    while group.state is PREPARING_REBALANCE:  # the initial delay extends while members arrive
        clock.advance(3_000)
        coordinator.advance()
    assert group.state is COMPLETING_REBALANCE
    for member_id in [group.leader_id, *(m for m in ids if m != group.leader_id)]:
        given = (
            tuple(SyncGroupAssignment(m, b"a") for m in ids) if member_id == group.leader_id else ()
        )
        coordinator.handle(
            ("s", member_id),
            SyncGroupRequest("g", group.generation_id, member_id, assignments=given),
        )
    assert group.state is STABLE
    coordinator.outbox.take()
    return ids


def test_heartbeats_move_a_deadline_without_touching_the_heap():
    clock = ManualClock()
    coordinator = Coordinator(policy=SequentialIdPolicy(), clock=clock)
    ids = _stable_group(coordinator, clock, 3)
    generation = coordinator.group("g").generation_id
    heap_before = coordinator.heap_size()
    for round_ in range(50):
        clock.advance(1_000)
        for member_id in ids:
            coordinator.handle((round_, member_id), HeartbeatRequest("g", generation, member_id))
        assert coordinator.advance() == []
    assert coordinator.heap_size() <= heap_before + len(
        ids
    )  # one re-queue per surfaced entry at most
    assert {body.error_code for body in coordinator.outbox.take().values()} == {ErrorCode.NONE}
    # Silence: every session expires on the clock, through the heap, and the group empties.
    clock.advance(10_000)
    fired = coordinator.advance()
    assert {e for e in fired if isinstance(e, HeartbeatExpired)} == {
        HeartbeatExpired("g", m) for m in ids
    }
    clock.advance(3_000)
    coordinator.advance()
    assert coordinator.group("g").state is EMPTY


def test_a_timer_rearmed_at_the_current_instant_fires_on_the_next_advance():
    clock = ManualClock()
    coordinator = Coordinator(
        CoordinatorConfig(group_initial_rebalance_delay_ms=0),
        policy=SequentialIdPolicy(),
        clock=clock,
    )
    for instance in ("i1", "i2"):
        join = JoinGroupRequest(
            "g", "", "consumer", RANGE, 10_000, 30_000, group_instance_id=instance
        )
        coordinator.handle(instance, join)
    # The second member arrived during the initial delay (0 ms): the delay re-arms at "now".
    assert coordinator.advance() == [JoinTimerExpired("g")]
    assert coordinator.group("g").state is PREPARING_REBALANCE
    assert coordinator.advance() == [JoinTimerExpired("g")]  # the next call completes the join
    assert coordinator.group("g").state is COMPLETING_REBALANCE
    assert coordinator.advance() == []


def test_heap_compaction_drops_only_stale_entries():
    clock = ManualClock()
    coordinator = Coordinator(policy=SequentialIdPolicy(), clock=clock)
    # Groups created and deleted leave their pending-member entries behind in the heap.
    for index in range(1_500):
        group_id = f"g{index}"
        coordinator.handle(
            ("j", index), JoinGroupRequest(group_id, "", "consumer", RANGE, 10_000, 10_000)
        )
        coordinator.handle(
            ("d", index), LeaveGroupRequest(group_id, (MemberIdentity(f"consumer-{index}"),))
        )
    coordinator.outbox.take()
    armed = len(coordinator.armed_timers())
    assert coordinator.heap_size() > 1_500
    coordinator.advance()  # compacts: the heap doubled since the last sweep
    assert coordinator.heap_size() == armed


def test_commit_and_fetch_round_trip_and_describe_sorts_nothing_away():
    clock = ManualClock()
    coordinator = Coordinator(policy=SequentialIdPolicy(), clock=clock)
    ids = _stable_group(coordinator, clock, 2)
    generation = coordinator.group("g").generation_id
    partitions = (
        OffsetCommitPartition("t", 0, 10),
        OffsetCommitPartition("t", 1, 11, committed_metadata="x" * 5000),
    )
    coordinator.handle("c", OffsetCommitRequest("g", partitions, generation, ids[0]))
    errors = [p.error_code for p in coordinator.outbox.take()["c"].partitions]
    assert errors == [ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE]
    coordinator.handle("f", OffsetFetchRequest("g", None))
    (answer,) = coordinator.outbox.take()["f"].partitions
    assert (answer.topic, answer.partition, answer.committed_offset) == ("t", 0, 10)


# -- helpers re-implemented from the spec, checked against it -----------------------------------


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(max_size=12), st.integers(min_value=1, max_value=200))
def test_partition_hash_matches_the_spec(group_id, partitions):
    assert partition_for(group_id, partitions) == spec_partition_for(group_id, partitions)


def test_partition_hash_on_known_values():
    # Utils.abs(Integer.MIN_VALUE) is 0: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("😀 group", 50) == spec_partition_for("😀 group", 50)


def _spec_topics(data: bytes):
    try:
        return spec_subscription_topics(data)
    except SubscriptionDecodeError:
        return None


subscriptions = st.builds(
    lambda topics, owned, generation, rack, user_data, version: encode_subscription(
        Subscription.of(topics, owned, generation, rack, user_data), version
    ),
    st.lists(st.sampled_from(["t", "u", "ü"]), max_size=3),
    st.lists(st.builds(TopicPartition, st.sampled_from(["t", "u"]), st.integers(0, 3)), max_size=3),
    st.integers(-1, 5),
    st.none() | st.sampled_from(["r1"]),
    st.none() | st.binary(max_size=4),
    st.integers(0, 3),
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.one_of(subscriptions, subscriptions.map(lambda b: b[: len(b) // 2]), st.binary(max_size=24))
)
def test_subscription_topics_match_the_spec(data):
    assert subscription_topics(data) == _spec_topics(data)
