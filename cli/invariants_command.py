"""`groupspec invariants`: every property a group world is checked against, by name."""

from __future__ import annotations

import argparse

from groupspec.models.world_properties import WORLD_PROPERTIES
from groupspec.spec.consumer.invariants import CONSUMER_ACTION_PROPERTIES, CONSUMER_INVARIANTS
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `invariants` subcommand."""
    invariants = commands.add_parser(
        "invariants",
        help="list every property a group world is checked against",
        description=(
            "List every property the checkers evaluate, by name: the coordinator's, each "
            "consumer's, and the world's that relate clients to the coordinator (with the "
            "liveness property Convergence)."
        ),
    )
    invariants.set_defaults(run=run_invariants)


def run_invariants(args: argparse.Namespace) -> int:
    """Print every property, by the side it judges."""
    del args
    rows = [
        *(("coordinator", p.name, "invariant", p.description) for p in INVARIANTS),
        *(("coordinator", p.name, "action property", p.description) for p in ACTION_PROPERTIES),
        *(("consumer", p.name, "invariant", p.description) for p in CONSUMER_INVARIANTS),
        *(
            ("consumer", p.name, "action property", p.description)
            for p in CONSUMER_ACTION_PROPERTIES
        ),
        *(("world", p.name, p.kind, p.description) for p in WORLD_PROPERTIES),
    ]
    for side, name, kind, description in rows:
        print(f"{side:12} {name:38} {kind:16} {description}")
    return 0
