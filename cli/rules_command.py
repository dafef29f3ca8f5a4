"""`groupspec rules`: every rule of the specification (the coordinator's or the consumer's)
and the functions that apply it; the rule indexes of docs/spec.md and docs/consumer.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groupspec.cli.arguments import document_to_update
from groupspec.coverage.rule_index import (
    GENERATED_END,
    SIDES,
    rule_index_markdown,
    rule_places,
    with_generated_index,
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `rules` subcommand."""
    rules = commands.add_parser(
        "rules",
        help="list every rule of the specification and where it is implemented",
        description=(
            "List one side's rules (the coordinator's spec/rules.py, the consumer's "
            "spec/consumer/rules.py or the KIP-848 coordinator's spec/kip848/rules.py) with "
            "the functions that apply each rule."
        ),
    )
    rules.add_argument(
        "--side",
        choices=[side.name for side in SIDES],
        default="coordinator",
        help="which side's rules to list (default: coordinator)",
    )
    # The option's name until the word "catalog" was kept for the bug catalog; still accepted.
    rules.add_argument(
        "--catalog", dest="side", choices=[side.name for side in SIDES], help=argparse.SUPPRESS
    )
    rules.add_argument(
        "--markdown", action="store_true", help="print the rule index of docs/spec.md"
    )
    rules.add_argument(
        "--update-doc",
        type=document_to_update,
        metavar="FILE",
        help=(
            "rewrite every generated rule index between markers in FILE "
            "(docs/spec.md, docs/consumer.md, docs/kip-848.md)"
        ),
    )
    rules.set_defaults(run=run_rules)


def run_rules(args: argparse.Namespace) -> int:
    """Print one side's rules, or its rule index."""
    if args.update_doc is not None:
        return _update_doc(args.update_doc)
    side = next(side for side in SIDES if side.name == args.side)
    if args.markdown:
        print(rule_index_markdown(side), end="")
        return 0
    places = rule_places(side)
    for rule in side.rules:
        where = ", ".join(
            sorted({f"{p.module}:{p.function}" for p in places.get(rule.rule_id, [])})
        )
        flag = " [defensive]" if getattr(rule, "defensive", False) else ""
        only = getattr(rule, "profile_only", "")  # consumer rules hold for every release
        if only:
            flag = f" [{only}]"
        print(f"{rule.rule_id:60} {rule.section:18} {where}{flag}")
    print(f"{len(side.rules)} {side.name} rules")
    return 0


def _update_doc(path: Path) -> int:
    """Replace the generated block of `path`; exit 2 if the file or its markers are missing."""
    try:
        text = path.read_text(encoding="utf-8")
        path.write_text(with_generated_index(text), encoding="utf-8")
    except ValueError as error:
        print(
            f"groupspec rules: {path}: {error} (expected one of "
            f"{[marker for side in SIDES for marker in side.markers]} ... {GENERATED_END!r})",
            file=sys.stderr,
        )
        return 2
    print(f"updated the rule index in {path}")
    return 0
