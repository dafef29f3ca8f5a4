"""Registering a deliberately failing property the documented way, in a fresh interpreter.

`python tests/canary_support.py KIND PRESET` adds one always-failing property of KIND to the
registry docs/extending.md names for it, as a model author would by editing that registry, then
checks PRESET (a group-world preset) and prints the verdict and the failed properties as JSON.
A fresh interpreter plays the part of the edited source: every module sees the registry as
edited from the start, nothing remembered from an earlier check leaks in.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

CANARY = "Canary"


def _canary_problems(*_: object) -> list[str]:
    return ["the canary always fails"]


def _never(*_: object) -> bool:
    return False


def register(kind: str) -> None:
    """Add an always-failing property of `kind` to its registry."""
    from groupspec.models import world_properties as world
    from groupspec.spec import invariants as coordinator
    from groupspec.spec.consumer import invariants as consumer

    if kind == "coordinator-invariant":
        coordinator.INVARIANTS = (
            *coordinator.INVARIANTS,
            coordinator.Invariant(CANARY, "fails", _canary_problems),
        )
    elif kind == "coordinator-action":
        coordinator.ACTION_PROPERTIES = (
            *coordinator.ACTION_PROPERTIES,
            coordinator.ActionProperty(CANARY, "fails", _canary_problems),
        )
    elif kind == "consumer-invariant":
        consumer.CONSUMER_INVARIANTS = (
            *consumer.CONSUMER_INVARIANTS,
            consumer.Invariant(CANARY, "fails", _canary_problems),
        )
    elif kind == "consumer-action":
        consumer.CONSUMER_ACTION_PROPERTIES = (
            *consumer.CONSUMER_ACTION_PROPERTIES,
            consumer.ConsumerActionProperty(CANARY, "fails", _canary_problems),
        )
    elif kind == "world-invariant":
        world.WORLD_PROPERTIES = (
            *world.WORLD_PROPERTIES,
            world.WorldInvariant(
                CANARY, "fails", (world.WorldPart((world.COORDINATOR,), _canary_problems),)
            ),
        )
    elif kind == "world-action-coordinator-step":
        world.WORLD_PROPERTIES = (
            *world.WORLD_PROPERTIES,
            world.WorldActionProperty(CANARY, "fails", on_coordinator_step=_canary_problems),
        )
    elif kind == "world-action-leader-assignment":
        world.WORLD_PROPERTIES = (
            *world.WORLD_PROPERTIES,
            world.WorldActionProperty(CANARY, "fails", on_leader_assignment=_canary_problems),
        )
    elif kind == "world-liveness":
        convergence = next(p for p in world.WORLD_PROPERTIES if p.name == "Convergence")
        assert isinstance(convergence, world.WorldLiveness)
        never = replace(convergence.goal, check=_never)
        world.WORLD_PROPERTIES = (
            *world.WORLD_PROPERTIES,
            replace(convergence, name=CANARY, goal=never),
        )
    else:
        raise SystemExit(f"unknown canary kind {kind!r}")


def main(kind: str, preset: str) -> None:
    """Register the canary, check the preset, print the verdict and the failed properties."""
    register(kind)
    from groupspec.checker.check import check
    from groupspec.models.preset_models import load_model

    result = check(load_model(preset).model)
    print(json.dumps({"verdict": result.verdict, "failed": list(result.failed)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
