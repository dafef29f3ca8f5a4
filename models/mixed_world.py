"""A closed world of a mixed group (docs/kip-848.md, "The mixed world"): one classic consumer
(spec/consumer/, Kafka's ConsumerCoordinator, eager) and one KIP-848 consumer
(spec/kip848/consumer/) in one group, served by a coordinator holding classic and consumer
groups (spec/kip848/mixed.py). Whichever joins first decides the group's first kind: the classic
consumer first makes a classic group that the KIP-848 consumer's join upgrades; the KIP-848
consumer first makes a consumer group the classic consumer joins as a classic member. The KIP-848
consumer's unsubscribe (the `leaves` budget) leaves the classic member alone: the downgrade.

Each client has one queue of requests to the coordinator and one of responses back, delivered
in order. The world has no clock: the coordinator is stepped at time 0 and a timer fires only
when its firing removes no member a running client holds (an eviction would be a fault, which
this world does not take).

With `rolling_downgrade` the two consumers are one application instance (group.instance.id i1):
the KIP-848 consumer runs first, and once it has closed (its -2 leave) it starts again as the
classic consumer, maybe subscribing to fewer topics (`classic_topics`); the classic JoinGroup
replaces the consumer-protocol static member, downgrading the group (KAFKA-19546).

Optional steps (parameters off by default): the classic consumer's close while a classic member
of the consumer group (`classic_closes`; its member's timers may then fire), and a misbehaving
client's refused classic requests to the consumer group (`misbehaving_client`,
models/mixed_misbehaving.py), and a second classic client, a classic consumer or a Connect
worker, that joins once and stops (`second_classic`, models/mixed_second_member.py).

Properties: the mixed invariants of spec/kip848/mixed_invariants.py on the coordinator's state
(a group id of one kind; single ownership in classic groups, and every consumer-protocol
invariant, SingleOwner first, over consumer groups with their classic members); OwnedOnce (the
two consumers never hold one partition at once); NoRunAgainstOwner (neither holds a partition the
consumer group counts as the other member's); ClassicAssignmentsSubscribed (a Stable classic
group assigns no member a topic it does not subscribe to); ConversionPreserves (an upgrade or a downgrade
keeps what Kafka keeps, spec/kip848/mixed_invariants.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from groupspec.checker.model import ActionProperty, Cut, Invariant, Property, Transition
from groupspec.checker.plain import PlainModel
from groupspec.spec.assignment import Cluster
from groupspec.spec.consumer import Close, ConsumerSpec, HeartbeatDue, Poll, ResponseReceived
from groupspec.spec.consumer import ConsumerState as ClassicConsumer
from groupspec.spec.consumer.outcome import Send
from groupspec.spec.consumer.state import MemberState as ClassicMemberState
from groupspec.spec.consumer_protocol import decode_assignment, subscription_topics
from groupspec.spec.events import EventNotEnabledError, OffsetRetentionCheck
from groupspec.spec.kip848 import RequestArrived
from groupspec.spec.kip848.consumer import machine
from groupspec.spec.kip848.consumer.machine import ClientStep, KafkaConsumer
from groupspec.spec.kip848.mixed import MixedCoordinatorSpec, MixedInput, MixedOutcome
from groupspec.spec.kip848.mixed_invariants import MIXED_INVARIANTS, conversion_violations
from groupspec.spec.kip848.mixed_state import MixedState
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import STABLE
from groupspec.vocabulary.requests import LeaveGroupRequest, Received, RequestRef, TopicPartition
from groupspec.vocabulary.responses import JoinGroupResponse, Response, ResponseBody

from .group_world import describe_request
from .kip848_world import has_left_statically
from .mixed_faults import NO_MIXED_FAULT, FaultyMixedCoordinator, mixed_fault
from .mixed_misbehaving import as_event, misbehaving_classic_requests
from .mixed_params import MixedParameters
from .mixed_second_member import SECOND_CONNECTION, second_join
from .world_state import canonical_repr, part_digest, text_digest

GROUP_ID = "g"
CLASSIC = "classic"  # the classic consumer's connection
MEMBER = "c2"  # the KIP-848 consumer's member id and connection


@dataclass(frozen=True)
class MixedWorldState:
    """The coordinator, the two consumers, their queues, and what is left of the leave budget."""

    coordinator: MixedState
    classic: ClassicConsumer
    classic_requests: tuple[Send, ...]
    classic_responses: tuple[tuple[int, ResponseBody], ...]
    consumer: KafkaConsumer
    requests: tuple[ConsumerGroupHeartbeatRequest, ...]
    responses: tuple[ConsumerGroupHeartbeatResponse, ...]
    leaves: int = 0
    subscribes: int = 1
    closes: int = 0
    second_joins: int = 0
    second_member: str = ""

    def canonical_bytes(self) -> bytes:
        """A canonical encoding (frozensets written sorted, `canonical_repr`): each part's
        digest, which the part remembers, being shared by the states that follow it."""
        return b"".join(
            (
                part_digest(self.coordinator.classic),
                part_digest(self.coordinator.consumer),
                part_digest(self.classic),
                part_digest(self.consumer),
                text_digest(canonical_repr((self.classic_requests, self.classic_responses))),
                text_digest(
                    canonical_repr((self.requests, self.responses, self.leaves, self.subscribes))
                ),
                # The classic consumer's close budget, only when it has one (so that the states
                # of worlds without it keep their encoding).
                text_digest(canonical_repr(self.closes)) if self.closes else b"",
                # The second classic client's budget and member id, likewise only when it has
                # something left to send.
                text_digest(canonical_repr((self.second_joins, self.second_member)))
                if self.second_joins
                else b"",
            )
        )


# The steps a fair run keeps taking while enabled; the leave is a choice, never owed.
FAIR_ACTIONS = frozenset(
    {
        "classic_poll",
        "classic_heartbeat",
        "classic_receives",
        "subscribe",
        "heartbeat",
        "revoke",
        "assign",
        "release_lost",
        "release_for_leave",
        "rejoin_stale",
        "consumer_receives",
        "coordinator_receives",
        "timer",
    }
)


class MixedWorld(PlainModel[MixedWorldState]):
    """A classic consumer, a KIP-848 consumer and the coordinator of both kinds of group."""

    def __init__(
        self,
        parameters: MixedParameters | None = None,
        name: str = "kip848-mixed",
        coordinator: MixedCoordinatorSpec | None = None,
    ) -> None:
        self.parameters = parameters or MixedParameters()
        self.name = name
        self.config = self.parameters.coordinator_config()
        correct = MixedCoordinatorSpec(self.config, self.parameters.classic_coordinator_config())
        fault = mixed_fault(self.parameters.fault)
        self.coordinator = coordinator or (
            correct if fault is NO_MIXED_FAULT else FaultyMixedCoordinator(correct, fault)
        )
        self.classic_spec = ConsumerSpec(self.parameters.classic_consumer_config())
        self.cluster = Cluster.of(
            dict(zip(self.parameters.topics, self.parameters.partitions, strict=True))
        )
        self.properties = self._properties()

    # -- states --------------------------------------------------------------------------------

    def initial_states(self) -> list[MixedWorldState]:
        """Both consumers subscribed but not yet polled, no group, the leave budget full."""
        return [
            MixedWorldState(
                coordinator=self.coordinator.initial_state(),
                classic=self.classic_spec.initial_state(self.cluster),
                classic_requests=(),
                classic_responses=(),
                consumer=KafkaConsumer(MEMBER, GROUP_ID, instance_id=self.parameters.instance_id),
                requests=(),
                responses=(),
                leaves=self.parameters.leaves,
                subscribes=1 + self.parameters.rejoins,
                closes=self.parameters.classic_closes,
                second_joins=2 if self.parameters.second_classic else 0,
            )
        ]

    def representative(self, state: MixedWorldState) -> MixedWorldState:
        """The state with the classic consumer's correlation ids renumbered 1..k in the order
        it sent them (only their equality and order matter), everywhere they appear."""
        return renumbered(state)

    def is_end(self, state: MixedWorldState) -> bool:
        """Any state may end a run (a world with nothing left to do)."""
        return True

    def transitions(self, state: MixedWorldState) -> list[Transition[MixedWorldState] | Cut]:
        """Every step of the two consumers, of the network and of the coordinator's timers."""
        steps: list[Transition[MixedWorldState] | Cut] = []
        steps += self._classic_steps(state)
        steps += self._consumer_steps(state)
        steps += self._network_steps(state)
        steps += self._timer_steps(state)
        if self.parameters.misbehaving_client:
            steps += self._misbehaving_steps(state)
        if state.second_joins and self._second_may_join(state):
            steps += self._second_steps(state)
        return steps

    # -- the classic consumer ------------------------------------------------------------------

    def _classic_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        if self.parameters.rolling_downgrade and not has_left_statically(state.consumer):
            # The same application instance: it restarts as a classic consumer once closed.
            return []
        found = []
        spec = self.classic_spec
        if state.classic_responses:
            (cid, body), *rest = state.classic_responses
            waiting = replace(state, classic_responses=tuple(rest))
            found.append(
                self._classic_transition(waiting, ResponseReceived(cid, body), "classic_receives")
            )
        for event in spec.enabled_events(state.classic):
            if isinstance(event, Poll):
                found.append(self._classic_transition(state, event, "classic_poll"))
            elif isinstance(event, HeartbeatDue):
                found.append(self._classic_transition(state, event, "classic_heartbeat"))
            elif isinstance(event, Close) and state.closes and self._may_close(state):
                spent = replace(state, closes=state.closes - 1)
                found.append(self._classic_transition(spent, event, "classic_close"))
        return found

    def _may_close(self, state: MixedWorldState) -> bool:
        """Whether the classic consumer may close now: while it is a classic member of the
        consumer group (the classic world covers a classic group's members closing), and, with
        `close_when_idle`, only when Stable with nothing in flight."""
        group = state.coordinator.consumer.group(GROUP_ID)
        classic = state.classic
        member_id = classic.generation.member_id
        if group is None or not member_id or group.member(member_id) is None:
            return False
        if self.parameters.close_when_idle:
            return classic.member_state is ClassicMemberState.STABLE and not classic.in_flight
        return True

    def _classic_transition(
        self, state: MixedWorldState, event: Any, action: str
    ) -> Transition[MixedWorldState]:
        outcome = self.classic_spec.step(state.classic, event)
        after = replace(
            state,
            classic=outcome.state,
            classic_requests=(*state.classic_requests, *outcome.sends),
        )
        return Transition(f"{action}(classic)", action, after, outcome.rules)

    # -- the KIP-848 consumer ------------------------------------------------------------------

    def _consumer_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        consumer = state.consumer
        candidates: list[tuple[str, ClientStep | None]] = [
            ("heartbeat", machine.heartbeat(consumer, self.config)),
            ("revoke", machine.revoke(consumer)),
            ("assign", machine.assign(consumer)),
            ("release_lost", machine.release_lost(consumer)),
            ("release_for_leave", machine.release_for_leave(consumer)),
            ("rejoin_stale", machine.rejoin_stale(consumer)),
        ]
        found = [
            self._consumer_transition(state, action, step)
            for action, step in candidates
            if step is not None
        ]
        if state.subscribes:
            step = machine.subscribe(consumer, self.parameters.topics)
            if step is not None:
                spent = replace(state, subscribes=state.subscribes - 1)
                found.append(self._consumer_transition(spent, "subscribe", step))
        if state.leaves:
            step = machine.leave(consumer)
            if step is not None:
                spent = replace(state, leaves=state.leaves - 1)
                found.append(self._consumer_transition(spent, "leave", step))
        if state.responses:
            response, *rest = state.responses
            waiting = replace(state, responses=tuple(rest))
            step = machine.on_response(consumer, self.config, response)
            found.append(self._consumer_transition(waiting, "consumer_receives", step))
        return found

    def _consumer_transition(
        self, state: MixedWorldState, action: str, step: ClientStep
    ) -> Transition[MixedWorldState]:
        after = replace(state, consumer=step.consumer)
        if step.request is not None:
            after = replace(after, requests=(*after.requests, step.request))
        return Transition(f"{action}({MEMBER})", action, after, step.rules)

    # -- the coordinator -----------------------------------------------------------------------

    def _network_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        found = []
        if state.classic_requests:
            send, *rest = state.classic_requests
            waiting = replace(state, classic_requests=tuple(rest))
            received = Received(RequestRef(CLASSIC, send.correlation_id), send.request)
            found += self._coordinator_steps(waiting, received, "coordinator_receives", CLASSIC)
        if state.requests:
            request, *others = state.requests
            waiting = replace(state, requests=tuple(others))
            event = RequestArrived(RequestRef(MEMBER, 0), request)
            found += self._coordinator_steps(waiting, event, "coordinator_receives", MEMBER)
        return found

    def _coordinator_steps(
        self, state: MixedWorldState, event: MixedInput, action: str, who: str
    ) -> list[Transition[MixedWorldState]]:
        found = []
        for outcome in self.coordinator.step(state.coordinator, event, now_ms=0):
            classic_answers = _classic_answers(outcome)
            answers = tuple(
                reply.body
                for reply in outcome.responses
                if reply.ref.connection == MEMBER
                and isinstance(reply.body, ConsumerGroupHeartbeatResponse)
            )
            after = replace(
                state,
                coordinator=outcome.state,
                classic_responses=(*state.classic_responses, *classic_answers),
                responses=(*state.responses, *answers),
            )
            findings = self._conversion_findings(state.coordinator, outcome.state, event)
            found.append(Transition(f"{action}({who})", action, after, outcome.rules, findings))
        return found

    def _misbehaving_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        """The misbehaving client's requests (models/mixed_misbehaving.py), each handled in one
        step; its answers go to no client of the world."""
        found = []
        requests = misbehaving_classic_requests(
            state.coordinator, GROUP_ID, self.parameters.topics[0]
        )
        for request in requests:
            event = as_event(request)
            for outcome in self.coordinator.step(state.coordinator, event, now_ms=0):
                after = replace(state, coordinator=outcome.state)
                findings = self._conversion_findings(state.coordinator, outcome.state, event)
                label = f"misbehaving client sends {describe_request(request)}"
                found.append(Transition(label, "misbehaving", after, outcome.rules, findings))
        return found

    def _second_may_join(self, state: MixedWorldState) -> bool:
        """Whether the second classic client may send now: any time, or with
        `second_joins_classic` only while the group is a classic group with members."""
        if not self.parameters.second_joins_classic:
            return True
        group = state.coordinator.classic.group(GROUP_ID)
        return group is not None and bool(group.members)

    def _second_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        """The second classic client's next JoinGroup (models/mixed_second_member.py), handled
        in one step: its first, naming no member id, learns the id from MEMBER_ID_REQUIRED (or
        ends the client's joins when refused); its second names that id and is its last."""
        request = second_join(
            self.parameters.second_classic, GROUP_ID, self.parameters.topics, state.second_member
        )
        event = Received(RequestRef(SECOND_CONNECTION, 1), request)
        found = []
        for outcome in self.coordinator.step(state.coordinator, event, now_ms=0):
            learned = "" if state.second_member else _member_id_required(outcome)
            after = replace(
                state,
                coordinator=outcome.state,
                classic_responses=(*state.classic_responses, *_classic_answers(outcome)),
                second_joins=1 if learned else 0,
                second_member=learned,
            )
            findings = self._conversion_findings(state.coordinator, outcome.state, event)
            label = f"second classic client sends {describe_request(request)}"
            found.append(Transition(label, "second_join", after, outcome.rules, findings))
        return found

    def _timer_steps(self, state: MixedWorldState) -> list[Transition[MixedWorldState]]:
        coordinator = state.coordinator
        events: list[Any] = [event for event, _ in armed_timers(coordinator.consumer)]
        events += [event for event, _ in self.coordinator.armed_classic_member_timers(coordinator)]
        events += [
            event
            for _, event in self.coordinator.classic.armed_timers(coordinator.classic)
            if not isinstance(event, OffsetRetentionCheck)
        ]
        held = self._held(state)
        found = []
        for event in events:
            try:
                outcomes = self.coordinator.step(coordinator, event, now_ms=0)
            except EventNotEnabledError:
                continue
            for outcome in outcomes:
                if held & (_member_ids(coordinator) - _member_ids(outcome.state)):
                    continue  # it would evict a running client's member: a fault, not taken
                after = replace(
                    state,
                    coordinator=outcome.state,
                    classic_responses=(*state.classic_responses, *_classic_answers(outcome)),
                )
                label = f"timer {type(event).__name__}"
                findings = self._conversion_findings(coordinator, outcome.state, event)
                found.append(Transition(label, "timer", after, outcome.rules, findings))
        return found

    def _conversion_findings(
        self, before: MixedState, after: MixedState, event: object
    ) -> tuple[tuple[str, str], ...]:
        """ConversionPreserves' findings on a coordinator step of input `event` (none when not
        declared)."""
        if not any(p.name == "ConversionPreserves" for p in self.properties):
            return ()
        fenced = members_named(event)
        return tuple(
            ("ConversionPreserves", problem)
            for problem in conversion_violations(before, after, GROUP_ID, fenced)
        )

    def _held(self, state: MixedWorldState) -> set[str]:
        """The member ids the running clients hold, or are about to learn or use (an id in a
        request or response still on its way)."""
        held = set()
        classic = state.classic
        if not classic.closed and classic.failure is None:
            held.add(classic.generation.member_id)
            held.update(getattr(send.request, "member_id", "") for send in state.classic_requests)
            held.update(getattr(body, "member_id", "") for _, body in state.classic_responses)
            # A member whose join or sync the client is waiting on (a static member learns its
            # id only from the parked JoinGroup's answer).
            group = state.coordinator.classic.group(GROUP_ID)
            for member in () if group is None else group.members:
                parked = (member.awaiting_join, member.awaiting_sync)
                if any(ref is not None and ref.connection == CLASSIC for ref in parked):
                    held.add(member.member_id)
            held.discard("")
        if state.consumer.state in machine.IN_GROUP:
            held.add(state.consumer.member_id)
        return held

    # -- properties ----------------------------------------------------------------------------

    def _properties(self) -> tuple[Property, ...]:
        coordinator: list[Property] = [
            Invariant(
                invariant.name,
                f"{invariant.description} (the coordinator's state, "
                "spec/kip848/mixed_invariants.py)",
                check=_on_coordinator(invariant.check),
            )
            for invariant in MIXED_INVARIANTS
        ]
        world: list[Property] = [
            Invariant(
                "OwnedOnce",
                "The classic consumer and the KIP-848 consumer never hold one partition at once.",
                check=owned_once,
            ),
            Invariant(
                "NoRunAgainstOwner",
                "Neither consumer holds a partition the consumer group counts as the other "
                "member's (assigned, or pending revocation).",
                check=no_run_against_owner,
            ),
            Invariant(
                "ClassicAssignmentsSubscribed",
                "In a Stable classic group, no member's assignment holds a partition of a topic "
                "its subscription (for the group's protocol) leaves out: the world's classic "
                "leader assigns only what members subscribe to, so such an assignment can only "
                "be the coordinator's, carried over by a downgrade that needed a rebalance.",
                check=classic_assignments_subscribed,
            ),
            ActionProperty(
                "ConversionPreserves",
                "An upgrade keeps each classic member, its generation as its epoch and its "
                "assignment; a downgrade keeps the classic members, the group epoch as the "
                "generation and each member's target as its assignment.",
            ),
        ]
        return (*coordinator, *world)


def _classic_answers(outcome: MixedOutcome) -> tuple[tuple[int, ResponseBody], ...]:
    """The responses of a coordinator step addressed to the classic consumer, by correlation id."""
    return tuple(
        (reply.ref.correlation_id, reply.body)
        for reply in outcome.responses
        if isinstance(reply, Response) and reply.ref.connection == CLASSIC
    )


def _member_id_required(outcome: MixedOutcome) -> str:
    """The member id a MEMBER_ID_REQUIRED answer to the second classic client hands it, or ""."""
    for reply in outcome.responses:
        body = reply.body
        if (
            reply.ref.connection == SECOND_CONNECTION
            and isinstance(body, JoinGroupResponse)
            and body.error_code is ErrorCode.MEMBER_ID_REQUIRED
        ):
            return body.member_id
    return ""


def _on_coordinator(check: Any) -> Any:
    def judge(state: MixedWorldState) -> list[str]:
        return list(check(state.coordinator))

    return judge


def _member_ids(state: MixedState) -> set[str]:
    """The member ids the coordinator holds in the group, of either kind (pending included)."""
    consumer = state.consumer.group(GROUP_ID)
    if consumer is not None:
        return set(consumer.members)
    classic = state.classic.group(GROUP_ID)
    if classic is None:
        return set()
    return {m.member_id for m in classic.members} | {p.member_id for p in classic.pending_members}


def _holders(state: MixedWorldState) -> dict[str, tuple[TopicPartition, ...]]:
    return {
        state.classic.generation.member_id or CLASSIC: tuple(state.classic.owned),
        state.consumer.member_id: tuple(state.consumer.owned),
    }


def classic_assignments_subscribed(state: MixedWorldState) -> list[str]:
    """ClassicAssignmentsSubscribed's violations: a Stable classic group's member assigned a
    partition of a topic it does not subscribe to."""
    group = state.coordinator.classic.group(GROUP_ID)
    if group is None or group.state is not STABLE or group.protocol_name is None:
        return []
    problems = []
    for member in group.members:
        if not member.assignment:
            continue
        topics = subscription_topics(member.metadata_for(group.protocol_name))
        partitions, _ = decode_assignment(member.assignment)
        for partition in partitions:
            if partition.topic not in topics:
                problems.append(
                    f"member {member.member_id} of the Stable classic group is assigned "
                    f"{partition}, but subscribes to {sorted(topics)}"
                )
    return problems


def owned_once(state: MixedWorldState) -> list[str]:
    """OwnedOnce's violations: each partition both consumers hold."""
    both = sorted(set(state.classic.owned) & set(state.consumer.owned))
    return [f"partition {partition} is held by both consumers" for partition in both]


def no_run_against_owner(state: MixedWorldState) -> list[str]:
    """NoRunAgainstOwner's violations: a consumer holding a partition the consumer group counts
    as another member's."""
    group = state.coordinator.consumer.group(GROUP_ID)
    if group is None:
        return []
    problems = []
    for holder, owned in _holders(state).items():
        for partition in owned:
            for member in group.iter_members():
                if member.member_id != holder and partition in member.owned:
                    problems.append(
                        f"{holder} holds {partition}, which member {member.member_id} owns "
                        f"at epoch {member.member_epoch}"
                    )
    return problems


def renumbered(state: MixedWorldState) -> MixedWorldState:
    """`state` with the classic consumer's correlation ids 1..k, in its in-flight order."""
    classic = state.classic
    ids = [entry.correlation_id for entry in classic.in_flight]
    renumber = {old: new for new, old in enumerate(ids, start=1)}
    if classic.next_correlation_id == len(ids) + 1 and all(o == n for o, n in renumber.items()):
        return state
    classic = replace(
        classic,
        in_flight=tuple(
            replace(entry, correlation_id=renumber[entry.correlation_id])
            for entry in classic.in_flight
        ),
        next_correlation_id=len(ids) + 1,
    )
    coordinator = state.coordinator
    group = coordinator.classic.group(GROUP_ID)
    if group is not None:
        for member in group.members:
            join, sync = member.awaiting_join, member.awaiting_sync
            group = group.update_member(
                member.member_id,
                awaiting_join=None if join is None else _renamed(join, renumber),
                awaiting_sync=None if sync is None else _renamed(sync, renumber),
            )
        coordinator = replace(coordinator, classic=coordinator.classic.with_group(group))
    return replace(
        state,
        coordinator=coordinator,
        classic=classic,
        classic_requests=tuple(
            replace(send, correlation_id=renumber.get(send.correlation_id, 0))
            for send in state.classic_requests
        ),
        classic_responses=tuple(
            (renumber.get(cid, 0), body) for cid, body in state.classic_responses
        ),
    )


def _renamed(ref: RequestRef, renumber: dict[int, int]) -> RequestRef:
    if ref.connection != CLASSIC:
        return ref
    return RequestRef(CLASSIC, renumber.get(ref.correlation_id, 0))


def world_actions() -> Sequence[str]:
    """Every action kind of the world's steps, for coverage reports."""
    return (
        "classic_poll",
        "classic_heartbeat",
        "classic_receives",
        "subscribe",
        "heartbeat",
        "revoke",
        "assign",
        "release_lost",
        "release_for_leave",
        "rejoin_stale",
        "leave",
        "consumer_receives",
        "coordinator_receives",
        "timer",
        "classic_close",
        "misbehaving",
        "second_join",
    )


def members_named(event: object) -> frozenset[str]:
    """The member ids a coordinator input names, which its step may fence: the member whose
    timer fired, a ConsumerGroupHeartbeat's member (a leave), a LeaveGroup's members."""
    member_id = getattr(event, "member_id", None)
    if isinstance(member_id, str):
        return frozenset({member_id})
    request = getattr(event, "request", None)
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        return frozenset({request.member_id})
    if isinstance(request, LeaveGroupRequest):
        return frozenset(member.member_id for member in request.members)
    return frozenset()
