"""Typed, documented model parameters, read the same way from a preset file and from `--set`.

A model's parameters are the fields of a frozen dataclass. Each field declares its type (int,
bool, str, list of str, list of int), its default and, in its metadata, a one-line `doc` and
its range (`Range`: the least and greatest int, the strings allowed, how many items a list
has); the schema below is derived from those fields, so a preset's `[parameters]` table and a
`--set name=value` override are checked against one declaration, a value out of range is
refused as it is read, and docs list the defaults and the ranges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
class Range:
    """The values a parameter takes: ints from `minimum` to `maximum` (for a list of int, each
    item), strings among `choices` (for a list of str, each item), lists of `length` (least,
    greatest) items. What a model checks across parameters (a static client count no greater
    than the client count, say) its own validation checks; `note` says so in the docs."""

    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] | None = None
    length: tuple[int, int] | None = None
    note: str = ""

    def problem(self, value: object) -> str | None:
        """Why `value` (of the parameter's type) is out of range, or None."""
        if isinstance(value, tuple):
            if self.length is not None and not self.length[0] <= len(value) <= self.length[1]:
                return f"needs {_span(*self.length)} items, got {len(value)}"
            for item in value:
                found = self._item_problem(item)
                if found:
                    return f"every item {found}"
            return None
        return self._item_problem(value)

    def _item_problem(self, value: object) -> str | None:
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            low = self.minimum if self.minimum is not None else value
            high = self.maximum if self.maximum is not None else value
            if not low <= value <= high:
                return f"must be {self.describe_numbers()}, got {value}"
        if isinstance(value, str) and self.choices is not None and value not in self.choices:
            return f"must be one of {', '.join(self.choices)}, got {value!r}"
        return None

    def describe_numbers(self) -> str:
        """The ints allowed, in words ("between 1 and 1,000", "at least 0")."""
        if self.minimum is not None and self.maximum is not None:
            return f"between {self.minimum:,} and {self.maximum:,}"
        if self.minimum is not None:
            return f"at least {self.minimum:,}"
        return f"at most {self.maximum:,}" if self.maximum is not None else "any int"

    def text(self, kind: str) -> str:
        """The range as the docs show it, for a parameter of type `kind`."""
        if kind == "bool":
            return "true or false"
        parts = []
        each = "each " if kind.startswith("list") else ""
        if self.length is not None:
            parts.append(f"{_span(*self.length)} items")
        if self.minimum is not None or self.maximum is not None:
            parts.append(f"{each}{_span(self.minimum, self.maximum)}")
        if self.choices is not None:
            parts.append(f"{each}{_choices(self.choices)}")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)


def _span(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return f"at least {low:,}" if low is not None else f"at most {high:,}"


def _choices(choices: Sequence[str]) -> str:
    shown = ['""' if choice == "" else choice for choice in choices]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


@dataclass(frozen=True)
class Parameter:
    """One declared parameter: its name, type (as people read it), default, meaning and range."""

    name: str
    kind: str
    default: object
    doc: str
    range: Range = Range()

    @property
    def range_text(self) -> str:
        """The range as the docs and `--help` show it."""
        return self.range.text(self.kind)


def documented(
    default: Any,
    doc: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    choices: Sequence[str] | None = None,
    length: tuple[int, int] | None = None,
    note: str = "",
) -> Any:
    """A dataclass field with `default`, a one-line `doc` (its meaning, shown in docs) and its
    range (see `Range`; a bool needs none)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("parameter defaults must be immutable (use a tuple)")
    declared = Range(minimum, maximum, None if choices is None else tuple(choices), length, note)
    if declared.problem(default):
        raise ValueError(
            f"the default {default!r} is out of its own range: {declared.problem(default)}"
        )
    return field(default=default, metadata={"doc": doc, "range": declared})


def schema(parameters_type: type) -> Mapping[str, Parameter]:
    """Every parameter of a dataclass of parameters, in field order."""
    result = {}
    for item in fields(parameters_type):
        if item.name.startswith("_"):
            continue
        default = item.default if item.default is not MISSING else None
        result[item.name] = Parameter(
            item.name,
            _KINDS[str(item.type)],
            default,
            item.metadata.get("doc", ""),
            item.metadata.get("range", Range()),
        )
    return result


def check_ranges(parameters: object) -> None:
    """Raise ParameterError naming the first field of a dataclass of parameters whose value is
    out of its declared range (for parameters built in Python, not read from a preset)."""
    for name, parameter in schema(type(parameters)).items():
        found = parameter.range.problem(getattr(parameters, name))
        if found:
            raise ParameterError(name, found)


def _in_range(parameter: Parameter, value: object) -> object:
    found = parameter.range.problem(value)
    if found:
        raise ParameterError(parameter.name, found)
    return value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _known(declared: Mapping[str, Parameter], key: str) -> Parameter:
    if key not in declared:
        raise ParameterError(key, f"unknown parameter; known: {', '.join(sorted(declared))}")
    return declared[key]


def coerce(declared: Mapping[str, Parameter], key: str, value: object) -> object:
    """`value` (as read from TOML) checked against `key`'s declared type; lists become tuples."""
    parameter = _known(declared, key)
    kind = parameter.kind
    if kind == "int" and _is_int(value):
        return _in_range(parameter, value)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "str" and isinstance(value, str):
        return _in_range(parameter, value)
    if isinstance(value, (list, tuple)):
        if kind == "list of str" and all(isinstance(item, str) for item in value):
            return _in_range(parameter, tuple(value))
        if kind == "list of int" and all(_is_int(item) for item in value):
            return _in_range(parameter, tuple(value))
    raise ParameterError(key, f"expected {kind}, got {value!r}")


def parse_override(declared: Mapping[str, Parameter], key: str, text: str) -> object:
    """The value of `--set key=text`, parsed by `key`'s declared type (lists: comma-separated)
    and checked against its range."""
    return _in_range(_known(declared, key), _parse(declared, key, text))


def _parse(declared: Mapping[str, Parameter], key: str, text: str) -> object:
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
    """The parameters as a Markdown table: name, type, default, range, meaning."""
    rows = ["| parameter | type | default | range | meaning |", "|---|---|---|---|---|"]
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
        rows.append(
            f"| `{parameter.name}` | {parameter.kind} | `{shown}` | {parameter.range_text} "
            f"| {parameter.doc} |"
        )
    return "\n".join(rows) + "\n"
