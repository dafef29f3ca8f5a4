"""The explored state graph, kept compactly for analyses after the search (liveness).

A search asked to record its graph appends, for every state it expands and in the order it
expands them, the state's fingerprint, its liveness marks and its outgoing edges. Edges are kept
in flat typed arrays (compressed sparse rows): the successor's 64-bit fingerprint and an interned
edge-kind id, which names the step's action kind and label. A state's enabled steps are exactly
its outgoing edges, so the set of enabled action kinds (for weak fairness) needs no storage of
its own. Expansions are merged in a fixed order, so every worker count records the same graph.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

# Edge-kind ids start as 16-bit values; a model with more distinct (action, label) pairs widens
# the array once, so ordinary models pay two bytes per edge for it instead of four.
_NARROW_LIMIT = 1 << 16


@dataclass
class StateGraph:
    """Every expanded state's fingerprint and liveness marks, and its edges, in expansion order.

    State i (in expansion order, which is breadth-first discovery order) is `states[i]`; its
    edges are positions `offsets[i]` to `offsets[i + 1]` of `targets` (successor fingerprints)
    and `kinds` (ids into `edge_kinds`, each an (action kind, label) pair). `marks[i]` has bit
    2k when state i is a goal of liveness property `property_names[k]` and bit 2k+1 when the
    property applies to it.
    """

    property_names: tuple[str, ...] = ()
    states: array[int] = field(default_factory=lambda: array("Q"))
    marks: array[int] = field(default_factory=lambda: array("Q"))
    offsets: array[int] = field(default_factory=lambda: array("Q", [0]))
    targets: array[int] = field(default_factory=lambda: array("Q"))
    kinds: array[int] = field(default_factory=lambda: array("H"))
    edge_kinds: list[tuple[str, str]] = field(default_factory=list)
    _kind_ids: dict[tuple[str, str], int] = field(default_factory=dict, init=False, repr=False)

    def add_state(
        self,
        state: int,
        marks: int,
        targets: Sequence[int],
        keys: Sequence[tuple[str, str]],
    ) -> None:
        """Append one expanded state: its marks and its edges' targets and (action, label) keys."""
        self.states.append(state)
        self.marks.append(marks)
        kind_ids = self._kind_ids
        kinds = self.kinds
        for key in keys:
            kind = kind_ids.get(key)
            if kind is None:
                kind = kind_ids[key] = len(self.edge_kinds)
                self.edge_kinds.append(key)
                if kind == _NARROW_LIMIT and kinds.typecode == "H":
                    kinds = self.kinds = array("I", kinds)
            kinds.append(kind)
        self.targets.extend(targets)
        self.offsets.append(len(self.targets))

    @property
    def expanded_states(self) -> int:
        """How many states were expanded (and so have all their edges recorded)."""
        return len(self.states)

    @property
    def edges(self) -> int:
        """How many edges were recorded (one per explored transition, duplicates included)."""
        return len(self.targets)

    def successors(self, index: int) -> list[tuple[str, str, int]]:
        """The (action kind, label, successor fingerprint) of every edge of state `index`."""
        start, end = self.offsets[index], self.offsets[index + 1]
        return [(*self.edge_kinds[self.kinds[e]], self.targets[e]) for e in range(start, end)]

    def nbytes(self) -> int:
        """Bytes held by the graph's arrays (the interned edge kinds are few and not counted)."""
        arrays = (self.states, self.marks, self.offsets, self.targets, self.kinds)
        return sum(a.itemsize * len(a) for a in arrays)

    def bytes_per_edge(self) -> float:
        """Array bytes per recorded edge, per-state arrays included."""
        return self.nbytes() / max(1, self.edges)
