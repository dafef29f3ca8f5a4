"""The set of states a search has seen, with each one's breadth-first parent, in 16 bytes each.

A state is known by its 64-bit key. The newest levels of the search live in Python dicts
(key -> parent key), where a lookup costs nothing; when a level is two levels old its states
move into two sorted numpy arrays (keys, parents), 8 bytes each, and lookups there go in
batches (`known_among`). Breadth-first search rarely steps back more than a level, so most
lookups never reach the arrays.

The store reads like the dict of parents the search results always exposed (`parents[key]`,
`key in parents`, `items()`, `len`), so counterexamples and liveness walk it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)  # the parent of an initial state (never a key in use)
_FILTER_MIN_BITS = 1 << 16


class VisitedStore(Mapping[int, int | None]):
    """Keys of seen states and their parents: recent levels in dicts, older ones in arrays."""

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.uint64)
        self._parents = np.zeros(0, dtype=np.uint64)
        # One bit per (key mod the filter's size) of every archived key: a key whose bit is
        # clear is certainly not archived, so most lookups of new states never reach the
        # arrays. The filter keeps at least 8 bits per archived key (a false "maybe" for about
        # one key in eight at most), doubling as the arrays grow: 1 byte a state or less.
        self._filter = bytearray(_FILTER_MIN_BITS >> 3)
        self._filter_mask = _FILTER_MIN_BITS - 1
        # Levels not yet moved into the arrays, oldest first; the last is being filled.
        self._levels: list[dict[int, int | None]] = [{}]
        self._size = 0

    # -- the mapping -----------------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        for level in self._levels:
            if key in level:
                return True
        if not isinstance(key, int) or not self._keys.size or key < 0 or key >> 64:
            return False
        position = int(np.searchsorted(self._keys, np.uint64(key)))
        return position < self._keys.size and int(self._keys[position]) == key

    def __getitem__(self, key: int) -> int | None:
        for level in self._levels:
            if key in level:
                return level[key]
        if self._keys.size and 0 <= key < 1 << 64:
            position = int(np.searchsorted(self._keys, np.uint64(key)))
            if position < self._keys.size and int(self._keys[position]) == key:
                parent = self._parents[position]
                return None if parent == _NONE else int(parent)
        raise KeyError(key)

    def __iter__(self) -> Iterator[int]:
        for key in self._keys:
            yield int(key)
        for level in self._levels:
            yield from level

    def items(self) -> Iterator[tuple[int, int | None]]:  # type: ignore[override]
        """Every (key, parent) pair; the parent of an initial state is None."""
        for key, parent in zip(self._keys, self._parents, strict=True):
            yield int(key), None if parent == _NONE else int(parent)
        for level in self._levels:
            yield from level.items()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]

    # -- for the search --------------------------------------------------------------------

    def add(self, key: int, parent: int | None) -> None:
        """Record a new state (the caller knows it is new) in the newest level."""
        self._levels[-1][key] = parent
        self._size += 1

    def in_recent(self, key: int) -> bool:
        """Whether the key is in one of the levels still held in dicts."""
        # A loop, not any() over a generator: this runs once per new state.
        for level in self._levels:  # noqa: SIM110
            if key in level:
                return True
        return False

    def levels(self) -> tuple[dict[int, int | None], dict[int, int | None], dict[int, int | None]]:
        """The level being filled and the two before it (empty dicts where there are none)."""
        levels = self._levels[::-1]
        while len(levels) < 3:
            levels.append({})
        return levels[0], levels[1], levels[2]

    def added(self, count: int) -> None:
        """Count states a caller put straight into the newest level (see `levels`)."""
        self._size += count

    @property
    def filter(self) -> tuple[bytearray, int]:
        """The filter's bits and mask: a key whose bit (key & mask) is clear is not archived."""
        return self._filter, self._filter_mask

    def archived_one(self, key: int) -> bool:
        """Whether the arrays have the key (the filter answers most lookups alone)."""
        bit = key & self._filter_mask
        if not self._filter[bit >> 3] >> (bit & 7) & 1:
            return False
        position = int(np.searchsorted(self._keys, np.uint64(key)))
        return position < self._keys.size and int(self._keys[position]) == key

    def archived(self, keys: Sequence[int]) -> list[bool]:
        """For each key, whether the arrays (the levels no longer held in dicts) have it: one
        batched lookup."""
        if not self._keys.size or not keys:
            return [False] * len(keys)
        wanted = np.fromiter(keys, dtype=np.uint64, count=len(keys))
        positions = np.searchsorted(self._keys, wanted)
        positions[positions == self._keys.size] = 0
        found: list[bool] = (self._keys[positions] == wanted).tolist()
        return found

    def recent_levels(self) -> Callable[[], list[dict[int, int | None]]]:
        """A function giving the levels held in dicts, newest first, as containers of keys
        (lookups never touch the arrays: an expander that misses an old key only judges a
        state twice)."""
        return lambda: self._levels[::-1]

    def known_among(self, keys: Sequence[int]) -> list[bool]:
        """For each key, whether the store has it (one batched lookup in the arrays)."""
        found = [self.in_recent(key) for key in keys]
        if self._keys.size:
            missing = [i for i, hit in enumerate(found) if not hit]
            if missing:
                wanted = np.fromiter(
                    (keys[i] for i in missing), dtype=np.uint64, count=len(missing)
                )
                positions = np.searchsorted(self._keys, wanted)
                positions[positions == self._keys.size] = 0
                hits = self._keys[positions] == wanted
                for i, hit in zip(missing, hits.tolist(), strict=True):
                    found[i] = hit
        return found

    def next_level(self, keep: int = 2) -> None:
        """Start a new level; levels older than the newest `keep` move into the arrays."""
        self._levels.append({})
        while len(self._levels) > keep + 1:
            self._archive(self._levels.pop(0))

    def _archive(self, level: dict[int, int | None]) -> None:
        if not level:
            return
        keys = np.fromiter(level.keys(), dtype=np.uint64, count=len(level))
        parents = np.fromiter(
            (_NONE if parent is None else parent for parent in level.values()),
            dtype=np.uint64,
            count=len(level),
        )
        order = np.argsort(keys, kind="stable")
        keys, parents = keys[order], parents[order]
        positions = np.searchsorted(self._keys, keys)
        self._keys = np.insert(self._keys, positions, keys)
        self._parents = np.insert(self._parents, positions, parents)
        bits = len(self._filter) * 8
        if self._keys.size * 8 > bits:
            # Too many keys for the filter's size: a larger one, filled with every key.
            while self._keys.size * 8 > bits:
                bits *= 2
            self._filter = bytearray(bits >> 3)
            self._filter_mask = bits - 1
            self._mark(self._keys)
        else:
            self._mark(keys)

    def _mark(self, keys: np.ndarray) -> None:
        """Set the filter's bit of every key."""
        bits = keys & np.uint64(self._filter_mask)
        filter_view = np.frombuffer(self._filter, dtype=np.uint8)
        np.bitwise_or.at(
            filter_view,
            (bits >> np.uint64(3)).astype(np.int64),
            (np.uint8(1) << (bits & np.uint64(7)).astype(np.uint8)),
        )

    def nbytes(self) -> int:
        """Bytes held by the arrays and the filter (the dicts of recent levels are not
        counted)."""
        return int(self._keys.nbytes + self._parents.nbytes + len(self._filter))

    def archive_all(self) -> None:
        """Move every level into the arrays (at the end of a search: memory, not speed)."""
        while len(self._levels) > 1:
            self._archive(self._levels.pop(0))
        self._archive(self._levels[0])
        self._levels = [{}]


def path_to(store: Mapping[int, int | None], key: int) -> tuple[int, ...]:
    """Keys from an initial state to `key` along breadth-first parents."""
    path = [key]
    parent = store[key]
    while parent is not None:
        path.append(parent)
        parent = store[parent]
    return tuple(reversed(path))
