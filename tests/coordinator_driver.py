"""Shared fixture helpers for the `step`-driven coordinator tests: everything goes through
GroupCoordinatorSpec.step (used by test_timers, test_static_membership and test_failover)."""

from __future__ import annotations

from groupspec.spec import (
    CoordinatorConfig,
    FinishLoading,
    GroupCoordinatorSpec,
    JoinTimerExpired,
    StartLoading,
    Unload,
)
from groupspec.spec.consumer_protocol import encode_subscription_v0
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import GroupState
from groupspec.vocabulary.requests import (
    JoinGroupProtocol,
    JoinGroupRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import OffsetCommitResponse

GROUP = "g"
SUB_T = encode_subscription_v0(("t",))
SUB_TU = encode_subscription_v0(("t", "u"))
RANGE = (JoinGroupProtocol("range", SUB_T),)
EMPTY = GroupState.EMPTY
PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE


def assignment(member_id):
    return f"assignment-of-{member_id}".encode()


def response_to(outcome, ref):
    """The body of the response `outcome` sent to request `ref`, or None."""
    bodies = [r.body for r in outcome.responses if r.ref == ref]
    assert len(bodies) <= 1, bodies
    return bodies[0] if bodies else None


def error_of(body):
    """The error a response carries (an OffsetCommit carries one per partition)."""
    if isinstance(body, OffsetCommitResponse):
        (error,) = {p.error_code for p in body.partitions}
        return error
    return body.error_code


def join_request(
    client,
    member_id="",
    *,
    instance=None,
    protocols=RANGE,
    session=10_000,
    rebalance=60_000,
    version=9,
    group=GROUP,
):
    return JoinGroupRequest(
        group,
        member_id,
        "consumer",
        protocols,
        session,
        rebalance,
        group_instance_id=instance,
        client_id=client,
        api_version=version,
    )


class Driver:
    """A coordinator driven step by step; `step` insists on a single (deterministic) outcome."""

    def __init__(self, **config):
        self.spec = GroupCoordinatorSpec(CoordinatorConfig(**config))
        self.state = self.spec.initial_state()
        self.now = 0
        self._correlation = 0

    @property
    def group(self):
        group = self.state.group(GROUP)
        assert group is not None
        return group

    def member_ids(self):
        return {m.member_id for m in self.group.members}

    def armed(self):
        return {event: deadline for deadline, event in self.spec.armed_timers(self.state)}

    def next_ref(self, conn):
        self._correlation += 1
        return RequestRef(conn, self._correlation)

    def outcomes(self, event, at=None):
        if at is not None:
            self.now = at
        return self.spec.step(self.state, event, self.now)

    def step(self, event, at=None):
        outcomes = self.outcomes(event, at)
        assert len(outcomes) == 1, outcomes
        self.state = outcomes[0].state
        return outcomes[0]

    def send(self, conn, request, at=None):
        ref = self.next_ref(conn)
        return ref, self.step(Received(ref, request), at)

    def ask(self, conn, request, at=None):
        """Send `request` and return the body of its (immediate) response."""
        ref, out = self.send(conn, request, at)
        body = response_to(out, ref)
        assert body is not None
        return body

    def join(self, client, member_id="", *, at=None, **options):
        """JoinGroup; a new dynamic v4+ member first fetches its id. Returns (id, ref, outcome).

        `options` are `join_request`'s keyword arguments (instance, protocols, session, ...)."""
        dynamic = {k: v for k, v in options.items() if k != "instance"}
        if member_id == "" and options.get("instance") is None and options.get("version", 9) >= 4:
            _, out = self.send(client, join_request(client, **dynamic), at)
            (response,) = out.responses
            assert response.body.error_code is ErrorCode.MEMBER_ID_REQUIRED
            member_id = response.body.member_id
        request = join_request(client, member_id, **options)
        ref, out = self.send(client, request, at)
        body = response_to(out, ref)
        if body is not None and body.error_code is ErrorCode.NONE:
            member_id = body.member_id
        elif member_id == "":
            parked = [m.member_id for m in self.group.members if m.awaiting_join == ref]
            assert len(parked) == 1, parked
            member_id = parked[0]
        return member_id, ref, out

    def sync(self, member_id, assignments=None, *, generation=None, instance=None, at=None):
        generation = self.group.generation_id if generation is None else generation
        given = tuple(SyncGroupAssignment(m, a) for m, a in (assignments or {}).items())
        request = SyncGroupRequest(
            GROUP, generation, member_id, group_instance_id=instance, assignments=given
        )
        return self.send(f"sync-{member_id}", request, at)

    def commit(self, offsets, *, generation=-1, member_id="", version=9, retention=-1, at=None):
        partitions = tuple(OffsetCommitPartition(t, p, o) for (t, p), o in offsets.items())
        request = OffsetCommitRequest(
            GROUP,
            partitions,
            generation_id=generation,
            member_id=member_id,
            retention_time_ms=retention,
            api_version=version,
        )
        ref, out = self.send("committer", request, at)
        errors = {p.error_code for p in response_to(out, ref).partitions}
        assert errors == {ErrorCode.NONE}, errors
        return out

    def fetch_all(self, group=GROUP, *, metadata=False):
        """Every committed offset of `group`; with `metadata`, as (offset, metadata) pairs."""
        body = self.ask("fetcher", OffsetFetchRequest(group, None))
        assert body.error_code is ErrorCode.NONE
        if metadata:
            return {
                (p.topic, p.partition): (p.committed_offset, p.metadata) for p in body.partitions
            }
        return {(p.topic, p.partition): p.committed_offset for p in body.partitions}

    def finish_join_phase(self):
        """Fire the join timer (at its deadline) until the group leaves PreparingRebalance."""
        for _ in range(10):
            group = self.group
            if group.state is not PREPARING:
                return
            assert group.join_timer is not None
            self.step(JoinTimerExpired(GROUP), at=max(self.now, group.join_timer.deadline_ms))
        raise AssertionError("join phase never completed")

    def form_completing(self, *members, at=0):
        ids = [self.join(**m, at=at)[0] for m in members]
        self.finish_join_phase()
        assert self.group.state is COMPLETING
        return ids

    def form_stable(self, *members, at=0):
        ids = self.form_completing(*members, at=at)
        leader = self.group.leader_id
        self.sync(leader, {m: assignment(m) for m in ids})
        for member_id in ids:
            if member_id != leader:
                self.sync(member_id)
        assert self.group.state is STABLE
        return ids

    # -- failover ---------------------------------------------------------------------------

    @property
    def partition(self):
        return self.spec.partition_for(GROUP)

    def unload(self, at=None):
        return self.step(Unload(self.partition), at)

    def reload(self, at=None):
        """Unload the group's partition, then lead it again and replay it."""
        self.unload(at)
        self.step(StartLoading(self.partition))
        return self.step(FinishLoading(self.partition))
