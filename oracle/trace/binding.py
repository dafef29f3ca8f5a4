"""Member ids: the specification spells them its way, the observed coordinator its own.

Kafka leaves a new member id's text to the implementation (a UUID in Kafka, `<prefix>-<n>` in
the specification). The oracle keeps, per hypothesis, a bijection between the two, extended the
first time a response shows an id. Observed requests are translated into the specification's
vocabulary through it; an observed id that nothing bound (a stale or invented id) gets a
spelling no specification id can have, so it can never be mistaken for one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .comparison import Bag, MemberId

_UNBOUND = "\x00"


class Binding:
    """An immutable bijection between specification and observed member ids."""

    __slots__ = ("_backward", "_forward", "_hash")

    def __init__(self, forward: dict[str, str] | None = None) -> None:
        self._forward: dict[str, str] = forward or {}
        self._backward: dict[str, str] = {o: s for s, o in self._forward.items()}
        self._hash: int | None = None

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._forward.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Binding) and self._forward == other._forward

    def __len__(self) -> int:
        return len(self._forward)

    def observed_spelling(self) -> dict[str, str]:
        """Specification id -> observed id, for every bound id."""
        return self._forward

    def to_spec(self, observed: str) -> str:
        """The specification's spelling of an observed member id."""
        if observed == "":
            return ""
        bound = self._backward.get(observed)
        return bound if bound is not None else _UNBOUND + observed

    def to_observed(self, spec_id: str) -> str | None:
        """The observed spelling of a specification id, or None if it is not bound yet."""
        if spec_id.startswith(_UNBOUND):
            return spec_id[1:]
        if spec_id == "":
            return ""
        return self._forward.get(spec_id)

    def render(self, spec_id: str) -> str:
        """A specification id for a report: its observed spelling, or the id marked unbound."""
        observed = self.to_observed(spec_id)
        return observed if observed is not None else f"<new id {spec_id}>"

    def with_pair(self, spec_id: str, observed: str) -> Binding:
        """The binding extended by one pair."""
        forward = dict(self._forward)
        forward[spec_id] = observed
        return Binding(forward)

    def unify(self, expected: Any, observed: Any) -> Iterator[Binding]:
        """Every extension of this binding under which `observed` equals `expected`.

        `expected` is in the specification's vocabulary; `MemberId`s compare through the
        binding and `Bag`s as multisets (several extensions when identical members differ
        only by id).
        """
        yield from _unify(expected, observed, self)

    def adopt(self, expected: Any, observed: Any) -> Binding:
        """This binding extended, best effort, by the ids `observed` shows where `expected` has
        an id in the same place, when the two responses differ elsewhere (resynchronizing
        after a divergence): ids already bound either way are left as they are."""
        return _adopt(expected, observed, self)


def _unify(expected: Any, observed: Any, binding: Binding) -> Iterator[Binding]:
    if isinstance(expected, MemberId):
        if not isinstance(observed, MemberId):
            return
        spec_id, seen = expected.value, observed.value
        bound = binding.to_observed(spec_id)
        if bound is not None:
            if bound == seen:
                yield binding
            return
        if seen in binding._backward or seen == "" or seen.startswith(_UNBOUND):
            return
        yield binding.with_pair(spec_id, seen)
        return
    if isinstance(expected, Bag):
        if not isinstance(observed, Bag) or len(expected.items) != len(observed.items):
            return
        yield from _unify_bag(list(expected.items), list(observed.items), binding)
        return
    if isinstance(expected, tuple):
        if not isinstance(observed, tuple) or len(expected) != len(observed):
            return
        yield from _unify_all(expected, observed, 0, binding)
        return
    if expected == observed:
        yield binding


def _unify_all(
    expected: tuple[Any, ...], observed: tuple[Any, ...], index: int, binding: Binding
) -> Iterator[Binding]:
    if index == len(expected):
        yield binding
        return
    for extended in _unify(expected[index], observed[index], binding):
        yield from _unify_all(expected, observed, index + 1, extended)


def _unify_bag(expected: list[Any], observed: list[Any], binding: Binding) -> Iterator[Binding]:
    if not expected:
        yield binding
        return
    first, rest = expected[0], expected[1:]
    seen: set[Binding] = set()
    for position, candidate in enumerate(observed):
        for extended in _unify(first, candidate, binding):
            remaining = observed[:position] + observed[position + 1 :]
            for complete in _unify_bag(rest, remaining, extended):
                if complete not in seen:
                    seen.add(complete)
                    yield complete


def _adopt(expected: Any, observed: Any, binding: Binding) -> Binding:
    if isinstance(expected, MemberId):
        if isinstance(observed, MemberId):
            return next(_unify(expected, observed, binding), binding)
        return binding
    if isinstance(expected, Bag) and isinstance(observed, Bag):
        return next(_unify(expected, observed, binding), binding)
    if (
        isinstance(expected, tuple)
        and isinstance(observed, tuple)
        and len(expected) == len(observed)
    ):
        for one, other in zip(expected, observed, strict=True):
            binding = _adopt(one, other, binding)
    return binding
