"""One `--json` convention across commands: `--json FILE` writes the document to FILE and
leaves the text as it is; `--json -` prints the document alone on stdout, the text on stderr."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from groupspec.cli.main import build_parser, main
from groupspec.cli.output import JSON_HELP, json_destination
from groupspec.conformance.impl_traces import write_impl_trace

DOCS = Path(__file__).resolve().parent.parent / "docs"

# Every command with --json (docs/cli.md lists them in the paragraph on the convention).
COMMANDS_WITH_JSON = {
    ("assignors",),
    ("bench", "checker"),
    ("bench", "impl"),
    ("bench", "oracle"),
    ("bench", "serve"),
    ("bench", "spark"),
    ("bench", "stickiness"),
    ("bugs",),
    ("campaign",),
    ("check",),
    ("coverage",),
    ("mutation",),
    ("simulate",),
    ("swarm",),
    ("validate",),
    ("vectors",),
}


def _json_options(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], argparse.Action]:
    """Every command's `--json` option, by the command's words."""
    found = {}
    for action in parser._actions:
        if "--json" in action.option_strings:
            found[path] = action
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_json_options(sub, (*path, name)))
    return found


def test_every_json_option_takes_a_file_or_dash():
    options = _json_options(build_parser())
    assert set(options) == COMMANDS_WITH_JSON
    for command, action in options.items():
        assert action.metavar == "FILE", command
        # `-` or a file the command can write, checked while parsing (before any work).
        assert action.type is json_destination and action.nargs is None, command
        assert JSON_HELP in (action.help or ""), command
    convention = (
        (DOCS / "cli.md").read_text().split("**`--json FILE`, the same in every command.")[1]
    )
    for command in options:
        assert f"`{command[-1]}`" in convention.split("\n\n")[0], command


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    with path.open("w") as out:
        write_impl_trace(out, seed=1, duration_ms=60_000, consumers=2)
    return path


def _space(tmp_path: Path) -> Path:
    space = tmp_path / "space.toml"
    space.write_text(
        '[swarm]\ndescription = "tiny"\npreset = "eager-2"\n'
        "[budget]\nmax_states = 200\n"
        "[parameters]\nevictions = [0]\ncommits = [0]\n"
    )
    return space


# Each command, run cheaply; the --json option is appended by the test. (`assignors --json -`
# is what tests/test_assignors_cli.py reads its results from.)
RUNS = {
    "check": lambda tmp: ["check", "two-phase", "--quiet"],
    "coverage": lambda tmp: ["coverage", "--recorded"],
    "simulate": lambda tmp: ["simulate", "eager-2", "--runs", "1", "--steps", "5", "--quiet"],
    "swarm": lambda tmp: ["swarm", str(_space(tmp)), "--runs", "1"],
    "validate": lambda tmp: ["validate", str(_trace(tmp)), "--no-shrink"],
    "bench checker": lambda tmp: ["bench", "checker", "--preset", "two-phase:3", "--workers", "1"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_json_dash_prints_the_document_alone_and_json_file_writes_it(name, tmp_path, capsys):
    argv = RUNS[name](tmp_path)
    code = main([*argv, "--json", "-"])
    printed = capsys.readouterr()
    document = json.loads(printed.out)  # stdout is the JSON document and nothing else
    assert printed.err.strip(), "the text went to stderr"
    report = tmp_path / "report.json"
    assert main([*argv, "--json", str(report)]) == code
    again = capsys.readouterr()
    assert again.out.strip() and not again.out.lstrip().startswith(("{", "[")), "text on stdout"
    written = json.loads(report.read_text())
    assert type(written) is type(document)
    if isinstance(document, dict):
        assert set(written) == set(document)


def test_every_command_with_json_writes_it_through_the_one_writer():
    """The commands not run above (their runs take minutes, or Java) write their document the
    same way: through `write_json`, which knows `-`."""
    cli = Path(__file__).resolve().parent.parent / "cli"
    for module in sorted(cli.glob("*_command.py")):
        source = module.read_text()
        if "add_json_option(" not in source:
            continue
        assert "write_json(args, " in source, module.name
        assert "write_atomically(args.json" not in source, module.name


def test_a_json_destination_is_dash_or_a_writable_file(tmp_path, capsys):
    # `-` is stdout; a directory or a file under a missing directory is refused while parsing.
    assert main(["check", "eager-2", "--json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["check", "eager-2", "--json", str(tmp_path / "no" / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
