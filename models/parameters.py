"""Typed, documented model parameters, read the same way from a preset file and from `--set`.

A model's parameters are the fields of a frozen dataclass. Each field declares its type (int,
bool, str, list of str, list of int), its default and, in its metadata, a one-line `doc`; the
schema below is derived from those fields, so a preset's `[parameters]` table and a
`--set name=value` override are checked against one declaration, and docs list the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

# Python annotation text -> the word used in error messages and docs.
_KINDS = {
    "int": "int",
    "bool": "bool",
    "str": "str",
    "tuple[str, ...]": "list of str",
    "tuple[int, ...]": "list of int",
}


class ParameterError(ValueError):
    """A parameter that is unknown, of the wrong type, or impossible; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Parameter:
    """One declared parameter: its name, type (as people read it), default and meaning."""

    name: str
    kind: str
    default: object
    doc: str


def documented(default: Any, doc: str) -> Any:
    """A dataclass field with `default` and a one-line `doc` (its meaning, shown in docs)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("parameter defaults must be immutable (use a tuple)")
    return field(default=default, metadata={"doc": doc})


def schema(parameters_type: type) -> Mapping[str, Parameter]:
    """Every parameter of a dataclass of parameters, in field order."""
    result = {}
    for item in fields(parameters_type):
        if item.name.startswith("_"):
            continue
        default = item.default if item.default is not MISSING else None
        result[item.name] = Parameter(
            item.name, _KINDS[str(item.type)], default, item.metadata.get("doc", "")
        )
    return result


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _known(declared: Mapping[str, Parameter], key: str) -> Parameter:
    if key not in declared:
        raise ParameterError(key, f"unknown parameter; known: {', '.join(sorted(declared))}")
    return declared[key]


def coerce(declared: Mapping[str, Parameter], key: str, value: object) -> object:
    """`value` (as read from TOML) checked against `key`'s declared type; lists become tuples."""
    kind = _known(declared, key).kind
    if kind == "int" and _is_int(value):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "str" and isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        if kind == "list of str" and all(isinstance(item, str) for item in value):
            return tuple(value)
        if kind == "list of int" and all(_is_int(item) for item in value):
            return tuple(value)
    raise ParameterError(key, f"expected {kind}, got {value!r}")


def parse_override(declared: Mapping[str, Parameter], key: str, text: str) -> object:
    """The value of `--set key=text`, parsed by `key`'s declared type (lists: comma-separated)."""
    kind = _known(declared, key).kind
    text = text.strip()
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ParameterError(key, f"expected int, got {text!r}") from None
    if kind == "bool":
        words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
        if text.lower() not in words:
            raise ParameterError(key, f"expected bool (true or false), got {text!r}")
        return words[text.lower()]
    if kind == "str":
        return text
    items = tuple(item.strip() for item in text.split(",")) if text else ()
    if kind == "list of int":
        try:
            return tuple(int(item) for item in items)
        except ValueError:
            raise ParameterError(key, f"expected comma-separated ints, got {text!r}") from None
    return items


def parse_set_options(options: list[str]) -> dict[str, str]:
    """`--set name=value` options as a mapping; raises ParameterError for a missing "="."""
    overrides: dict[str, str] = {}
    for option in options:
        key, separator, value = option.partition("=")
        if not separator or not key.strip():
            raise ParameterError(option, "expected name=value")
        overrides[key.strip()] = value
    return overrides


def defaults_table(declared: Mapping[str, Parameter]) -> str:
    """The parameters as a Markdown table: name, type, default, meaning."""
    rows = ["| parameter | type | default | meaning |", "|---|---|---|---|"]
    for parameter in declared.values():
        default = parameter.default
        shown = (
            "[" + ", ".join(repr(item).replace("'", '"') for item in default) + "]"
            if isinstance(default, tuple)
            else str(default).lower()
            if isinstance(default, bool)
            else f'"{default}"'
            if isinstance(default, str)
            else str(default)
        )
        rows.append(f"| `{parameter.name}` | {parameter.kind} | `{shown}` | {parameter.doc} |")
    return "\n".join(rows) + "\n"
