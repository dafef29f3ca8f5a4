"""The public API refuses input Kafka could never receive, with typed errors."""

from __future__ import annotations

import pytest

from groupspec.spec import (
    CoordinatorConfig,
    EventNotEnabledError,
    FinishLoading,
    GroupCoordinatorSpec,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    StartLoading,
    SyncTimerExpired,
    UnknownApiError,
    Unload,
)
from groupspec.vocabulary.errors import (
    ErrorCode,
    InputError,
    InvalidConfigError,
    MalformedRequestError,
)
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
)

GROUP = "g"
RANGE = JoinGroupProtocol("range", b"")
REF = RequestRef("client", 1)


def join(**overrides):
    fields = dict(
        group_id=GROUP,
        member_id="",
        protocol_type="consumer",
        protocols=(RANGE,),
        session_timeout_ms=10_000,
        rebalance_timeout_ms=60_000,
    )
    fields.update(overrides)
    return JoinGroupRequest(**fields)


def test_input_error_hierarchy():
    for error in (UnknownApiError, MalformedRequestError, InvalidConfigError, EventNotEnabledError):
        assert issubclass(error, InputError)
    assert issubclass(InputError, ValueError)


# -- unknown inputs and bad clocks ------------------------------------------------------------------


@pytest.mark.parametrize("event", [object(), "JoinGroup", 42, None, join()])
def test_unknown_event_type_is_refused(event):
    spec = GroupCoordinatorSpec()
    with pytest.raises(UnknownApiError):
        spec.step(spec.initial_state(), event, 0)


@pytest.mark.parametrize("request_", [object(), "JoinGroup", RANGE])
def test_unknown_request_type_is_refused(request_):
    spec = GroupCoordinatorSpec()
    with pytest.raises(UnknownApiError):
        spec.step(spec.initial_state(), Received(REF, request_), 0)


@pytest.mark.parametrize("now_ms", [-1, -(2**40), 1.5, "0", None, True])
def test_bad_clock_is_refused(now_ms):
    spec = GroupCoordinatorSpec()
    with pytest.raises(InputError):
        spec.step(spec.initial_state(), Received(REF, join()), now_ms)


def test_initial_state_refuses_partition_out_of_range():
    spec = GroupCoordinatorSpec()
    for partition in (-1, 50):
        with pytest.raises(InputError):
            spec.initial_state(frozenset({partition}))


# -- malformed requests -----------------------------------------------------------------------------


def malformed_cases():
    too_big = 2**31
    yield "group id not a string", lambda: join(group_id=5), "group_id"
    yield "member id None", lambda: join(member_id=None), "member_id"
    yield "protocol type bytes", lambda: join(protocol_type=b"consumer"), "protocol_type"
    yield "protocols a list", lambda: join(protocols=[RANGE]), "protocols"
    yield "protocols of names", lambda: join(protocols=("range",)), "protocols[0]"
    yield (
        "duplicate protocol names",
        lambda: join(protocols=(RANGE, JoinGroupProtocol("range", b"x"))),
        "protocols",
    )
    yield "protocol metadata str", lambda: JoinGroupProtocol("range", "t"), "protocols.metadata"
    yield "protocol name bytes", lambda: JoinGroupProtocol(b"range"), "protocols.name"
    yield (
        "negative rebalance timeout on v1",
        lambda: join(rebalance_timeout_ms=-1, api_version=1),
        "rebalance_timeout_ms",
    )
    yield (
        "rebalance timeout on v0",
        lambda: join(rebalance_timeout_ms=1000, api_version=0),
        "rebalance_timeout_ms",
    )
    yield (
        "instance id on JoinGroup v4",
        lambda: join(group_instance_id="i", api_version=4),
        "group_instance_id",
    )
    yield "JoinGroup v10", lambda: join(api_version=10), "api_version"
    yield "JoinGroup v-1", lambda: join(api_version=-1), "api_version"
    yield (
        "session timeout int32 overflow",
        lambda: join(session_timeout_ms=too_big),
        "session_timeout_ms",
    )
    yield "session timeout bool", lambda: join(session_timeout_ms=True), "session_timeout_ms"
    yield "session timeout float", lambda: join(session_timeout_ms=10.0), "session_timeout_ms"
    yield (
        "rebalance timeout int32 overflow",
        lambda: join(rebalance_timeout_ms=too_big),
        "rebalance_timeout_ms",
    )
    yield (
        "sync generation int32 overflow",
        lambda: SyncGroupRequest(GROUP, too_big, "m"),
        "generation_id",
    )
    yield (
        "sync duplicate assignments",
        lambda: SyncGroupRequest(
            GROUP,
            1,
            "m",
            assignments=(SyncGroupAssignment("m", b""), SyncGroupAssignment("m", b"")),
        ),
        "assignments",
    )
    yield (
        "sync assignments of wrong type",
        lambda: SyncGroupRequest(GROUP, 1, "m", assignments=(("m", b""),)),
        "assignments[0]",
    )
    yield (
        "sync instance id on v2",
        lambda: SyncGroupRequest(GROUP, 1, "m", group_instance_id="i", api_version=2),
        "group_instance_id",
    )
    yield "SyncGroup v6", lambda: SyncGroupRequest(GROUP, 1, "m", api_version=6), "api_version"
    yield (
        "heartbeat generation int32 underflow",
        lambda: HeartbeatRequest(GROUP, -(2**31) - 1, "m"),
        "generation_id",
    )
    yield "Heartbeat v5", lambda: HeartbeatRequest(GROUP, 1, "m", api_version=5), "api_version"
    yield (
        "leave v2 with two members",
        lambda: LeaveGroupRequest(GROUP, (MemberIdentity("a"), MemberIdentity("b")), api_version=2),
        "members",
    )
    yield (
        "committed offset int64 overflow",
        lambda: OffsetCommitPartition("t", 0, 2**63),
        "partitions.committed_offset",
    )
    yield (
        "partition index int32 overflow",
        lambda: OffsetCommitPartition("t", too_big, 0),
        "partitions.partition_index",
    )
    yield (
        "duplicate commit partitions",
        lambda: OffsetCommitRequest(
            GROUP, (OffsetCommitPartition("t", 0, 1), OffsetCommitPartition("t", 0, 2))
        ),
        "partitions",
    )
    yield (
        "retention time on OffsetCommit v5",
        lambda: OffsetCommitRequest(GROUP, (), retention_time_ms=1000, api_version=5),
        "retention_time_ms",
    )
    yield (
        "fetch partitions a list",
        lambda: OffsetFetchRequest(GROUP, []),
        "partitions",
    )


CASES = list(malformed_cases())


@pytest.mark.parametrize(("build", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_request_names_the_field(build, field):
    with pytest.raises(MalformedRequestError) as raised:
        build()
    assert raised.value.field == field
    assert field in str(raised.value)


def test_well_formed_edge_values_are_accepted():
    join(session_timeout_ms=2**31 - 1, rebalance_timeout_ms=0)
    join(rebalance_timeout_ms=-1, api_version=0)
    join(group_instance_id="i", api_version=5)
    join(protocols=())  # Kafka answers this with an error code; it is not malformed
    SyncGroupRequest(GROUP, -(2**31), "m")
    OffsetCommitPartition("t", 0, 2**63 - 1)
    OffsetCommitRequest(GROUP, (), retention_time_ms=1000, api_version=2)


# -- invalid configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        dict(group_min_session_timeout_ms=-1),
        dict(group_min_session_timeout_ms=0),
        dict(group_max_session_timeout_ms=-6000),
        dict(group_initial_rebalance_delay_ms=-1),
        dict(new_member_join_timeout_ms=-1),
        dict(offsets_retention_ms=-1),
        dict(offsets_retention_check_interval_ms=0),
        dict(offsets_topic_num_partitions=0),
        dict(group_max_size=0),
        dict(offset_metadata_max_bytes=-1),
        dict(group_min_session_timeout_ms=10_000, group_max_session_timeout_ms=9_999),
        dict(group_min_session_timeout_ms=True),
        dict(group_min_session_timeout_ms=6000.0),
        dict(write_failures=(ErrorCode.UNKNOWN_MEMBER_ID,)),
        dict(write_failures=(ErrorCode.NONE,)),
        dict(write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.REBALANCE_IN_PROGRESS)),
    ],
    ids=repr,
)
def test_invalid_config_is_refused(settings):
    with pytest.raises(InvalidConfigError):
        CoordinatorConfig(**settings)


def test_valid_config_edges_are_accepted():
    CoordinatorConfig(group_initial_rebalance_delay_ms=0)
    CoordinatorConfig(group_min_session_timeout_ms=7_000, group_max_session_timeout_ms=7_000)
    CoordinatorConfig(write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.KAFKA_STORAGE_ERROR))


# -- events that are not enabled ------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        JoinTimerExpired(GROUP),
        SyncTimerExpired(GROUP),
        HeartbeatExpired(GROUP, "m"),
    ],
    ids=repr,
)
def test_unarmed_timer_is_refused(event):
    spec = GroupCoordinatorSpec()
    with pytest.raises(EventNotEnabledError):
        spec.step(spec.initial_state(), event, 0)


def test_retention_check_is_always_armed():
    spec = GroupCoordinatorSpec()
    (outcome,) = spec.step(spec.initial_state(), OffsetRetentionCheck(), 0)
    assert outcome.responses == ()


def test_unloading_an_unowned_partition_is_refused():
    spec = GroupCoordinatorSpec()
    partition = spec.partition_for(GROUP)
    with pytest.raises(EventNotEnabledError):
        spec.step(spec.initial_state(frozenset({partition})), Unload(partition), 0)
    (outcome,) = spec.step(spec.initial_state(), Unload(partition), 0)
    with pytest.raises(EventNotEnabledError):
        spec.step(outcome.state, Unload(partition), 0)


def test_finishing_a_load_that_never_started_is_refused():
    spec = GroupCoordinatorSpec()
    partition = spec.partition_for(GROUP)
    with pytest.raises(EventNotEnabledError):
        spec.step(spec.initial_state(), FinishLoading(partition), 0)
    with pytest.raises(EventNotEnabledError):
        spec.step(spec.initial_state(frozenset({partition})), FinishLoading(partition), 0)


def test_loading_a_partition_already_led_is_refused():
    spec = GroupCoordinatorSpec()
    with pytest.raises(EventNotEnabledError):
        spec.step(spec.initial_state(), StartLoading(spec.partition_for(GROUP)), 0)
