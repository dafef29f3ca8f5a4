"""docs/ci/groupspec-model-check.yml runs commands this program accepts, on every preset."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from groupspec.cli.main import build_parser
from groupspec.models.preset_models import group_preset_names, preset_names
from groupspec.models.presets import KIP848_KIND, MIXED_KIND

WORKFLOW = Path(__file__).resolve().parent.parent / "docs" / "ci" / "groupspec-model-check.yml"


def run_commands(text: str) -> list[str]:
    """Every `run:` command of a workflow, folded (`>-`) blocks joined into one line."""
    commands: list[str] = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = re.match(r"^(\s*)(?:- )?run: (.*)$", line)
        if not match:
            continue
        indent, value = len(match.group(1)), match.group(2).strip()
        if value not in (">-", ">", "|"):
            commands.append(value)
            continue
        block = []
        for following in lines[number + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            block.append(following.strip())
        commands.append(" ".join(part for part in block if part))
    return commands


def matrix_presets(text: str) -> list[str]:
    match = re.search(r"preset: \[([^\]]*)\]", text)
    assert match, "the workflow has no preset matrix"
    return [name.strip() for name in match.group(1).split(",")]


def test_the_workflow_checks_every_group_preset():
    presets = matrix_presets(WORKFLOW.read_text(encoding="utf-8"))
    # The group presets, the KIP-848 worlds and the mixed-group worlds (classic and KIP-848
    # consumers together).
    expected = (*group_preset_names(), *preset_names(KIP848_KIND), *preset_names(MIXED_KIND))
    assert sorted(presets) == sorted(expected)


def test_every_groupspec_command_of_the_workflow_parses():
    text = WORKFLOW.read_text(encoding="utf-8")
    commands = [c for c in run_commands(text) if c.startswith("groupspec ")]
    assert {shlex.split(c)[1] for c in commands} == {"bugs", "check", "diagram"}
    parser = build_parser()
    for command in commands:
        for preset in matrix_presets(text):
            argv = shlex.split(command.replace("${{ matrix.preset }}", preset))[1:]
            args = parser.parse_args(argv)
            if args.command == "check":
                assert args.preset == preset and args.diagram and args.json


def test_a_wrong_option_in_a_workflow_would_be_caught():
    broken = "    steps:\n      - run: groupspec check eager-2 --diagrams x.svg\n"
    (command,) = run_commands(broken)
    with pytest.raises(SystemExit):
        build_parser().parse_args(shlex.split(command)[1:])
