"""The closed world of the classic group protocol: one coordinator, N consumers, a network,
abstract time and faults, every source of growth bounded (issue 4, item 1).

Composition:

- the coordinator specification (`GroupCoordinatorSpec`) owns one consumer group, "g";
- N consumer specifications (`ConsumerSpec`), each eager or cooperative (by its assignors),
  dynamic or static (the first `static_clients` have group.instance.id "i1", "i2", ...), the
  last `legacy_clients` speaking a Kafka 2.1 consumer's API versions. All
  use client id "consumer", so the member ids the coordinator generates ("consumer-<n>") do not
  say which client joined;
- the network: one ordered connection per client, named "c<i>#<incarnation>". The coordinator
  handles the head of a connection's outbound queue (one action per client, one transition per
  outcome the coordinator's relation allows), so requests of one connection are handled in
  order. Every response, including a deferred answer to a Join or Sync parked by another
  connection, goes to the inbound queue of the connection it is addressed to if that connection
  is still open, and is dropped otherwise. A client reads the head of its inbound queue. When a
  consumer marks its coordinator unknown (Kafka's `markCoordinatorUnknown` disconnects), or the
  client crashes, the connection closes: both queues are dropped, requests the coordinator has
  parked for it will be answered into the void (their refs become "closed"), and the client
  continues on a new incarnation. FindCoordinator travels on the same connection (the world has
  one broker);
- abstract time (DESIGN decision 2): every timer `armed_timers` reports may fire at any step,
  and the clock (`now_ms`) stays where it is. It moves only when an Empty group lies idle for
  offsets.retention.ms and the periodic offset-retention check then runs (`retention_checks`):
  an Empty group arms no timer, so the jump skips nothing real time would fire first, and its
  offsets expire. With `retention_with_members` a Stable group with no sync pending may lie so
  too, its members heartbeating (their session timers, the only ones armed, kept alive; the
  deadlines keep their values, which abstract time does not read): KIP-211 keeps the offsets of
  the topics it subscribes to. The clock is the time of the last retention check. Consumer timers
  are enabled as the consumer says: HeartbeatDue whenever the heartbeat thread may send (bounded
  by the in-flight bound), SessionTimeoutExpired and PollTimeoutExpired as budgeted faults (they
  stand for GC pauses and slow processing);
- faults, each with a budget shared by all clients: a client crash and restart (a static member
  keeps its group.instance.id, which is configuration; with `upgrade_assignors` it may restart
  with other assignors, a rolling upgrade), a poll timeout, a client-side session
  timeout, a coordinator failover (Unload, then StartLoading and FinishLoading, which replays the
  log; clients meanwhile see NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS and rediscover;
  with `failover_group_max_size` the coordinator that takes over has a lower group.max.size),
  a subscription change (one client switches to `alternative_subscription`), and partitions
  added (a topic grows by one partition and every client gets MetadataChanged);
- graceful shutdown, within the `closes` budget: a client's application calls
  `Consumer.close()` (the consumer revokes what it owns and, unless static, sends LeaveGroup);
  the client then only reads the answers to what it had sent, and never comes back. It is not
  a fault, so Convergence still applies: the clients that remain must converge;
- record processing: a client may process the next record of a partition it believes it owns
  (up to `max_offset`) and may ask to commit its positions (CommitRequested; the clients send
  at most `commits` OffsetCommits in all, a budget shared like the faults' so that it does
  not tell interchangeable clients apart); the consumer decides whether it may. A newly owned partition
  starts at the offset committed in the log (an OffsetFetch, taken atomically);
- beside the consumers, optionally: an admin client (`admin`: describe, list, delete, fetch
  offsets; `admin_resets`: reset offsets at generation -1 and remove a static member by
  instance id) and a misbehaving client (`misbehaving_client`, models/misbehaving_client.py).
  Both keep no state: each request is handled and answered in one step.

Bounds: the group generation never exceeds `max_generation` (a coordinator step that would
exceed it is not explored); a client step that would leave more than `max_in_flight` requests
unanswered is not explored; fault budgets; the commit budget; processed offsets. Correlation
ids, connection incarnations and member ids would grow forever, so they are canonicalized (see
`canonical.py`). A state whose every step was cut by a bound is a legitimate end, not a deadlock.
A step that changes nothing (a poll with nothing to do) is not listed: it cannot reveal a
violation. A dropped connection (`disconnects`) is the consumer's Disconnected event: the
consumer marks its coordinator unknown, which closes the connection as above.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

from groupspec.checker.derived import cuts
from groupspec.checker.model import CanonicalForm, Cut, GroupStep, Property, TransitionGroup
from groupspec.spec import (
    FinishLoading,
    HeartbeatExpired,
    Input,
    OffsetRetentionCheck,
    Outcome,
    StartLoading,
    Unload,
)
from groupspec.spec.assignment import Cluster
from groupspec.spec.consumer import (
    Close,
    CommitRequested,
    ConsumerConfig,
    ConsumerEvent,
    ConsumerOutcome,
    ConsumerPhase,
    ConsumerState,
    Disconnected,
    HeartbeatDue,
    MemberState,
    MetadataChanged,
    PartitionsRevoked,
    Poll,
    PollTimeoutExpired,
    ResponseReceived,
    SessionTimeoutExpired,
    SubscriptionChanged,
    check_consumer_state,
    check_consumer_step,
    phase,
)
from groupspec.spec.consumer.rules import CLIENT_COORDINATOR_MARKED_UNKNOWN
from groupspec.spec.consumer.state import RequestKind
from groupspec.spec.consumer_protocol import SubscriptionDecodeError, decode_assignment
from groupspec.spec.events import JoinTimerExpired, TimerEvent
from groupspec.spec.invariants import check_state, check_step
from groupspec.spec.state import CoordinatorState, Group
from groupspec.vocabulary.group_state import EMPTY, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    Request,
    RequestRef,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    ResponseBody,
    SyncGroupResponse,
)

from . import world_properties as props
from .canonical import (
    Canonicalizer,
)
from .faults import fault_switch
from .foreign_answers import failed_by_foreign_answer, foreign_answers
from .memo import Memo
from .memo_specs import MemoConsumerSpec, MemoCoordinatorSpec
from .misbehaving_client import MISBEHAVING_CONNECTION, misbehaving_requests
from .world_describe import describe_world_state
from .world_params import (
    ASSIGNOR_SEPARATOR,
    WorldParameters,
    coordinator_config,
    failover_coordinator_config,
    validate,
)
from .world_slots import (
    ComponentDigests,
    Layout,
    WorldForm,
    apply_update,
    declared_properties,
    offset_partitions,
)
from .world_state import (
    CLIENT_ID,
    CLOSED_CONNECTION,
    GROUP_ID,
    PROBLEMS_CACHE,
    Budgets,
    ClientSlot,
    WorldState,
    canonical_repr,
    client_name,
    connection_name,
    evolve,
)

# Consumer timeouts: the coordinator accepts sessions of 6 s and more; the rebalance timeout is
# twice the initial-rebalance delay (3 s), so the initial delay can be extended exactly once.
SESSION_TIMEOUT_MS = 10_000
REBALANCE_TIMEOUT_MS = 6_000
HEARTBEAT_INTERVAL_MS = 3_000

NAIVE_PROPERTY = "ExclusiveOwnershipCountingZombies"
_APIS = props.CLIENT_APIS
# Every action kind a transition of the world may carry, for coverage reports.
ACTION_KINDS = (
    "Poll",
    "HeartbeatDue",
    "SessionTimeoutExpired",
    "PollTimeoutExpired",
    "CommitRequested",
    "Process",
    "SubscriptionChanged",
    "Crash",
    "Close",
    "Disconnected",
    *(f"Receive{api}" for api in _APIS),
    *(f"Handle{api}" for api in _APIS),
    "HeartbeatExpired",
    "JoinTimerExpired",
    "SyncTimerExpired",
    "Unload",
    "StartLoading",
    "FinishLoading",
    "OffsetRetentionCheck",
    "PartitionsAdded",
    "HandleDescribeGroups",
    "HandleListGroups",
    "HandleDeleteGroups",
    "HandleOffsetFetch",
)
# The admin client's connection: it reads every answer in the step that produced it.
ADMIN_CONNECTION = "admin#0"


_IN_FLIGHT_CUT = Cut("max_in_flight")
_GENERATION_CUT = Cut("max_generation")
# The application's Consumer.close(); one event object, so steps can tell it apart by identity.
# The API versions of a Kafka 2.1 consumer, the last before KIP-394's MEMBER_ID_REQUIRED round
# and KIP-345's static membership (`legacy_clients`).
LEGACY_VERSIONS = {
    "join_group_version": 3,
    "sync_group_version": 2,
    "heartbeat_version": 2,
    "leave_group_version": 2,
    "offset_commit_version": 4,
    "find_coordinator_version": 2,
}
CLOSE = Close()
DISCONNECTED = Disconnected()


class GroupWorld:
    """The coordinator spec, N consumer specs, a network, abstract time and faults, bounded."""

    def __init__(
        self,
        parameters: WorldParameters,
        name: str = "group-world",
        memoize: bool = True,
        compact_ids: bool = True,
    ) -> None:
        """A world of `parameters`. `memoize=False` turns off the memo tables added for speed
        (tests compare both). With `compact_ids` false, member ids are never renumbered: every
        run is then one the coordinator really takes (the conformance vectors need that), but
        worlds with unbounded rejoins become infinite, so only guided walks should use it."""
        validate(parameters)
        self.parameters = parameters
        self._name = name
        self.memoize = memoize
        self.fault = fault_switch(parameters.fault)
        self.compact_ids = compact_ids
        self.coordinator = MemoCoordinatorSpec(coordinator_config(parameters), memoize=memoize)
        # The coordinator that takes over after a failover; another configuration only with
        # `failover_group_max_size` (a broker restarted with other settings).
        self.coordinator_after_failover = (
            MemoCoordinatorSpec(failover_coordinator_config(parameters), memoize=memoize)
            if parameters.failover_group_max_size
            else self.coordinator
        )
        self.group_partition = self.coordinator.partition_for(GROUP_ID)
        self.consumers = tuple(
            MemoConsumerSpec(self._consumer_config(index), memoize=memoize)
            for index in range(parameters.clients)
        )
        # Fault switches read the coordinator, the request and the consumer's outcome, never a
        # client's slot, so they commute with permuting interchangeable clients and symmetry
        # reduction stays on with a fault (tests/test_group_world.py compares the orbits).
        self.symmetry_classes = self._classes() if parameters.symmetry else ()
        self.canonicalizer = Canonicalizer(self.symmetry_classes, memoize)
        self._compact = self.canonicalizer.compact_member_ids if compact_ids else _as_is
        # A crashed client may restart upgraded (`upgrade_assignors`): its specification then.
        self.upgraded_consumers = (
            tuple(
                MemoConsumerSpec(
                    replace(spec.config, assignors=parameters.upgraded_assignors_of(index)),
                    memoize=memoize,
                )
                for index, spec in enumerate(self.consumers)
            )
            if parameters.upgrade_assignors
            else self.consumers
        )
        # Clients with equal configurations behave alike: they share memoized steps.
        configs = [spec.config for spec in (*self.consumers, *self.upgraded_consumers)]
        ids = tuple(configs.index(config) for config in configs)
        self._config_ids = ids[: parameters.clients]
        self._upgraded_config_ids = ids[parameters.clients :]
        self.decoder = props.Decoder()
        # Spec steps and state checks by the canonical text of their inputs: most world states
        # share their coordinator or a client's consumer state with many others.
        self._memo: Memo[tuple[object, ...], Any] = Memo()
        self.initial_cluster = Cluster.of(
            dict(zip(parameters.topics, parameters.partitions, strict=True))
        )
        self.layout = Layout.of(parameters.clients)
        self._digest = ComponentDigests()
        self._form = WorldForm(self)
        self._groups = self._build_groups()
        self._properties = declared_properties(self)

    # Closures do not pickle; the engines send models to worker processes, so only the
    # parameters travel and everything else is rebuilt.
    def __getstate__(self) -> dict[str, Any]:
        return {
            "parameters": self.parameters,
            "name": self._name,
            "memoize": self.memoize,
            "compact_ids": self.compact_ids,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["parameters"], state["name"], state["memoize"], state["compact_ids"]
        )

    def _consumer_config(self, index: int) -> ConsumerConfig:
        p = self.parameters
        legacy = LEGACY_VERSIONS if index >= p.clients - p.legacy_clients else {}
        return ConsumerConfig(
            group_id=GROUP_ID,
            topics=p.subscribed_topics(),
            client_id=CLIENT_ID,
            group_instance_id=f"i{index + 1}" if index < p.static_clients else None,
            assignors=p.assignors_of(index),
            session_timeout_ms=SESSION_TIMEOUT_MS,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            **legacy,
        )

    def _classes(self) -> tuple[tuple[int, ...], ...]:
        """Groups of interchangeable clients: same configuration (hence dynamic)."""
        classes: dict[ConsumerConfig, list[int]] = {}
        for index, spec in enumerate(self.consumers):
            classes.setdefault(spec.config, []).append(index)
        return tuple(tuple(members) for members in classes.values() if len(members) > 1)

    # -- the Model interface (checker/model.py); the slots are models/world_slots.py's ------

    @property
    def name(self) -> str:
        """The world's name in reports (the preset's name)."""
        return self._name

    @property
    def action_kinds(self) -> tuple[str, ...]:
        """Every action kind a transition may carry (for action coverage)."""
        return (*ACTION_KINDS, *self.fault.extra_action_kinds)

    @property
    def expected_failures(self) -> tuple[str, ...]:
        """Properties this world checks that the classic protocol is known not to have."""
        return (NAIVE_PROPERTY,) if self.parameters.naive_zombie_property else ()

    @property
    def slot_names(self) -> tuple[str, ...]:
        """Every slot's name, in order."""
        return self.layout.slot_names

    @property
    def groups(self) -> tuple[TransitionGroup, ...]:
        """Each client's own steps, the coordinator handling each client's next request, the
        coordinator's timers, failover, partitions added: the order the steps are listed."""
        return self._groups

    @property
    def properties(self) -> tuple[Property, ...]:
        """Coordinator, consumer and world properties (see models/world_slots.py)."""
        return self._properties

    def initial_states(self) -> Sequence[WorldState]:
        """Every client subscribed and unjoined, the coordinator leading every partition."""
        p = self.parameters
        clients = tuple(
            ClientSlot(spec.initial_state(self.initial_cluster)) for spec in self.consumers
        )
        budgets = Budgets(
            crashes=p.crashes,
            poll_timeouts=p.poll_timeouts,
            session_timeouts=p.session_timeouts,
            evictions=p.evictions,
            failovers=p.failovers,
            subscription_changes=p.subscription_changes,
            partition_growths=p.partition_growths,
            append_failures=p.append_failures,
            closes=p.closes,
            commits=p.commits,
            foreign_answers=p.foreign_answers,
            disconnects=p.disconnects,
            retention_checks=p.retention_checks,
            api_misuses=p.api_misuses,
            deletes=1 if p.admin else 0,
            removals=1 if p.admin_resets and p.static_clients else 0,
        )
        return (
            WorldState(self.coordinator.initial_state(), clients, self.initial_cluster, budgets),
        )

    def describe_state(self, state: WorldState) -> dict[str, Any]:
        """The state as people read it, one section per slot (see models/world_describe.py)."""
        return describe_world_state(self, state)

    def initial_components(self) -> tuple[tuple[object, ...], ...]:
        """The initial state's components."""
        return tuple(self.components_of(state) for state in self.initial_states())

    def state_of(self, components: tuple[object, ...]) -> WorldState:
        """The world state of a tuple of components."""
        return self.layout.state_of(components)

    def components_of(self, state: WorldState) -> tuple[object, ...]:
        """The components of a world state."""
        return self.layout.components_of(state)

    def apply_update(self, slot: int, value: Any, update: Hashable) -> Any:
        """A component after one of a step's updates (see `world_slots.apply_update`)."""
        return apply_update(value, update)

    renames_after_step = True
    omits_self_loops = True

    @property
    def reduces(self) -> bool:
        """Connections are normalized (and clients permuted, with symmetry)."""
        return True

    @property
    def canonical_form(self) -> CanonicalForm:
        """`after_step` and `canonical` piece by piece (see `WorldForm`)."""
        return self._form

    def after_step(self, components: tuple[object, ...]) -> tuple[object, ...]:
        """Member ids compacted (see canonical.py), and `held` recomputed."""
        return self.components_of(self._compact(self.state_of(components)))

    def canonical(self, components: tuple[object, ...]) -> tuple[object, ...]:
        """The components of the representative."""
        return self.components_of(self.representative(self.state_of(components)))

    def representative(self, state: WorldState) -> WorldState:
        """The canonical member of the state's class (see canonical.py)."""
        return self.canonicalizer.representative(state)

    def component_digest(self, value: object) -> int:
        """A component's stable digest (see `ComponentDigests`)."""
        return self._digest(value)

    def is_terminal(self, components: tuple[object, ...], cuts: frozenset[str]) -> bool:
        """A converged state, or one whose every step a bound cut, may have no step."""
        return bool(cuts) or self.converged(self.state_of(components))

    # -- what the world's properties ask -------------------------------------------------------

    def _gone(self, consumer: ConsumerState) -> bool:
        """Whether a consumer left the group for good: closed, turned away because the group
        was full, or failed fatally on a foreign broker's answer (the `foreign_answers` fault)."""
        return (
            consumer.closed
            or _turned_away(consumer)
            or (self.parameters.foreign_answers != 0 and failed_by_foreign_answer(consumer.failure))
        )

    def converged(self, state: WorldState) -> bool:
        """Stable, every subscribed partition owned by exactly one current member, each owning
        what the coordinator assigned it, every client a Stable member with no revocation
        pending, and nothing in flight. Closed clients, and clients
        the coordinator turned away because the group was full, do not count; once every client has closed, the group has no members left."""
        coordinator = state.coordinator
        if not self._loaded(coordinator):
            return False
        group = coordinator.group(GROUP_ID)
        if all(self._gone(slot.consumer) for slot in state.clients):
            return group is None or not group.members
        if group is None or group.state is not STABLE:
            return False
        owned: list[TopicPartition] = []
        topics: set[str] = set()
        member_ids = set()
        for slot in state.clients:
            consumer = slot.consumer
            if self._gone(consumer):
                continue  # gone for good: the group converges without it
            if (
                phase(consumer) is not ConsumerPhase.STABLE
                or _main_thread_requests(consumer)
                or not _only_heartbeats(slot.outbound)
                or not _only_heartbeats(slot.inbound)
                or not props.is_current_member(consumer, group)
            ):
                return False
            owned.extend(consumer.owned)
            topics.update(consumer.subscription)
            member_ids.add(consumer.generation.member_id)
        if member_ids != {member.member_id for member in group.members}:
            return False
        if any(
            props.assignment_agreement(coordinator, "", slot.consumer, self.decoder)
            for slot in state.clients
        ):
            return False  # every member owns what the coordinator assigned it
        return sorted(owned) == list(state.cluster.partitions(topics))

    def generation_bound_reached(self, state: WorldState) -> bool:
        """The next step of the rebalance would open a generation beyond `max_generation`.

        The model stops there, so whether the group would converge after one more rebalance is
        outside it; the Convergence property counts such states as cut short (see
        `LivenessProperty.cut_short_by`) rather than as failures.
        """
        return "max_generation" in cuts(self, state)

    def faults_exhausted(self, state: WorldState) -> bool:
        """No fault budget left and no failover under way."""
        return self.faults_exhausted_parts(state.coordinator, state.budgets)

    def faults_exhausted_parts(self, coordinator: CoordinatorState, budgets: Budgets) -> bool:
        """`faults_exhausted` on the components it reads."""
        return budgets.exhausted() and self._loaded(coordinator)

    def converged_parts(
        self, coordinator: CoordinatorState, clients: tuple[ClientSlot, ...], cluster: Cluster
    ) -> bool:
        """`converged` on the components it reads."""
        return self.converged(WorldState(coordinator, clients, cluster, Budgets()))

    def coordinator_invariants(self, coordinator: CoordinatorState) -> dict[str, list[str]]:
        """Every coordinator invariant's problems in `coordinator`, by name (remembered)."""
        # Every coordinator invariant asks for these: remembered on the state itself, the
        # answer costs one lookup (check_state depends on nothing but the state).
        remembered = coordinator.__dict__.get(PROBLEMS_CACHE) if self.memoize else None
        if remembered is not None:
            return remembered

        def compute() -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for name, problem in check_state(coordinator):
                found.setdefault(name, []).append(problem)
            return found

        key = ("coordinator invariants", canonical_repr(coordinator))
        found = self._memo.get(key, compute)
        if self.memoize:
            object.__setattr__(coordinator, PROBLEMS_CACHE, found)
        return found

    def consumer_invariants(self, consumer: ConsumerState) -> dict[str, list[str]]:
        """Every consumer invariant's problems in `consumer`, by name (remembered)."""
        remembered = consumer.__dict__.get(PROBLEMS_CACHE) if self.memoize else None
        if remembered is not None:
            return remembered

        def compute() -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for name, problem in check_consumer_state(consumer):
                found.setdefault(name, []).append(problem)
            return found

        key = ("consumer invariants", canonical_repr(consumer))
        found = self._memo.get(key, compute)
        if self.memoize:
            object.__setattr__(consumer, PROBLEMS_CACHE, found)
        return found

    # -- the transition groups ----------------------------------------------------------------
    #
    # See models/world_slots.py for which slot holds what.

    def _build_groups(self) -> tuple[TransitionGroup, ...]:
        at = self.layout
        groups = [
            TransitionGroup(
                f"client {client_name(index)}",
                (slot, at.cluster, at.budgets, at.problems, at.committed),
                (slot, at.budgets, at.problems),
                partial(self._client_group, index),
            )
            for index, slot in enumerate(at.clients)
        ]
        # With append failures a handled request may spend the budget, and after a failover to
        # a coordinator configured otherwise the budget says which one handles it; without
        # either, the groups read less and their steps are remembered across more states.
        failing = self.parameters.append_failures > 0 or self.parameters.failover_group_max_size > 0
        groups += [
            TransitionGroup(
                f"coordinator handles {client_name(index)}",
                (0, head, at.budgets) if failing else (0, head),
                (0, at.budgets, at.problems) if failing else (0, at.problems),
                partial(self._handle_group, index),
            )
            for index, head in enumerate(at.heads)
        ]
        groups.append(
            TransitionGroup(
                "timers", (0, at.budgets, at.held), (0, at.budgets, at.problems), self._timer_group
            )
        )
        # The coordinator's own steps, and the stateless clients', read the coordinator and the
        # budgets only.
        coordinator_side = (
            ("failover", True, self._failover_group),
            ("retention", self.parameters.retention_checks > 0, self._retention_group),
            ("admin", self.parameters.admin, self._admin_group),
            ("misbehaving client", self.parameters.misbehaving_client, self._misbehaving_group),
        )
        groups += [
            TransitionGroup(name, (0, at.budgets), (0, at.budgets, at.problems), steps)
            for name, enabled, steps in coordinator_side
            if enabled
        ]
        groups.append(
            TransitionGroup(
                "partitions added",
                (at.cluster, at.budgets, *at.clients),
                (at.cluster, at.budgets, *at.clients, at.problems),
                self._growth_group,
                cached=False,
            )
        )
        return tuple(groups)

    # -- exploring one state ---------------------------------------------------------------

    def _loaded(self, coordinator: CoordinatorState) -> bool:
        return (
            self.group_partition not in coordinator.unowned_partitions
            and self.group_partition not in coordinator.loading_partitions
        )

    # -- clients -----------------------------------------------------------------------------

    def _client_group(
        self,
        index: int,
        slot: ClientSlot,
        cluster: Cluster,
        budgets: Budgets,
        problems: tuple[tuple[str, str], ...],
        committed: tuple[tuple[TopicPartition, int], ...],
    ) -> list[GroupStep | Cut]:
        """Client `index`'s own steps: reading a response, polling, heartbeating, its fault
        events, committing, processing a record, a subscription change, closing, crashing."""
        p = self.parameters
        consumer = slot.consumer
        spec = self.consumer_spec(index, slot.upgraded)
        name = client_name(index)
        step = partial(self._client_step, index, committed, slot, budgets)
        steps: list[GroupStep | Cut] = []
        if slot.inbound:
            cid, body = slot.inbound[0]
            steps.append(
                step(
                    ResponseReceived(cid, body),
                    f"{name} receives {describe_response(body)} #{cid}",
                    "Receive" + _api(body),
                )
            )
            if budgets.foreign_answers:
                for answer in foreign_answers(body):
                    steps.append(
                        step(
                            ResponseReceived(cid, answer),
                            f"fault {name} receives a foreign broker's"
                            f" {describe_response(answer)} #{cid}",
                            "Receive" + _api(body),
                            spend="foreign_answers",
                        )
                    )
        for event in spec.enabled_events(consumer):
            if isinstance(event, Poll):
                steps.append(step(event, f"{name} Poll", "Poll"))
            elif isinstance(event, HeartbeatDue):
                steps.append(step(event, f"{name} HeartbeatDue", "HeartbeatDue"))
            elif isinstance(event, SessionTimeoutExpired) and budgets.session_timeouts:
                steps.append(
                    step(
                        event,
                        f"fault {name} SessionTimeoutExpired",
                        "SessionTimeoutExpired",
                        spend="session_timeouts",
                    )
                )
            elif isinstance(event, PollTimeoutExpired) and budgets.poll_timeouts:
                steps.append(
                    step(
                        event,
                        f"fault {name} PollTimeoutExpired",
                        "PollTimeoutExpired",
                        spend="poll_timeouts",
                    )
                )
        if budgets.commits and slot.positions:
            commit = CommitRequested(slot.positions)
            if spec.is_enabled(consumer, commit):
                offsets = ", ".join(f"{tp}@{offset}" for tp, offset in slot.positions)
                steps.append(step(commit, f"{name} commits {offsets}", "CommitRequested"))
        for position, (partition, offset) in enumerate(slot.positions):
            if offset < p.max_offset:
                positions = list(slot.positions)
                positions[position] = (partition, offset + 1)
                processed = evolve(slot, positions=tuple(positions))
                steps.append(
                    GroupStep(
                        f"{name} processes {partition}@{offset}",
                        "Process",
                        (processed, budgets, problems),
                        findings=problems,  # the findings it leaves standing, as before
                    )
                )
        alternative = tuple(sorted(set(p.alternative_subscription)))
        if budgets.subscription_changes and alternative and alternative != consumer.subscription:
            change = SubscriptionChanged(alternative)
            if spec.is_enabled(consumer, change):
                steps.append(
                    step(
                        change,
                        f"fault {name} subscribes to {list(alternative)}",
                        "SubscriptionChanged",
                        spend="subscription_changes",
                    )
                )
        steps += self._misuse_steps(index, spec, consumer, budgets, step)
        if budgets.disconnects and consumer.coordinator_known and not consumer.closed:
            steps.append(
                step(
                    DISCONNECTED,
                    f"fault {name} loses its connection",
                    "Disconnected",
                    spend="disconnects",
                )
            )
        if budgets.closes and spec.is_enabled(consumer, CLOSE):
            steps.append(step(CLOSE, f"{name} closes (Consumer.close())", "Close", spend="closes"))
        if budgets.crashes:
            for upgraded in (False, True) if p.upgrade_assignors else (False,):
                crash = self._crash(index, slot, cluster, budgets, upgraded)
                if crash is not None:
                    steps.append(crash)
        return steps

    def _misuse_steps(
        self,
        index: int,
        spec: MemoConsumerSpec,
        consumer: ConsumerState,
        budgets: Budgets,
        step: Callable[..., GroupStep | Cut],
    ) -> list[GroupStep | Cut]:
        """The application's calls the consumer must refuse or ignore locally, within the
        `api_misuses` budget: a commit of nothing, a commit of a negative offset, and
        subscribe() with the topics it already has."""
        if not budgets.api_misuses or consumer.closed:
            return []
        name = client_name(index)
        first = TopicPartition(self.parameters.topics[0], 0)
        calls: tuple[tuple[ConsumerEvent, str, str], ...] = (
            (CommitRequested(()), f"{name} commits nothing", "CommitRequested"),
            (CommitRequested(((first, -1),)), f"{name} commits {first}@-1", "CommitRequested"),
            (
                SubscriptionChanged(consumer.subscription),
                f"{name} subscribes again to {list(consumer.subscription)}",
                "SubscriptionChanged",
            ),
        )
        return [
            step(event, label, action, spend="api_misuses")
            for event, label, action in calls
            if spec.is_enabled(consumer, event)
        ]

    def _client_step(
        self,
        index: int,
        committed: tuple[tuple[TopicPartition, int], ...],
        slot: ClientSlot,
        budgets: Budgets,
        event: ConsumerEvent,
        label: str,
        action: str,
        spend: str | None = None,
    ) -> GroupStep | Cut:
        """The consumer reacts to `event`; its sends join the outbound queue."""
        outcome, found = self._consumer_step(index, slot, slot.consumer, event)
        if self.parameters.commit_on_revoke and budgets.commits:
            outcome, found = self._commit_on_revoke(index, slot, outcome, found)
        consumer = outcome.state
        # The bound counts requests of the main thread. Kafka's heartbeat thread shares the
        # connection (up to five requests in flight), so a heartbeat never blocks a JoinGroup;
        # counting it would let a heartbeat loop starve the rejoin, a lasso Kafka does not have.
        # A closing client's LeaveGroup is its last request, so it needs no bound.
        if event is not CLOSE and _main_thread_requests(consumer) > self.parameters.max_in_flight:
            return _IN_FLIGHT_CUT
        problems = tuple((which, f"{client_name(index)}: {detail}") for which, detail in found)
        in_flight = {entry.correlation_id for entry in consumer.in_flight}
        incarnation, outbound, inbound = slot.incarnation, slot.outbound, slot.inbound
        updates: tuple[tuple[int, Hashable], ...] = ()
        if CLIENT_COORDINATOR_MARKED_UNKNOWN.rule_id in outcome.rules:
            # Kafka's markCoordinatorUnknown disconnects: the connection and its queues go.
            updates = ((0, ("close", connection_name(index, incarnation))),)
            incarnation, outbound, inbound = incarnation + 1, (), ()
        outbound = tuple(message for message in outbound if message[0] in in_flight)
        inbound = tuple(message for message in inbound if message[0] in in_flight)
        outbound += tuple(
            (send.correlation_id, send.request)
            for send in outcome.sends
            if send.correlation_id in in_flight
        )
        budgets = budgets.spend(spend) if spend else budgets
        if any(isinstance(send.request, OffsetCommitRequest) for send in outcome.sends):
            budgets = budgets.spend("commits")
        new_slot = ClientSlot(
            consumer=consumer,
            incarnation=incarnation,
            outbound=outbound,
            inbound=inbound,
            positions=self._positions(slot, consumer.owned, committed),
            upgraded=slot.upgraded,
        )
        return GroupStep(
            label,
            action,
            (new_slot, budgets, problems),
            outcome.rules,
            updates=updates,
            findings=problems,
        )

    def _commit_on_revoke(
        self,
        index: int,
        slot: ClientSlot,
        outcome: ConsumerOutcome,
        found: tuple[tuple[str, str], ...],
    ) -> tuple[ConsumerOutcome, tuple[tuple[str, str], ...]]:
        """The application's onPartitionsRevoked commits what it processed of the partitions
        it gives up, inside the callback, so within the step that called it.

        Only a member that is Stable after the step commits: that is the cooperative revocation
        after SyncGroup. An eager member revokes in onJoinPrepare, where Kafka's commitSync
        blocks before the JoinGroup goes out; this world's Poll sends the JoinGroup in the
        same step, so that commit is not modelled (it would be refused as rebalancing)."""
        revoked = {
            partition
            for callback in outcome.callbacks
            if isinstance(callback, PartitionsRevoked)
            for partition in callback.partitions
        }
        offsets = tuple((tp, offset) for tp, offset in slot.positions if tp in revoked)
        if not offsets or outcome.state.member_state is not MemberState.STABLE:
            return outcome, found
        commit = CommitRequested(offsets)
        if not self.consumer_spec(index, slot.upgraded).is_enabled(outcome.state, commit):
            return outcome, found
        then, more = self._consumer_step(index, slot, outcome.state, commit)
        merged = ConsumerOutcome(
            then.state,
            outcome.sends + then.sends,
            outcome.callbacks + then.callbacks,
            outcome.errors + then.errors,
            outcome.rules + then.rules,
            outcome.committed + then.committed,
        )
        return merged, found + more

    def consumer_spec(self, index: int, upgraded: bool) -> MemoConsumerSpec:
        """The specification client `index` runs: its own, or, `upgraded`, the one it restarts
        with under `upgrade_assignors`."""
        return self.upgraded_consumers[index] if upgraded else self.consumers[index]

    def _consumer_step(
        self, index: int, slot: ClientSlot, consumer: ConsumerState, event: ConsumerEvent
    ) -> tuple[ConsumerOutcome, tuple[tuple[str, str], ...]]:
        """The consumer's outcome and the action-property violations of the step (memoized)."""
        spec = self.consumer_spec(index, slot.upgraded)
        config_id = (self._upgraded_config_ids if slot.upgraded else self._config_ids)[index]

        def compute() -> tuple[ConsumerOutcome, tuple[tuple[str, str], ...]]:
            outcome = self.fault.consumer_outcome(consumer, event, spec.step(consumer, event))
            problems = check_consumer_step(spec.config, consumer, event, outcome)
            if isinstance(event, ResponseReceived) and isinstance(event.body, JoinGroupResponse):
                for send in outcome.sends:
                    if isinstance(send.request, SyncGroupRequest) and send.request.assignments:
                        problems += props.leader_assignment_problems(
                            props.LeaderAssignment(
                                event.body, send.request, consumer, spec.protocol, self.decoder
                            )
                        )
            return outcome, tuple(problems)

        key = ("consumer", config_id, canonical_repr(consumer), _event_key(event))
        return self._memo.get(key, compute)

    def coordinator_spec(self, budgets: Budgets | None) -> MemoCoordinatorSpec:
        """The coordinator in charge: the one that took over once a failover has happened."""
        if budgets is not None and budgets.failovers < self.parameters.failovers:
            return self.coordinator_after_failover
        return self.coordinator

    def now_ms(self, coordinator: CoordinatorState) -> int:
        """The world's clock in `coordinator`'s state: the time of the last offset-retention
        check. Only that check moves the clock (see `_retention_group`); every timer may fire at
        any time, so no other step needs one."""
        return (
            coordinator.retention_check_deadline_ms
            - self.coordinator.config.offsets_retention_check_interval_ms
        )

    def _coordinator_step(
        self,
        coordinator: CoordinatorState,
        event: Input,
        handled: tuple[RequestRef, Request] | None,
        budgets: Budgets | None,
        now_ms: int | None = None,
    ) -> tuple[tuple[Outcome, tuple[tuple[str, str], ...]], ...]:
        """Every outcome of a coordinator step with its action-property violations (memoized),
        by the coordinator in charge under `budgets` (None: no failover can have happened); at
        the world's time unless `now_ms` moves the clock."""
        now = self.now_ms(coordinator) if now_ms is None else now_ms
        spec = self.coordinator_spec(budgets)

        def compute() -> tuple[tuple[Outcome, tuple[tuple[str, str], ...]], ...]:
            loaded = self._loaded(coordinator)
            results = []
            for outcome in spec.step(coordinator, event, now):
                outcome = self.fault.coordinator_outcome(coordinator, event, outcome)
                problems = check_step(coordinator, event, outcome.state, outcome.responses)
                problems += props.coordinator_step_problems(
                    props.CoordinatorStep(
                        coordinator,
                        outcome.state,
                        outcome.responses,
                        handled,
                        self.decoder,
                        loaded,
                        spec.config.group_max_size,
                        event,
                        self.group_partition,
                        now,
                        spec.config.new_member_join_timeout_ms,
                    )
                )
                results.append((outcome, tuple(problems)))
            return tuple(results)

        key: tuple[object, ...] = (
            "coordinator",
            canonical_repr(coordinator),
            _event_key(event),
            now_ms,
            spec is not self.coordinator,
        )
        if handled is not None and self.fault.rewrites_requests:
            key += (canonical_repr(handled[1]),)  # the event may differ from what was sent
        return self._memo.get(key, compute)

    def _positions(
        self,
        slot: ClientSlot,
        owned: tuple[TopicPartition, ...],
        committed: tuple[tuple[TopicPartition, int], ...],
    ) -> tuple[tuple[TopicPartition, int], ...]:
        """Positions of the owned partitions: kept if owned before, else the committed offset
        (an OffsetFetch, taken atomically)."""
        positions = []
        for partition in owned:
            offset = slot.position(partition)
            if offset is None:
                offset = dict(committed).get(partition, 0)
            positions.append((partition, offset))
        return tuple(positions)

    def _crash(
        self, index: int, slot: ClientSlot, cluster: Cluster, budgets: Budgets, upgraded: bool
    ) -> GroupStep | None:
        """The client crashes and restarts: a new consumer on a new connection, `upgraded` to
        `upgrade_assignors` or not (nothing, if it crashed before doing anything)."""
        spec = self.consumer_spec(index, upgraded)
        fresh = ClientSlot(
            spec.initial_state(cluster), incarnation=slot.incarnation + 1, upgraded=upgraded
        )
        if evolve(fresh, incarnation=slot.incarnation) == slot:
            return None
        closed = ((0, ("close", connection_name(index, slot.incarnation))),)
        label = f"fault {client_name(index)} crashes and restarts"
        if upgraded:
            label += f" with {ASSIGNOR_SEPARATOR.join(spec.config.assignors)}"
        return GroupStep(label, "Crash", (fresh, budgets.spend("crashes"), ()), updates=closed)

    # -- coordinator -------------------------------------------------------------------------

    def _handle_group(
        self,
        index: int,
        coordinator: CoordinatorState,
        head: tuple[int, tuple[int, Request] | None],
        budgets: Budgets | None = None,
    ) -> list[GroupStep | Cut]:
        """The coordinator handles the head of client `index`'s outbound queue (`budgets`
        when appends may fail)."""
        incarnation, message = head
        if message is None:
            return []
        cid, request = message
        ref = RequestRef(connection_name(index, incarnation), cid)
        # Under KAFKA-2555 the coordinator reads a different request than the client sent; the
        # properties judge what the client sent.
        event = Received(ref, self.fault.request_seen(coordinator, request))
        handled = (ref, request)
        # The request leaves the client's outbound queue before any response joins its inbound.
        popped: tuple[tuple[int, Hashable], ...] = ((self.layout.clients[index], ("pop",)),)
        label = f"coordinator handles {client_name(index)} {describe_request(request)} #{cid}"
        action = "Handle" + type(request).__name__.removesuffix("Request")
        steps: list[GroupStep | Cut] = []
        for outcome, found in self._coordinator_step(coordinator, event, handled, budgets):
            taken, spent = _append_budget(outcome, budgets)
            if not taken:
                continue
            steps.append(
                self._coordinator_outcome(
                    outcome, found, label, action, handled, (), budgets=spent, first=popped
                )
            )
        if self.fault.may_lose(request):
            # The request never reaches the coordinator (KAFKA-12890: the follower was stuck
            # between JoinGroup and SyncGroup while it kept heartbeating).
            api = type(request).__name__.removesuffix("Request")
            lost = f"fault {client_name(index)} {api} #{cid} is never sent"
            written = (coordinator, ()) if budgets is None else (coordinator, budgets, ())
            steps.append(GroupStep(lost, "Lose" + api, written, updates=popped))
        return steps

    def _timer_group(
        self, coordinator: CoordinatorState, budgets: Budgets, held: tuple[str, ...]
    ) -> list[GroupStep | Cut]:
        """The coordinator's armed timers firing. A timer that removes a member some running
        client holds (`held`) is an eviction fault: the client must have stalled for a whole
        timeout, so it is taken only while the evictions budget lasts."""
        steps: list[GroupStep | Cut] = []
        group = coordinator.group(GROUP_ID)
        # Pending members (MEMBER_ID_REQUIRED handed out, second JoinGroup not yet in) count:
        # expiring one whose client is alive and about to rejoin is as much an eviction fault
        # as expiring a member, and letting it fire freely makes the join loop forever.
        members = _member_ids(group)
        for _deadline, timer in self.coordinator.armed_timers(coordinator):
            if isinstance(timer, OffsetRetentionCheck):
                continue
            if not self.fault.timer_enabled(timer):
                continue
            if _due_after_another(group, timer):
                continue  # real time fires an earlier deadline first (see the function)
            label = f"timer {type(timer).__name__}"
            if isinstance(timer, HeartbeatExpired):
                label += f" {timer.member_id}"
            stalled = _missed_the_rebalance(group, timer, held)
            for outcome, found in self._coordinator_step(coordinator, timer, None, budgets):
                remaining = _member_ids(outcome.state.group(GROUP_ID))
                evicted = sorted(
                    member_id for member_id in members - remaining if member_id in held
                )
                taken, after = _append_budget(outcome, budgets)
                if not taken or after is None:
                    continue
                spent, fault = after, label
                if evicted or stalled:
                    if not budgets.evictions:
                        continue
                    spent = spent.spend("evictions")
                    if evicted:
                        fault = f"fault {label} evicts live {', '.join(evicted)}"
                    else:
                        fault = f"fault {label} while live {', '.join(stalled)} had not rejoined"
                steps.append(
                    self._coordinator_outcome(
                        outcome, found, fault, type(timer).__name__, None, (), budgets=spent
                    )
                )
        return steps

    def _failover_group(
        self, coordinator: CoordinatorState, budgets: Budgets
    ) -> list[GroupStep | Cut]:
        """Coordinator failover: the partition unloaded (a fault, within its budget), then its
        loading started and finished (log replay)."""
        partition = self.group_partition
        event: Input | None = None
        spend: str | None = None
        if partition in coordinator.unowned_partitions:
            event = StartLoading(partition)
        elif partition in coordinator.loading_partitions:
            event = FinishLoading(partition)
        elif budgets.failovers:
            event, spend = Unload(partition), "failovers"
        if event is None:
            return []
        spent = budgets.spend(spend) if spend else budgets
        label = ("fault " if spend else "") + f"{type(event).__name__}"
        steps: list[GroupStep | Cut] = []
        # The Unload is the old coordinator's last step; its successor loads the group.
        for outcome, found in self._coordinator_step(coordinator, event, None, budgets):
            taken, after = _append_budget(outcome, spent)
            if taken and after is not None:
                steps.append(
                    self._coordinator_outcome(
                        outcome, found, label, type(event).__name__, None, (), budgets=after
                    )
                )
        return steps

    def _retention_group(
        self, coordinator: CoordinatorState, budgets: Budgets
    ) -> list[GroupStep | Cut]:
        """The Empty group lies idle for offsets.retention.ms, then the periodic retention check
        runs (within the `retention_checks` budget). An Empty group has no member and no armed
        timer, so a jump of the clock skips no timer that real time would have fired first.
        With `retention_with_members` a Stable group with no sync pending may lie so too: its
        only timers are its members' sessions, which their heartbeats keep alive (a join or sync
        timer could not be kept alive, so no other state may jump). Those heartbeats are not
        steps of the world: the session deadlines keep their values, which order nothing here
        (any armed timer may fire at any step), and the retention check stays a step of the
        specification alone, which vector files can replay."""
        group = coordinator.group(GROUP_ID)
        if (
            not budgets.retention_checks
            or not self._loaded(coordinator)
            or group is None
            or not group.offsets
        ):
            return []
        later = self.now_ms(coordinator) + self.coordinator.config.offsets_retention_ms
        if group.state is EMPTY:
            label = "the group lies idle for offsets.retention.ms; the retention check runs"
        elif (
            self.parameters.retention_with_members
            and group.state is STABLE
            and group.sync_timer is None
        ):
            label = (
                "the Stable group's members heartbeat for offsets.retention.ms; the retention "
                "check runs"
            )
        else:
            return []
        spent = budgets.spend("retention_checks")
        steps: list[GroupStep | Cut] = []
        for outcome, found in self._coordinator_step(
            coordinator, OffsetRetentionCheck(), None, budgets, later
        ):
            taken, after = _append_budget(outcome, spent)
            if not taken or after is None:
                continue
            kept = outcome.state.group(GROUP_ID)
            expired = offset_partitions(group.offsets) - (
                offset_partitions(kept.offsets) if kept else set()
            )
            # Expired offsets are gone from the log by design: the acknowledged-offsets ghost
            # lets go of them, so Durability judges only what is still due.
            forget = ((self.layout.acknowledged, ("expired", frozenset(expired))),)
            steps.append(
                self._coordinator_outcome(
                    outcome,
                    found,
                    label,
                    "OffsetRetentionCheck",
                    None,
                    (),
                    budgets=after,
                    first=forget,
                )
            )
        return steps

    def admin_requests(self) -> tuple[Request, ...]:
        """What the admin client may send: every admin API on the group, and an OffsetFetch
        of one partition and of all of them."""
        first = TopicPartition(self.parameters.topics[0], 0)
        requests: list[Request] = [
            DescribeGroupsRequest((GROUP_ID,)),
            ListGroupsRequest(),
            DeleteGroupsRequest((GROUP_ID,)),
            OffsetFetchRequest(GROUP_ID, None),
            OffsetFetchRequest(GROUP_ID, (first,)),
        ]
        if not self.parameters.admin_resets:
            return tuple(requests)
        requests += [
            # An offset reset (kafka-consumer-groups --reset-offsets): generation -1, no member.
            OffsetCommitRequest(GROUP_ID, (OffsetCommitPartition(first.topic, 0, 0),)),
        ]
        if self.parameters.static_clients:
            # Admin.removeMembersFromConsumerGroup names a static member by its instance id.
            removed = MemberIdentity("", "i1")  # the first static client's instance id
            requests.append(LeaveGroupRequest(GROUP_ID, (removed,)))
        return tuple(requests)

    def _admin_group(
        self, coordinator: CoordinatorState, budgets: Budgets
    ) -> list[GroupStep | Cut]:
        """The admin client's requests, each handled and answered in one step (an admin
        client keeps no state, so only the coordinator's answer matters). One DeleteGroups may
        succeed (the `deletes` budget): an admin deleting the group over and over would keep
        it from ever forming. A deleted group's offsets are gone with it, so the
        acknowledged-offsets ghost forgets them."""
        return self._stateless_client_steps(
            coordinator, budgets, ADMIN_CONNECTION, "admin", self.admin_requests()
        )

    def misbehaving_requests(self, coordinator: CoordinatorState) -> tuple[Request, ...]:
        """What the misbehaving client may send now (see models/misbehaving_client.py)."""
        return misbehaving_requests(
            GROUP_ID,
            coordinator.group(GROUP_ID),
            self.coordinator.config,
            self.parameters.topics[0],
            SESSION_TIMEOUT_MS,
            REBALANCE_TIMEOUT_MS,
        )

    def _misbehaving_group(
        self, coordinator: CoordinatorState, budgets: Budgets
    ) -> list[GroupStep | Cut]:
        """The misbehaving client's requests, each handled and answered in one step."""
        return self._stateless_client_steps(
            coordinator,
            budgets,
            MISBEHAVING_CONNECTION,
            "misbehaving client",
            self.misbehaving_requests(coordinator),
        )

    def _stateless_client_steps(
        self,
        coordinator: CoordinatorState,
        budgets: Budgets,
        connection: str,
        who: str,
        requests: tuple[Request, ...],
    ) -> list[GroupStep | Cut]:
        """A client that keeps no state sends one of `requests`, and the coordinator handles
        and answers it in the same step."""
        steps: list[GroupStep | Cut] = []
        before = coordinator.group(GROUP_ID)
        for request in requests:
            ref = RequestRef(connection, 1)
            handled = (ref, request)
            label = f"{who} sends {describe_request(request)}"
            action = "Handle" + type(request).__name__.removesuffix("Request")
            event = Received(ref, request)
            for outcome, found in self._coordinator_step(coordinator, event, handled, budgets):
                forget: tuple[tuple[int, Hashable], ...] = ()
                taken, after = _append_budget(outcome, budgets)
                if not taken or after is None:
                    continue
                spent = after
                if before is not None and outcome.state.group(GROUP_ID) is None:
                    if not spent.deletes:
                        continue
                    spent = spent.spend("deletes")
                    forget = ((self.layout.acknowledged, ("forget",)),)
                elif isinstance(request, LeaveGroupRequest) and _member_ids(before) - _member_ids(
                    outcome.state.group(GROUP_ID)
                ):
                    # Removing members over and over would keep the group from converging.
                    if not spent.removals:
                        continue
                    spent = spent.spend("removals")
                steps.append(
                    self._coordinator_outcome(
                        outcome, found, label, action, handled, (), budgets=spent, first=forget
                    )
                )
        return steps

    def _coordinator_outcome(
        self,
        outcome: Outcome,
        problems: tuple[tuple[str, str], ...],
        label: str,
        action: str,
        handled: tuple[RequestRef, Request] | None,
        between: tuple[object, ...],
        budgets: Budgets | None = None,
        first: tuple[tuple[int, Hashable], ...] = (),
    ) -> GroupStep | Cut:
        """A coordinator step: its new state written (with what the group writes `between` it
        and the findings, and the budgets when given), its responses delivered to their
        connections and, for an OffsetCommit, the acknowledged offsets updated."""
        group = outcome.state.group(GROUP_ID)
        if group is not None and group.generation_id > self.parameters.max_generation:
            return _GENERATION_CUT
        n = self.parameters.clients
        acknowledged = self.layout.acknowledged
        updates: list[tuple[int, Hashable]] = list(first)
        for response in outcome.responses:
            client = _client_of(response.ref.connection)
            if client is None or client[0] >= n:
                continue  # the connection is closed: nobody reads this response
            index, incarnation = client
            updates.append(
                (1 + index, ("deliver", incarnation, response.ref.correlation_id, response.body))
            )
        if handled is not None and isinstance(handled[1], OffsetCommitRequest):
            accepted = _accepted(handled, outcome)
            if accepted:
                updates.append((acknowledged, ("ack", accepted)))
        if outcome.choices:
            label += " [" + ", ".join(f"{c.what}={c.value}" for c in outcome.choices) + "]"
        written = (outcome.state, *between, *(() if budgets is None else (budgets,)), problems)
        return GroupStep(
            label, action, written, outcome.rules, updates=tuple(updates), findings=problems
        )

    def _growth_group(
        self, cluster: Cluster, budgets: Budgets, *slots: ClientSlot
    ) -> list[GroupStep | Cut]:
        """A topic gains a partition (a fault, within its budget); every client's metadata
        refreshes."""
        if not budgets.partition_growths:
            return []
        topic = self.parameters.topic_to_grow()
        counts = dict(cluster.partitions_per_topic)
        counts[topic] += 1
        grown = Cluster.of(counts)
        rules: list[str] = []
        problems: list[tuple[str, str]] = []
        event = MetadataChanged(grown)
        clients = list(slots)
        for index, slot in enumerate(slots):
            spec = self.consumer_spec(index, slot.upgraded)
            if not spec.is_enabled(slot.consumer, event):
                continue
            outcome, found = self._consumer_step(index, slot, slot.consumer, event)
            assert not outcome.sends, "a metadata update sends nothing"
            rules += outcome.rules
            problems += [(which, f"{client_name(index)}: {detail}") for which, detail in found]
            clients[index] = evolve(slot, consumer=outcome.state)
        label = f"fault partitions added to {topic} ({counts[topic]})"
        findings = tuple(problems)
        return [
            GroupStep(
                label,
                "PartitionsAdded",
                (grown, budgets.spend("partition_growths"), *clients, findings),
                tuple(rules),
                findings=findings,
            )
        ]


def _client_of(connection: str) -> tuple[int, int] | None:
    """(client index, incarnation) of a connection name "c<i>#<incarnation>"; None for the
    closed connection."""
    if connection in (CLOSED_CONNECTION, ADMIN_CONNECTION, MISBEHAVING_CONNECTION):
        return None
    name, _, incarnation = connection.partition("#")
    return int(name[1:]) - 1, int(incarnation)


def _turned_away(consumer: ConsumerState) -> bool:
    """The group was full (group.max.size): the consumer failed fatally, as Kafka's does, by
    configuration rather than by a fault, so the group converges without it."""
    failure = consumer.failure
    return failure is not None and failure.kind == "GroupMaxSizeReachedException"


def _as_is(state: WorldState) -> WorldState:
    return state


def _main_thread_requests(consumer: ConsumerState) -> int:
    """Requests in flight other than heartbeats (the heartbeat thread's own traffic)."""
    return sum(1 for entry in consumer.in_flight if entry.kind is not RequestKind.HEARTBEAT)


def _only_heartbeats(queue: tuple[tuple[int, object], ...]) -> bool:
    """Whether every queued message is a Heartbeat request or response."""
    return all(isinstance(body, HeartbeatRequest | HeartbeatResponse) for _, body in queue)


def _event_key(event: object) -> object:
    """A memo key for an event: its canonical text, except that the two events built anew for
    every step (a response read, a request handled) are keyed by their parts' texts, which are
    already known, instead of printing them."""
    kind = type(event)
    if kind is ResponseReceived:
        received = cast(ResponseReceived, event)
        return (kind, received.correlation_id, canonical_repr(received.body))
    if kind is Received:
        handled = cast(Received, event)
        ref = handled.ref
        return (kind, ref.connection, ref.correlation_id, canonical_repr(handled.request))
    return canonical_repr(event)


def _append_budget(outcome: Outcome, budgets: Budgets | None) -> tuple[bool, Budgets | None]:
    """Whether `outcome` may be taken, and the budgets after it: an outcome in which an append
    to __consumer_offsets failed spends the append-failures fault budget, and is not taken once
    it is spent (`budgets` is None where no append may fail)."""
    failed = any(choice.what == "append" and choice.value != "None" for choice in outcome.choices)
    if not failed:
        return True, budgets
    if budgets is None or not budgets.append_failures:
        return False, budgets
    return True, budgets.spend("append_failures")


def _due_after_another(group: Group | None, timer: TimerEvent) -> bool:
    """Whether real time would fire another armed timer of the group before `timer`.

    Time in the world is abstract (any armed timer may fire next), so orders real time never
    produces must be left out where they matter, each by an argument from the deadlines:

    - In CompletingRebalance the sync timer (the rebalance timeout) and every member's session
      timer were armed in the same step, the one that completed the join; a heartbeat since
      only pushes a session further. The session is longer, so the sync timer fires first.
    - A new member parked in JoinGroup has the new-member join timeout (5 minutes), armed
      during the join phase it waits for; that phase ends by the join timer, within the
      rebalance timeout (plus the initial delay). So the join timer fires first.

    Both rest on this world's timeouts (tests/test_timers.py checks them): the session outlasts
    the rebalance timeout, and the new-member timeout outlasts the longest join phase.
    """
    if group is None or not isinstance(timer, HeartbeatExpired):
        return False
    if group.sync_timer is not None:
        return True
    member = group.member(timer.member_id)
    return (
        group.join_timer is not None
        and member is not None
        and member.is_new
        and member.is_awaiting_join
    )


def _missed_the_rebalance(
    group: Group | None, timer: TimerEvent, held: tuple[str, ...]
) -> list[str]:
    """The members running clients hold that have not rejoined when the join timer fires.

    The join timer runs for the rebalance timeout, which Kafka's consumer sets to
    max.poll.interval.ms, and a running consumer hears of the rebalance from its next heartbeat
    and rejoins on its next poll. So the timer fires before a live member rejoins only when that
    client stalled for a whole timeout: a fault, like an eviction. A dynamic member is then
    removed (an eviction proper); a static member stays a member of the new generation without
    having rejoined, and keeps consuming its old assignment meanwhile. Abstract time would let
    that happen for free, an order real time does not produce without a stall.
    """
    if not isinstance(timer, JoinTimerExpired) or group is None:
        return []
    if group.state is not PREPARING_REBALANCE:
        return []
    return sorted(
        member.member_id
        for member in group.members
        if member.member_id in held and not member.is_awaiting_join
    )


def _member_ids(group: Group | None) -> set[str]:
    """The ids of the group's members and pending members."""
    if group is None:
        return set()
    return {m.member_id for m in group.members} | {p.member_id for p in group.pending_members}


def _accepted(
    handled: tuple[RequestRef, Request], outcome: Outcome
) -> tuple[tuple[TopicPartition, int], ...]:
    """The offsets the coordinator accepted when it answered an OffsetCommit (the ghost of
    acknowledged offsets takes them)."""
    ref, request = handled
    assert isinstance(request, OffsetCommitRequest)
    if request.group_id != GROUP_ID:
        return ()
    offsets = {TopicPartition(p.topic, p.partition): p.committed_offset for p in request.partitions}
    accepted = {}
    for response in outcome.responses:
        if response.ref != ref or not isinstance(response.body, OffsetCommitResponse):
            continue
        for answer in response.body.partitions:
            if answer.error_code.name == "NONE":
                partition = TopicPartition(answer.topic, answer.partition)
                accepted[partition] = offsets[partition]
    return tuple(accepted.items())


# -- labels -----------------------------------------------------------------------------------


def _api(body: object) -> str:
    return type(body).__name__.removesuffix("Response")


def describe_request(request: Request) -> str:
    """A short human-readable form of a request, for transition labels."""
    if isinstance(request, FindCoordinatorRequest):
        return "FindCoordinator"
    if isinstance(request, JoinGroupRequest):
        return f"JoinGroup(member={request.member_id or '-'})"
    if isinstance(request, SyncGroupRequest):
        assigned = f", {len(request.assignments)} assignments" if request.assignments else ""
        return f"SyncGroup(gen={request.generation_id}, member={request.member_id}{assigned})"
    if isinstance(request, HeartbeatRequest):
        return f"Heartbeat(gen={request.generation_id}, member={request.member_id})"
    if isinstance(request, LeaveGroupRequest):
        return f"LeaveGroup({', '.join(m.member_id for m in request.members)})"
    if isinstance(request, OffsetCommitRequest):
        offsets = ", ".join(
            f"{p.topic}-{p.partition}@{p.committed_offset}" for p in request.partitions
        )
        return f"OffsetCommit(gen={request.generation_id}, member={request.member_id}, {offsets})"
    if isinstance(request, (DescribeGroupsRequest, DeleteGroupsRequest)):
        return f"{type(request).__name__.removesuffix('Request')}({', '.join(request.group_ids)})"
    if isinstance(request, OffsetFetchRequest):
        which = (
            "all"
            if request.partitions is None
            else ", ".join(f"{p.topic}-{p.partition}" for p in request.partitions)
        )
        group = request.group_id or '""'
        return f"OffsetFetch(group={group}, {which})"
    return type(request).__name__


def describe_response(body: ResponseBody) -> str:
    """A short human-readable form of a response, for transition labels."""
    if isinstance(body, FindCoordinatorResponse):
        return f"FindCoordinator({body.error_code.name})"
    if isinstance(body, JoinGroupResponse):
        if body.error_code.name != "NONE":
            return f"JoinGroup({body.error_code.name}, member={body.member_id or '-'})"
        return (
            f"JoinGroup(NONE, gen={body.generation_id}, member={body.member_id}, "
            f"leader={body.leader}, {body.protocol_name})"
        )
    if isinstance(body, SyncGroupResponse):
        if body.error_code.name != "NONE":
            return f"SyncGroup({body.error_code.name})"
        try:
            partitions = ", ".join(str(tp) for tp in decode_assignment(body.assignment)[0])
        except SubscriptionDecodeError:
            partitions = "undecodable"
        return f"SyncGroup(NONE, [{partitions}])"
    if isinstance(body, (HeartbeatResponse, LeaveGroupResponse)):
        return f"{_api(body)}({body.error_code.name})"
    if isinstance(body, OffsetCommitResponse):
        errors = sorted({p.error_code.name for p in body.partitions})
        return f"OffsetCommit({', '.join(errors)})"
    return type(body).__name__
