"""The request table: one row per (request x group state x situation) of reference §2.0–§2.8, §5.

Every row names a starting world (built by driving the spec itself, or by editing a state for
situations Kafka reaches only transiently, such as a Dead group), the request sent, the exact
error code(s) of its response, and where the reference says so the key effect on the state.

The `errors` column reads, per API:
  JoinGroup / SyncGroup / Heartbeat / ListGroups  (error_code,)
  LeaveGroup                                       (top-level, *per-member)
  OffsetCommit                                     (*per-partition)
  OffsetFetch                                      (top-level, *per-partition)
  DescribeGroups / DeleteGroups                    (*per-group)
`errors=None` means the request is parked: no response to it in this step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

import pytest

from groupspec.spec import (
    CoordinatorConfig,
    CoordinatorState,
    Group,
    GroupCoordinatorSpec,
    JoinTimerExpired,
    Outcome,
    StartLoading,
)
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.spec.log import GroupMetadataKey, OffsetCommitKey
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import GroupState
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DescribeGroupsResponse,
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    ListGroupsResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)

E = ErrorCode
EMPTY = GroupState.EMPTY
PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

SPEC = GroupCoordinatorSpec()
G = "g"
SESSION_MS = 10_000
REBALANCE_MS = 60_000
META = encode_subscription_v0(("t",))
META_TU = encode_subscription_v0(("t", "u"))
RANGE = (JoinGroupProtocol("range", META),)
RANGE_RR = (JoinGroupProtocol("range", META), JoinGroupProtocol("roundrobin", META))
RR_RANGE = (JoinGroupProtocol("roundrobin", META), JoinGroupProtocol("range", META))
TEST_REF = RequestRef("tester", 1)
TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


# -- requests --------------------------------------------------------------------------------


def join(
    member_id="",
    *,
    group=G,
    protocols=RANGE,
    protocol_type="consumer",
    session=SESSION_MS,
    instance=None,
    client="c-new",
    version=9,
):
    rebalance = -1 if version == 0 else REBALANCE_MS
    return JoinGroupRequest(
        group,
        member_id,
        protocol_type,
        protocols,
        session,
        rebalance,
        group_instance_id=instance,
        client_id=client,
        api_version=version,
    )


def sync(member_id, generation, *, group=G, instance=None, ptype=None, pname=None, assign=()):
    return SyncGroupRequest(
        group,
        generation,
        member_id,
        group_instance_id=instance,
        protocol_type=ptype,
        protocol_name=pname,
        assignments=tuple(SyncGroupAssignment(m, a) for m, a in assign),
    )


def heartbeat(member_id, generation, *, group=G, instance=None):
    return HeartbeatRequest(group, generation, member_id, group_instance_id=instance)


def leave(*members, group=G):
    """Each member is a member id, or a (member id, instance id) pair."""
    identities = tuple(
        MemberIdentity(*m) if isinstance(m, tuple) else MemberIdentity(m) for m in members
    )
    return LeaveGroupRequest(group, identities)


def offset(partition=0, value=42, *, metadata="", epoch=-1):
    return OffsetCommitPartition("t", partition, value, epoch, metadata)


def commit(
    *partitions,
    group=G,
    generation=-1,
    member_id="",
    instance=None,
    version=9,
    retention=-1,
):
    return OffsetCommitRequest(
        group,
        partitions or (offset(),),
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance,
        retention_time_ms=retention,
        api_version=version,
    )


def fetch(*partitions, group=G):
    return OffsetFetchRequest(group, partitions)


def fetch_all(group=G):
    return OffsetFetchRequest(group, None)


def describe(*group_ids, version=5):
    return DescribeGroupsRequest(group_ids or (G,), api_version=version)


def list_groups(states=(), types=()):
    return ListGroupsRequest(states, types)


def delete(*group_ids):
    return DeleteGroupsRequest(group_ids or (G,))


def assignment_of(index):
    return f"assignment-{index}".encode()


# -- driving the spec ------------------------------------------------------------------------


def step1(state, event, now_ms=0, spec=SPEC) -> Outcome:
    """Step where the spec is deterministic: exactly one outcome."""
    outcomes = spec.step(state, event, now_ms)
    assert len(outcomes) == 1, outcomes
    return outcomes[0]


class Driver:
    """Feeds requests to the spec, keeping the state; returns the responses to each request."""

    def __init__(self, state: CoordinatorState) -> None:
        self.state = state
        self.correlation = 0

    @property
    def group(self) -> Group:
        group = self.state.group(G)
        assert group is not None
        return group

    def send(self, connection, request):
        self.correlation += 1
        ref = RequestRef(connection, self.correlation)
        outcome = step1(self.state, Received(ref, request))
        self.state = outcome.state
        return [r.body for r in outcome.responses if r.ref == ref]

    def fire(self, event):
        self.state = step1(self.state, event).state


@dataclass(frozen=True)
class World:
    """A coordinator state and the names of the members in it (ids[0] leads)."""

    state: CoordinatorState
    ids: tuple[str, ...] = ()
    generation: int = 0
    pending: str = ""

    @property
    def group(self) -> Group | None:
        return self.state.group(G)

    @property
    def leader(self) -> str:
        return self.ids[0]

    @property
    def follower(self) -> str:
        return self.ids[1]

    @property
    def follower2(self) -> str:
        return self.ids[2]


def _form_group(n, static, protocols) -> tuple[Driver, tuple[str, ...]]:
    """n members join from scratch; the initial-rebalance timer fires until Completing (gen 1)."""
    driver = Driver(SPEC.initial_state())
    ids = []
    for i in range(1, n + 1):
        client = f"c{i}"
        if static:
            instance = f"inst-{i}"
            parked = driver.send(
                client, join(client=client, instance=instance, protocols=protocols)
            )
            assert parked == []
            ids.append(driver.group.static_member_id(instance))
        else:
            (required,) = driver.send(client, join(client=client, protocols=protocols))
            assert required.error_code is E.MEMBER_ID_REQUIRED
            parked = driver.send(
                client, join(required.member_id, client=client, protocols=protocols)
            )
            assert parked == []
            ids.append(required.member_id)
    for _ in range(10):
        if driver.group.state is not PREPARING:
            break
        driver.fire(JoinTimerExpired(G))
    assert driver.group.state is COMPLETING
    assert driver.group.generation_id == 1
    assert driver.group.leader_id == ids[0]
    return driver, tuple(ids)


@cache
def no_group() -> World:
    return World(SPEC.initial_state())


@cache
def unowned() -> World:
    return World(SPEC.initial_state(unowned_partitions=frozenset({SPEC.partition_for(G)})))


@cache
def loading() -> World:
    state = step1(unowned().state, StartLoading(SPEC.partition_for(G))).state
    assert SPEC.partition_for(G) in state.loading_partitions
    return World(state)


@cache
def completing(n=2, static=False) -> World:
    """Join phase just completed: generation 1, nobody has sent SyncGroup."""
    driver, ids = _form_group(n, static, RANGE)
    return World(driver.state, ids, 1)


@cache
def completing_follower_synced() -> World:
    """Completing, generation 1, the follower's SyncGroup parked."""
    world = completing()
    driver = Driver(world.state)
    assert driver.send("f-sync", sync(world.follower, 1)) == []
    assert driver.group.member(world.follower).awaiting_sync is not None
    return replace(world, state=driver.state)


@cache
def stable(n=2, static=False, protocols=RANGE) -> World:
    """Stable at generation 1; member i (1-based) holds assignment_of(i)."""
    driver, ids = _form_group(n, static, protocols)
    for follower in ids[1:]:
        assert driver.send(follower, sync(follower, 1)) == []
    assign = tuple((m, assignment_of(i)) for i, m in enumerate(ids, start=1))
    (done,) = driver.send(ids[0], sync(ids[0], 1, assign=assign))
    assert done.error_code is E.NONE
    assert driver.group.state is STABLE
    return World(driver.state, ids, 1)


def stable1() -> World:
    return stable(n=1)


def stable_static() -> World:
    """Stable, generation 1; member i is static with instance id inst-i."""
    return stable(static=True)


def stable_two_protocols() -> World:
    """Stable, both members offering (range, roundrobin) in that order."""
    return stable(protocols=RANGE_RR)


@cache
def stable_follower_unsynced() -> World:
    """The leader synced (Stable, generation 1) but the follower has not sent SyncGroup yet."""
    world = completing()
    driver = Driver(world.state)
    assign = ((world.leader, b"L"), (world.follower, b"F"))
    (done,) = driver.send("l-sync", sync(world.leader, 1, assign=assign))
    assert done.error_code is E.NONE
    assert driver.group.state is STABLE
    assert driver.group.pending_sync_members == {world.follower}
    return replace(world, state=driver.state)


@cache
def stable_with_pending() -> World:
    """Stable, plus a dynamic member that was handed an id (MEMBER_ID_REQUIRED) but never joined."""
    world = stable()
    driver = Driver(world.state)
    (required,) = driver.send("c-late", join(client="c-late"))
    assert required.error_code is E.MEMBER_ID_REQUIRED
    assert driver.group.state is STABLE
    return replace(world, state=driver.state, pending=required.member_id)


@cache
def preparing(n=2) -> World:
    """Stable, then the leader rejoined: PreparingRebalance at generation 1, leader parked."""
    world = stable(n=n)
    driver = Driver(world.state)
    assert driver.send("l-join", join(world.leader, client="c1")) == []
    assert driver.group.state is PREPARING
    return replace(world, state=driver.state)


def preparing3() -> World:
    return preparing(n=3)


@cache
def preparing3_one_missing() -> World:
    """Preparing (3 members): leader and follower parked in JoinGroup, follower2 not rejoined."""
    world = preparing(n=3)
    driver = Driver(world.state)
    assert driver.send("f-join", join(world.follower, client="c2")) == []
    assert driver.group.state is PREPARING
    return replace(world, state=driver.state)


@cache
def completing_gen2() -> World:
    """Stable gen 1 -> leader and follower rejoined -> CompletingRebalance at generation 2."""
    world = preparing()
    driver = Driver(world.state)
    (joined,) = driver.send("f-join", join(world.follower, client="c2"))
    assert joined.error_code is E.NONE
    assert driver.group.state is COMPLETING
    assert driver.group.generation_id == 2
    return replace(world, state=driver.state, generation=2)


@cache
def empty_group() -> World:
    """A one-member group committed (t,0) and (t,1), then its member left: Empty, generation 2."""
    world = stable1()
    driver = Driver(world.state)
    (committed,) = driver.send(
        "c1", commit(offset(0), offset(1), generation=1, member_id=world.leader)
    )
    assert set(error_codes(committed)) == {E.NONE}
    (left,) = driver.send("c1", leave(world.leader))
    assert error_codes(left) == (E.NONE, E.NONE)
    assert driver.group.state is EMPTY
    return World(driver.state, (), 2)


@cache
def simple_group() -> World:
    """A group created by a generation -1 commit: (t,0) = 42, leader epoch 3, metadata "m"."""
    driver = Driver(SPEC.initial_state())
    (committed,) = driver.send("admin", commit(offset(0, 42, metadata="m", epoch=3)))
    assert error_codes(committed) == (E.NONE,)
    return World(driver.state)


@cache
def dead() -> World:
    """A Stable group edited to Dead (Kafka reaches Dead only transiently)."""
    world = stable()
    group = world.group
    assert group is not None
    return replace(world, state=world.state.with_group(replace(group, state=DEAD)))


@cache
def two_groups() -> World:
    """Group "g" Stable (protocol type consumer) and simple group "s" Empty (no protocol type)."""
    world = stable()
    driver = Driver(world.state)
    (committed,) = driver.send("admin", commit(group="s"))
    assert error_codes(committed) == (E.NONE,)
    return replace(world, state=driver.state)


# -- reading responses -----------------------------------------------------------------------


def error_codes(body) -> tuple[ErrorCode, ...]:
    """The error codes of a response, flattened as the module docstring describes."""
    match body:
        case (
            JoinGroupResponse()
            | SyncGroupResponse()
            | HeartbeatResponse()
            | ListGroupsResponse()
            | FindCoordinatorResponse()
        ):
            return (body.error_code,)
        case LeaveGroupResponse():
            return (body.error_code, *(m.error_code for m in body.members))
        case OffsetCommitResponse():
            return tuple(p.error_code for p in body.partitions)
        case OffsetFetchResponse():
            return (body.error_code, *(p.error_code for p in body.partitions))
        case DescribeGroupsResponse():
            return tuple(g.error_code for g in body.groups)
        case DeleteGroupsResponse():
            return tuple(r.error_code for r in body.results)
    raise AssertionError(f"unexpected response {body!r}")


@dataclass(frozen=True)
class Result:
    """What a check sees: the world before, the outcome, and the response to the tested request."""

    world: World
    outcome: Outcome
    body: object
    now_ms: int

    @property
    def before(self) -> Group:
        group = self.world.group
        assert group is not None
        return group

    @property
    def after(self) -> Group | None:
        return self.outcome.state.group(G)

    def response_to(self, ref):
        bodies = [r.body for r in self.outcome.responses if r.ref == ref]
        assert len(bodies) == 1, f"expected one response to {ref}, got {bodies}"
        return bodies[0]

    def member_id(self, role) -> str:
        return getattr(self.world, role)


# -- checks (each returns a function of a Result that asserts) -------------------------------


def group_state(expected):
    def check(r):
        assert r.after is not None, "group vanished"
        assert r.after.state is expected, r.after.state

    return check


def generation(expected):
    def check(r):
        assert r.after is not None
        assert r.after.generation_id == expected

    return check


def no_group_after(r):
    assert r.after is None


def state_unchanged(r):
    assert r.outcome.state == r.world.state


def removed(role):
    def check(r):
        member_id = r.member_id(role)
        assert r.after is not None
        assert not r.after.has_member(member_id)
        assert not r.after.is_pending_member(member_id)

    return check


def still_member(role):
    def check(r):
        assert r.after is not None
        assert r.after.has_member(r.member_id(role))

    return check


def leader_is(role):
    def check(r):
        assert r.after is not None
        assert r.after.leader_id == r.member_id(role)

    return check


def heartbeat_deadline(role, expected_ms):
    def check(r):
        assert r.after is not None
        member = r.after.member(r.member_id(role))
        assert member is not None
        assert member.heartbeat_deadline_ms == expected_ms

    return check


def parked_join_answered(role, *errors):
    def check(r):
        ref = r.before.member(r.member_id(role)).awaiting_join
        assert ref is not None
        assert error_codes(r.response_to(ref)) == errors

    return check


def parked_sync_answered(role, error, assignment=None):
    def check(r):
        ref = r.before.member(r.member_id(role)).awaiting_sync
        assert ref is not None
        body = r.response_to(ref)
        assert body.error_code is error
        if assignment is not None:
            assert body.assignment == assignment

    return check


def fields(**expected):
    """Fields of the response; a callable value is applied to the world (e.g. a member id)."""

    def check(r):
        for name, value in expected.items():
            want = value(r.world) if callable(value) else value
            assert getattr(r.body, name) == want, (name, getattr(r.body, name), want)

    return check


def leader_member_list(r):
    """The leader's JoinGroup response lists every member with the selected protocol's metadata."""
    assert {m.member_id for m in r.body.members} == set(r.world.ids)
    assert all(m.metadata == META for m in r.body.members)


def stored_offset(partition, value, *, expire=None):
    def check(r):
        assert r.after is not None
        stored = r.after.offset(partition)
        assert stored is not None and stored.offset == value
        assert stored.expire_timestamp_ms == expire

    return check


def no_protocol_type(r):
    assert r.after is not None
    assert r.after.protocol_type is None


def no_stored_offset(partition):
    def check(r):
        assert r.after is not None
        assert r.after.offset(partition) is None

    return check


def fetched(*expected):
    """OffsetFetch partitions as (topic, partition, offset, leader epoch, metadata)."""

    def check(r):
        got = tuple(
            (p.topic, p.partition, p.committed_offset, p.committed_leader_epoch, p.metadata)
            for p in r.body.partitions
        )
        assert got == expected

    return check


def new_member_id_prefixed(prefix):
    def check(r):
        assert r.body.member_id.startswith(f"{prefix}-"), r.body.member_id

    return check


def pending_recorded(r):
    """The id handed out is a pending member whose expiry is the request's session timeout."""
    assert r.after is not None
    assert not r.after.has_member(r.body.member_id)
    (pending,) = [p for p in r.after.pending_members if p.member_id == r.body.member_id]
    assert pending.expiry_deadline_ms == r.now_ms + SESSION_MS


def added_member(client, *, instance=None, rebalance_ms=REBALANCE_MS):
    """A new member from `client` is in the group, parked in JoinGroup on the tested request."""

    def check(r):
        assert r.after is not None
        (member,) = [
            m for m in r.after.members if m.client_id == client and m.awaiting_join == TEST_REF
        ]
        assert member.group_instance_id == instance
        assert member.member_id.startswith(f"{instance or client}-")
        assert member.rebalance_timeout_ms == rebalance_ms
        # New members cannot heartbeat yet: their timer is the 5-minute new-member join timeout.
        assert member.heartbeat_deadline_ms == r.now_ms + 300_000

    return check


def parked_in_sync(role):
    def check(r):
        assert r.after is not None
        member = r.after.member(r.member_id(role))
        assert member.awaiting_sync == TEST_REF
        assert member.member_id not in r.after.pending_sync_members

    return check


def not_pending_sync(role):
    def check(r):
        assert r.after is not None
        assert r.member_id(role) not in r.after.pending_sync_members

    return check


def stored_assignments(*expected):
    """Assignments stored per member, in the order of World.ids."""

    def check(r):
        assert r.after is not None
        got = tuple(r.after.member(m).assignment for m in r.world.ids)
        assert got == expected

    return check


def described(state_name, protocol_type, protocol, *, with_metadata):
    def check(r):
        (group,) = r.body.groups
        assert (group.group_state, group.protocol_type, group.protocol_data) == (
            state_name,
            protocol_type,
            protocol,
        )
        assert {m.member_id for m in group.members} == set(r.world.ids)
        for m in group.members:
            if with_metadata:
                index = r.world.ids.index(m.member_id) + 1
                assert (m.member_metadata, m.member_assignment) == (META, assignment_of(index))
            else:
                assert m.member_metadata == b""

    return check


def described_dead(r):
    for group in r.body.groups:
        assert group.group_state == "Dead"
        assert group.members == ()


def listed(*expected):
    """ListGroups entries as (group id, protocol type, state, type), in any order."""

    def check(r):
        got = {(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.body.groups}
        assert got == set(expected)

    return check


def group_and_offsets_tombstoned(r):
    assert r.world.state.log.get(GroupMetadataKey(G)) is not None
    assert r.world.state.log.get(OffsetCommitKey(G, "t", 0)) is not None
    assert r.after is None
    assert r.outcome.state.log.get(GroupMetadataKey(G)) is None
    assert r.outcome.state.log.get(OffsetCommitKey(G, "t", 0)) is None
    assert r.outcome.state.log.get(OffsetCommitKey(G, "t", 1)) is None


def empty_group_record_written(r):
    record = r.outcome.state.log.get(GroupMetadataKey(G))
    assert record is not None
    assert record.members == ()
    assert record.generation_id == r.after.generation_id


# -- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    world: Callable[[], World]
    request: Callable[[World], object] | object
    errors: tuple[ErrorCode, ...] | None
    checks: tuple[Callable[[Result], None], ...] = ()
    now_ms: int = 0
    config: CoordinatorConfig | None = None


def row(row_id, world, request, errors, *checks, now_ms=0, config=None):
    if isinstance(errors, ErrorCode):
        errors = (errors,)
    return pytest.param(Cell(world, request, errors, checks, now_ms, config), id=row_id)


MAX_2 = CoordinatorConfig(group_max_size=2)
MAX_1 = CoordinatorConfig(group_max_size=1)
METADATA_MAX_8 = CoordinatorConfig(offset_metadata_max_bytes=8)
UNOWNED_OR_LOADING = ((unowned, E.NOT_COORDINATOR), (loading, E.COORDINATOR_LOAD_IN_PROGRESS))


def _coordinator_rows():
    """§2.0: checks made before any group logic."""
    rows = [
        row("join-empty-group-id", no_group, join(group=""), E.INVALID_GROUP_ID),
        row("sync-empty-group-id", no_group, sync("m", 1, group=""), E.INVALID_GROUP_ID),
        row("heartbeat-empty-group-id", no_group, heartbeat("m", 1, group=""), E.INVALID_GROUP_ID),
        row("leave-empty-group-id", no_group, leave("m", group=""), E.INVALID_GROUP_ID),
        # Loading remaps (reference §2.0): Heartbeat -> NONE, SyncGroup -> REBALANCE_IN_PROGRESS.
        row("heartbeat-loading-remapped-none", loading, heartbeat("m", 1), E.NONE),
        row("sync-loading-remapped-rebalance", loading, sync("m", 1), E.REBALANCE_IN_PROGRESS),
    ]
    for world, error in UNOWNED_OR_LOADING:
        name = world.__name__
        rows += [
            row(f"join-{name}", world, join(), error),
            row(f"leave-{name}", world, leave("m"), error),
            row(f"commit-{name}", world, commit(offset(0), offset(1)), (error, error)),
            row(f"fetch-{name}", world, fetch(TP0), error),
            row(f"describe-{name}", world, describe(), error),
            row(f"delete-{name}", world, delete(), error),
        ]
    rows += [
        row("sync-unowned", unowned, sync("m", 1), E.NOT_COORDINATOR),
        row("heartbeat-unowned", unowned, heartbeat("m", 1), E.NOT_COORDINATOR),
    ]
    return rows


JOIN_ROWS = [
    # §2.2.1 session timeout bounds [6000, 1800000]
    row("join-session-timeout-below-min", no_group, join(session=5_999), E.INVALID_SESSION_TIMEOUT),
    row(
        "join-session-timeout-above-max",
        no_group,
        join(session=1_800_001),
        E.INVALID_SESSION_TIMEOUT,
    ),
    row("join-session-timeout-at-min", no_group, join(session=6_000), E.MEMBER_ID_REQUIRED),
    row("join-session-timeout-at-max", no_group, join(session=1_800_000), E.MEMBER_ID_REQUIRED),
    row(
        "join-session-timeout-invalid-stable-known-member",
        stable,
        lambda w: join(w.follower, session=5_999),
        E.INVALID_SESSION_TIMEOUT,
        state_unchanged,
    ),
    # §2.2.2 unknown group
    row(
        "join-unknown-group-with-member-id",
        no_group,
        join("ghost"),
        E.UNKNOWN_MEMBER_ID,
        no_group_after,
    ),
    # §2.2.4 new members
    row(
        "join-unknown-group-new-dynamic-v9-member-id-required",
        no_group,
        join(client="c-new"),
        E.MEMBER_ID_REQUIRED,
        new_member_id_prefixed("c-new"),
        pending_recorded,
        group_state(EMPTY),
        generation(0),
    ),
    row(
        "join-unknown-group-new-dynamic-v4-member-id-required",
        no_group,
        join(client="c-new", version=4),
        E.MEMBER_ID_REQUIRED,
        new_member_id_prefixed("c-new"),
        pending_recorded,
        now_ms=1_000,
    ),
    row(
        "join-stable-new-dynamic-member-id-required",
        stable,
        join(client="c-new"),
        E.MEMBER_ID_REQUIRED,
        new_member_id_prefixed("c-new"),
        pending_recorded,
        group_state(STABLE),
    ),
    row(
        "join-unknown-group-new-dynamic-v3-added-at-once",
        no_group,
        join(version=3),
        None,
        added_member("c-new"),
        group_state(PREPARING),
    ),
    row(
        "join-unknown-group-new-dynamic-v0-added-at-once",
        no_group,
        join(version=0),
        None,
        added_member("c-new", rebalance_ms=SESSION_MS),
        group_state(PREPARING),
    ),
    row(
        "join-stable-new-dynamic-v3-added-rebalance",
        stable,
        join(version=3),
        None,
        added_member("c-new"),
        group_state(PREPARING),
        now_ms=1_000,
    ),
    row(
        "join-unknown-group-new-static-added-at-once",
        no_group,
        join(instance="inst-new"),
        None,
        added_member("c-new", instance="inst-new"),
        group_state(PREPARING),
    ),
    row(
        "join-stable-new-static-added-rebalance",
        stable,
        join(instance="inst-new"),
        None,
        added_member("c-new", instance="inst-new"),
        group_state(PREPARING),
    ),
    row(
        "join-stable-pending-member-joins-rebalance",
        stable_with_pending,
        lambda w: join(w.pending, client="c-late"),
        None,
        still_member("pending"),
        group_state(PREPARING),
    ),
    row(
        "join-stable-pending-member-with-instance-id",
        stable_with_pending,
        lambda w: join(w.pending, client="c-late", instance="inst-late"),
        E.UNKNOWN_SERVER_ERROR,
        state_unchanged,
    ),
    # Dead
    row("join-dead-new-member", dead, join(), E.COORDINATOR_NOT_AVAILABLE, state_unchanged),
    row(
        "join-dead-known-member",
        dead,
        lambda w: join(w.follower),
        E.COORDINATOR_NOT_AVAILABLE,
        state_unchanged,
    ),
    # Inconsistent protocols
    row(
        "join-empty-new-member-empty-protocol-type",
        empty_group,
        join(protocol_type=""),
        E.INCONSISTENT_GROUP_PROTOCOL,
    ),
    row(
        "join-empty-new-member-no-protocols",
        empty_group,
        join(protocols=()),
        E.INCONSISTENT_GROUP_PROTOCOL,
    ),
    row(
        "join-unknown-group-empty-protocol-type",
        no_group,
        join(protocol_type=""),
        E.INCONSISTENT_GROUP_PROTOCOL,
    ),
    row(
        "join-empty-new-member-any-protocol-type-accepted",
        empty_group,
        join(protocol_type="connect", protocols=(JoinGroupProtocol("v1"),)),
        E.MEMBER_ID_REQUIRED,
    ),
    row(
        "join-stable-new-member-different-protocol-type",
        stable,
        join(protocol_type="connect"),
        E.INCONSISTENT_GROUP_PROTOCOL,
        state_unchanged,
    ),
    row(
        "join-stable-new-member-no-common-protocol",
        stable,
        join(protocols=(JoinGroupProtocol("roundrobin", META),)),
        E.INCONSISTENT_GROUP_PROTOCOL,
        state_unchanged,
    ),
    row(
        "join-stable-new-member-one-common-protocol-accepted",
        stable,
        join(protocols=RR_RANGE),
        E.MEMBER_ID_REQUIRED,
    ),
    row(
        "join-stable-known-member-different-protocol-type",
        stable,
        lambda w: join(w.follower, protocol_type="connect"),
        E.INCONSISTENT_GROUP_PROTOCOL,
        state_unchanged,
    ),
    row(
        "join-stable-known-member-no-common-protocol",
        stable,
        lambda w: join(w.follower, protocols=(JoinGroupProtocol("roundrobin", META),)),
        E.INCONSISTENT_GROUP_PROTOCOL,
        state_unchanged,
    ),
    # §2.2.3 group size admission
    row(
        "join-stable-max-size-new-member-rejected",
        stable,
        join(),
        E.GROUP_MAX_SIZE_REACHED,
        fields(member_id=""),
        state_unchanged,
        config=MAX_2,
    ),
    row(
        "join-stable-max-size-existing-member-admitted",
        stable,
        lambda w: join(w.follower),
        E.NONE,
        group_state(STABLE),
        config=MAX_2,
    ),
    row(
        "join-completing-max-size-new-member-rejected",
        completing,
        join(),
        E.GROUP_MAX_SIZE_REACHED,
        fields(member_id=""),
        state_unchanged,
        config=MAX_2,
    ),
    row(
        "join-completing-max-size-existing-member-admitted",
        completing,
        lambda w: join(w.follower),
        E.NONE,
        config=MAX_2,
    ),
    row(
        "join-preparing-max-size-new-member-rejected",
        preparing,
        join(),
        E.GROUP_MAX_SIZE_REACHED,
        fields(member_id=""),
        config=MAX_1,
    ),
    row(
        "join-preparing-max-size-unjoined-member-rejected-and-removed",
        preparing,
        lambda w: join(w.follower),
        E.GROUP_MAX_SIZE_REACHED,
        fields(member_id=""),
        removed("follower"),
        config=MAX_1,
    ),
    row(
        "join-preparing-max-size-awaiting-member-admitted",
        preparing,
        lambda w: join(w.leader),
        None,
        still_member("leader"),
        config=MAX_1,
    ),
    row(
        "join-stable-max-size-pending-member-rejected-and-removed",
        stable_with_pending,
        lambda w: join(w.pending, client="c-late"),
        E.GROUP_MAX_SIZE_REACHED,
        fields(member_id=""),
        removed("pending"),
        group_state(STABLE),
        config=MAX_2,
    ),
    row(
        "join-preparing-max-size-below-limit-admitted",
        preparing,
        join(),
        E.MEMBER_ID_REQUIRED,
        config=MAX_2,
    ),
    # §2.1 / §2.2.5 known member validation
    row(
        "join-stable-unknown-member-id",
        stable,
        join("ghost"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "join-stable-known-member-unknown-instance-id",
        stable_static,
        lambda w: join(w.follower, instance="inst-ghost"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "join-stable-known-member-fenced-instance-id",
        stable_static,
        lambda w: join(w.leader, instance="inst-2"),
        E.FENCED_INSTANCE_ID,
        state_unchanged,
    ),
    row(
        "join-empty-known-member-id",
        empty_group,
        join("gone"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    # §2.2.5 known member, by state
    row(
        "join-preparing-follower-parked",
        preparing3,
        lambda w: join(w.follower, client="c2"),
        None,
        group_state(PREPARING),
    ),
    row(
        "join-preparing-last-member-completes-join",
        preparing,
        lambda w: join(w.follower, client="c2"),
        E.NONE,
        fields(member_id=lambda w: w.follower, generation_id=2, members=()),
        parked_join_answered("leader", E.NONE),
        group_state(COMPLETING),
        generation(2),
    ),
    row(
        "join-completing-leader-same-protocols",
        completing,
        lambda w: join(w.leader),
        E.NONE,
        fields(member_id=lambda w: w.leader, generation_id=1, leader=lambda w: w.leader),
        leader_member_list,
        group_state(COMPLETING),
    ),
    row(
        "join-completing-follower-same-protocols",
        completing,
        lambda w: join(w.follower),
        E.NONE,
        fields(
            member_id=lambda w: w.follower,
            generation_id=1,
            leader=lambda w: w.leader,
            protocol_name="range",
            members=(),
        ),
        group_state(COMPLETING),
    ),
    row(
        "join-completing-changed-protocols-rebalance",
        completing,
        lambda w: join(w.follower, protocols=(JoinGroupProtocol("range", META_TU),)),
        None,
        group_state(PREPARING),
        generation(1),
    ),
    row(
        "join-completing-changed-protocols-fails-parked-sync",
        completing_follower_synced,
        lambda w: join(w.leader, protocols=(JoinGroupProtocol("range", META_TU),)),
        None,
        parked_sync_answered("follower", E.REBALANCE_IN_PROGRESS),
        group_state(PREPARING),
    ),
    row(
        "join-stable-leader-unchanged-rebalance",
        stable,
        lambda w: join(w.leader),
        None,
        group_state(PREPARING),
    ),
    row(
        "join-stable-follower-changed-rebalance",
        stable,
        lambda w: join(w.follower, protocols=(JoinGroupProtocol("range", META_TU),)),
        None,
        group_state(PREPARING),
    ),
    row(
        "join-stable-follower-unchanged",
        stable,
        lambda w: join(w.follower),
        E.NONE,
        fields(
            member_id=lambda w: w.follower,
            generation_id=1,
            leader=lambda w: w.leader,
            protocol_type="consumer",
            protocol_name="range",
            members=(),
        ),
        state_unchanged,
    ),
    row(
        "join-stable-follower-protocol-order-changed-rebalance",
        stable_two_protocols,
        lambda w: join(w.follower, protocols=RR_RANGE),
        None,
        group_state(PREPARING),
    ),
    row(
        "join-stable-follower-same-protocol-order-unchanged",
        stable_two_protocols,
        lambda w: join(w.follower, protocols=RANGE_RR),
        E.NONE,
        state_unchanged,
    ),
]


SYNC_ROWS = [
    row("sync-unknown-group", no_group, sync("m", 0), E.UNKNOWN_MEMBER_ID),
    row("sync-empty-group", empty_group, sync("gone", 2), E.UNKNOWN_MEMBER_ID),
    row(
        "sync-dead",
        dead,
        lambda w: sync(w.follower, 1),
        E.COORDINATOR_NOT_AVAILABLE,
        state_unchanged,
    ),
    row("sync-stable-unknown-member", stable, sync("ghost", 1), E.UNKNOWN_MEMBER_ID),
    row(
        "sync-stable-unknown-instance-id",
        stable_static,
        lambda w: sync(w.follower, 1, instance="inst-ghost"),
        E.UNKNOWN_MEMBER_ID,
    ),
    row(
        "sync-stable-fenced-instance-id",
        stable_static,
        lambda w: sync(w.leader, 1, instance="inst-2"),
        E.FENCED_INSTANCE_ID,
    ),
    row(
        "sync-stable-illegal-generation",
        stable,
        lambda w: sync(w.follower, 0),
        E.ILLEGAL_GENERATION,
    ),
    row(
        "sync-completing-illegal-generation",
        completing_gen2,
        lambda w: sync(w.follower, 1),
        E.ILLEGAL_GENERATION,
        state_unchanged,
    ),
    row(
        "sync-stable-inconsistent-protocol-type",
        stable,
        lambda w: sync(w.follower, 1, ptype="connect"),
        E.INCONSISTENT_GROUP_PROTOCOL,
    ),
    row(
        "sync-stable-inconsistent-protocol-name",
        stable,
        lambda w: sync(w.follower, 1, pname="roundrobin"),
        E.INCONSISTENT_GROUP_PROTOCOL,
    ),
    row(
        "sync-stable-matching-protocol-type-and-name",
        stable,
        lambda w: sync(w.follower, 1, ptype="consumer", pname="range"),
        E.NONE,
    ),
    row(
        "sync-preparing-rebalance-in-progress",
        preparing,
        lambda w: sync(w.follower, 1),
        E.REBALANCE_IN_PROGRESS,
        state_unchanged,
    ),
    row(
        "sync-completing-follower-parked",
        completing,
        lambda w: sync(w.follower, 1),
        None,
        parked_in_sync("follower"),
        group_state(COMPLETING),
    ),
    row(
        "sync-completing-leader-releases-parked-follower",
        completing_follower_synced,
        lambda w: sync(w.leader, 1, assign=((w.leader, b"L"), (w.follower, b"F"))),
        E.NONE,
        fields(assignment=b"L", protocol_type="consumer", protocol_name="range"),
        parked_sync_answered("follower", E.NONE, b"F"),
        stored_assignments(b"L", b"F"),
        group_state(STABLE),
    ),
    row(
        "sync-completing-leader-fills-missing-assignments",
        completing_follower_synced,
        lambda w: sync(w.leader, 1, assign=((w.leader, b"L"),)),
        E.NONE,
        parked_sync_answered("follower", E.NONE, b""),
        stored_assignments(b"L", b""),
        group_state(STABLE),
    ),
    row(
        "sync-stable-late-follower-leaves-pending-sync",
        stable_follower_unsynced,
        lambda w: sync(w.follower, 1),
        E.NONE,
        fields(assignment=b"F"),
        not_pending_sync("follower"),
        group_state(STABLE),
    ),
    row(
        "sync-stable-returns-stored-assignment",
        stable,
        lambda w: sync(w.follower, 1),
        E.NONE,
        fields(assignment=assignment_of(2), protocol_type="consumer", protocol_name="range"),
        group_state(STABLE),
    ),
]


HEARTBEAT_ROWS = [
    row("heartbeat-unknown-group", no_group, heartbeat("m", 0), E.UNKNOWN_MEMBER_ID),
    row(
        "heartbeat-dead",
        dead,
        lambda w: heartbeat(w.follower, 1),
        E.COORDINATOR_NOT_AVAILABLE,
        state_unchanged,
    ),
    row(
        "heartbeat-stable-unknown-member",
        stable,
        heartbeat("ghost", 1),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "heartbeat-stable-pending-member",
        stable_with_pending,
        lambda w: heartbeat(w.pending, 1),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "heartbeat-stable-illegal-generation",
        stable,
        lambda w: heartbeat(w.follower, 2),
        E.ILLEGAL_GENERATION,
        state_unchanged,
    ),
    row(
        "heartbeat-stable-unknown-instance-id",
        stable_static,
        lambda w: heartbeat(w.follower, 1, instance="inst-ghost"),
        E.UNKNOWN_MEMBER_ID,
    ),
    row(
        "heartbeat-stable-fenced-instance-id",
        stable_static,
        lambda w: heartbeat(w.leader, 1, instance="inst-2"),
        E.FENCED_INSTANCE_ID,
        state_unchanged,
    ),
    row("heartbeat-empty-group", empty_group, heartbeat("gone", 2), E.UNKNOWN_MEMBER_ID),
    row(
        "heartbeat-preparing-rebalance-in-progress-timer-reset",
        preparing,
        lambda w: heartbeat(w.follower, 1),
        E.REBALANCE_IN_PROGRESS,
        heartbeat_deadline("follower", 1_000 + SESSION_MS),
        now_ms=1_000,
    ),
    row(
        "heartbeat-completing-none-timer-reset",
        completing,
        lambda w: heartbeat(w.follower, 1),
        E.NONE,
        heartbeat_deadline("follower", 1_000 + SESSION_MS),
        now_ms=1_000,
    ),
    row(
        "heartbeat-stable-none-timer-reset",
        stable,
        lambda w: heartbeat(w.follower, 1),
        E.NONE,
        heartbeat_deadline("follower", 1_000 + SESSION_MS),
        group_state(STABLE),
        now_ms=1_000,
    ),
]


LEAVE_ROWS = [
    row(
        "leave-unknown-group",
        no_group,
        leave("a", "b"),
        (E.NONE, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID),
        state_unchanged,
    ),
    row(
        "leave-dead",
        dead,
        lambda w: leave(w.follower),
        E.COORDINATOR_NOT_AVAILABLE,
        state_unchanged,
    ),
    row(
        "leave-stable-no-member-id-known-instance-removed",
        stable_static,
        leave(("", "inst-2")),
        (E.NONE, E.NONE),
        removed("follower"),
        group_state(PREPARING),
    ),
    row(
        "leave-stable-no-member-id-unknown-instance",
        stable_static,
        leave(("", "inst-ghost")),
        (E.NONE, E.UNKNOWN_MEMBER_ID),
        state_unchanged,
    ),
    row(
        "leave-stable-no-member-id-no-instance",
        stable,
        leave(""),
        (E.NONE, E.UNKNOWN_MEMBER_ID),
        state_unchanged,
    ),
    row(
        "leave-stable-pending-member-removed",
        stable_with_pending,
        lambda w: leave(w.pending),
        (E.NONE, E.NONE),
        removed("pending"),
        group_state(PREPARING),
    ),
    row(
        "leave-stable-unknown-member",
        stable,
        leave("ghost"),
        (E.NONE, E.UNKNOWN_MEMBER_ID),
        state_unchanged,
    ),
    row(
        "leave-stable-fenced-instance-id",
        stable_static,
        lambda w: leave((w.leader, "inst-2")),
        (E.NONE, E.FENCED_INSTANCE_ID),
        state_unchanged,
    ),
    row(
        "leave-stable-follower-removed-rebalance",
        stable,
        lambda w: leave(w.follower),
        (E.NONE, E.NONE),
        removed("follower"),
        group_state(PREPARING),
        generation(1),
    ),
    row(
        "leave-preparing-parked-leader-removed-join-answered",
        preparing,
        lambda w: leave(w.leader),
        (E.NONE, E.NONE),
        removed("leader"),
        parked_join_answered("leader", E.UNKNOWN_MEMBER_ID),
        leader_is("follower"),
        group_state(PREPARING),
    ),
    row(
        "leave-preparing-last-unjoined-member-completes-join",
        preparing3_one_missing,
        lambda w: leave(w.follower2),
        (E.NONE, E.NONE),
        removed("follower2"),
        parked_join_answered("leader", E.NONE),
        parked_join_answered("follower", E.NONE),
        group_state(COMPLETING),
        generation(2),
    ),
    row(
        "leave-completing-leader-fails-parked-sync",
        completing_follower_synced,
        lambda w: leave(w.leader),
        (E.NONE, E.NONE),
        removed("leader"),
        parked_sync_answered("follower", E.REBALANCE_IN_PROGRESS),
        group_state(PREPARING),
    ),
    row(
        "leave-stable-last-member-to-empty",
        stable1,
        lambda w: leave(w.leader),
        (E.NONE, E.NONE),
        removed("leader"),
        group_state(EMPTY),
        generation(2),
        empty_group_record_written,
    ),
    row(
        "leave-stable-batch-mixed",
        stable_static,
        lambda w: leave(w.follower, "ghost", "", ("", "inst-ghost"), (w.follower, "inst-1")),
        (
            E.NONE,
            E.NONE,
            E.UNKNOWN_MEMBER_ID,
            E.UNKNOWN_MEMBER_ID,
            E.UNKNOWN_MEMBER_ID,
            E.FENCED_INSTANCE_ID,
        ),
        removed("follower"),
        still_member("leader"),
        group_state(PREPARING),
    ),
    row(
        "leave-empty-unknown-member",
        empty_group,
        leave("gone"),
        (E.NONE, E.UNKNOWN_MEMBER_ID),
        state_unchanged,
    ),
]


COMMIT_ROWS = [
    # §5.1 unknown group
    row(
        "commit-unknown-group-negative-generation-creates-simple-group",
        no_group,
        commit(offset(0, 7)),
        E.NONE,
        group_state(EMPTY),
        generation(0),
        stored_offset(TP0, 7),
        no_protocol_type,
    ),
    row(
        "commit-unknown-group-generation-v9-group-id-not-found",
        no_group,
        commit(generation=0, member_id="m"),
        E.GROUP_ID_NOT_FOUND,
        no_group_after,
    ),
    row(
        "commit-unknown-group-generation-v8-illegal-generation",
        no_group,
        commit(generation=0, member_id="m", version=8),
        E.ILLEGAL_GENERATION,
        no_group_after,
    ),
    # §5.2 Dead
    row("commit-dead", dead, commit(), E.COORDINATOR_NOT_AVAILABLE, state_unchanged),
    row(
        "commit-dead-member-generation",
        dead,
        lambda w: commit(generation=1, member_id=w.follower),
        E.COORDINATOR_NOT_AVAILABLE,
        state_unchanged,
    ),
    # §5.3 generation < 0 on an Empty group
    row(
        "commit-empty-negative-generation-accepted",
        empty_group,
        commit(offset(0, 99)),
        E.NONE,
        stored_offset(TP0, 99),
        group_state(EMPTY),
    ),
    row(
        "commit-simple-group-negative-generation-accepted",
        simple_group,
        commit(offset(1, 5)),
        E.NONE,
        stored_offset(TP1, 5),
    ),
    # §5.4 member validation, then generation
    row(
        "commit-empty-generation-unknown-member",
        empty_group,
        commit(generation=2, member_id="gone"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "commit-stable-unknown-member",
        stable,
        commit(generation=1, member_id="ghost"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "commit-stable-unknown-instance-id",
        stable_static,
        lambda w: commit(generation=1, member_id=w.follower, instance="inst-ghost"),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "commit-stable-fenced-instance-id",
        stable_static,
        lambda w: commit(generation=1, member_id=w.leader, instance="inst-2"),
        E.FENCED_INSTANCE_ID,
        state_unchanged,
    ),
    row(
        "commit-stable-negative-generation-fenced-instance-only",
        stable_static,
        commit(instance="inst-2"),
        E.FENCED_INSTANCE_ID,
        state_unchanged,
    ),
    row(
        "commit-stable-old-generation",
        stable,
        lambda w: commit(generation=0, member_id=w.follower),
        E.ILLEGAL_GENERATION,
        state_unchanged,
    ),
    row(
        "commit-stable-negative-generation-with-member-id",
        stable,
        lambda w: commit(generation=-1, member_id=w.follower),
        E.ILLEGAL_GENERATION,
        state_unchanged,
    ),
    row(
        "commit-completing-old-generation-illegal-not-rebalance",
        completing_gen2,
        lambda w: commit(generation=1, member_id=w.follower),
        E.ILLEGAL_GENERATION,
        state_unchanged,
    ),
    # §5.5 gen < 0, no member id, no instance id, group not Empty
    row(
        "commit-stable-negative-generation-no-member",
        stable,
        commit(),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "commit-preparing-negative-generation-no-member",
        preparing,
        commit(),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    row(
        "commit-completing-negative-generation-no-member",
        completing,
        commit(),
        E.UNKNOWN_MEMBER_ID,
        state_unchanged,
    ),
    # §5.6 current generation while Completing
    row(
        "commit-completing-current-generation-rebalance-in-progress",
        completing_gen2,
        lambda w: commit(generation=2, member_id=w.follower),
        E.REBALANCE_IN_PROGRESS,
        state_unchanged,
    ),
    # §5.7 accepted; session timer reset in Stable and Preparing
    row(
        "commit-stable-accepted-timer-reset",
        stable,
        lambda w: commit(offset(0, 11), generation=1, member_id=w.follower),
        E.NONE,
        stored_offset(TP0, 11),
        heartbeat_deadline("follower", 1_000 + SESSION_MS),
        group_state(STABLE),
        now_ms=1_000,
    ),
    row(
        "commit-preparing-current-generation-accepted-timer-reset",
        preparing,
        lambda w: commit(offset(0, 12), generation=1, member_id=w.follower),
        E.NONE,
        stored_offset(TP0, 12),
        heartbeat_deadline("follower", 1_000 + SESSION_MS),
        group_state(PREPARING),
        now_ms=1_000,
    ),
    # §5.8 per-partition metadata size
    row(
        "commit-metadata-too-large-for-one-partition-only",
        no_group,
        commit(offset(0, 1, metadata="123456789"), offset(1, 2, metadata="12345678")),
        (E.OFFSET_METADATA_TOO_LARGE, E.NONE),
        no_stored_offset(TP0),
        stored_offset(TP1, 2),
        config=METADATA_MAX_8,
    ),
    row(
        "commit-stable-metadata-too-large",
        stable,
        lambda w: commit(
            offset(0, 1, metadata="x" * 9), offset(1, 2), generation=1, member_id=w.follower
        ),
        (E.OFFSET_METADATA_TOO_LARGE, E.NONE),
        no_stored_offset(TP0),
        stored_offset(TP1, 2),
        config=METADATA_MAX_8,
    ),
    # §6 explicit retention (v2–v4) sets the expire timestamp
    row(
        "commit-v2-retention-time-sets-expire-timestamp",
        no_group,
        commit(offset(0, 3), version=2, retention=5_000),
        E.NONE,
        stored_offset(TP0, 3, expire=6_000),
        now_ms=1_000,
    ),
    row(
        "commit-v9-no-expire-timestamp",
        no_group,
        commit(offset(0, 3)),
        E.NONE,
        stored_offset(TP0, 3, expire=None),
        now_ms=1_000,
    ),
]


FETCH_ROWS = [
    row(
        "fetch-unknown-group",
        no_group,
        fetch(TP0, TP1),
        (E.NONE, E.NONE, E.NONE),
        fetched(("t", 0, -1, -1, ""), ("t", 1, -1, -1, "")),
    ),
    row("fetch-all-unknown-group", no_group, fetch_all(), E.NONE, fetched()),
    row(
        "fetch-dead",
        dead,
        fetch(TP0),
        (E.NONE, E.NONE),
        fetched(("t", 0, -1, -1, "")),
    ),
    row(
        "fetch-committed-and-unknown-partition",
        simple_group,
        fetch(TP0, TP1),
        (E.NONE, E.NONE, E.NONE),
        fetched(("t", 0, 42, 3, "m"), ("t", 1, -1, -1, "")),
    ),
    row(
        "fetch-all-committed",
        simple_group,
        fetch_all(),
        (E.NONE, E.NONE),
        fetched(("t", 0, 42, 3, "m")),
    ),
    row(
        "fetch-empty-group",
        empty_group,
        fetch(TP0),
        (E.NONE, E.NONE),
        fetched(("t", 0, 42, -1, "")),
    ),
    row("fetch-preparing", preparing, fetch(TP0), (E.NONE, E.NONE), state_unchanged),
    row("fetch-completing", completing, fetch(TP0), (E.NONE, E.NONE), state_unchanged),
    row("fetch-stable", stable, fetch(TP0), (E.NONE, E.NONE), state_unchanged),
]


ADMIN_ROWS = [
    # Describe
    row("describe-unknown-group", no_group, describe(), E.NONE, described_dead),
    row("describe-dead", dead, describe(), E.NONE, described_dead),
    # v6 reports a group the coordinator does not hold as GROUP_ID_NOT_FOUND (Kafka 4.4.0,
    # GroupMetadataManager.describeGroups; observed by the describe-groups probe).
    row(
        "describe-unknown-group-v6",
        no_group,
        describe(version=6),
        E.GROUP_ID_NOT_FOUND,
        described_dead,
    ),
    row("describe-dead-v6", dead, describe(version=6), E.GROUP_ID_NOT_FOUND, described_dead),
    row(
        "describe-stable",
        stable,
        describe(),
        E.NONE,
        described("Stable", "consumer", "range", with_metadata=True),
    ),
    row(
        "describe-preparing",
        preparing,
        describe(),
        E.NONE,
        described("PreparingRebalance", "consumer", "", with_metadata=False),
    ),
    row(
        "describe-completing",
        completing,
        describe(),
        E.NONE,
        described("CompletingRebalance", "consumer", "", with_metadata=False),
    ),
    row(
        "describe-empty",
        empty_group,
        describe(),
        E.NONE,
        described("Empty", "consumer", "", with_metadata=False),
    ),
    # List
    row(
        "list-all",
        two_groups,
        list_groups(),
        E.NONE,
        listed(("g", "consumer", "Stable", "classic"), ("s", "", "Empty", "classic")),
    ),
    row(
        "list-state-filter-case-insensitive",
        two_groups,
        list_groups(states=("stable",)),
        E.NONE,
        listed(("g", "consumer", "Stable", "classic")),
    ),
    row(
        "list-state-filter-empty",
        two_groups,
        list_groups(states=("EMPTY",)),
        E.NONE,
        listed(("s", "", "Empty", "classic")),
    ),
    row(
        "list-type-filter-classic-case-insensitive",
        two_groups,
        list_groups(types=("CLASSIC",)),
        E.NONE,
        listed(("g", "consumer", "Stable", "classic"), ("s", "", "Empty", "classic")),
    ),
    row(
        "list-type-filter-consumer-excludes-classic",
        two_groups,
        list_groups(types=("consumer",)),
        E.NONE,
        listed(),
    ),
    # Delete
    row(
        "delete-empty-group-tombstoned",
        empty_group,
        delete(),
        E.NONE,
        group_and_offsets_tombstoned,
    ),
    row("delete-simple-group", simple_group, delete(), E.NONE, no_group_after),
    row("delete-stable", stable, delete(), E.NON_EMPTY_GROUP, state_unchanged),
    row("delete-preparing", preparing, delete(), E.NON_EMPTY_GROUP, state_unchanged),
    row("delete-completing", completing, delete(), E.NON_EMPTY_GROUP, state_unchanged),
    row("delete-unknown-group", no_group, delete(), E.GROUP_ID_NOT_FOUND),
    row("delete-dead", dead, delete(), E.GROUP_ID_NOT_FOUND),
    row(
        "delete-batch-mixed",
        two_groups,
        delete("s", "g", "nope"),
        (E.NONE, E.NON_EMPTY_GROUP, E.GROUP_ID_NOT_FOUND),
    ),
]


ROWS = [
    *_coordinator_rows(),
    *JOIN_ROWS,
    *SYNC_ROWS,
    *HEARTBEAT_ROWS,
    *LEAVE_ROWS,
    *COMMIT_ROWS,
    *FETCH_ROWS,
    *ADMIN_ROWS,
]


@pytest.mark.parametrize("cell", ROWS)
def test_request_table(cell: Cell):
    world = cell.world()
    spec = GroupCoordinatorSpec(cell.config) if cell.config is not None else SPEC
    sent = cell.request(world) if callable(cell.request) else cell.request
    outcomes = spec.step(world.state, Received(TEST_REF, sent), cell.now_ms)
    assert len(outcomes) == 1, outcomes
    (outcome,) = outcomes

    mine = [r.body for r in outcome.responses if r.ref == TEST_REF]
    if cell.errors is None:
        assert mine == [], "expected the request to be parked"
        body = None
    else:
        assert len(mine) == 1, mine
        (body,) = mine
        assert error_codes(body) == cell.errors

    result = Result(world, outcome, body, cell.now_ms)
    for check in cell.checks:
        check(result)
