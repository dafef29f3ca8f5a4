"""`groupspec replay FILE`: re-run the counterexamples of a `groupspec check --json` file (or of
every configuration of a `groupspec swarm --json` report)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groupspec.checker.check_report import JSON_FORMAT_VERSION as CHECK_FORMAT
from groupspec.checker.check_report import edited_fields, run_lines
from groupspec.checker.describe import (
    describe_run,
    format_change,
    format_description,
    violating_step,
)
from groupspec.checker.model import Transition
from groupspec.checker.replay import ReplayFailed, replay
from groupspec.models.preset_models import ModelLoadError, load_model
from groupspec.swarm.report import JSON_FORMAT_VERSION as SWARM_FORMAT
from groupspec.wire.json_lines import JsonInputError, LineDecodeError, decoded_lines, loads_strict

EXIT_REPRODUCED, EXIT_USAGE = 1, 2


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `replay` subcommand."""
    parser = commands.add_parser(
        "replay",
        help="replay the counterexamples recorded by `check --json` (or `swarm --json`)",
        description=(
            "Follow each recorded counterexample step by step with the current code and check "
            "the violated property again. Exit 1 when every violation reproduces, 0 when none "
            "does any more, 2 when the file is malformed or a trace cannot be followed."
        ),
    )
    parser.add_argument(
        "file",
        type=Path,
        help="a JSON file written by `groupspec check --json` or `groupspec swarm --json`",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="print every state of each trace whole (by default: what each step changed)",
    )
    parser.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="print only the state after step N of each trace (0: the initial state), with "
        "what that step changed",
    )
    parser.set_defaults(run=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    """Replay every violation in the file and report whether it still happens."""
    if args.step is not None and args.step < 0:
        print(f"groupspec replay: --step must be 0 or more, got {args.step}", file=sys.stderr)
        return EXIT_USAGE
    try:
        checks = check_documents(args.file)
    except ValueError as error:
        print(f"groupspec replay: {error}", file=sys.stderr)
        return EXIT_USAGE
    reproduced = total = 0
    for heading, document in checks:
        try:
            loaded = load_model(document["preset_file"], document["overrides"])
        except ModelLoadError as error:
            print(f"groupspec replay: {error}", file=sys.stderr)
            return EXIT_USAGE
        if heading:
            print(heading)
        for index, violation in enumerate(document["violations"], start=1):
            labels = [step["label"] for step in violation["trace"]]
            states = [step.get("state") for step in violation["trace"]]
            where = f"{args.file}: {heading}" if heading else str(args.file)
            try:
                result = replay(
                    loaded.model, violation["kind"], violation["property"], labels, states
                )
            except ReplayFailed as error:
                print(f"groupspec replay: {where}: violation {index}: {error}", file=sys.stderr)
                return EXIT_USAGE
            if args.step is not None and args.step > len(result.steps):
                print(
                    f"groupspec replay: {where}: violation {index} has {len(result.steps)} "
                    f"steps; --step {args.step} is none of them",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            print(f"violation {index}: {violation['kind']} {violation['property']}")
            marked = violating_step(violation["kind"], len(result.steps))
            if args.step is None:
                for line in run_lines(
                    loaded.model, result.initial, result.steps, full=args.full, marked=marked
                ):
                    print(line)
            else:
                for line in _one_state(loaded.model, result.initial, result.steps, args.step):
                    print(line)
            total += 1
            if result.reproduced:
                reproduced += 1
                print("  reproduced: " + "; ".join(result.details))
            else:
                print("  NOT reproduced: the property holds at the end of this trace now")
    print(f"{reproduced}/{total} violations reproduced")
    return EXIT_REPRODUCED if total and reproduced == total else 0


def _one_state(
    model: Any, initial: Any, steps: Sequence[Transition[Any]], number: int
) -> list[str]:
    """The state after step `number` of a replayed trace (0: the initial state), with the step
    and what it changed."""
    run = describe_run(model, initial, steps[:number])
    if number == 0:
        lines = [f"  the initial state (the trace has {len(steps)} steps):"]
    else:
        lines = [
            f"  step {number} of {len(steps)}: {steps[number - 1].label}",
            "  what it changed:",
        ]
        lines += [f"       {format_change(change)}" for change in run.steps[-1].changes]
        lines.append("  the state after it:")
    return lines + format_description(run.state(number), " " * 7)


def check_documents(path: Path) -> list[tuple[str | None, dict[str, Any]]]:
    """The check results in `path` with a heading each: the file itself (`check --json`), or
    each configuration of a `swarm --json` report that found violations (its number)."""
    try:
        text = "".join(decoded_lines(path.read_bytes().splitlines(keepends=True)))
        document = loads_strict(text)
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error.strerror or error}") from None
    except LineDecodeError as error:
        raise ValueError(f"{path}: {error}") from None
    except JsonInputError as error:
        where = f"{path}: line {error.line}" if error.line else str(path)
        raise ValueError(f"{where}: {error.problem}") from None
    if isinstance(document, dict) and isinstance(document.get("configurations"), list):
        _check_format(document, SWARM_FORMAT, str(path))
        checks: list[tuple[str | None, dict[str, Any]]] = []
        for configuration in document["configurations"]:
            number = configuration.get("number") if isinstance(configuration, dict) else None
            check = configuration.get("check") if isinstance(configuration, dict) else None
            where = f"configuration {number}"
            if not isinstance(check, dict):
                raise ValueError(f"{path}: {where}: no check result")
            if check.get("violations"):
                heading = f"{where}: {configuration.get('command', '')}".rstrip(": ")
                checks.append((heading, _validated(check, f"{path}: {where}")))
        return checks
    return [(None, _validated(document, str(path)))]


def _validated(document: object, where: str) -> dict[str, Any]:
    """A check result, validated enough to replay; ValueError names what is wrong."""
    if not isinstance(document, dict):
        raise ValueError(f"{where}: expected a JSON object from `groupspec check --json`")
    _check_format(document, CHECK_FORMAT, where)
    edited = edited_fields(document)
    if edited:
        raise ValueError(
            f"{where}: {', '.join(map(repr, edited))} edited after the file was written "
            "(its digest no longer matches); replay the file `groupspec check --json` wrote"
        )
    for key, kind in (("preset_file", str), ("overrides", dict), ("violations", list)):
        if not isinstance(document.get(key), kind):
            raise ValueError(f"{where}: key {key!r} missing or not a {kind.__name__}")
    for index, violation in enumerate(document["violations"], start=1):
        if not isinstance(violation, dict) or not isinstance(violation.get("trace"), list):
            raise ValueError(f"{where}: violation {index} has no trace")
        for key in ("kind", "property"):
            if not isinstance(violation.get(key), str):
                raise ValueError(f"{where}: violation {index}: key {key!r} missing")
        for number, step in enumerate(violation["trace"], start=1):
            if not isinstance(step, dict) or not isinstance(step.get("label"), str):
                raise ValueError(f"{where}: violation {index}, step {number}: no label")
    return document


def _check_format(document: dict[str, Any], version: int, where: str) -> None:
    found = document.get("format")
    if found != version:
        raise ValueError(f'{where}: "format" {found!r}; this groupspec replays format {version}')
