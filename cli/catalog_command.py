"""`groupspec rules` and `groupspec invariants`: the spec's named rules and properties."""

from __future__ import annotations

import argparse
from pathlib import Path

from groupspec.checker.rule_index import (
    GENERATED_BEGIN,
    GENERATED_END,
    rule_index_markdown,
    rule_places,
    with_generated_index,
)
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS
from groupspec.spec.rules import RULES


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `rules` and `invariants` subcommands."""
    rules = commands.add_parser(
        "rules",
        help="list every rule of the specification and where it is implemented",
        description="List the rule catalog (spec/rules.py) with the functions that apply each rule.",
    )
    rules.add_argument(
        "--markdown", action="store_true", help="print the rule index of docs/spec.md"
    )
    rules.add_argument(
        "--update-doc",
        type=Path,
        metavar="FILE",
        help="rewrite the generated rule index between the markers in FILE (docs/spec.md)",
    )
    rules.set_defaults(run=run_rules)
    invariants = commands.add_parser(
        "invariants",
        help="list the named invariants and action properties",
        description="List every property the checkers evaluate, by name.",
    )
    invariants.set_defaults(run=run_invariants)


def run_rules(args: argparse.Namespace) -> int:
    """Print the rule catalog."""
    if args.update_doc is not None:
        return _update_doc(args.update_doc)
    if args.markdown:
        print(rule_index_markdown(), end="")
        return 0
    places = rule_places()
    for rule in RULES:
        where = ", ".join(
            sorted({f"{p.module}:{p.function}" for p in places.get(rule.rule_id, [])})
        )
        flag = " [defensive]" if rule.defensive else ""
        print(f"{rule.rule_id:60} {rule.section:18} {where}{flag}")
    print(f"{len(RULES)} rules")
    return 0


def run_invariants(args: argparse.Namespace) -> int:
    """Print the invariants and action properties."""
    for invariant in INVARIANTS:
        print(f"{invariant.name:28} invariant        {invariant.description}")
    for prop in ACTION_PROPERTIES:
        print(f"{prop.name:28} action property  {prop.description}")
    return 0


def _update_doc(path: Path) -> int:
    """Replace the generated block of `path`; exit 2 if the file or its markers are missing."""
    try:
        text = path.read_text(encoding="utf-8")
        path.write_text(with_generated_index(text), encoding="utf-8")
    except FileNotFoundError:
        print(f"groupspec rules: {path} does not exist")
        return 2
    except ValueError as error:
        print(
            f"groupspec rules: {path}: {error} (expected {GENERATED_BEGIN!r} ... {GENERATED_END!r})"
        )
        return 2
    print(f"updated the rule index in {path}")
    return 0
