"""The mixed world's optional steps (models/mixed_world.py, models/mixed_misbehaving.py,
models/mixed_second_member.py): the misbehaving classic client, the second classic client, the
classic consumer's close, and the parameters that switch them on (group.consumer.max.size,
group.max.size, a static classic consumer). Each is off by default."""

from __future__ import annotations

from collections import deque

import pytest

from groupspec.models.mixed_params import MixedParameters
from groupspec.models.mixed_world import GROUP_ID, MixedWorld, MixedWorldState
from groupspec.spec.consumer.state import MemberState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.vocabulary.errors import InvalidConfigError

REFUSALS = {
    "cg_classic.unknown_member",
    "cg_classic.fenced_instance_id",
    "cg_classic.not_classic_member",
    "cg_classic.illegal_generation",
    "cg_classic.sync_inconsistent_protocol",
    "cg_classic.join_inconsistent_protocol",
    "cg_classic.join_group_max_size_reached",
}


def explored(world: MixedWorld, limit: int) -> list[tuple[MixedWorldState, list]]:
    """Up to `limit` states of `world` in breadth-first order, each with its transitions."""
    first = world.initial_states()[0]
    seen = {first.canonical_bytes()}
    queue = deque([first])
    found = []
    while queue and len(found) < limit:
        state = queue.popleft()
        steps = world.transitions(state)
        found.append((state, steps))
        for step in steps:
            after = world.representative(step.state)
            key = after.canonical_bytes()
            if key not in seen:
                seen.add(key)
                queue.append(after)
    return found


def misbehaving_steps(parameters: MixedParameters, limit: int) -> list:
    world = MixedWorld(parameters)
    return [
        (state, step)
        for state, steps in explored(world, limit)
        for step in steps
        if step.action == "misbehaving"
    ]


@pytest.mark.parametrize(
    "parameters",
    [
        MixedParameters(partitions=(1,), leaves=0, classic_static=True, misbehaving_client=True),
        MixedParameters(rolling_downgrade=True, misbehaving_client=True),
    ],
    ids=["static-classic", "rolling-downgrade"],
)
def test_every_misbehaving_request_is_refused_and_changes_nothing(parameters):
    steps = misbehaving_steps(parameters, 400)
    assert steps
    fired: set[str] = set()
    for state, step in steps:
        assert step.state.coordinator == state.coordinator, step.label
        assert step.state.classic_responses == state.classic_responses
        assert step.state.responses == state.responses
        fired.update(step.rules)
    assert "cg_classic.unknown_member" in fired and "cg_classic.not_classic_member" in fired
    assert "cg_classic.fenced_instance_id" in fired


def test_the_misbehaving_client_reaches_each_classic_refusal():
    parameters = MixedParameters(
        partitions=(1,), leaves=0, classic_static=True, misbehaving_client=True
    )
    fired = {rule for _, step in misbehaving_steps(parameters, 1500) for rule in step.rules}
    expected = REFUSALS - {"cg_classic.join_group_max_size_reached"}
    assert expected | {"cg_classic.offset_commit", "cg_classic.offset_fetch"} <= fired


def test_the_misbehaving_client_speaks_only_to_a_non_empty_consumer_group():
    parameters = MixedParameters(partitions=(1,), leaves=0, misbehaving_client=True)
    for state, step in misbehaving_steps(parameters, 600):
        group = state.coordinator.consumer.group(GROUP_ID)
        assert group is not None and group.members_by_id, step.label


def test_without_the_parameter_there_is_no_misbehaving_client():
    world = MixedWorld(MixedParameters(partitions=(1,), leaves=0))
    assert all(step.action != "misbehaving" for _, steps in explored(world, 300) for step in steps)


def close_steps(parameters: MixedParameters, limit: int) -> list:
    world = MixedWorld(parameters)
    return [
        (state, step)
        for state, steps in explored(world, limit)
        for step in steps
        if step.action == "classic_close"
    ]


def test_the_classic_consumer_closes_once_while_a_member_of_the_consumer_group():
    steps = close_steps(MixedParameters(partitions=(1,), leaves=0, classic_closes=1), 800)
    assert steps
    in_flight_at_close = False
    for state, step in steps:
        group = state.coordinator.consumer.group(GROUP_ID)
        member_id = state.classic.generation.member_id
        assert group is not None and group.member(member_id) is not None
        assert (state.closes, step.state.closes) == (1, 0)
        assert step.state.classic.closed
        in_flight_at_close |= bool(state.classic.in_flight)
    # At any step: also with a request in flight.
    assert in_flight_at_close


def test_a_dynamic_classic_member_that_closes_leaves_the_consumer_group():
    steps = close_steps(MixedParameters(partitions=(1,), leaves=0, classic_closes=1), 800)
    leave_sent = [step for _, step in steps if step.state.classic_requests]
    assert leave_sent
    sent = leave_sent[0].state.classic_requests[-1].request
    assert type(sent).__name__ == "LeaveGroupRequest"


def test_close_when_idle_closes_only_a_stable_consumer_with_nothing_in_flight():
    parameters = MixedParameters(partitions=(1,), leaves=0, classic_closes=1, close_when_idle=True)
    steps = close_steps(parameters, 800)
    assert steps
    for state, _ in steps:
        assert state.classic.member_state is MemberState.STABLE and not state.classic.in_flight


def test_without_a_close_budget_the_classic_consumer_never_closes():
    assert close_steps(MixedParameters(partitions=(1,), leaves=0), 300) == []


def test_consumer_max_size_sets_group_consumer_max_size_only_when_given():
    assert MixedParameters(consumer_max_size=1).coordinator_config().max_size == 1
    default = MixedParameters().coordinator_config()
    assert default.max_size == ConsumerGroupConfig().max_size


def test_a_static_classic_consumer_has_its_own_instance_id():
    parameters = MixedParameters(classic_static=True)
    assert parameters.classic_consumer_config().group_instance_id == "i2"
    assert parameters.instance_id is None
    assert MixedParameters().classic_consumer_config().group_instance_id is None


def test_a_static_classic_consumer_is_refused_in_a_rolling_downgrade():
    with pytest.raises(InvalidConfigError, match="classic_static and rolling_downgrade"):
        MixedParameters(classic_static=True, rolling_downgrade=True)


def second_steps(parameters: MixedParameters, limit: int) -> list:
    world = MixedWorld(parameters)
    return [
        (state, step)
        for state, steps in explored(world, limit)
        for step in steps
        if step.action == "second_join"
    ]


def test_the_second_classic_client_is_off_by_default():
    assert second_steps(MixedParameters(partitions=(1,), leaves=0), 300) == []


def test_the_second_classic_client_joins_with_the_id_it_was_given_and_then_stops():
    steps = second_steps(MixedParameters(partitions=(1,), leaves=0, second_classic="consumer"), 400)
    firsts = [(s, t) for s, t in steps if not s.second_member]
    seconds = [(s, t) for s, t in steps if s.second_member]
    assert firsts and seconds
    for _, step in firsts:
        # Its first JoinGroup names no member id: it learns one (MEMBER_ID_REQUIRED) and has one
        # join left, or, refused, sends nothing more.
        learned = step.state.second_member
        assert step.state.second_joins == (1 if learned else 0)
        if learned:
            assert learned.startswith("second-")
    for state, step in seconds:
        assert f"member={state.second_member}" in step.label
        assert (step.state.second_joins, step.state.second_member) == (0, "")


def test_a_connect_worker_joining_first_makes_a_group_no_kip848_join_upgrades():
    steps = second_steps(MixedParameters(partitions=(1,), leaves=0, second_classic="connect"), 400)
    protocol_types = {
        group.protocol_type
        for _, step in steps
        if (group := step.state.coordinator.classic.group(GROUP_ID)) is not None and group.members
    }
    assert "connect" in protocol_types


def test_the_second_client_joins_only_a_classic_group_with_members_when_told():
    parameters = MixedParameters(
        partitions=(1,), leaves=0, second_classic="consumer", second_joins_classic=True
    )
    steps = second_steps(parameters, 600)
    assert steps
    for state, _ in steps:
        assert state.coordinator.consumer.group(GROUP_ID) is None
        group = state.coordinator.classic.group(GROUP_ID)
        assert group is not None and group.members


def test_group_max_size_is_the_classic_coordinators():
    assert (
        MixedWorld(MixedParameters(classic_max_size=1)).coordinator.classic.config.group_max_size
        == 1
    )
