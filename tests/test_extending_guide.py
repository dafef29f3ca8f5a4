"""docs/extending.md cannot go stale silently: every code name it puts in backquotes exists.

The guide is where a new contributor starts, and a guide naming functions removed months ago
sends them into code that is not there. Each backquoted span outside code blocks is resolved:
a repository path must exist, a `groupspec` command line must name a real subcommand and real
options, and a Python name must be defined somewhere in the package (a module attribute, or an
attribute of a class, such as a dataclass field or a method).
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import inspect
import pkgutil
import re
import types
from pathlib import Path

import pytest

import groupspec

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "extending.md"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(.*\))?$")
_PATH_SUFFIXES = (".py", ".md", ".toml", ".svg", ".gz", ".json", ".jsonl", ".yml")
# Words in backquotes that are values of the protocol or of TOML, not code names.
_VALUES = {"true", "false", "None", "True", "False"}
# Names of other software the guide's recipes build on (kafka-python's message base class).
_FOREIGN = {"ApiMessage"} | set(dir(builtins))


def spans(text: str) -> list[str]:
    """The backquoted spans of a Markdown text, outside fenced code blocks."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            found += re.findall(r"`([^`]+)`", line)
    return found


def _package_names() -> set[str]:
    """Every module attribute and class attribute name defined in the groupspec package."""
    names: set[str] = set()
    for info in pkgutil.walk_packages(groupspec.__path__, "groupspec."):
        if ".spark" in info.name:
            continue  # needs pyspark's JVM to import some parts; not named by the guide
        module = importlib.import_module(info.name)
        names.add(info.name.rsplit(".", 1)[-1])
        for name, value in vars(module).items():
            if getattr(value, "__module__", info.name) != info.name and not (
                name.isupper() or isinstance(value, (int, str, tuple, frozenset, types.UnionType))
            ):
                continue
            names.add(name)
            if inspect.isclass(value):
                names.update(vars(value))
                names.update(getattr(value, "__dataclass_fields__", {}))
                names.update(getattr(value, "__annotations__", {}))
    return names


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from groupspec.cli.main import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("groupspec has no subcommands")


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {option for action in parser._actions for option in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def problems(text: str) -> list[str]:
    """What in the guide's backquotes names nothing that exists."""
    names = _package_names()
    commands = _subcommands()
    found: list[str] = []
    for span in spans(text):
        if span.startswith("groupspec "):
            words = span.split()
            if len(words) < 2 or words[1].startswith("-"):
                continue
            parser = commands.get(words[1])
            if parser is None:
                found.append(f"`{span}`: no subcommand {words[1]!r}")
                continue
            options = _options(parser)
            for word in words[2:]:
                option = word.split("=")[0]
                if option.startswith("--") and option not in options:
                    found.append(f"`{span}`: {words[1]} has no option {option}")
            continue
        path = span.split()[0] if " " not in span.strip() else ""
        # A placeholder in angle brackets (spec/<module>.py) stands for any name.
        path = re.sub(r"<[a-z_]+>", "*", path)
        if path and ("/" in path or path.endswith(_PATH_SUFFIXES)) and not path.startswith("-"):
            # A placeholder in capitals (NAME, PRESET) stands for any name.
            pattern = re.sub(r"[A-Z][A-Z_]{2,}", "*", path.rstrip("/"))
            if not any(ROOT.glob(pattern)) and not (ROOT / "docs" / pattern).exists():
                found.append(f"`{span}`: no such file")
            continue
        if span in _VALUES or span in _FOREIGN or not _IDENTIFIER.match(span):
            continue
        head = span.split("(")[0]
        for part in head.split("."):
            if part not in names:
                found.append(f"`{span}`: {part!r} is defined nowhere in groupspec")
                break
    return found


def test_every_name_the_extension_guide_uses_exists():
    assert problems(GUIDE.read_text()) == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Apply it in `_handle_request`.", "_handle_request"),
        ("Guarded by `self.fault == fault_names.YOUR_FAULT`.", None),
        ("See `models/no_such_module.py`.", "no such file"),
        ("Run `groupspec chek eager-2`.", "no subcommand"),
        ("Run `groupspec check eager-2 --faults X`.", "--faults"),
    ],
)
def test_a_stale_name_is_found(text, words):
    found = problems(text)
    if words is None:
        # An expression, not a name: not resolved (the guide should not hold such spans).
        assert found == []
    else:
        assert found and words in found[0]
