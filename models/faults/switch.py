"""What a fault switch is: a historical Kafka bug re-introduced into the group world.

A switch never changes the specification. It rewrites what the correct specification sees or
does, at the hooks the world calls on every step; each hook's default is the correct behaviour,
so a switch overrides only the hooks its bug touched. Its catalog entry (`Bug`) says which
property must fail, under which preset and bounds, and how long the shortest counterexample is.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from groupspec.spec import Input, Outcome
from groupspec.spec.consumer import ConsumerEvent, ConsumerOutcome, ConsumerState
from groupspec.spec.events import TimerEvent
from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary.requests import Request


@dataclass(frozen=True)
class Bug:
    """One catalog entry: a fault (or none), the property it breaks, and where to look."""

    name: str
    reference: str
    what_went_wrong: str
    fault: str
    property_name: str
    preset: str
    overrides: Mapping[str, str] = field(default_factory=dict)
    counterexample_length: int = 0
    expected: bool = False
    # A failure of the correct protocol that the checker found: not a historical bug, not
    # documented behaviour (docs/bugs.md explains each).
    finding: bool = False

    def all_overrides(self) -> dict[str, str]:
        """The `--set` overrides, including the fault parameter."""
        overrides = dict(self.overrides)
        if self.fault:
            overrides["fault"] = self.fault
        return overrides


class FaultSwitch:
    """The hooks a group world calls on every step; each default is the correct behaviour.

    Hooks must be pure and must not read a client's slot index: symmetry permutes
    interchangeable clients, and a switch has to commute with that (tests compare the orbits).
    """

    # The `--set fault=NAME` value, a one-line summary, and the catalog entry.
    name: str = ""
    summary: str = "no fault: the correct protocol"
    bug: Bug | None = None
    # Action kinds only this fault's steps carry (for action coverage).
    extra_action_kinds: tuple[str, ...] = ()
    # Whether `request_seen` may differ from what the client sent (the world then remembers
    # coordinator steps by both).
    rewrites_requests: bool = False

    def request_seen(self, coordinator: CoordinatorState, request: Request) -> Request:
        """What the coordinator reads when a client sent `request`."""
        del coordinator
        return request

    def coordinator_outcome(
        self, before: CoordinatorState, event: Input, outcome: Outcome
    ) -> Outcome:
        """The coordinator's outcome of `event` in `before`, as the buggy coordinator had it."""
        del before, event
        return outcome

    def consumer_outcome(
        self, consumer: ConsumerState, event: ConsumerEvent, outcome: ConsumerOutcome
    ) -> ConsumerOutcome:
        """The consumer's outcome of `event`, as the buggy client had it."""
        del consumer, event
        return outcome

    def may_lose(self, request: Request) -> bool:
        """Whether `request` may never reach the coordinator (a step of its own)."""
        del request
        return False

    def timer_enabled(self, timer: TimerEvent) -> bool:
        """Whether the coordinator has this timer at all."""
        del timer
        return True


NO_FAULT = FaultSwitch()


class _Named(Protocol):
    name: str


Plugin = TypeVar("Plugin", bound=_Named)


def reference_order(name: str) -> tuple[str, int, str]:
    """A sort key putting KAFKA-2555 before KAFKA-12890 (by number), then KIP-429 and others."""
    match = re.fullmatch(r"([A-Z]+)-(\d+)", name)
    return (match.group(1), int(match.group(2)), "") if match else ("~", 0, name)


def discover(
    package: str, path: Iterable[str], attribute: str, kind: type[Plugin]
) -> tuple[Plugin, ...]:
    """The `attribute` of each module of `package` (its `switch` module aside), each a named
    `kind`, in reference order; TypeError naming the module otherwise."""
    found = []
    for module in pkgutil.iter_modules(path):
        if module.name == "switch":
            continue
        plugin = getattr(importlib.import_module(f"{package}.{module.name}"), attribute)
        if not isinstance(plugin, kind) or not plugin.name:
            raise TypeError(f"{package}.{module.name}.{attribute} must be a named {kind.__name__}")
        found.append(plugin)
    return tuple(sorted(found, key=lambda plugin: reference_order(plugin.name)))


def plugin_named(registry: Mapping[str, Plugin], name: str, correct: Plugin, what: str) -> Plugin:
    """The plug-in of `registry` called `name`, `correct` (the correct protocol) for "";
    KeyError naming the `what` plug-ins known otherwise."""
    if not name:
        return correct
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "none"
        raise KeyError(f"unknown {what} {name!r}; known: {known}") from None
