"""Traces of `groupspec.impl` serving simulated consumers, written in process.

Consumers behave like Kafka's: one request in flight per connection, join with the
MEMBER_ID_REQUIRED round trip, the leader assigns, everyone heartbeats and commits, rejoins when
told to; some are static; now and then one leaves, one crashes (its session expires), a new one
arrives, and one commits with a generation it has not yet learned is stale. The clock is manual
and timers fire when it passes their deadlines, as in a real broker. Seeded: the same seed writes
the same trace. The oracle's tests seed faults into the impl and check that traces alone show
them; `groupspec bench oracle` validates long ones.

A `Scenario` steers the churn towards cases plain churn seldom or never reaches: a static
member restarting while its group completes a rebalance, a new member crashing between
MEMBER_ID_REQUIRED and its rejoin (its pending id expires), a leader going silent during a
rebalance (the join completes without it); or adds what consumers alone never send (an admin
client's DescribeGroups, ListGroups, OffsetFetch and DeleteGroups). `conformance/impl_campaign.py` runs seeds ×
scenarios and keeps the traces that exercise the most specification rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from groupspec.impl.clock import ManualClock
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.policy import RandomPolicy
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.consumer_protocol import encode_assignment, encode_subscription_v0
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary import responses as rs
from groupspec.vocabulary.requests import RequestRef, TopicPartition
from groupspec.wire.group_apis import request_body, response_body
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceEvent, TraceHeader, TraceWriter

from .differential import to_impl_config

TOPIC = "events"
PARTITIONS = 6
SESSION_MS = 10_000
REBALANCE_MS = 20_000
HEARTBEAT_MS = 3_000
COMMIT_MS = 5_000
ADMIN_MS = 2_000
START_MS = 1_700_000_000_000
# Kafka's error codes the simulated consumers react to.
MEMBER_ID_REQUIRED = 79
UNKNOWN_MEMBER_ID = 25
ILLEGAL_GENERATION = 22
REBALANCE_IN_PROGRESS = 27
FENCED_INSTANCE_ID = 82


@dataclass(frozen=True)
class Scenario:
    """A kind of simulated workload: plain churn, or churn aimed at one hard case."""

    name: str
    summary: str
    # Consumers whose index is `static_every - 1` modulo `static_every` are static.
    static_every: int = 3
    session_ms: int = SESSION_MS
    rebalance_ms: int = REBALANCE_MS
    # How long a leader takes to compute the assignment before its SyncGroup: the group stays
    # in CompletingRebalance meanwhile.
    leader_sync_delay_ms: int = 0
    # The chance that a static member restarts when a join round completes (the group is then
    # in CompletingRebalance).
    restart_while_completing: float = 0.0
    # Arrivals come in pairs, and the second crashes between MEMBER_ID_REQUIRED and its rejoin.
    pending_crash: bool = False
    # The chance that, when a consumer arrives, the leader goes silent (connected, no request
    # again): the join round completes by its timer without the leader.
    leader_stalls: float = 0.0
    # Consumers fetch their committed offsets once assigned, and an admin client describes,
    # lists, fetches and deletes groups every `ADMIN_MS`.
    admin: bool = False


CHURN = Scenario("churn", "members leave, crash, arrive, restart, stall and commit stale offsets")
STATIC_RESTART_COMPLETING = Scenario(
    "static-restart-completing",
    "a slow leader keeps each round in CompletingRebalance, and static members restart then",
    static_every=2,
    leader_sync_delay_ms=1_500,
    restart_while_completing=0.5,
)
PENDING_CRASH = Scenario(
    "pending-crash",
    "new members arrive in pairs; one crashes after MEMBER_ID_REQUIRED, its pending id expires",
    pending_crash=True,
)
LEADER_STALLS = Scenario(
    "leader-stalls",
    "static members with long sessions; the leader goes silent as a member arrives, and the "
    "round completes by its timer with a leader that did not rejoin",
    static_every=1,
    session_ms=30_000,
    rebalance_ms=5_000,
    leader_stalls=0.7,
)
ADMIN = Scenario(
    "admin",
    "consumers fetch their offsets once assigned; an admin client describes, lists, fetches "
    "and deletes groups (the consumers', an emptied one, unknown ones)",
    admin=True,
)
SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (CHURN, STATIC_RESTART_COMPLETING, PENDING_CRASH, LEADER_STALLS, ADMIN)
}


@dataclass
class _Consumer:
    name: str
    connection: str
    instance_id: str | None
    member_id: str = ""
    generation: int = -1
    phase: str = "start"  # start, joining, syncing, stable, gone
    in_flight: int | None = None
    next_heartbeat: int = 0
    next_commit: int = 0
    correlation: int = 0
    offset: int = 0
    stale_generation: int | None = None
    # Misbehaving clients: one that never sends its SyncGroup but keeps heartbeating, and a
    # static member's old incarnation that heartbeats once more after its restart.
    skips_sync: bool = False
    zombie: bool = False
    # Crashes once it has a member id, before rejoining with it (Scenario.pending_crash).
    crashes_pending: bool = False
    # The members of the generation just joined, as the JoinGroup response listed them (a
    # leader's; a follower's is empty).
    members: tuple[str, ...] = ()
    # When a leader that is computing the assignment sends its SyncGroup.
    sync_at: int | None = None
    # Fetches its committed offsets before going on (Scenario.admin).
    fetches: bool = False
    # Which admin request it sends next (the admin client only).
    admin_turn: int = 0


@dataclass
class TraceStats:
    """What a generated trace holds."""

    events: int = 0
    requests: int = 0
    consumers: int = 0


@dataclass
class _Run:
    coordinator: Coordinator
    clock: ManualClock
    writer: TraceWriter
    rng: random.Random
    scenario: Scenario = CHURN
    consumers: dict[str, _Consumer] = field(default_factory=dict)
    # The consumer the last JoinGroup response named leader.
    leader: str | None = None
    stats: TraceStats = field(default_factory=TraceStats)
    # The API key, version and request of each request not yet answered.
    versions: dict[tuple[str, int], tuple[int, int, rq.Request]] = field(default_factory=dict)

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def send(self, consumer: _Consumer, request: rq.Request) -> None:
        consumer.correlation += 1
        ref = (consumer.connection, consumer.correlation)
        consumer.in_flight = consumer.correlation
        api_key, body = request_body(request)
        self.versions[ref] = (api_key, request.api_version, request)
        self.writer.write(
            TraceEvent(
                self.now,
                consumer.connection,
                REQUEST,
                api_key,
                request.api_version,
                ref[1],
                consumer.name,
                body,
            )
        )
        self.stats.events += 1
        self.stats.requests += 1
        self.coordinator.handle(RequestRef(*ref), request)
        self.deliver()

    def deliver(self) -> None:
        assert self.coordinator.outbox is not None
        for ref, body in self.coordinator.outbox.take().items():
            # The impl types refs as any Hashable; the ones it hands back are the RequestRefs
            # `send` gave it.
            key = (ref.connection, ref.correlation_id)  # type: ignore[attr-defined]
            api_key, version, request = self.versions.pop(key)
            self.writer.write(
                TraceEvent(
                    self.now,
                    key[0],
                    RESPONSE,
                    api_key,
                    version,
                    key[1],
                    None,
                    response_body((body,), version, (request,)),
                )
            )
            self.stats.events += 1
            owner = next(c for c in self.consumers.values() if c.connection == key[0])
            owner.in_flight = None
            _react(self, owner, body)


def write_impl_trace(
    out: IO[str],
    *,
    seed: int,
    duration_ms: int,
    consumers: int = 3,
    churn: bool = True,
    max_events: int | None = None,
    config: CoordinatorConfig | None = None,
    coordinator_factory: Callable[[CoordinatorConfig, ManualClock], Coordinator] | None = None,
    scenario: Scenario = CHURN,
) -> TraceStats:
    """Simulate `consumers` consumers of one group for `duration_ms` (or until `max_events`)
    against the impl and write the trace to `out`. With `churn`, members leave, crash, arrive,
    restart, stall and commit stale offsets, as `scenario` steers them."""
    config = config or CoordinatorConfig(group_initial_rebalance_delay_ms=0)
    clock = ManualClock(START_MS)
    factory = coordinator_factory or (
        lambda c, k: Coordinator(to_impl_config(c), policy=RandomPolicy(seed), clock=k)
    )
    header = TraceHeader(
        source=f"groupspec.impl, simulated consumers (seed {seed}"
        + ("" if scenario is CHURN else f", scenario {scenario.name}")
        + ")",
        coordinator={"group_initial_rebalance_delay_ms": config.group_initial_rebalance_delay_ms},
    )
    run = _Run(
        factory(config, clock), clock, TraceWriter(out, header), random.Random(seed), scenario
    )
    for index in range(consumers):
        _arrive(run, index)
    if scenario.admin:
        admin = _Consumer("admin", "10.0.9.1:59999", None, phase="admin")
        run.consumers[admin.name] = admin
    end = START_MS + duration_ms
    while run.now < end and (max_events is None or run.stats.events < max_events):
        clock.advance(run.rng.choice((20, 50, 100, 250)))
        run.coordinator.advance()
        run.deliver()
        if churn:
            _churn(run)
        for consumer in list(run.consumers.values()):
            if consumer.phase != "gone" and consumer.in_flight is None:
                _act(run, consumer)
    run.stats.consumers = len(run.consumers)
    return run.stats


def _arrive(run: _Run, index: int) -> _Consumer:
    every = run.scenario.static_every
    static = index % every == every - 1
    name = f"consumer-{index}"
    consumer = _Consumer(
        name, f"10.0.0.{index + 1}:5{index:04d}", f"instance-{index}" if static else None
    )
    run.consumers[name] = consumer
    return consumer


def _churn(run: _Run) -> None:
    rng = run.rng
    live = [c for c in run.consumers.values() if c.phase not in ("gone", "admin")]
    roll = rng.random()
    if roll < 0.002 and live:
        victim = rng.choice(live)
        if victim.in_flight is None and victim.member_id:
            run.send(
                victim,
                rq.LeaveGroupRequest(
                    "g", (rq.MemberIdentity(victim.member_id, victim.instance_id),)
                ),
            )
            victim.phase = "gone"
    elif roll < 0.004 and live:
        rng.choice(live).phase = "gone"  # crashed: it never sends again; its session expires
    elif roll < 0.006 and len(live) < 6:
        _arrive(run, len(run.consumers))
        _steer_arrival(run, live)
    elif roll < 0.009 and live:
        laggard = rng.choice(live)
        if laggard.generation > 0:
            laggard.stale_generation = laggard.generation - 1
    elif roll < 0.010 and live:
        rng.choice(live).skips_sync = True
    elif roll < 0.012:
        static = [
            c for c in live if c.instance_id is not None and c.phase == "stable" and not c.zombie
        ]
        if static:
            _restart(run, rng.choice(static))


def _steer_arrival(run: _Run, live: list[_Consumer]) -> None:
    """What the scenario adds to an arrival: a second one that crashes while pending, or the
    leader going silent."""
    scenario = run.scenario
    if scenario.pending_crash:
        crasher = _arrive(run, len(run.consumers))
        crasher.instance_id, crasher.crashes_pending = None, True  # only dynamic ids pend
    if scenario.leader_stalls and run.rng.random() < scenario.leader_stalls:
        leaders = [c for c in live if c.phase == "stable" and c.name == run.leader]
        for leader in leaders:
            leader.phase = "gone"  # connected, silent: its session runs out


def _restart(run: _Run, old: _Consumer) -> None:
    """A static member restarts: a new connection joins with its instance id, while the old
    incarnation, not yet aware, heartbeats once more."""
    index = len(run.consumers)
    name = f"consumer-{index}"
    run.consumers[name] = _Consumer(name, f"10.0.1.{index + 1}:5{index:04d}", old.instance_id)
    old.zombie = True
    old.next_heartbeat = run.now + HEARTBEAT_MS


def _act(run: _Run, consumer: _Consumer) -> None:
    now = run.now
    if consumer.phase in ("start", "rejoin"):
        consumer.phase = "joining"
        run.send(consumer, _join(run.scenario, consumer))
    elif consumer.phase == "assigning" and consumer.sync_at is not None and now >= consumer.sync_at:
        _sync(run, consumer)
    elif consumer.phase == "admin" and now >= consumer.next_heartbeat:
        consumer.next_heartbeat = now + ADMIN_MS
        run.send(consumer, _admin_request(run, consumer))
    elif consumer.phase == "stable" and consumer.fetches:
        consumer.fetches = False
        run.send(
            consumer, rq.OffsetFetchRequest("g", (rq.TopicPartition(TOPIC, _partition(consumer)),))
        )
    elif consumer.phase == "stable" and consumer.stale_generation is not None:
        generation, consumer.stale_generation = consumer.stale_generation, None
        run.send(consumer, _commit(consumer, generation))
    elif consumer.phase == "stable" and now >= consumer.next_commit:
        consumer.next_commit = now + COMMIT_MS
        consumer.offset += 10
        run.send(consumer, _commit(consumer, consumer.generation))
    elif consumer.phase in ("stable", "stalled") and now >= consumer.next_heartbeat:
        consumer.next_heartbeat = now + HEARTBEAT_MS
        if consumer.zombie:
            consumer.phase = "gone"
        run.send(
            consumer,
            rq.HeartbeatRequest("g", consumer.generation, consumer.member_id, consumer.instance_id),
        )


def _join(scenario: Scenario, consumer: _Consumer) -> rq.JoinGroupRequest:
    return rq.JoinGroupRequest(
        group_id="g",
        member_id=consumer.member_id,
        protocol_type="consumer",
        protocols=(rq.JoinGroupProtocol("range", encode_subscription_v0((TOPIC,))),),
        session_timeout_ms=scenario.session_ms,
        rebalance_timeout_ms=scenario.rebalance_ms,
        group_instance_id=consumer.instance_id,
        client_id=consumer.name,
        client_host="/" + consumer.connection.rpartition(":")[0],
    )


def _partition(consumer: _Consumer) -> int:
    """The partition a consumer commits to."""
    return int(consumer.name.rpartition("-")[2]) % PARTITIONS


def _admin_request(run: _Run, admin: _Consumer) -> rq.Request:
    """The admin client's next request, in turn: the consumers' group described, listed, its
    offsets fetched and a delete refused; a group of standalone commits made, described,
    emptied and deleted; and unknown groups asked about."""
    admin.admin_turn += 1
    standalone = f"g-standalone-{admin.admin_turn // 10}"
    requests: list[rq.Request] = [
        rq.DescribeGroupsRequest(("g",)),
        rq.ListGroupsRequest(),
        rq.OffsetFetchRequest("g", None),
        rq.DeleteGroupsRequest(("g",)),
        # A commit with no member and no generation: a group with offsets and no members.
        rq.OffsetCommitRequest(standalone, (rq.OffsetCommitPartition(TOPIC, 0, admin.admin_turn),)),
        rq.DescribeGroupsRequest((standalone,)),
        rq.DeleteGroupsRequest((standalone,)),
        rq.DescribeGroupsRequest(("g-unknown",)),
        rq.OffsetFetchRequest("g-unknown", (rq.TopicPartition(TOPIC, 0),)),
        rq.DeleteGroupsRequest(("g-unknown",)),
    ]
    return requests[(admin.admin_turn - 1) % len(requests)]


def _commit(consumer: _Consumer, generation: int) -> rq.OffsetCommitRequest:
    return rq.OffsetCommitRequest(
        "g",
        (rq.OffsetCommitPartition(TOPIC, _partition(consumer), consumer.offset),),
        generation_id=generation,
        member_id=consumer.member_id,
        group_instance_id=consumer.instance_id,
    )


def _react(run: _Run, consumer: _Consumer, body: object) -> None:
    """What a consumer does with a response (the next request goes out on its next turn)."""
    if consumer.phase == "gone" and not consumer.zombie:
        return
    error = int(getattr(body, "error_code", 0))
    if isinstance(body, rs.JoinGroupResponse):
        if error == MEMBER_ID_REQUIRED:
            consumer.member_id, consumer.phase = body.member_id, "start"
            if consumer.crashes_pending:
                consumer.phase = "gone"  # its pending id expires
        elif error == 0:
            consumer.member_id, consumer.generation = body.member_id, body.generation_id
            if body.leader == body.member_id:
                run.leader = consumer.name
            if consumer.skips_sync:
                consumer.phase, consumer.skips_sync = "stalled", False
                consumer.next_heartbeat = run.now + HEARTBEAT_MS
                return
            consumer.members = tuple(sorted(m.member_id for m in body.members))
            delay = run.scenario.leader_sync_delay_ms
            if body.leader != body.member_id:
                _sync(run, consumer)
            elif delay:
                consumer.phase, consumer.sync_at = "assigning", run.now + delay
                _steer_completing(run)
            else:
                _sync(run, consumer)
        else:
            _after_error(consumer, error)
    elif isinstance(body, rs.SyncGroupResponse):
        if error == 0:
            consumer.phase = "stable"
            consumer.fetches = run.scenario.admin
            consumer.next_heartbeat = run.now + HEARTBEAT_MS
        else:
            _after_error(consumer, error)
    elif isinstance(body, rs.HeartbeatResponse) and error != 0:
        _after_error(consumer, error)
    elif isinstance(body, rs.OffsetCommitResponse):
        errors = {int(p.error_code) for p in body.partitions} - {0}
        if errors and consumer.phase == "stable":
            _after_error(consumer, min(errors))


def _sync(run: _Run, consumer: _Consumer) -> None:
    """Send the SyncGroup of the generation just joined; a leader's carries the assignment."""
    consumer.phase, consumer.sync_at = "syncing", None
    members = consumer.members
    assignments = tuple(
        rq.SyncGroupAssignment(
            member,
            encode_assignment(
                tuple(TopicPartition(TOPIC, p) for p in range(PARTITIONS) if p % len(members) == i)
            ),
        )
        for i, member in enumerate(members)
    )
    run.send(
        consumer,
        rq.SyncGroupRequest(
            "g",
            consumer.generation,
            consumer.member_id,
            consumer.instance_id,
            assignments=assignments,
        ),
    )


def _steer_completing(run: _Run) -> None:
    """A join round completed (the group is in CompletingRebalance): a static member may
    restart now, as the scenario asks."""
    chance = run.scenario.restart_while_completing
    if not chance or run.rng.random() >= chance:
        return
    static = [
        c
        for c in run.consumers.values()
        if c.instance_id is not None and c.phase in ("syncing", "assigning") and not c.zombie
    ]
    if static:
        _restart(run, run.rng.choice(static))


def _after_error(consumer: _Consumer, error: int) -> None:
    if error == FENCED_INSTANCE_ID or consumer.zombie:
        consumer.phase = "gone"
        consumer.phase = "gone"
        return
    if error == UNKNOWN_MEMBER_ID:
        consumer.member_id = ""
    consumer.generation = -1 if error == UNKNOWN_MEMBER_ID else consumer.generation
    consumer.phase = "rejoin"
