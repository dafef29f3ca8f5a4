"""Kafka's built-in assignors by protocol name, and which of them promise a complete assignment."""

from __future__ import annotations

from types import MappingProxyType

from groupspec.vocabulary.errors import InputError

from .base import Assignor
from .cooperative_sticky import CooperativeStickyAssignor
from .eager_sticky import StickyAssignor
from .range import RangeAssignor
from .roundrobin import RoundRobinAssignor


class UnknownAssignorError(InputError):
    """A protocol name that is not one of Kafka's built-in assignors."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown assignor {name!r}; known: {', '.join(sorted(ASSIGNORS))}")
        self.name = name


ASSIGNORS: MappingProxyType[str, Assignor] = MappingProxyType(
    {
        assignor.name: assignor
        for assignor in (
            RangeAssignor(),
            RoundRobinAssignor(),
            StickyAssignor(),
            CooperativeStickyAssignor(),
        )
    }
)

# Assignors whose every result assigns every partition of every subscribed existing topic.
# cooperative-sticky is not one: it withholds partitions that change owner until the next round.
COMPLETE_ASSIGNORS: frozenset[str] = frozenset({"range", "roundrobin", "sticky"})


def assignor_named(name: str) -> Assignor:
    """The built-in assignor offered under `name`."""
    try:
        return ASSIGNORS[name]
    except KeyError:
        raise UnknownAssignorError(name) from None
