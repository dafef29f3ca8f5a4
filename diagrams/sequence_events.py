"""Runs of a model turned into sequence diagrams (`sequence_diagram.SequenceDiagram`).

A group world gets one lane for the coordinator and one per client. Who acts in a step is read
from its action kind and from the client name its label starts with (labels are the world's
documented interface: "c1 Poll", "coordinator handles c1 JoinGroup(member=-) #2", "c1 receives
JoinGroup(...) #3", "timer JoinTimerExpired", "fault ..."). What a step changed is read from the
states: the group's hops and generation, a client's phase and owned partitions, and the
requests it queued. Any other model gets a single lane with each step's label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from groupspec.checker.bfs import SearchResult
from groupspec.checker.check_report import counterexamples
from groupspec.checker.counterexample import concrete_detail, reconstruct_lasso
from groupspec.checker.describe import (
    describe_run,
    description_lines,
    format_value,
    read_sections,
    violating_step,
)
from groupspec.checker.liveness import LivenessResult
from groupspec.checker.model import Transition
from groupspec.models.group_world import GroupWorld
from groupspec.models.world_state import GROUP_ID, ClientSlot, WorldState
from groupspec.spec.consumer import phase

from .graphs import group_hops, group_node
from .member_names import as_people_see_it
from .sequence_diagram import (
    FAULT,
    LOCAL,
    MESSAGE,
    NOTE,
    TIMER,
    Lane,
    PanelSection,
    SequenceDiagram,
    SequenceEvent,
    validate,
)

COORDINATOR_TIMERS = frozenset(
    {"HeartbeatExpired", "JoinTimerExpired", "SyncTimerExpired", "StartLoading", "FinishLoading"}
)
COORDINATOR_FAULTS = frozenset({"Unload"})
_CLIENT = re.compile(r"^(?:fault |coordinator handles )?c(\d+) ")


def _client_of(label: str) -> int:
    """The 0-based client a label names first ("c2 Poll" -> 1)."""
    match = _CLIENT.match(label)
    if match is None:
        raise ValueError(f"no client named in step {label!r}")
    return int(match.group(1)) - 1


def _lanes(world: GroupWorld) -> tuple[Lane, ...]:
    lanes = [Lane("coordinator", f"group {GROUP_ID!r}")]
    for index, spec in enumerate(world.consumers):
        config = spec.config
        kind = f"static {config.group_instance_id}" if config.group_instance_id else "dynamic"
        protocol = spec.protocol.name.lower()
        lanes.append(Lane(f"c{index + 1}", f"{kind}, {protocol}, {'+'.join(config.assignors)}"))
    return tuple(lanes)


def _states(world: GroupWorld, state: WorldState) -> tuple[str, ...]:
    return (group_node(world, state), *(phase(slot.consumer).value for slot in state.clients))


def _owned(slot: ClientSlot) -> str:
    owned = slot.consumer.owned
    return ", ".join(str(tp) for tp in owned) if owned else "nothing"


def _client_change(before: ClientSlot, after: ClientSlot) -> str:
    """What a client step changed: its phase, what it owns, what it queued to send."""
    changes = []
    new_phase = phase(after.consumer)
    if phase(before.consumer) != new_phase:
        changes.append(new_phase.value)
    if before.consumer.owned != after.consumer.owned:
        changes.append(f"owns {_owned(after)}")
    if before.consumer.coordinator_known != after.consumer.coordinator_known:
        changes.append("coordinator " + ("found" if after.consumer.coordinator_known else "lost"))
    text = "▸ " + ", ".join(changes) if changes else ""
    known = (
        {cid for cid, _ in before.outbound} if after.incarnation == before.incarnation else set()
    )
    sent = [
        f"{type(request).__name__.removesuffix('Request')} #{cid}"
        for cid, request in after.outbound
        if cid not in known
    ]
    if sent:
        text += ("  " if text else "") + "→ sends " + ", ".join(sent)
    return text


def _members(state: WorldState) -> tuple[str, ...] | None:
    group = state.coordinator.group(GROUP_ID)
    return None if group is None else tuple(member.member_id for member in group.members)


def _group_change(world: GroupWorld, before: WorldState, after: WorldState) -> str:
    """What a coordinator step changed: the group's states on the way, its generation, and
    its members when they changed."""
    hops = group_hops(world, before, after)
    parts = []
    if hops:
        group = after.coordinator.group(GROUP_ID)
        generation = f" (gen {group.generation_id})" if group is not None else ""
        parts.append(" ".join(f"▸ {target}" for _, target in hops) + generation)
    members = _members(after)
    if members is not None and members != _members(before):
        parts.append(("▸ " if not parts else "") + f"members: {', '.join(members) or 'none'}")
    return ", ".join(parts)


def world_event(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> SequenceEvent:
    """One step of a group world as a diagram event."""
    after, label, action = step.state, step.label, step.action
    states = _states(world, after)
    if action.startswith("Handle"):
        client = _client_of(label)
        text = label.removeprefix(f"coordinator handles c{client + 1} ")
        return SequenceEvent(
            MESSAGE, 0, text, states, client + 1, _group_change(world, before, after)
        )
    if action in COORDINATOR_TIMERS or action in COORDINATOR_FAULTS:
        kind = FAULT if label.startswith("fault ") or action in COORDINATOR_FAULTS else TIMER
        text = label.removeprefix("fault ").removeprefix("timer ")
        return SequenceEvent(kind, 0, text, states, None, _group_change(world, before, after), 0)
    if action == "PartitionsAdded":
        return SequenceEvent(NOTE, 0, label.removeprefix("fault "), states)
    client = _client_of(label)
    change = _client_change(before.clients[client], after.clients[client])
    if action.startswith("Receive"):
        text = label.removeprefix(f"c{client + 1} receives ")
        return SequenceEvent(MESSAGE, client + 1, text, states, 0, change)
    kind = FAULT if label.startswith("fault ") else LOCAL
    text = label.removeprefix("fault ").removeprefix(f"c{client + 1} ")
    return SequenceEvent(kind, client + 1, text, states, None, change)


def world_sequence(
    world: GroupWorld,
    initial: WorldState,
    steps: Sequence[Transition[WorldState]],
    *,
    title: str,
    subtitle: Sequence[str] = (),
    outcome: str = "",
    cycle_start: int | None = None,
    marks: Sequence[tuple[int, str]] = (),
) -> SequenceDiagram:
    """A run of a group world as a sequence diagram."""
    events = []
    before = initial
    for step in steps:
        events.append(world_event(world, before, step))
        before = step.state
    diagram = SequenceDiagram(
        title,
        tuple(subtitle),
        _lanes(world),
        _states(world, initial),
        tuple(events),
        outcome,
        cycle_start,
        tuple(marks),
    )
    validate(diagram)
    return diagram


def generic_sequence(
    name: str,
    steps: Sequence[Transition[Any]],
    *,
    title: str,
    subtitle: Sequence[str] = (),
    outcome: str = "",
    cycle_start: int | None = None,
    marks: Sequence[tuple[int, str]] = (),
) -> SequenceDiagram:
    """A run of any model as a one-lane diagram: each step's label, faults in red."""
    events = tuple(
        SequenceEvent(
            FAULT if step.label.startswith("fault ") else LOCAL,
            0,
            step.label,
            ("",),
        )
        for step in steps
    )
    diagram = SequenceDiagram(
        title, tuple(subtitle), (Lane(name),), ("",), events, outcome, cycle_start, tuple(marks)
    )
    validate(diagram)
    return diagram


def run_sequence(
    model: Any,
    initial: Any,
    steps: Sequence[Transition[Any]],
    **options: Any,
) -> SequenceDiagram:
    """A run of any model: lanes per participant for group worlds, one lane otherwise."""
    if isinstance(model, GroupWorld):
        return world_sequence(model, initial, steps, **options)
    return generic_sequence(model.name, steps, **options)


def _panel_lines(
    value: Any, name: str, changed: frozenset[tuple[str, ...]]
) -> tuple[tuple[int, str, bool], ...]:
    """A section of a described state as panel lines (depth, text, changed)."""
    if isinstance(value, dict) and value:
        lines = description_lines(value, changed, (name,))
        return tuple((line.depth - 1, line.text, line.changed) for line in lines)
    return ((0, format_value(value), (name,) in changed),)


def with_failure(
    diagram: SequenceDiagram,
    model: Any,
    initial: Any,
    steps: Sequence[Transition[Any]],
    kind: str,
    property_name: str,
    failing: int | None,
) -> SequenceDiagram:
    """`diagram` of the run `initial`, `steps` with its failing step marked and, below it, the
    state the violated property reads after that step (the parts the step changed, for an
    action property), the lines the step changed in bold."""
    if failing is None:
        return diagram
    run = describe_run(model, initial, steps)
    state = run.state(failing)
    changes = run.steps[failing - 1].changes if failing else ()
    sections = read_sections(model, state, kind, property_name, changes)
    changed = frozenset(change.path for change in changes)
    panel = tuple(PanelSection(name, _panel_lines(state[name], name, changed)) for name in sections)
    where = f"step {failing}" if failing else "the initial state"
    verb = "judges" if kind == "action" else "reads"
    title = f"what {property_name} {verb}, after {where} (in bold: what that step changed):"
    return replace(diagram, failing_step=failing or None, panel_title=title, panel=panel)


@dataclass(frozen=True)
class ShownViolation:
    """A violation as a diagram or the explorer shows it: the run in the member ids a
    coordinator would hand out (`member_names`), of `model` (the world it is a run of), what is
    violated, the failing step (None for a fair cycle) and the first step of a cycle."""

    model: Any
    initial: Any
    steps: tuple[Transition[Any], ...]
    kind: str
    property_name: str
    detail: str
    shape: str
    failing: int | None
    cycle_start: int | None = None

    @property
    def outcome(self) -> str:
        """The line saying what is violated."""
        if self.kind in ("invariant", "action", "deadlock"):
            return f"{self.kind} {self.property_name} violated: {self.detail}"
        return f"liveness {self.property_name} violated: {self.detail}"


def shown_violation(
    model: Any,
    initial: Any,
    steps: Sequence[Transition[Any]],
    kind: str,
    property_name: str,
    detail: str,
    cycle_start: int | None = None,
) -> ShownViolation:
    """The run `initial`, `steps` of a violation, in real member ids, ready to draw."""
    drawn, shown = as_people_see_it(model, initial, steps)
    if kind in ("invariant", "action"):
        detail = concrete_detail(drawn, kind, property_name, detail, initial, shown)
        shape = f"shortest counterexample: {len(shown)} steps"
        failing = violating_step(kind, len(shown))
    elif cycle_start is not None:
        stem = cycle_start - 1
        shape = (
            f"liveness {property_name} violated ({kind}): {stem} steps, then a cycle of"
            f" {len(shown) - stem} steps that repeats forever without reaching the goal"
        )
        failing = violating_step(kind, stem)
    else:
        shape = (
            f"liveness {property_name} violated ({kind}): the shortest run ({len(shown)} steps)"
            " to a state from which the goal is unreachable"
        )
        failing = violating_step(kind, len(shown))
    return ShownViolation(
        drawn, initial, shown, kind, property_name, detail, shape, failing, cycle_start
    )


def first_violation(
    model: Any, result: SearchResult[Any], liveness: Sequence[LivenessResult] = ()
) -> ShownViolation | None:
    """The violation a check shows first (None when all held): the shortest safety violation,
    else the first liveness violation (its stem, then its cycle)."""
    examples = counterexamples(model, result)
    if examples:
        example = min(examples, key=lambda item: len(item.steps))
        return shown_violation(
            model,
            example.initial,
            example.steps,
            example.kind,
            example.property_name,
            example.detail,
        )
    for item in liveness:
        for violation in item.violations:
            lasso = reconstruct_lasso(model, violation)
            return shown_violation(
                model,
                lasso.initial,
                (*lasso.stem, *lasso.cycle),
                violation.kind,
                item.property_name,
                violation.detail,
                len(lasso.stem) + 1 if lasso.cycle else None,
            )
    return None


def violation_diagram(shown: ShownViolation, *, title: str) -> SequenceDiagram:
    """A violation as a sequence diagram: its failing step marked, the state its property reads
    drawn below (`with_failure`), and for a lasso the cycle below a red rule."""
    diagram = run_sequence(
        shown.model,
        shown.initial,
        shown.steps,
        title=title,
        subtitle=[shown.shape],
        outcome=shown.outcome,
        cycle_start=None if shown.cycle_start is None else shown.cycle_start - 1,
    )
    return with_failure(
        diagram,
        shown.model,
        shown.initial,
        shown.steps,
        shown.kind,
        shown.property_name,
        shown.failing,
    )


def counterexample_diagram(
    model: Any,
    result: SearchResult[Any],
    liveness: Sequence[LivenessResult] = (),
    *,
    title: str,
) -> SequenceDiagram | None:
    """The shortest counterexample of a check as a sequence diagram (None when all held), drawn
    with the member ids a coordinator would hand out (`member_names`), its failing step marked
    and the state the violated property reads drawn below it (`with_failure`).

    A safety violation is preferred (the shortest of them); otherwise the first liveness
    violation is drawn as its stem followed by the cycle that repeats forever.
    """
    shown = first_violation(model, result, liveness)
    return None if shown is None else violation_diagram(shown, title=title)
