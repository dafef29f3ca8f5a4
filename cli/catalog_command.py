"""`groupspec rules` and `groupspec invariants`: the spec's named rules and properties."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groupspec.cli.arguments import document_to_update
from groupspec.coverage.rule_index import (
    CATALOGS,
    GENERATED_END,
    rule_index_markdown,
    rule_places,
    with_generated_index,
)
from groupspec.models.world_properties import WORLD_PROPERTIES
from groupspec.spec.consumer.invariants import CONSUMER_ACTION_PROPERTIES, CONSUMER_INVARIANTS
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `rules` and `invariants` subcommands."""
    rules = commands.add_parser(
        "rules",
        help="list every rule of the specification and where it is implemented",
        description=(
            "List a rule catalog (the coordinator's spec/rules.py or the consumer's "
            "spec/consumer/rules.py) with the functions that apply each rule."
        ),
    )
    rules.add_argument(
        "--catalog",
        choices=[catalog.name for catalog in CATALOGS],
        default="coordinator",
        help="which side's rules to list (default: coordinator)",
    )
    rules.add_argument(
        "--markdown", action="store_true", help="print the rule index of docs/spec.md"
    )
    rules.add_argument(
        "--update-doc",
        type=document_to_update,
        metavar="FILE",
        help="rewrite every generated rule index between markers in FILE (docs/spec.md, docs/consumer.md)",
    )
    rules.set_defaults(run=run_rules)
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


def run_rules(args: argparse.Namespace) -> int:
    """Print the rule catalog."""
    if args.update_doc is not None:
        return _update_doc(args.update_doc)
    catalog = next(catalog for catalog in CATALOGS if catalog.name == args.catalog)
    if args.markdown:
        print(rule_index_markdown(catalog), end="")
        return 0
    places = rule_places(catalog)
    for rule in catalog.rules:
        where = ", ".join(
            sorted({f"{p.module}:{p.function}" for p in places.get(rule.rule_id, [])})
        )
        flag = " [defensive]" if getattr(rule, "defensive", False) else ""
        only = getattr(rule, "profile_only", "")  # consumer rules hold for every release
        if only:
            flag = f" [{only}]"
        print(f"{rule.rule_id:60} {rule.section:18} {where}{flag}")
    print(f"{len(catalog.rules)} {catalog.name} rules")
    return 0


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


def _update_doc(path: Path) -> int:
    """Replace the generated block of `path`; exit 2 if the file or its markers are missing."""
    try:
        text = path.read_text(encoding="utf-8")
        path.write_text(with_generated_index(text), encoding="utf-8")
    except ValueError as error:
        print(
            f"groupspec rules: {path}: {error} (expected one of "
            f"{[catalog.begin_marker for catalog in CATALOGS]} ... {GENERATED_END!r})",
            file=sys.stderr,
        )
        return 2
    print(f"updated the rule index in {path}")
    return 0
