"""`groupspec partition GROUP...`: which offsets partition (and so which coordinator) owns a group."""

from __future__ import annotations

import argparse
import sys

from groupspec.spec.hashing import java_string_hash, kafka_utils_abs, partition_for


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `partition` subcommand."""
    parser = commands.add_parser(
        "partition",
        help="the __consumer_offsets partition of group ids (Java hashCode semantics)",
        description="Print abs(groupId.hashCode()) % offsets.topic.num.partitions for each group id.",
    )
    parser.add_argument("group_ids", nargs="+", metavar="GROUP_ID")
    parser.add_argument(
        "--partitions", type=int, default=50, help="offsets.topic.num.partitions (default 50)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one line per group id."""
    if args.partitions <= 0:
        print(
            f"groupspec partition: --partitions must be positive, got {args.partitions}",
            file=sys.stderr,
        )
        return 2
    for group_id in args.group_ids:
        h = java_string_hash(group_id)
        print(
            f"{group_id}\thashCode={h}\tabs={kafka_utils_abs(h)}\tpartition={partition_for(group_id, args.partitions)}"
        )
    return 0
