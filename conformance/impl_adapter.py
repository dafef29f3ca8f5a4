"""groupspec's optimized coordinator (`groupspec.impl`) behind the conformance-vector adapter.

It is what `groupspec vectors --run DIR --adapter impl` runs, and a worked example of an adapter
for a Python implementation: spec inputs are converted into the impl's own types (same field
names), the impl's responses back into the spec's, and the vectors' hints steer the impl's
policy object where the specification allows several outcomes. Member ids are the impl's own
(`<prefix>-<UUID>`, as Kafka's): the runner binds them to the vector's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from groupspec.impl import events as impl_events
from groupspec.impl.clock import ManualClock
from groupspec.impl.coordinator import Coordinator
from groupspec.impl.log import LogRecord
from groupspec.impl.policy import DefaultPolicy
from groupspec.spec import events as spec_events
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.step import Choice
from groupspec.vocabulary.errors import ErrorCode as ImplErrorCode
from groupspec.vocabulary.requests import Received
from groupspec.vocabulary.responses import Response

from .coordinator_runs import ConnectionClosed, CoordinatorInput
from .differential import to_impl_config, to_spec_timer_event
from .vector_state import GroupProjection, project_group


class HintedPolicy(DefaultPolicy):
    """Production choices, except where the current step's hints name another allowed one."""

    __slots__ = ("created", "hints")

    def __init__(self) -> None:
        self.hints: dict[str, str] = {}
        self.created: list[str] = []

    def new_member_id(self, group_id: str, prefix: str) -> str:
        """A production id (`<prefix>-<UUID>`), remembered in creation order."""
        member_id = super().new_member_id(group_id, prefix)
        self.created.append(member_id)
        return member_id

    def leader_after_removal(self, group_id: str, candidates: Sequence[str]) -> str:
        """The hinted leader if it is a candidate, else the production choice."""
        return self._pick("leader after removal", candidates)

    def leader_at_join_completion(self, group_id: str, candidates: Sequence[str]) -> str:
        """The hinted leader if it is a candidate, else the production choice."""
        return self._pick("leader", candidates)

    def protocol_vote_tie(self, group_id: str, tied: Sequence[str]) -> str:
        """The hinted protocol if it is tied, else the production choice."""
        return self._pick("protocol vote", tied)

    def append_error(self, group_id: str, records: Sequence[LogRecord]) -> ImplErrorCode | None:
        """The hinted append failure, if any."""
        hinted = self.hints.get("append")
        if hinted is None or hinted == "None":
            return None
        name = hinted.rpartition(".")[2]
        if name.lstrip("-").isdigit():
            return ImplErrorCode(int(name))
        return ImplErrorCode[name]

    def _pick(self, what: str, options: Sequence[str]) -> str:
        hinted = self.hints.get(what)
        return hinted if hinted is not None and hinted in options else options[0]


class ImplAdapter:
    """A fresh `groupspec.impl.Coordinator` per vector, on a manual clock that moves only when
    a vector says (the vectors fire timers as inputs); it shows the timers in the impl's heap
    and its groups, so the runner checks them too."""

    def __init__(self) -> None:
        self._policy = HintedPolicy()
        self._clock = ManualClock()
        self._coordinator = Coordinator(policy=self._policy, clock=self._clock)

    def reset(self, config: CoordinatorConfig) -> None:
        """A fresh impl coordinator with `config`."""
        self._policy = HintedPolicy()
        self._clock = ManualClock()
        self._coordinator = Coordinator(
            to_impl_config(config), policy=self._policy, clock=self._clock
        )

    def set_time(self, now_ms: int) -> None:
        """Move the impl's clock to `now_ms`."""
        self._clock.set(now_ms)

    def reconfigure(self, config: CoordinatorConfig) -> None:
        """The impl coordinator serves later inputs with `config`."""
        self._coordinator.reconfigure(to_impl_config(config))

    def member_ids(self, group_id: str) -> Sequence[str]:
        """The group's members and pending members, in the order their ids were created."""
        group = self._coordinator.group(group_id)
        if group is None:
            return ()
        live = group.members.keys() | group.pending_members.keys()
        return [member_id for member_id in self._policy.created if member_id in live]

    def armed_timers(self) -> Iterable[spec_events.TimerEvent]:
        """The timers the impl's heap will fire (not the deadlines its groups hold: a deadline
        with no heap entry never fires)."""
        return [to_spec_timer_event(event, str) for event in self._coordinator.scheduled_timers()]

    def group_projection(self, group_id: str) -> GroupProjection | None:
        """The impl group's projection (None: not in memory)."""
        group = self._coordinator.group(group_id)
        if group is None:
            return None
        return project_group(group, group.members.keys(), group.pending_members.keys())

    def apply(self, event: CoordinatorInput, hints: tuple[Choice, ...]) -> Sequence[Response]:
        """Feed one input to the impl and return what it sent, in the spec's types."""
        self._policy.hints = {choice.what: choice.value for choice in hints}
        coordinator = self._coordinator
        if isinstance(event, Received):
            coordinator.handle(event.ref, event.request)
        elif isinstance(event, spec_events.HeartbeatExpired):
            coordinator.fire(impl_events.HeartbeatExpired(event.group_id, event.member_id))
        elif isinstance(event, spec_events.JoinTimerExpired):
            coordinator.fire(impl_events.JoinTimerExpired(event.group_id))
        elif isinstance(event, spec_events.SyncTimerExpired):
            coordinator.fire(impl_events.SyncTimerExpired(event.group_id))
        elif isinstance(event, spec_events.OffsetRetentionCheck):
            coordinator.fire(impl_events.OffsetRetentionCheck())
        elif isinstance(event, spec_events.StartLoading):
            coordinator.start_loading(event.partition)
        elif isinstance(event, spec_events.FinishLoading):
            coordinator.finish_loading(event.partition)
        elif isinstance(event, spec_events.Unload):
            coordinator.unload(event.partition)
        elif not isinstance(event, ConnectionClosed):
            raise TypeError(f"not a coordinator input: {event!r}")
        # The impl does not learn of closed connections (nor does Kafka's coordinator); the
        # runner ignores what it later sends there.
        outbox = coordinator.outbox
        assert outbox is not None  # made without a respond callback: responses collect here
        # The impl types refs as any Hashable; the ones it hands back are the RequestRefs above.
        return [Response(ref, body) for ref, body in outbox.take().items()]  # type: ignore[arg-type]
