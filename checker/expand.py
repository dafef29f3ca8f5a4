"""Expanding states: the unit of work every exploration engine hands to a worker.

An `Expander` holds one process's view of a model's states (checker/model.py): every
component it has met, interned as a small integer, with a stable 64-bit digest; the remembered
steps of every transition group by the projection of the state on the slots the group reads;
the remembered values of every label (checker/derived.py) by its projection; the remembered
canonical form of every successor. A state is held as its tuple of component ids. Expanding a
state means taking every group's steps (from memory when the group has seen this projection
before), applying their writes and updates, reducing the successor to its canonical
components, and computing its key: the XOR, over the slots, of a 64-bit value derived from the
slot and the component's digest (Zobrist hashing). Keys are stable across processes and runs,
so they are the fingerprints that leave the process (Spark partitions, checkpoints,
counterexamples in JSON); for a model of one slot (a `PlainModel`) the key is the fingerprint of
the representative.

Action properties are the findings of group steps; invariants are checked on the first
occurrence of a successor in a batch that the expander does not already know; the merge keeps
the verdicts of the states that turn out to be new. The single-process engine, the
multi-process engine and the Spark engine all expand with this one class.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any, Generic, Protocol, TypeVar, cast

from .budget import STATE_LIMIT, Halt
from .derived import (
    Label,
    action_property_names,
    check_declarations,
    check_findings,
    invariant_labels,
    liveness_labels,
)
from .fingerprint import fingerprint
from .graph import StateGraph
from .model import CanonicalForm, Components, Cut, GroupStep, Model, Transition, TransitionGroup
from .plain import PlainModel
from .store import VisitedStore

S = TypeVar("S")
Ids = tuple[int, ...]
# A step's action kind and the rules it fired: what the action and rule counts add up.
StepCount = tuple[str, tuple[str, ...]]
# One explored step in a batch's step log: the position in `targets` of its successor (for a
# step left out as a self-loop: the position the next successor will have), its count, how
# many problems its state had found once the step was judged, and whether it was taken (a
# self-loop left out counts its rules, not its action).
LoggedStep = tuple[int, StepCount, int, bool]

_MASK = (1 << 64) - 1
# The engine's own memories of whole states forget everything past this many entries.
_MEMORY_LIMIT = 1_000_000
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(value: int) -> int:
    """splitmix64's finalizer: a bijection of 64-bit values that scatters every bit."""
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    value = (value ^ (value >> 27)) * 0x94D049BB133111EB & _MASK
    return value ^ (value >> 31)


def slot_key(slot: int, digest: int) -> int:
    """A component's contribution to a state key in `slot` (slot 0: the digest itself)."""
    return digest if slot == 0 else _mix(digest ^ (slot * _GOLDEN & _MASK))


@dataclass(frozen=True)
class Problem:
    """A property that failed: on a successor state (invariant) or on a step (action property).

    `kind` is "invariant", "action" or "deadlock"; `successor` is the key of the state the
    problem was found on (for an action property, the state the step led to).
    """

    kind: str
    property_name: str
    detail: str
    successor: int


# Told of every explored step: the expanded state's key, the state, the transition, the
# successor's key, and whether this step is the first to reach that successor.
StepObserver = Callable[[int, S, Transition[S], int, bool], None]


@dataclass
class GroupStats:
    """How often a transition group's steps came from memory, and how often the model ran."""

    name: str
    hits: int = 0
    misses: int = 0
    # Lookups counted in bulk by the fast path (one per expanded state), beside hits + misses.
    bulk: int = 0

    def lookups(self, more: int) -> int:
        """The lookups so far, after `more` counted in bulk."""
        self.bulk += more
        return self.bulk

    @property
    def hit_rate(self) -> float:
        """The share of lookups answered from memory."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


@dataclass(frozen=True)
class _Compiled:
    """A group step with its values interned: the slots it writes and their new ids, its
    updates, its findings, and (when every written slot was read and there are no updates)
    the XOR that turns the parent's key into the successor's."""

    label: str
    action: str
    rules: tuple[str, ...]
    writes: tuple[tuple[int, int], ...]
    updates: tuple[tuple[int, Any], ...]
    findings: tuple[tuple[str, str], ...]
    delta: int | None
    # A plain model's successor as its step made it (before the representative), for observers.
    raw: Any = None

    @cached_property
    def counted(self) -> StepCount:
        """What counting this step adds: its action kind and the rules it fired (one object
        per step, so a log of many steps pickles each once)."""
        return (self.action, self.rules)


@dataclass(frozen=True, eq=False)
class _GroupResult:
    """A group's steps on one projection, with what the fast path needs ready: each step's key
    delta, the (action, label) pairs, whether any step has findings, the action and rule counts."""

    steps: tuple[_Compiled, ...]
    cuts: frozenset[str]
    # (key delta, writes) of each step, when every step has a delta (the fast path's form).
    fast: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    kinds: tuple[tuple[str, str], ...] = ()
    findings: bool = False
    actions: tuple[tuple[str, int], ...] = ()
    rules: tuple[tuple[tuple[str, ...], int], ...] = ()

    @staticmethod
    def of(steps: tuple[_Compiled, ...], cuts: frozenset[str]) -> _GroupResult:
        actions: dict[str, int] = {}
        rules: dict[tuple[str, ...], int] = {}
        for step in steps:
            actions[step.action] = actions.get(step.action, 0) + 1
            if step.rules:
                rules[step.rules] = rules.get(step.rules, 0) + 1
        fast = (
            tuple((step.delta, step.writes) for step in steps)
            if all(step.delta is not None for step in steps)
            else ()
        )
        return _GroupResult(
            steps,
            cuts,
            fast,  # type: ignore[arg-type]
            tuple((step.action, step.label) for step in steps),
            any(step.findings for step in steps),
            tuple(actions.items()),
            tuple(rules.items()),
        )


@dataclass
class BatchResult:
    """A batch expanded for the breadth-first merge.

    Expanded state i has key `parents[i]` and successors `offsets[i]` to `offsets[i + 1]` of
    `targets` (keys). `candidates` maps the position (in `targets`) of every successor the
    expander did not know as seen to its canonical ids (ids in the expanding process; components
    once shipped between processes); the others need neither ids nor verdict. `problems`
    maps i to its problems in the order they were found; `deadlocked` lists the i that
    deadlock. `kinds` holds each successor's (action kind, label) and `marks` each expanded
    state's liveness marks, both only when the graph is recorded. Action and rule counts are
    summed.

    A batch may end early (`stopped`): a state budget (`room`, see `Expander.expand_batch`)
    ends it after a whole state, and `parents` lists only the states expanded; a halt (a time
    limit, Ctrl-C) may end it in the middle of a state, which `partial` says: the last parent's
    steps are then only the ones taken, and that state counts as unexpanded. `steps` is the
    step log a merge cutting the batch at a state budget counts from (when asked for).
    """

    parents: tuple[int, ...]
    offsets: tuple[int, ...]
    targets: list[int]
    candidates: dict[int, object]
    problems: dict[int, tuple[Problem, ...]]
    deadlocked: tuple[int, ...]
    action_counts: dict[str, int]
    rule_counts: dict[str, int]
    kinds: tuple[tuple[str, str], ...] = ()
    marks: tuple[int, ...] = ()
    stopped: str | None = None
    partial: bool = False
    steps: list[LoggedStep] | None = None

    @property
    def complete_parents(self) -> int:
        """How many of `parents` were expanded completely."""
        return len(self.parents) - self.partial


# `BatchResult.stopped` of a batch a state budget ended (after a whole state).
ROOM = "room"


class _Stop(Exception):
    """Unwinds an expansion a halt stopped in the middle of a state."""


@dataclass
class _Batch:
    """What `Expander.expand_batch` gathers, state by state (see `BatchResult`)."""

    parents: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=lambda: [0])
    targets: list[int] = field(default_factory=list)
    candidates: dict[int, object] = field(default_factory=dict)
    kinds: list[tuple[str, str]] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)
    problems_at: dict[int, tuple[Problem, ...]] = field(default_factory=dict)
    deadlocked: list[int] = field(default_factory=list)
    actions: dict[str, int] = field(default_factory=dict)
    rule_tuples: dict[tuple[str, ...], int] = field(default_factory=dict)
    log: list[LoggedStep] | None = None


class Expander(Generic[S]):
    """One process's interned components and remembered steps of a model."""

    def __init__(self, model: Model[S], *, graph: bool = False) -> None:
        check_declarations(model)
        self.model = model
        self.slots = len(model.slot_names)
        self.graph = graph
        # Components: digest -> id, and by id their value, digest and key per slot.
        self._ids: dict[int, int] = {}
        self._by_object: dict[int, int] = {}
        self.values: list[Any] = []
        self._slot_keys: list[list[int]] = [[] for _ in range(self.slots)]
        self._digest = model.component_digest
        self.groups: tuple[TransitionGroup, ...] = tuple(model.groups)
        self._getters = [_getter(group.reads) for group in self.groups]
        self._whole = [
            not group.cached or len(set(group.reads)) == self.slots for group in self.groups
        ]
        self._group_memo: list[dict[Any, _GroupResult]] = [{} for _ in self.groups]
        self.stats = [GroupStats(group.name) for group in self.groups]
        # What `explore_fast` counted (the merge of `expand_batch` counts its own).
        self.action_counts: Counter[str] = Counter()
        self.rule_counts: Counter[str] = Counter()
        # The remembered group results with a cut or findings (the fast path's rare case).
        self._special: set[_GroupResult] = set()
        self._invariants = invariant_labels(model)
        self._declared = frozenset(action_property_names(model))
        self._invariant_getters = [_getter(label.reads) for label in self._invariants]
        self._invariant_memo: list[dict[Any, Any]] = [{} for _ in self._invariants]
        self._invariant_checks = tuple(
            self._invariant_check(label, getter, memo)
            for label, getter, memo in zip(
                self._invariants, self._invariant_getters, self._invariant_memo, strict=True
            )
        )
        # Component labels (remembered, one slot read, such as a type check) are judged once
        # per component a slot receives, when a step first writes it (`_judge_writes`): while
        # none has found a problem, `explore_fast` judges new states by the other labels only.
        component = [
            label.cached and len(label.reads) == 1 and self.slots > 1 for label in self._invariants
        ]
        self._component_labels: dict[int, list[Label]] = {}
        for label, is_component in zip(self._invariants, component, strict=True):
            if is_component:
                self._component_labels.setdefault(label.reads[0], []).append(label)
        self._state_checks = tuple(
            check
            for check, is_component in zip(self._invariant_checks, component, strict=True)
            if not is_component
        )
        self._judged_components: set[tuple[int, int]] = set()
        self._component_problem = False
        self._liveness = liveness_labels(model) if graph else ()
        self._label_memo: dict[tuple[int, str, Any], Any] = {}
        self._update_memo: dict[tuple[int, int, Any], int] = {}
        self._after: dict[Ids, Ids] = {}
        self._canonical: dict[Ids, Ids] = {}
        # The pieces of canonical forms (see `settle`), each by component.
        self._form: CanonicalForm | None = model.canonical_form
        self._settled: dict[Ids, tuple[Ids, Ids]] = {}
        self._derived: tuple[
            tuple[int, tuple[int, ...], Callable[..., Any], dict[tuple[int, ...], int]], ...
        ] = tuple(
            (slot, reads, function, {})
            for slot, reads, function in (self._form.derived if self._form is not None else ())
        )
        self._names: dict[tuple[int, int], frozenset[str]] = {}
        self._renamings: dict[frozenset[str], Hashable] = {}
        self._renamed: dict[tuple[int, int, Hashable], int] = {}
        self._normals: dict[tuple[int, int], tuple[int, Hashable | None]] = {}
        self._retargeted: dict[tuple[int, int, tuple[Hashable | None, ...]], int] = {}
        self._order_keys: dict[int, Any] = {}
        self._permuted: dict[tuple[int, int, tuple[int, ...]], int] = {}
        # Whether every group writes only slots it reads and has no updates (the fast path).
        self._deltas = all(
            set(group.writes) <= set(group.reads) and group.cached for group in self.groups
        )
        self._renames = model.renames_after_step
        self._reduces = model.reduces
        self._plain = isinstance(model, PlainModel)
        self._omit_loops = model.omits_self_loops
        self._terminal = model.is_terminal
        # Set by the engine running the search: polled inside expansions (a time limit,
        # Ctrl-C), and whether batches log their steps (a merge may cut them at a state budget).
        self.halt: Halt | None = None
        self.log_steps = False

    # -- components ---------------------------------------------------------------------------

    def intern(self, value: Any, digest: int | None = None) -> int:
        """The id of a component value (new values get the next id); `digest` when known."""
        # The very object interned before: no digest needed. Only interned objects are in
        # this table, and `values` keeps them alive, so an identity cannot be reused.
        found = self._by_object.get(id(value))
        if found is not None:
            return found
        if digest is None:
            digest = self._digest(value)
        found = self._ids.get(digest)
        if found is not None:
            return found
        index = self._ids[digest] = len(self.values)
        self._by_object[id(value)] = index
        self.values.append(value)
        for slot, keys in enumerate(self._slot_keys):
            keys.append(slot_key(slot, digest))
        return index

    def ids_of(self, values: Components) -> Ids:
        """The component ids of a state's components."""
        return tuple([self.intern(value) for value in values])

    def values_of(self, ids: Ids) -> Components:
        """The components of a state's component ids."""
        values = self.values
        return tuple([values[i] for i in ids])

    def key(self, ids: Ids) -> int:
        """The state key of a state's component ids (XOR of the slots' contributions)."""
        key = 0
        for slot, keys in enumerate(self._slot_keys):
            key ^= keys[ids[slot]]
        return key

    def state(self, ids: Ids) -> S:
        """The model's state object for a state's component ids."""
        return self.model.state_of(self.values_of(ids))

    def canonical_ids(self, ids: Ids) -> Ids:
        """The canonical component ids of a state's (remembered)."""
        found = self._canonical.get(ids)
        if found is None:
            found = self._canonical[ids] = self.ids_of(self.model.canonical(self.values_of(ids)))
        return found

    def _after_step(self, ids: Ids) -> Ids:
        found = self._after.get(ids)
        if found is None:
            found = self._after[ids] = self.ids_of(self.model.after_step(self.values_of(ids)))
        return found

    def settle(self, ids: Ids) -> tuple[Ids, Ids]:
        """A raw successor as the step leaves it (`after_step`) and its canonical ids, from
        memory of the whole state or, with a `canonical_form`, piece by piece."""
        found = self._settled.get(ids)
        if found is not None:
            return found
        if len(self._settled) >= _MEMORY_LIMIT:
            self._settled.clear()
        form = self._form
        if form is None:
            after = self._after_step(ids) if self._renames else ids
            found = (after, self.canonical_ids(after) if self._reduces else after)
        else:
            found = self._settle_pieces(form, ids)
        self._settled[ids] = found
        return found

    def _derive(self, new: list[int]) -> None:
        """Recompute the derived slots of a state's ids (in place) from the slots they read."""
        values = self.values
        for slot, reads, function, memo in self._derived:
            projection = tuple([new[read] for read in reads])
            value = memo.get(projection)
            if value is None:
                if len(memo) >= _MEMORY_LIMIT:
                    memo.clear()
                value = memo[projection] = self.intern(function(*[values[i] for i in projection]))
            new[slot] = value

    def _settle_pieces(self, form: CanonicalForm, ids: Ids) -> tuple[Ids, Ids]:
        values = self.values
        new = list(ids)
        # Names the step left arbitrary, renamed (the model's after_step).
        names_memo = self._names
        held: list[frozenset[str]] = []
        for slot in form.renamed_slots:
            names = names_memo.get((slot, new[slot]))
            if names is None:
                names = names_memo[(slot, new[slot])] = form.names(slot, values[new[slot]])
            held.append(names)
        union = frozenset().union(*held)
        renaming = self._renamings.get(union)
        if renaming is None:
            renaming = self._renamings[union] = form.renaming(union)
        renamed = self._renamed
        for slot in form.renamed_slots:
            key = (slot, new[slot], renaming)
            value = renamed.get(key)
            if value is None:
                value = renamed[key] = self.intern(form.rename(slot, values[new[slot]], renaming))
            new[slot] = value
        self._derive(new)
        after = tuple(new)
        # Normal forms of slots, and references to them renamed.
        tokens: list[Hashable | None] = []
        normals = self._normals
        for slot in form.normalized_slots:
            entry = normals.get((slot, new[slot]))
            if entry is None:
                normal, token = form.normal(slot, values[new[slot]])
                entry = normals[(slot, new[slot])] = (self.intern(normal), token)
            new[slot] = entry[0]
            tokens.append(entry[1])
        if any(token is not None for token in tokens):
            token_key = tuple(tokens)
            retargeted = self._retargeted
            for slot in form.referring_slots:
                key = (slot, new[slot], token_key)
                value = retargeted.get(key)
                if value is None:
                    retarget = form.retarget(slot, values[new[slot]], token_key)
                    value = retargeted[key] = self.intern(retarget)
                new[slot] = value
        # Interchangeable slots sorted.
        order: list[int] | None = None
        order_keys = self._order_keys
        for members in form.classes:
            keys = []
            for slot in members:
                sort_key = order_keys.get(new[slot])
                if sort_key is None:
                    sort_key = order_keys[new[slot]] = form.order_key(values[new[slot]])
                keys.append(sort_key)
            ranked = sorted(range(len(members)), key=keys.__getitem__)
            if any(keys[a] == keys[b] for a, b in itertools.pairwise(ranked)):
                # Equal keys: only the model can choose among the orders (rare).
                return after, self.canonical_ids(tuple(new))
            if ranked != list(range(len(members))):
                if order is None:
                    order = list(range(len(new)))
                for position, rank in zip(members, ranked, strict=True):
                    order[position] = members[rank]
        if order is not None:
            permutation = tuple(order)
            moved = [new[slot] for slot in permutation]
            permuted = self._permuted
            for slot in form.referring_slots:
                key = (slot, new[slot], permutation)
                value = permuted.get(key)
                if value is None:
                    value = permuted[key] = self.intern(
                        form.permute(slot, values[new[slot]], permutation)
                    )
                moved[slot] = value
            new = moved
        self._derive(new)
        return after, tuple(new)

    def key_of_state(self, state: S) -> int:
        """The key of a state object (what the search calls it): its canonical ids's key."""
        return self.key(self.canonical_ids(self.ids_of(self.model.components_of(state))))

    # -- groups ------------------------------------------------------------------------------

    def _group(self, index: int, ids: Ids) -> _GroupResult:
        getter = self._getters[index]
        projection = getter(ids)
        if self._whole[index]:
            self.stats[index].misses += 1
            return self._compile(index, projection)
        memo = self._group_memo[index]
        found = memo.get(projection)
        if found is not None:
            self.stats[index].hits += 1
            return found
        self.stats[index].misses += 1
        found = memo[projection] = self._compile(index, projection)
        return found

    def _compile(self, index: int, projection: Any) -> _GroupResult:
        group = self.groups[index]
        reads = group.reads
        read_ids = projection if len(reads) > 1 else (projection,)
        values = self.values
        raw = group.step(*[values[i] for i in read_ids])
        if not raw:
            return _NOTHING
        old = dict(zip(reads, read_ids, strict=True))
        slot_keys = self._slot_keys
        steps: list[_Compiled] = []
        cuts: set[str] = set()
        for step in raw:
            if isinstance(step, Cut):
                cuts.add(step.bound)
                continue
            self._check_findings(index, step)
            writes = tuple(
                (slot, self.intern(value))
                for slot, value in zip(group.writes, step.written, strict=True)
            )
            self._judge_writes(writes)
            updates = tuple((slot, update) for slot, update in step.updates)
            delta: int | None = None
            if not updates and all(slot in old for slot, _ in writes):
                delta = 0
                for slot, new in writes:
                    delta ^= slot_keys[slot][old[slot]] ^ slot_keys[slot][new]
                # A slot written with the value it had changes nothing.
                writes = tuple((slot, new) for slot, new in writes if new != old[slot])
            steps.append(
                _Compiled(
                    step.label, step.action, step.rules, writes, updates, step.findings, delta
                )
            )
        result = _GroupResult.of(tuple(steps), frozenset(cuts))
        if result.cuts or result.findings:
            self._special.add(result)
        return result

    def _check_findings(self, index: int, step: GroupStep) -> None:
        """Refuse a finding whose name no action property declares (it would be lost)."""
        for name, _ in step.findings:
            if name not in self._declared:
                check_findings(self.model, self.groups[index].name, step)

    def _judge_writes(self, writes: Iterable[tuple[int, int]]) -> None:
        """Judge each (slot, component) by the component labels of its slot, once."""
        labels, judged = self._component_labels, self._judged_components
        for slot, value in writes:
            if (slot, value) in judged or slot not in labels:
                continue
            judged.add((slot, value))
            for label in labels[slot]:
                if label.evaluate(self.values[value]):
                    self._component_problem = True

    def _update(self, slot: int, current: int, update: Any) -> int:
        key = (slot, current, update)
        found = self._update_memo.get(key)
        if found is None:
            value = self.model.apply_update(slot, self.values[current], update)
            found = self._update_memo[key] = self.intern(value)
        return found

    def _successor(self, ids: Ids, step: _Compiled) -> Ids:
        new = list(ids)
        for slot, value in step.writes:
            new[slot] = value
        for slot, update in step.updates:
            new[slot] = self._update(slot, new[slot], update)
        return tuple(new)

    # -- labels ------------------------------------------------------------------------------

    def invariant_problems(self, ids: Ids, at: int, checks: _Checks | None = None) -> list[Problem]:
        """Every invariant the state violates, as problems located at key `at` (an empty
        list, the usual answer, costs a lookup or a call per invariant); only those of
        `checks` when given."""
        problems: list[Problem] = []
        state: list[Any] | None = None
        for name, check, pick in self._invariant_checks if checks is None else checks:
            if pick is None:
                found = check(ids)
            else:
                # The state's values are looked up once for every label that reads them all.
                if state is None:
                    state = list(map(self.values.__getitem__, ids))
                found = check(*(state if pick is _every_value else pick(state)))
            if found:
                problems.extend(Problem("invariant", name, detail, at) for detail in found)
        return problems

    def _invariant_check(
        self, label: Label, getter: Callable[[Ids], Any], memo: dict[Any, Any]
    ) -> tuple[str, Callable[..., Any], Callable[[list[Any]], Any] | None]:
        """How `invariant_problems` evaluates a label: (name, check, pick). With pick None,
        check takes the component ids and remembers its answers by projection (when the label
        allows it); otherwise check takes the values pick chooses from the state's values
        (`_every_value`: every one)."""
        values = self.values
        evaluate = label.evaluate
        if label.cached and len(label.reads) < self.slots:
            single = len(label.reads) == 1

            def remembered(ids: Ids) -> Any:
                projection = getter(ids)
                found = memo.get(projection)
                if found is None:
                    read = (projection,) if single else projection
                    found = memo[projection] = tuple(evaluate(*[values[i] for i in read]))
                return found

            return label.name, remembered, None
        if label.reads == tuple(range(self.slots)):
            return label.name, evaluate, _every_value
        reads = label.reads
        return label.name, evaluate, lambda state: [state[slot] for slot in reads]

    def _label(self, label: Label, ids: Ids) -> Any:
        projection = tuple(ids[slot] for slot in label.reads)
        key = (id(label), label.name, projection)
        found = self._label_memo.get(key)
        if found is None:
            found = label.evaluate(*[self.values[i] for i in projection])
            if label.cached and len(label.reads) < self.slots:
                self._label_memo[key] = found
        return found

    def liveness_marks(self, ids: Ids, cuts: frozenset[str]) -> int:
        """The goal, applies and cut-short bits of each liveness property (3k, 3k+1, 3k+2)."""
        marks = 0
        for index, labels in enumerate(self._liveness):
            if self._label(labels.goal, ids):
                marks |= 1 << (3 * index)
            if self._label(labels.applies, ids):
                marks |= 1 << (3 * index + 1)
            if labels.cut_bounds & cuts:
                marks |= 1 << (3 * index + 2)
        return marks

    # -- expanding ---------------------------------------------------------------------------

    def initial(self) -> Iterator[tuple[int, Ids, list[Problem]]]:
        """The first level: (key, canonical ids, invariant problems) of each initial state,
        in the model's order, duplicates (by key) left out; one at a time, so that a caller
        can stop between them."""
        seen: set[int] = set()
        for values in self.model.initial_components():
            ids = self.ids_of(values)
            canonical = self.canonical_ids(ids)
            key = self.key(canonical)
            if key not in seen:
                seen.add(key)
                self._judge_writes(enumerate(canonical))
                yield key, canonical, self.invariant_problems(ids, key)

    def expand_batch(
        self,
        batch: Sequence[tuple[int, Ids]],
        known: Sequence[Container[int]],
        shipped: set[int],
        observer: Callable[[int, Ids, _Compiled, int, Ids | None], None] | None = None,
        room: int | None = None,
    ) -> BatchResult:
        """Expand a batch of (key, component ids) pairs in order, in the compact form the merge reads.

        A successor whose key is in one of `known` (what the merge has seen, or what this
        expander was told it has) or in `shipped` (successors this expander already sent) is not judged
        again and its ids are not sent; batches are merged in order, so the ids and its
        verdict reach the merge first with the earlier occurrence. Keys sent with their ids are
        added to `shipped`. `observer` is told of every step (key, ids, step, successor key,
        successor ids or None when known).

        With `room` (the new states the merge can still take), the batch ends after the first
        state that brings the successors sent to `room` or more: the merge cannot keep more,
        and the states left over are expanded only if it turns out to need them. The halt
        (`self.halt`) may end the batch anywhere (`BatchResult.stopped`, `partial`).
        """
        out = _Batch(log=[] if self.log_steps else None)
        seen = _Either(known)
        poll = self.halt.poll if self.halt is not None else None
        stopped: str | None = None
        partial = False
        try:
            for position, (parent, ids) in enumerate(batch):
                if position and room is not None and len(out.candidates) >= room:
                    stopped = ROOM
                    break
                if poll is not None:
                    stopped = poll()
                    if stopped:
                        break
                out.parents.append(parent)
                self._expand_one(out, position, parent, ids, seen, shipped, observer, poll)
                out.offsets.append(len(out.targets))
        except _Stop as stop:
            stopped, partial = str(stop), True
            out.offsets.append(len(out.targets))
            if self.graph:
                out.marks.append(0)
        rule_counts: dict[str, int] = {}
        for rules, count in out.rule_tuples.items():
            for rule in rules:
                rule_counts[rule] = rule_counts.get(rule, 0) + count
        return BatchResult(
            tuple(out.parents),
            tuple(out.offsets),
            out.targets,
            out.candidates,
            out.problems_at,
            tuple(out.deadlocked),
            out.actions,
            rule_counts,
            tuple(out.kinds),
            tuple(out.marks),
            stopped,
            partial,
            out.log,
        )

    def _expand_one(
        self,
        out: _Batch,
        position: int,
        parent: int,
        ids: Ids,
        seen: Container[int],
        shipped: set[int],
        observer: Callable[[int, Ids, _Compiled, int, Ids | None], None] | None,
        poll: Callable[[], str | None] | None,
    ) -> None:
        """Expand the `position`-th state of a batch (key `parent`, component ids `ids`) into
        `out`; raises _Stop with the halt's reason when `poll` stops it part way."""
        fast = not self._renames and not self._reduces
        graph = self.graph
        plain = self._plain
        omit = self._omit_loops
        group = self._group
        targets, candidates, log = out.targets, out.candidates, out.log
        actions, rule_tuples = out.actions, out.rule_tuples
        problems: list[Problem] = []
        cuts: frozenset[str] = frozenset()
        taken = 0
        for index in range(1 if plain else len(self.groups)):
            if poll is not None:
                reason = poll()
                if reason:
                    if problems:
                        out.problems_at[position] = tuple(problems)
                    raise _Stop(reason)
            if plain:
                steps, cuts = self._plain_steps(ids)
            else:
                result = group(index, ids)
                steps = result.steps
                if result.cuts:
                    cuts = cuts | result.cuts
            for step in steps:
                successor: Ids | None
                target: int
                if plain:
                    # A plain step carries its successor's id and, as its delta, its key.
                    successor, target = (step.writes[0][1],), cast(int, step.delta)
                elif step.delta is not None and fast:
                    if omit and step.delta == 0:
                        _count_rules(rule_tuples, step.rules)
                        if log is not None:
                            log.append((len(targets), step.counted, len(problems), False))
                        continue
                    successor, target = None, parent ^ step.delta
                else:
                    after, successor = self.settle(self._successor(ids, step))
                    if omit and after == ids:
                        # No transition, but the step was explored: the rules it fired
                        # were reached (a read-only request, such as DescribeGroups).
                        _count_rules(rule_tuples, step.rules)
                        if log is not None:
                            log.append((len(targets), step.counted, len(problems), False))
                        continue
                    target = self.key(successor)
                taken += 1
                targets.append(target)
                action = step.action
                actions[action] = actions.get(action, 0) + 1
                _count_rules(rule_tuples, step.rules)
                if graph:
                    out.kinds.append((action, step.label))
                for name, detail in step.findings:
                    problems.append(Problem("action", name, detail, target))
                if target in shipped or target in seen:
                    if observer is not None:
                        observer(parent, ids, step, target, None)
                    if log is not None:
                        log.append((len(targets) - 1, step.counted, len(problems), True))
                    continue
                shipped.add(target)
                if successor is None:
                    successor = self._successor(ids, step)
                candidates[len(targets) - 1] = successor
                if observer is not None:
                    observer(parent, ids, step, target, successor)
                problems.extend(self.invariant_problems(successor, target))
                if log is not None:
                    log.append((len(targets) - 1, step.counted, len(problems), True))
                if poll is not None:
                    reason = poll()
                    if reason:
                        # The steps taken so far stand: their problems are reported.
                        if problems:
                            out.problems_at[position] = tuple(problems)
                        raise _Stop(reason)
        if problems:
            out.problems_at[position] = tuple(problems)
        if not taken and not self._terminal(self.values_of(ids), cuts):
            out.deadlocked.append(position)
        if graph:
            out.marks.append(self.liveness_marks(ids, cuts) if self._liveness else 0)

    def _plain_steps(self, ids: Ids) -> tuple[tuple[_Compiled, ...], frozenset[str]]:
        """A plain model's steps: its transitions, each successor its representative (interned
        with its fingerprint, which is its key). The group is never remembered."""
        self.stats[0].misses += 1
        model = self.model
        steps = []
        cuts: set[str] = set()
        for step in self.groups[0].step(self.values[ids[0]]):
            if isinstance(step, Cut):
                cuts.add(step.bound)
                continue
            self._check_findings(0, step)
            (representative,) = model.canonical(step.written)
            digest = fingerprint(representative)
            successor = (self.intern(representative, digest),)
            steps.append(
                _Compiled(
                    step.label,
                    step.action,
                    step.rules,
                    ((0, successor[0]),),
                    (),
                    step.findings,
                    digest,
                    step.written[0],
                )
            )
        return tuple(steps), frozenset(cuts)

    @property
    def explores_fast(self) -> bool:
        """Whether `explore_fast` can explore this model: steps need no renaming, states are
        their own canonical form, and every group writes only slots it reads."""
        return (
            self._deltas
            and not self._renames
            and not self._reduces
            and not self._plain
            and not self._omit_loops
        )

    def explore_fast(
        self,
        batch: Sequence[tuple[int, Ids]],
        store: VisitedStore,
        frontier: list[tuple[int, object]],
        judge: Judge,
        graph: StateGraph | None,
        room: int | None = None,
    ) -> tuple[int, str | None]:
        """Expand a batch and merge it at once (the single-process engine, when
        `explores_fast`): every remembered step carries the XOR that makes the successor's key
        from the parent's, a successor is looked up in the seen set as soon as it is found, and
        its ids are built only if it is new. New states join `store` and `frontier` in
        breadth-first order; problems go to `judge` in the order the merge of `expand_batch`
        records them. Returns the number of steps taken, and why the batch stopped early, if it
        did: the `room`-th new state ("max_states", where the merge of `expand_batch` would
        cut it) or the halt; the state being expanded then counts its steps up to that one."""
        getters = self._getters
        memos = self._group_memo
        lookups = tuple(zip(getters, memos, strict=True))
        special = self._special
        invariants = self.invariant_problems
        state_checks = self._state_checks
        terminal = self._terminal
        current, previous, older = store.levels()
        archived = store.archived_one
        bitmap, mask = store.filter
        frontier_append = frontier.append
        poll = self.halt.poll if self.halt is not None else None
        # New states this batch may still add before the state budget stops it (-1: no budget).
        left = room if room is not None else -1
        used: list[_GroupResult] = []
        used_extend = used.extend
        added = expanded = partial_steps = 0
        stopped: str | None = None
        results: list[_GroupResult] = []
        judged: dict[int, list[Problem]] | None = None
        parent = last = 0
        try:
            for parent, ids in batch:
                if poll is not None:
                    stopped = poll()
                    if stopped:
                        break
                expanded += 1
                remembered = [memo.get(getter(ids)) for getter, memo in lookups]
                results = (
                    [
                        result if result is not None else self._group(index, ids)
                        for index, result in enumerate(remembered)
                    ]
                    if None in remembered
                    else remembered  # type: ignore[assignment]
                )
                used_extend(results)
                findings = False
                judged = None
                cuts: frozenset[str] = frozenset()
                if special:
                    for result in results:
                        if result in special:
                            # Rare: a bound cut a step, or a step broke an action property.
                            cuts = cuts | result.cuts
                            findings = findings or result.findings
                taken = False
                for result in results:
                    fast = result.fast
                    if fast:
                        taken = True
                    for delta, writes in fast:
                        target = parent ^ delta
                        if target in previous or target in current or target in older:
                            continue
                        bit = target & mask
                        if bitmap[bit >> 3] >> (bit & 7) & 1 and archived(target):
                            continue
                        current[target] = parent
                        added += 1
                        successor = list(ids)
                        for slot, value in writes:
                            successor[slot] = value
                        new_ids = tuple(successor)
                        frontier_append((target, new_ids))
                        # Every component of the state was judged by its slot's component
                        # labels when first written (or in an initial state): while none
                        # failed, only the labels over several slots remain.
                        found = invariants(
                            new_ids, target, None if self._component_problem else state_checks
                        )
                        if found:
                            judged = judged or {}
                            judged[target] = found
                        if added == left:
                            last, stopped = target, STATE_LIMIT
                            raise _Stop(stopped)
                        if poll is not None:
                            reason = poll()
                            if reason:
                                last, stopped = target, reason
                                raise _Stop(reason)
                if graph is not None:
                    targets = [parent ^ delta for result in results for delta, _ in result.fast]
                    kinds = [kind for result in results for kind in result.kinds]
                    marks = self.liveness_marks(ids, cuts) if self._liveness else 0
                    graph.add_state(parent, marks, targets, kinds)
                if not taken and not terminal(self.values_of(ids), cuts):
                    judge.record(
                        Problem("deadlock", "Deadlock", "no step is enabled", parent), parent
                    )
                if findings or judged:
                    judge.record_judged(parent, *_ordered_problems(parent, results, judged))
        except _Stop:
            # The state being expanded stops at the step that found `last`: it counts (and
            # reports the problems of) its steps up to that one, and stays unexpanded.
            del used[len(used) - len(results) :]
            problems, targets = _ordered_problems(parent, results, judged, last)
            if problems:
                judge.record_judged(parent, problems, targets)
            for step in _steps_until(parent, results, last):
                partial_steps += 1
                self._count_step(step)
        store.added(added)
        transitions = partial_steps
        for result, times in Counter(used).items():
            transitions += len(result.steps) * times
            self._count(result, times)
        for stats in self.stats:
            stats.hits = stats.lookups(expanded) - stats.misses
        return transitions, stopped

    def _count(self, result: _GroupResult, times: int) -> None:
        actions, rules = self.action_counts, self.rule_counts
        for action, count in result.actions:
            actions[action] = actions.get(action, 0) + count * times
        for rule_tuple, count in result.rules:
            for rule in rule_tuple:
                rules[rule] = rules.get(rule, 0) + count * times

    def _count_step(self, step: _Compiled) -> None:
        self.action_counts[step.action] += 1
        for rule in step.rules:
            self.rule_counts[rule] += 1

    def cuts(self, ids: Ids) -> frozenset[str]:
        """The bounds that cut some step of the state (from the groups' memory)."""
        cuts: frozenset[str] = frozenset()
        for index in range(len(self.groups)):
            cuts = cuts | self._group(index, ids).cuts
        return cuts

    def transition(self, ids: Ids, step: _Compiled) -> Transition[S]:
        """A step as the plain interface gives it: to the successor the step made (not yet
        canonical), for observers."""
        if step.raw is not None:
            successor = step.raw
        else:
            successor = self.model.state_of(self.values_of(self._successor(ids, step)))
            if self._renames:
                successor = self.model.state_of(
                    self.model.after_step(self.model.components_of(successor))
                )
        return Transition(step.label, step.action, successor, step.rules, step.findings)


_NOTHING = _GroupResult.of((), frozenset())


def _steps_until(
    parent: int, results: Sequence[_GroupResult], last: int | None
) -> Iterator[_Compiled]:
    """A state's steps (its key is `parent`), in order, up to the first that leads to `last`
    (all of them when `last` is None)."""
    for result in results:
        for step in result.steps:
            yield step
            if last is not None and parent ^ step.delta == last:  # type: ignore[operator]
                return


def _ordered_problems(
    parent: int,
    results: Sequence[_GroupResult],
    judged: dict[int, list[Problem]] | None,
    last: int | None = None,
) -> tuple[list[Problem], list[int]]:
    """A state's problems in the order `expand_batch` finds them (each step's findings, then
    the invariants of its successor where it was new, from `judged`), with its steps' targets;
    only up to the step that leads to `last` when given."""
    ordered: list[Problem] = []
    targets: list[int] = []
    for step in _steps_until(parent, results, last):
        target = parent ^ step.delta  # type: ignore[operator]
        targets.append(target)
        for name, detail in step.findings:
            ordered.append(Problem("action", name, detail, target))
        if judged and target in judged:
            ordered.extend(judged.pop(target))
    return ordered, targets


def _getter(reads: tuple[int, ...]) -> Callable[[Ids], Any]:
    """A function from component ids to their projection on `reads` (one value for one slot)."""
    return itemgetter(*reads)


class Judge(Protocol):
    """Where `Expander.explore_fast` sends problems: the search's merge."""

    def record(self, problem: Problem, at: int, via: int | None = None) -> None:
        """Keep a problem found on state `at` (of a step from `via`)."""

    def record_judged(self, parent: int, found: Sequence[Problem], targets: Sequence[int]) -> None:
        """Keep a state's problems, in the order of its steps' targets; an invariant counts
        only where its state was new."""


class _Either:
    """Membership in any of a few containers."""

    def __init__(self, containers: Sequence[Container[int]]) -> None:
        self._containers = tuple(containers)

    def __contains__(self, key: object) -> bool:
        return any(key in container for container in self._containers)


__all__ = ["BatchResult", "Expander", "GroupStats", "Problem", "StepObserver", "slot_key"]


_Checks = tuple[tuple[str, Callable[..., Any], Callable[[list[Any]], Any] | None], ...]


def _every_value(state: list[Any]) -> list[Any]:
    """The pick of a label that reads every slot: the state's values as they are."""
    return state


def _count_rules(rule_tuples: dict[tuple[str, ...], int], rules: tuple[str, ...]) -> None:
    """One more explored step fired `rules` (counted per distinct tuple, summed later)."""
    if rules:
        rule_tuples[rules] = rule_tuples.get(rules, 0) + 1
