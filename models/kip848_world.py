"""A closed world of KIP-848: Java or librdkafka consumers (spec/kip848/consumer/, the `client`
parameter) and the consumer-protocol coordinator (spec/kip848/) exchanging ConsumerGroupHeartbeat
requests and responses, with the coordinator's timers, crashes, leaves, a subscription change,
poll-timer expiries and lost messages as bounded budgets (`Kip848Parameters`). docs/kip-848.md,
"The world", explains it.

Each consumer has one queue of heartbeats on their way to the coordinator and one of responses
on their way back; a consumer has one heartbeat in flight at a time, as Kafka's heartbeat
request manager does, so a queue holds more than one message only after a restart. The world
has no clock: the coordinator is stepped at time 0 (its deadlines are all the same instant) and
a timer fires when the world allows it: for a member whose consumer has crashed or stopped
heartbeating, or for any member with `slow_consumers`. With `assignment_interval` the world keeps
the one clock KIP-1263's interval needs (models/kip848_clock.py).

Properties, declared once in `properties`: the coordinator invariants of
spec/kip848/invariants.py on its state; OwnedOnce (no partition held by two consumers' applications
at once, counting partitions a consumer has not yet revoked); NoRunAgainstOwner (a consumer never
holds a partition that the coordinator counts as another member's, assigned or pending
revocation); ReleasedWithCallback (a consumer step releases a partition only after a callback
ran for it); with a `commits` budget, CommitJudged (a commit is accepted exactly when the
coordinator's profile allows it) and CommitFromOwner (an accepted commit names only partitions
its member owns); and, with `check_convergence`, Converges (under fairness the group ends Stable with
every consumer holding its target).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from groupspec.checker.model import (
    ActionProperty,
    Cut,
    Invariant,
    LivenessProperty,
    Property,
    Transition,
)
from groupspec.checker.plain import PlainModel
from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848 import (
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    MemberState,
    RequestArrived,
)
from groupspec.spec.kip848 import invariants as kip848_invariants
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.consumer import commits as consumer_commits
from groupspec.spec.kip848.consumer import librdkafka, machine, offset_fetches
from groupspec.spec.kip848.consumer.commits import Commit
from groupspec.spec.kip848.consumer.librdkafka import RdKafkaConsumer
from groupspec.spec.kip848.consumer.machine import ClientStep, ConsumerState, KafkaConsumer
from groupspec.spec.kip848.consumer.offset_fetches import OffsetFetch
from groupspec.spec.kip848.events import (
    CoordinatorLoaded,
    CoordinatorLoadStarted,
    CoordinatorUnloaded,
)
from groupspec.spec.kip848.failover import as_served
from groupspec.spec.kip848.offsets import commit_allowed
from groupspec.spec.kip848.profiles import MAX_HEARTBEAT_VERSION
from groupspec.spec.kip848.refinement import refinement_problems
from groupspec.spec.kip848.state import CoordinatorPhase
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    TopicPartition,
)
from groupspec.vocabulary.responses import OffsetCommitResponse, OffsetFetchResponse

from . import kip848_regex
from .kip848_clock import CLOCK_START_MS, interval_end
from .kip848_faults import NO_KIP848_FAULT, FaultyCoordinator, kip848_fault
from .kip848_misbehaving import MISBEHAVING_CLIENT, misbehaving_requests
from .kip848_params import Kip848Parameters
from .memo import Memo
from .world_state import canonical_repr, part_digest, text_digest

GROUP_ID = "g"
# The admin client's connection (`Kip848Parameters.admin`).
ADMIN_CLIENT = "admin"
# What the coordinator is to the world: anything that steps like the spec (tests give faulty ones).
Coordinator = ConsumerGroupCoordinatorSpec


@dataclass(frozen=True)
class Heartbeat:
    """A heartbeat on its way to the coordinator, from the consumer incarnation `member_id`."""

    member_id: str
    request: ConsumerGroupHeartbeatRequest


@dataclass(frozen=True)
class Answer:
    """A response on its way back to the consumer incarnation `member_id`."""

    member_id: str
    response: ConsumerGroupHeartbeatResponse


@dataclass(frozen=True)
class Kip848WorldState:
    """The coordinator, each consumer slot (None: crashed and not restarted), each slot's
    incarnation (restarts so far), its two queues, and what is left of each budget."""

    coordinator: ConsumerGroupsState
    consumers: tuple[KafkaConsumer | None, ...]
    incarnations: tuple[int, ...]
    requests: tuple[tuple[Heartbeat, ...], ...]
    responses: tuple[tuple[Answer, ...], ...]
    crashes: int = 0
    leaves: int = 0
    subscription_changes: int = 0
    poll_expiries: int = 0
    message_losses: int = 0
    failovers: int = 0
    # Offset commits left to send, and those on their way with the sender's slot.
    commits: int = 0
    commits_in_flight: tuple[tuple[int, Commit], ...] = ()
    # The admin client's writes left: a DeleteGroups, an OffsetCommit without a member.
    deletes: int = 0
    admin_commits: int = 0
    # Committed-offset fetches left to send, and those on their way with the sender's slot.
    offset_fetches: int = 0
    fetches_in_flight: tuple[tuple[int, OffsetFetch], ...] = ()
    # c1's pattern changes left, the refresh intervals left to pass, and the coordinator's
    # clock (0 unless a refresh interval passed: models/kip848_regex.py).
    regex_changes: int = 0
    regex_refreshes: int = 0
    # The instant the coordinator steps at (models/kip848_clock.py; 0 in a world without clock).
    now_ms: int = 0

    def canonical_bytes(self) -> bytes:
        """A canonical encoding: each field's digest, in field order. The coordinator's state
        holds frozensets, whose repr order is not canonical, so every set is written sorted
        (`canonical_repr`); the coordinator and each consumer remember their digests, being
        shared by many states (most steps change one consumer or one queue)."""
        return b"".join(_field_digest(getattr(self, name)) for name in _STATE_FIELDS)


_STATE_FIELDS = tuple(f.name for f in fields(Kip848WorldState))


def _field_digest(value: Any) -> bytes:
    if hasattr(type(value), "__dataclass_fields__"):
        return part_digest(value)
    if type(value) is tuple:
        return b"".join(_field_digest(item) for item in value) + b"\x00%d" % len(value)
    return text_digest(canonical_repr(value))


class ConsumerMachine:
    """The consumer's steps as the world calls them: spec/kip848/consumer/machine.py. Tests
    override a method to seed a faulty consumer."""

    def subscribe(self, consumer: KafkaConsumer, topics: tuple[str, ...]) -> ClientStep | None:
        """subscribe() then poll()."""
        return machine.subscribe(consumer, topics)

    def heartbeat(self, consumer: KafkaConsumer, world: Kip848World) -> ClientStep | None:
        """The heartbeat the consumer sends now, if any."""
        return machine.heartbeat(consumer, world.config)

    def on_response(
        self, consumer: KafkaConsumer, world: Kip848World, response: ConsumerGroupHeartbeatResponse
    ) -> ClientStep:
        """The consumer after a response."""
        return machine.on_response(consumer, world.config, response)

    def revoke(self, consumer: KafkaConsumer) -> ClientStep | None:
        """The revocation step of a reconciliation."""
        return machine.revoke(consumer)

    def assign(self, consumer: KafkaConsumer) -> ClientStep | None:
        """The assignment step of a reconciliation."""
        return machine.assign(consumer)

    def leave(self, consumer: KafkaConsumer) -> ClientStep | None:
        """unsubscribe() or close()."""
        return machine.leave(consumer)

    def on_request_failed(self, consumer: KafkaConsumer) -> ClientStep:
        """The consumer after its request in flight was lost."""
        return machine.on_request_failed(consumer)

    def new_consumer(self, member_id: str, instance_id: str | None) -> KafkaConsumer:
        """A fresh consumer process."""
        return KafkaConsumer(member_id, GROUP_ID, instance_id=instance_id)


class LibrdkafkaMachine(ConsumerMachine):
    """librdkafka's consumer (spec/kip848/consumer/librdkafka.py): its own steps where it
    differs from the Java consumer, the Java consumer's elsewhere."""

    def subscribe(self, consumer: KafkaConsumer, topics: tuple[str, ...]) -> ClientStep | None:
        """subscribe(), once any leave is answered."""
        return librdkafka.subscribe(_rdkafka(consumer), topics)

    def heartbeat(self, consumer: KafkaConsumer, world: Kip848World) -> ClientStep | None:
        """librdkafka's heartbeat: full, incremental, an acknowledgement or the leave."""
        return librdkafka.heartbeat(_rdkafka(consumer), world.config)

    def on_response(
        self, consumer: KafkaConsumer, world: Kip848World, response: ConsumerGroupHeartbeatResponse
    ) -> ClientStep:
        """librdkafka after a response."""
        return librdkafka.on_response(_rdkafka(consumer), world.config, response)

    def revoke(self, consumer: KafkaConsumer) -> ClientStep | None:
        """The revocation step of a reconciliation started."""
        return librdkafka.revoke(_rdkafka(consumer))

    def assign(self, consumer: KafkaConsumer) -> ClientStep | None:
        """The assignment step of a reconciliation started."""
        return librdkafka.assign(_rdkafka(consumer))

    def leave(self, consumer: KafkaConsumer) -> ClientStep | None:
        """unsubscribe() or close(), without heartbeats until the leave."""
        return librdkafka.leave(_rdkafka(consumer))

    def on_request_failed(self, consumer: KafkaConsumer) -> ClientStep:
        """A lost request, as a transport error."""
        return librdkafka.on_request_failed(_rdkafka(consumer))

    def new_consumer(self, member_id: str, instance_id: str | None) -> KafkaConsumer:
        """A fresh librdkafka consumer process."""
        return RdKafkaConsumer(member_id, GROUP_ID, instance_id=instance_id)


def _rdkafka(consumer: KafkaConsumer) -> RdKafkaConsumer:
    if not isinstance(consumer, RdKafkaConsumer):
        raise TypeError(f"{consumer.member_id}: not a librdkafka consumer")
    return consumer


class CoordinatorIdsMachine(ConsumerMachine):
    """Kafka 3.9's Java consumer where it joins differently: its member id starts empty and is
    the one the coordinator's first answer gives (MembershipManagerImpl keeps "" until then, 3.9.0);
    it sends ConsumerGroupHeartbeat v0, the only version it knows. The rest is the Java
    consumer's machine."""

    def heartbeat(self, consumer: KafkaConsumer, world: Kip848World) -> ClientStep | None:
        """The Java consumer's heartbeat, as v0."""
        step = super().heartbeat(consumer, world)
        if step is None or step.request is None:
            return step
        return replace(step, request=replace(step.request, api_version=0))

    def new_consumer(self, member_id: str, instance_id: str | None) -> KafkaConsumer:
        """A fresh consumer process, without a member id yet."""
        return KafkaConsumer("", GROUP_ID, instance_id=instance_id)


# The consumer machine of each `client` parameter value.
CLIENT_MACHINES: dict[str, type[ConsumerMachine]] = {
    "java": ConsumerMachine,
    "librdkafka": LibrdkafkaMachine,
}


# The steps a fair run keeps taking while they stay enabled (each consumer's on its own);
# crashes, leaves, subscription changes, poll expiries and losses are faults, never owed.
FAIR_ACTIONS = frozenset(
    {
        "subscribe",
        "heartbeat",
        "coordinator_receives",
        "consumer_receives",
        "revoke",
        "assign",
        "release_lost",
        "release_for_leave",
        "rejoin_stale",
        "restart",
        "session_timeout",
        "rebalance_timeout",
        "start_loading",
        "finish_loading",
        "resolve_regex",
        "interval_elapsed",
    }
)
_LIVE_STATES = machine.IN_GROUP


class Kip848World(PlainModel[Kip848WorldState]):
    """N consumers and the KIP-848 coordinator, as a model the checker explores."""

    def __init__(
        self,
        parameters: Kip848Parameters | None = None,
        name: str = "kip848",
        coordinator: Coordinator | None = None,
        consumer: ConsumerMachine | None = None,
    ) -> None:
        self.parameters = parameters or Kip848Parameters()
        self.name = name
        self.config = self.parameters.coordinator_config()
        self.coordinator = coordinator or _coordinator(self.config, self.parameters.fault)
        machine_class = (
            CoordinatorIdsMachine
            if self.parameters.coordinator_member_ids
            else CLIENT_MACHINES[self.parameters.client]
        )
        self.consumer = consumer or machine_class()
        # Consumer and network steps leave the coordinator as it was: its invariants (replaying
        # the log among them) are judged once per coordinator state.
        self._judged: Memo[tuple[str, ConsumerGroupsState], list[str]] = Memo()
        self.properties = self._properties()

    # -- states --------------------------------------------------------------------------------

    def initial_states(self) -> list[Kip848WorldState]:
        """Every consumer Unsubscribed, no group, full budgets."""
        count = self.parameters.consumers
        p = self.parameters
        return [
            Kip848WorldState(
                coordinator=self.coordinator.initial_state(),
                consumers=tuple(self._consumer(i, 0) for i in range(count)),
                incarnations=(0,) * count,
                requests=((),) * count,
                responses=((),) * count,
                crashes=p.crashes,
                leaves=p.leaves,
                subscription_changes=p.subscription_changes,
                poll_expiries=p.poll_expiries,
                message_losses=p.message_losses,
                failovers=p.failovers,
                commits=p.commits,
                deletes=1 if p.admin else 0,
                admin_commits=1 if p.admin else 0,
                offset_fetches=p.offset_fetches,
                regex_changes=p.regex_changes,
                regex_refreshes=p.regex_refreshes,
                now_ms=CLOCK_START_MS if p.assignment_interval else 0,
            )
        ]

    def _consumer(self, index: int, incarnation: int) -> KafkaConsumer:
        """A fresh consumer process in slot `index`: a new member id, and the slot's instance id
        when members are static."""
        instance_id = f"i{index + 1}" if self.parameters.static_members else None
        return self.consumer.new_consumer(_member_id(index, incarnation), instance_id)

    def is_end(self, state: Kip848WorldState) -> bool:
        """A world with nothing left to do (every consumer gone, left or fatal) may end."""
        return True

    def transitions(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState] | Cut]:
        """Every step of every consumer, of the network and of the coordinator's timers."""
        steps: list[Transition[Kip848WorldState] | Cut] = []
        for index in range(len(state.consumers)):
            steps += self._consumer_steps(state, index)
            steps += self._network_steps(state, index)
        steps += self._timer_steps(state)
        steps += self._failover_steps(state)
        steps += self._commit_deliveries(state)
        steps += self._fetch_deliveries(state)
        steps += self._clock_steps(state)
        if self.parameters.admin:
            steps += self._admin_steps(state)
        if self.parameters.misbehaving_client:
            steps += self._misbehaving_steps(state)
        if self.parameters.regex_subscriptions:
            steps += kip848_regex.coordinator_steps(self.coordinator, self.config, state)
        return steps

    # -- consumers -----------------------------------------------------------------------------

    def _consumer_steps(
        self, state: Kip848WorldState, index: int
    ) -> list[Transition[Kip848WorldState]]:
        consumer = state.consumers[index]
        name = f"c{index + 1}"
        if consumer is None:
            if state.incarnations[index] == 0:
                return []
            restarted = self._consumer(index, state.incarnations[index])
            return [
                Transition(f"restart({name})", "restart", _with_consumer(state, index, restarted))
            ]
        p = self.parameters
        if p.static_members and has_left_statically(consumer):
            # A static consumer's leave is close(): once the -2 leave is answered the process
            # ends (and may start again as a new incarnation); it does not subscribe again.
            if consumer.in_flight:
                return []
            closed = replace(
                _with_consumer(state, index, None), incarnations=_bumped(state.incarnations, index)
            )
            return [Transition(f"close({name})", "close", closed)]
        subscribes = (
            kip848_regex.subscribe(p, consumer)
            if p.regex_subscriptions and index == 0
            else self.consumer.subscribe(consumer, self.parameters.topics)
        )
        machine_steps: list[tuple[str, ClientStep | None]] = [
            ("subscribe", subscribes),
            ("heartbeat", self.consumer.heartbeat(consumer, self)),
            ("revoke", self.consumer.revoke(consumer)),
            ("assign", self.consumer.assign(consumer)),
            ("release_lost", machine.release_lost(consumer)),
            ("release_for_leave", machine.release_for_leave(consumer)),
            ("rejoin_stale", machine.rejoin_stale(consumer)),
        ]
        budgeted: list[tuple[str, str, ClientStep | None]] = []
        if state.leaves:
            budgeted.append(("leave", "leaves", self.consumer.leave(consumer)))
        if state.subscription_changes:
            budgeted.append(
                (
                    "change_subscription",
                    "subscription_changes",
                    machine.change_subscription(consumer, p.alternative_subscription),
                )
            )
        if state.poll_expiries:
            budgeted.append(("expire_poll", "poll_expiries", machine.expire_poll(consumer)))
        if state.regex_changes:
            budgeted += kip848_regex.pattern_changes(p, consumer)
        found: list[Transition[Kip848WorldState]] = []
        for action, step in machine_steps:
            if step is not None:
                found.append(self._consumer_transition(state, index, action, step))
        for action, budget, step in budgeted:
            if step is not None:
                spent = replace(state, **{budget: getattr(state, budget) - 1})
                found.append(self._consumer_transition(spent, index, action, step))
        if state.commits:
            sent = consumer_commits.commit(consumer)
            if sent is not None and sent.commit is not None:
                after = replace(
                    state,
                    commits=state.commits - 1,
                    commits_in_flight=(*state.commits_in_flight, (index, sent.commit)),
                )
                found.append(Transition(f"commit({name})", "commit", after, (sent.rule,)))
        if state.offset_fetches:
            fetch = offset_fetches.fetch(consumer)
            if fetch is not None and fetch.fetch is not None:
                after = replace(
                    state,
                    offset_fetches=state.offset_fetches - 1,
                    fetches_in_flight=(*state.fetches_in_flight, (index, fetch.fetch)),
                )
                found.append(
                    Transition(f"fetch_offsets({name})", "fetch_offsets", after, (fetch.rule,))
                )
        if state.crashes:
            crashed = replace(
                _with_consumer(state, index, None),
                crashes=state.crashes - 1,
                incarnations=_bumped(state.incarnations, index),
            )
            found.append(Transition(f"crash({name})", "crash", crashed))
        return found

    def _consumer_transition(
        self, state: Kip848WorldState, index: int, action: str, step: ClientStep
    ) -> Transition[Kip848WorldState]:
        after = _with_consumer(state, index, step.consumer)
        if step.request is not None:
            queues = list(after.requests)
            sender = _member_id(index, state.incarnations[index])
            queues[index] = (*queues[index], Heartbeat(sender, step.request))
            after = replace(after, requests=tuple(queues))
        before = state.consumers[index]
        assert before is not None
        return Transition(
            f"{action}(c{index + 1})",
            action,
            after,
            step.rules,
            findings=_released_without_callback(before, step),
        )

    # -- the network ---------------------------------------------------------------------------

    def _network_steps(
        self, state: Kip848WorldState, index: int
    ) -> list[Transition[Kip848WorldState]]:
        name = f"c{index + 1}"
        found: list[Transition[Kip848WorldState]] = []
        for position in self._deliverable(state.requests[index]):
            heartbeat = state.requests[index][position]
            rest = _without(state.requests[index], position)
            waiting = replace(state, requests=_replaced(state.requests, index, rest))
            ref = RequestRef(heartbeat.member_id, 0)
            event = RequestArrived(ref, heartbeat.request)
            for outcome in self.coordinator.step(waiting.coordinator, event, now_ms=state.now_ms):
                answers = tuple(
                    Answer(heartbeat.member_id, reply.body)
                    for reply in outcome.responses
                    if isinstance(reply.body, ConsumerGroupHeartbeatResponse)
                )
                after = replace(
                    waiting,
                    coordinator=outcome.state,
                    responses=_replaced(
                        waiting.responses, index, (*waiting.responses[index], *answers)
                    ),
                )
                found.append(
                    Transition(
                        f"coordinator_receives({name})",
                        "coordinator_receives",
                        after,
                        outcome.rules,
                        findings=unreleased_without_owner(waiting.coordinator, outcome.state),
                    )
                )
            if state.message_losses:
                found.append(self._lost(waiting, index, heartbeat.member_id, "lose_request"))
        for position in self._deliverable(state.responses[index]):
            answer = state.responses[index][position]
            rest = _without(state.responses[index], position)
            waiting = replace(state, responses=_replaced(state.responses, index, rest))
            consumer = waiting.consumers[index]
            if consumer is None or _member_id(index, state.incarnations[index]) != answer.member_id:
                # The connection of a crashed incarnation: the response goes nowhere.
                found.append(Transition(f"consumer_receives({name})", "consumer_receives", waiting))
            else:
                step = self.consumer.on_response(consumer, self, answer.response)
                found.append(self._consumer_transition(waiting, index, "consumer_receives", step))
            if state.message_losses:
                found.append(self._lost(waiting, index, answer.member_id, "lose_response"))
        return found

    def _deliverable(self, queue: tuple[Any, ...]) -> range:
        """The positions a delivery may take: the oldest, or any with `reorder`."""
        if not queue:
            return range(0)
        return range(len(queue)) if self.parameters.reorder else range(1)

    def _lost(
        self, state: Kip848WorldState, index: int, member_id: str, action: str
    ) -> Transition[Kip848WorldState]:
        """A message dropped: its consumer incarnation, if still running, times the request out."""
        spent = replace(state, message_losses=state.message_losses - 1)
        consumer = spent.consumers[index]
        label = f"{action}(c{index + 1})"
        running = _member_id(index, state.incarnations[index])
        if consumer is None or running != member_id or not consumer.in_flight:
            return Transition(label, action, spent)
        step = self.consumer.on_request_failed(consumer)
        return Transition(label, action, _with_consumer(spent, index, step.consumer), step.rules)

    # -- offset commits --------------------------------------------------------------------------

    def _commit_deliveries(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """A commit reaching the coordinator (in any order), and its sender reading the answer at
        once: a retry at a newer epoch goes back on its way."""
        found: list[Transition[Kip848WorldState]] = []
        declared = {prop.name for prop in self.properties}
        for position, (index, sent) in enumerate(state.commits_in_flight):
            rest = _without(state.commits_in_flight, position)
            event = RequestArrived(RequestRef(sent.member_id, 0), sent.request(GROUP_ID))
            findings = _judge_commit(state, sent, self.config.kafka_version)
            for outcome in self.coordinator.step(state.coordinator, event, now_ms=state.now_ms):
                error = _commit_error(outcome.responses)
                rules = outcome.rules
                after = replace(state, coordinator=outcome.state, commits_in_flight=rest)
                consumer = state.consumers[index]
                if consumer is not None and consumer.member_id == sent.member_id:
                    reaction = consumer_commits.on_commit_response(consumer, sent, error)
                    rules = (*rules, reaction.rule)
                    if reaction.commit is not None:
                        after = replace(after, commits_in_flight=(*rest, (index, reaction.commit)))
                found.append(
                    Transition(
                        f"coordinator_commits(c{index + 1})",
                        "coordinator_commits",
                        after,
                        rules,
                        findings=tuple(
                            finding
                            for finding in _commit_findings(findings, error)
                            if finding[0] in declared
                        ),
                    )
                )
        return found

    # -- committed-offset fetches ----------------------------------------------------------------

    def _fetch_deliveries(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """An OffsetFetch reaching the coordinator (in any order), and its sender reading the
        answer at once: a retry goes back on its way. The coordinator's state does not change."""
        found: list[Transition[Kip848WorldState]] = []
        for position, (index, sent) in enumerate(state.fetches_in_flight):
            rest = _without(state.fetches_in_flight, position)
            event = RequestArrived(RequestRef(sent.member_id, 0), sent.request(GROUP_ID))
            for outcome in self.coordinator.step(state.coordinator, event, now_ms=state.now_ms):
                (reply,) = outcome.responses
                assert isinstance(reply.body, OffsetFetchResponse)
                rules = outcome.rules
                after = replace(state, coordinator=outcome.state, fetches_in_flight=rest)
                consumer = state.consumers[index]
                if consumer is not None and consumer.member_id == sent.member_id:
                    reaction = offset_fetches.on_fetch_response(
                        consumer, sent, reply.body.error_code
                    )
                    rules = (*rules, reaction.rule)
                    if reaction.fetch is not None:
                        after = replace(after, fetches_in_flight=(*rest, (index, reaction.fetch)))
                found.append(
                    Transition(
                        f"coordinator_fetches(c{index + 1})", "coordinator_fetches", after, rules
                    )
                )
        return found

    # -- the misbehaving client ------------------------------------------------------------------

    def _misbehaving_steps(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """Each request of the misbehaving client handled and answered in one step; a request
        the coordinator does not refuse with its error, or that changes its state, is a finding
        of MisbehavingRefused."""
        group = state.coordinator.group(GROUP_ID)
        found: list[Transition[Kip848WorldState]] = []
        version = MAX_HEARTBEAT_VERSION[self.parameters.kafka_version]
        for what, request, error in misbehaving_requests(
            GROUP_ID, group, self.parameters.topics, version
        ):
            event = RequestArrived(RequestRef(MISBEHAVING_CLIENT, 0), request)
            for outcome in self.coordinator.step(state.coordinator, event, now_ms=state.now_ms):
                found.append(
                    Transition(
                        f"misbehaving_{what}",
                        "misbehaving",
                        replace(state, coordinator=outcome.state),
                        outcome.rules,
                        findings=_misbehaving_findings(
                            what, error, state.coordinator, outcome.state, outcome.responses
                        ),
                    )
                )
        return found

    # -- the admin client ------------------------------------------------------------------------

    def _admin_steps(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """Each admin request handled and answered in one step: the admin client keeps no state
        and reads its answer at once, so only the coordinator changes (and the write budgets)."""
        requests: list[tuple[str, Any, Kip848WorldState]] = [
            ("describe", ConsumerGroupDescribeRequest((GROUP_ID,)), state),
            ("list", ListGroupsRequest(), state),
            ("list_stable", ListGroupsRequest(states_filter=("Stable",)), state),
            ("fetch_offsets", OffsetFetchRequest(GROUP_ID, None), state),
        ]
        if state.deletes:
            spent = replace(state, deletes=state.deletes - 1)
            requests.append(("delete", DeleteGroupsRequest((GROUP_ID,)), spent))
        if state.admin_commits and state.coordinator.group(GROUP_ID) is not None:
            # Without a group the commit creates a simple classic group, which the classic
            # world checks (spec/offsets.py); here the admin resets an existing group's offset.
            spent = replace(state, admin_commits=state.admin_commits - 1)
            commit = OffsetCommitRequest(
                GROUP_ID, (OffsetCommitPartition(self.parameters.topics[0], 0, 0),)
            )
            requests.append(("commit_offset", commit, spent))
        found: list[Transition[Kip848WorldState]] = []
        for what, request, before in requests:
            event = RequestArrived(RequestRef(ADMIN_CLIENT, 0), request)
            for outcome in self.coordinator.step(before.coordinator, event, now_ms=before.now_ms):
                found.append(
                    Transition(
                        f"admin_{what}",
                        "admin",
                        replace(before, coordinator=outcome.state),
                        outcome.rules,
                    )
                )
        return found

    # -- the coordinator's timers --------------------------------------------------------------

    def _timer_steps(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        live = {c.member_id for c in state.consumers if c is not None and c.state in _LIVE_STATES}
        live |= _ids_on_their_way(state)
        found: list[Transition[Kip848WorldState]] = []
        for event, _deadline in armed_timers(state.coordinator):
            if event.member_id in live and not self.parameters.slow_consumers:
                continue
            action = (
                "session_timeout"
                if type(event).__name__.startswith("Session")
                else ("rebalance_timeout")
            )
            try:
                outcomes = self.coordinator.step(state.coordinator, event, now_ms=state.now_ms)
            except EventNotEnabledError:
                continue
            for outcome in outcomes:
                found.append(
                    Transition(
                        f"{action}({event.member_id})",
                        action,
                        replace(state, coordinator=outcome.state),
                        outcome.rules,
                    )
                )
        return found

    # -- the clock ---------------------------------------------------------------------------------

    def _clock_steps(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """The assignment interval since the last target computation elapsing (owed: time
        passes), when the world has a clock and an interval is running."""
        end = interval_end(state.coordinator, state.now_ms, self.config.assignment_interval_ms)
        if end is None:
            return []
        return [Transition("interval_elapsed", "interval_elapsed", replace(state, now_ms=end))]

    # -- the coordinator's failovers ------------------------------------------------------------

    def _failover_steps(self, state: Kip848WorldState) -> list[Transition[Kip848WorldState]]:
        """The coordinator moving away (a budget), then loading the log and finishing (owed)."""
        phase = state.coordinator.phase
        if phase is CoordinatorPhase.ACTIVE:
            if not state.failovers:
                return []
            event: CoordinatorUnloaded | CoordinatorLoadStarted | CoordinatorLoaded
            event, action = CoordinatorUnloaded(), "unload"
            state = replace(state, failovers=state.failovers - 1)
        elif phase is CoordinatorPhase.UNLOADED:
            event, action = CoordinatorLoadStarted(), "start_loading"
        else:
            event, action = CoordinatorLoaded(), "finish_loading"
        return [
            Transition(action, action, replace(state, coordinator=outcome.state), outcome.rules)
            for outcome in self.coordinator.step(state.coordinator, event, now_ms=state.now_ms)
        ]

    # -- properties ----------------------------------------------------------------------------

    def _on_coordinator(self, name: str, check: Any) -> Any:
        def judge(state: Kip848WorldState) -> list[str]:
            coordinator = state.coordinator
            return self._judged.get((name, coordinator), lambda: list(check(coordinator)))

        return judge

    def _properties(self) -> tuple[Property, ...]:
        coordinator_invariants: list[Property] = [
            Invariant(
                invariant.name,
                f"{invariant.description} (the coordinator's state, spec/kip848/invariants.py)",
                check=self._on_coordinator(invariant.name, invariant.check),
            )
            # Read from the registry when the world is built, so an invariant added there is
            # checked here without a second list (docs/extending.md).
            for invariant in kip848_invariants.KIP848_INVARIANTS
        ]
        world: list[Property] = [
            Invariant(
                "OwnedOnce",
                "No partition is held by two consumers at once, counting partitions a consumer "
                "has not yet revoked (partition-epoch safety, seen from the clients).",
                check=owned_once,
            ),
            Invariant(
                "NoRunAgainstOwner",
                "A consumer never holds a partition the coordinator counts as another member's "
                "(assigned, or pending revocation at that member's epoch).",
                check=no_run_against_owner,
            ),
            ActionProperty(
                "Refinement",
                "Every coordinator step is a step of the abstract consumer-protocol group "
                "(spec/kip848/refinement.py: join, leave, replacement, new target, one member's "
                "reconciliation) or changes nothing it describes.",
                check=refines,
            ),
            ActionProperty(
                "UnreleasedWaitsForOwner",
                "A heartbeat leaves its member in UnreleasedPartitions only while another member "
                "still owns a partition of its target (KAFKA-19449's needless hop breaks it).",
            ),
            ActionProperty(
                "ReleasedWithCallback",
                "A consumer releases a partition only in a step that ran onPartitionsRevoked or "
                "onPartitionsLost for it (its steps report it).",
            ),
        ]
        if self.parameters.commits:
            world += [
                ActionProperty(
                    "CommitJudged",
                    "A commit is accepted from the owner at an epoch the profile allows and "
                    "refused otherwise (its epoch equal to the member's, or from 4.3 at least "
                    "the epoch each partition was assigned at).",
                ),
                ActionProperty(
                    "CommitFromOwner",
                    "An accepted commit comes from the member that owns each of its partitions "
                    "(assigned or pending revocation) when the coordinator accepts it.",
                ),
            ]
        if self.parameters.misbehaving_client:
            world.append(
                ActionProperty(
                    "MisbehavingRefused",
                    "Every request of the misbehaving client (no Kafka consumer sends it) is "
                    "refused with its error and leaves the coordinator's state as it was.",
                )
            )
        if self.parameters.check_convergence:
            world.append(
                LivenessProperty(
                    "Converges",
                    "Under weak fairness every run ends with the group Stable and every "
                    "running consumer Stable, holding its target at the member's epoch.",
                    goal=converged,
                    fair_actions=FAIR_ACTIONS,
                )
            )
        return (*coordinator_invariants, *world)


# -- commits ------------------------------------------------------------------------------------


def _judge_commit(
    state: Kip848WorldState, sent: Commit, kafka_version: str
) -> tuple[bool, tuple[str, ...]]:
    """Whether the profile allows `sent` where it arrives, and the partitions it names that its
    member does not own there."""
    group = state.coordinator.group(GROUP_ID)
    partitions = frozenset(sent.partitions)
    allowed = commit_allowed(group, sent.member_id, sent.epoch, partitions, kafka_version)
    member = None if group is None else group.member(sent.member_id)
    owned = frozenset() if member is None else member.owned
    return allowed, tuple(str(p) for p in sorted(partitions - owned))


def _commit_error(responses: tuple[Any, ...]) -> ErrorCode:
    (reply,) = responses
    assert isinstance(reply.body, OffsetCommitResponse)
    errors = {entry.error_code for entry in reply.body.partitions}
    return ErrorCode.NONE if errors == {ErrorCode.NONE} else max(errors - {ErrorCode.NONE})


def _commit_findings(
    judged: tuple[bool, tuple[str, ...]], error: ErrorCode
) -> tuple[tuple[str, str], ...]:
    allowed, not_owned = judged
    accepted = error is ErrorCode.NONE
    found = []
    if accepted != allowed:
        verdict = "accepted" if accepted else f"refused ({error.name})"
        found.append(
            (
                "CommitJudged",
                f"a commit the profile {'refuses' if not allowed else 'allows'} was {verdict}",
            )
        )
    if accepted and not_owned:
        found.append(
            (
                "CommitFromOwner",
                f"an accepted commit names {', '.join(not_owned)}, not the member's",
            )
        )
    return tuple(found)


# -- property checks ----------------------------------------------------------------------------


def _misbehaving_findings(
    what: str,
    expected: ErrorCode,
    before: ConsumerGroupsState,
    after: ConsumerGroupsState,
    responses: tuple[Any, ...],
) -> tuple[tuple[str, str], ...]:
    """MisbehavingRefused's findings of one misbehaving request: an answer without the error it
    must carry, or a coordinator state it changed."""
    found = []
    errors = {_answer_errors(reply.body) for reply in responses}
    if errors != {(expected,)}:
        found.append(
            (
                "MisbehavingRefused",
                f"{what} was answered with {sorted(map(str, errors))}, not {expected.name}",
            )
        )
    if after != before:
        found.append(("MisbehavingRefused", f"{what} changed the coordinator's state"))
    return tuple(found)


def _answer_errors(body: Any) -> tuple[ErrorCode, ...]:
    """The error codes an answer carries: its own, its groups' or its partitions'."""
    if isinstance(body, OffsetCommitResponse):
        return tuple(sorted({entry.error_code for entry in body.partitions}))
    groups = getattr(body, "groups", None)
    if groups is not None:
        return tuple(sorted({entry.error_code for entry in groups}))
    return (body.error_code,)


def refines(before: Kip848WorldState, step: Transition[Kip848WorldState]) -> list[str]:
    """Refinement's findings of one step: what its coordinator change does that no step of the
    abstract group allows."""
    return refinement_problems(as_served(before.coordinator), as_served(step.state.coordinator))


def unreleased_without_owner(
    before: ConsumerGroupsState, after: ConsumerGroupsState
) -> tuple[tuple[str, str], ...]:
    """UnreleasedWaitsForOwner's findings of one coordinator step: each member the step changed
    that it left in UnreleasedPartitions with no target partition owned by another member."""
    findings = []
    for group in after.iter_groups():
        was = before.group(group.group_id)
        for member in group.iter_members():
            if member.state is not MemberState.UNRELEASED_PARTITIONS:
                continue
            if was is not None and was.member(member.member_id) == member:
                continue
            waiting_for = group.target_of(member.member_id) - member.assigned
            owners = {group.owner_of(partition) for partition in waiting_for}
            if not owners - {None, member.member_id}:
                findings.append(
                    (
                        "UnreleasedWaitsForOwner",
                        f"{member.member_id} waits in UnreleasedPartitions for "
                        f"{sorted(map(str, waiting_for))}, which no other member owns",
                    )
                )
    return tuple(findings)


def _coordinator(config: ConsumerGroupConfig, fault: str) -> Coordinator:
    """The specified coordinator, or the one with the historical bug `fault` re-introduced."""
    correct = ConsumerGroupCoordinatorSpec(config)
    switch = kip848_fault(fault)
    return correct if switch is NO_KIP848_FAULT else FaultyCoordinator(correct, switch)


def owned_once(state: Kip848WorldState) -> list[str]:
    """OwnedOnce's violations: each partition two running consumers hold."""
    holders: dict[TopicPartition, list[str]] = {}
    for consumer in state.consumers:
        if consumer is not None:
            for partition in consumer.owned:
                holders.setdefault(partition, []).append(consumer.member_id)
    return [
        f"partition {partition} is held by {' and '.join(names)}"
        for partition, names in sorted(holders.items())
        if len(names) > 1
    ]


def no_run_against_owner(state: Kip848WorldState) -> list[str]:
    """NoRunAgainstOwner's violations: a consumer holding a partition that the coordinator
    counts as another member's."""
    group = state.coordinator.group(GROUP_ID)
    if group is None:
        return []
    problems = []
    for consumer in state.consumers:
        if consumer is None:
            continue
        for partition in consumer.owned:
            for member in group.iter_members():
                if member.member_id == consumer.member_id:
                    continue
                if partition in member.assigned or partition in member.pending_revocation:
                    problems.append(
                        f"{consumer.member_id} holds {partition}, which member "
                        f"{member.member_id} owns at epoch {member.member_epoch}"
                    )
    return problems


def _released_without_callback(
    before: KafkaConsumer, step: ClientStep
) -> tuple[tuple[str, str], ...]:
    released = set(before.owned) - set(step.consumer.owned)
    called = {p for callback in step.callbacks for p in callback.partitions}
    missing = sorted(released - called)
    if not missing:
        return ()
    detail = f"{before.member_id} released {', '.join(map(str, missing))} without a callback"
    return (("ReleasedWithCallback", detail),)


def converged(state: Kip848WorldState) -> bool:
    """Converges' goal: the group Stable (or no members when no consumer runs), every running
    consumer Stable at its member's epoch holding the target, and no member without one."""
    running = [c for c in state.consumers if c is not None and c.state not in _OUT_OF_GROUP]
    group = state.coordinator.group(GROUP_ID)
    if group is None:
        return not running
    if {c.member_id for c in running} != set(group.members):
        return False
    if running and group.state is not ConsumerGroupState.STABLE:
        return False
    for consumer in running:
        member = group.member(consumer.member_id)
        if (
            member is None
            or consumer.state is not ConsumerState.STABLE
            or member.state is not MemberState.STABLE
            or consumer.member_epoch != member.member_epoch
            or set(consumer.owned) != set(group.target_of(consumer.member_id))
        ):
            return False
    return True


_OUT_OF_GROUP = frozenset({ConsumerState.UNSUBSCRIBED, ConsumerState.FATAL})


# -- helpers ------------------------------------------------------------------------------------


def _ids_on_their_way(state: Kip848WorldState) -> set[str]:
    """Member ids the coordinator gave a running consumer in an answer it has not read yet (a
    consumer that joins with an empty id learns its id from that answer): the member is that
    consumer's, whose timers fire only when it stops."""
    found = set()
    for index, consumer in enumerate(state.consumers):
        if consumer is None or consumer.state not in _LIVE_STATES:
            continue
        running = _member_id(index, state.incarnations[index])
        found |= {
            answer.response.member_id
            for answer in state.responses[index]
            if answer.member_id == running and answer.response.member_id
        }
    return found


def has_left_statically(consumer: KafkaConsumer) -> bool:
    """Whether the consumer sent its -2 leave and is out of the group."""
    return (
        consumer.state is ConsumerState.UNSUBSCRIBED
        and consumer.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH
    )


def _member_id(index: int, incarnation: int) -> str:
    name = f"c{index + 1}"
    return name if incarnation == 0 else f"{name}-{incarnation + 1}"


def _with_consumer(
    state: Kip848WorldState, index: int, consumer: KafkaConsumer | None
) -> Kip848WorldState:
    return replace(state, consumers=_replaced(state.consumers, index, consumer))


def _replaced(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*items[:index], value, *items[index + 1 :])


def _without(queue: tuple[Any, ...], position: int) -> tuple[Any, ...]:
    return (*queue[:position], *queue[position + 1 :])


def _bumped(incarnations: tuple[int, ...], index: int) -> tuple[int, ...]:
    return _replaced(incarnations, index, incarnations[index] + 1)


def world_actions() -> Sequence[str]:
    """Every action kind of the world's steps, for coverage reports."""
    return (
        "subscribe",
        "heartbeat",
        "revoke",
        "assign",
        "release_lost",
        "release_for_leave",
        "rejoin_stale",
        "leave",
        "change_subscription",
        "expire_poll",
        "crash",
        "close",
        "restart",
        "coordinator_receives",
        "consumer_receives",
        "lose_request",
        "lose_response",
        "session_timeout",
        "rebalance_timeout",
        "unload",
        "start_loading",
        "finish_loading",
        "commit",
        "coordinator_commits",
        "admin",
        "fetch_offsets",
        "coordinator_fetches",
        "misbehaving",
        "change_pattern",
        "resolve_regex",
        "regex_refresh",
        "interval_elapsed",
    )
