"""Reading JSON from files people hand us: strict values, and lines numbered as a person counts.

Python's `json` accepts `NaN` and `Infinity`, turns `1e999` into an infinite float, recurses
without bound on nested arrays, and refuses integers longer than 4300 digits with an advice
about `sys.set_int_max_str_digits`. A trace, a vector file or a check result never holds any of
these, so each becomes a `JsonInputError` whose message says what is wrong in the file's terms;
the caller adds the file and line. Lines are decoded one at a time, so a byte that is not UTF-8
is reported on its own line, not on the first line of the buffer it was read with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

# Deeper than any message of the group APIs or any report groupspec writes (a JoinGroup body is
# four levels deep); the limit keeps later recursive code (comparisons, printing) safe too.
MAX_DEPTH = 64


class JsonInputError(ValueError):
    """Text that is not strict JSON; `incomplete` when it is a syntax error (a line cut short
    fails this way), as opposed to a value JSON's grammar does not have."""

    def __init__(self, problem: str, *, incomplete: bool = False, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.incomplete = incomplete
        # The line of the text a syntax error is on (None where JSON does not say).
        self.line = line


def loads_strict(text: str) -> Any:
    """The JSON value of `text`; JsonInputError for anything but plain, finite JSON nested at
    most MAX_DEPTH deep."""
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except JsonInputError:
        raise
    except json.JSONDecodeError as error:
        raise JsonInputError(
            f"not JSON: {error.msg} (column {error.colno})", incomplete=True, line=error.lineno
        ) from None
    except RecursionError:
        raise JsonInputError(f"not JSON: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        # The only other ValueError json raises: Python's limit on an integer's digits.
        raise JsonInputError("not JSON: an integer of more than 4300 digits") from None
    # Brackets bound the depth from above: counting them is much cheaper than walking.
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise JsonInputError(f"not JSON: nested deeper than {MAX_DEPTH} levels")
    return value


def decoded_lines(raw_lines: Iterable[bytes]) -> Iterator[str]:
    """Each line of `raw_lines` as text; a line that is not UTF-8 raises `LineDecodeError`
    with its number (1-based)."""
    for number, raw in enumerate(raw_lines, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LineDecodeError(number, f"not UTF-8 text (byte {error.start + 1})") from None


class LineDecodeError(ValueError):
    """A line of a file that is not UTF-8 text: `line` is its number."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def _no_constant(name: str) -> Any:
    raise JsonInputError(f"not JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError(f"not JSON: {text} is beyond a finite number")
    return value


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in `value` (a scalar is 0; counting stops past
    MAX_DEPTH), level by level, without recursion."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level and depth <= MAX_DEPTH:
        depth += 1
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]
    return depth


_CONTAINERS = (dict, list)
# One decoder for every line (json.loads with hooks would build one per call); it holds no state
# between calls.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
