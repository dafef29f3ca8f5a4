"""Whether a regular expression would compile under RE2/J, the engine Kafka compiles a member's
SubscribedTopicRegex with (`com.google.re2j.Pattern`), as far as this implementation can tell.

Python's `re` must compile the expression, and a scan of its text must find none of what RE2
has no form for: look-ahead and look-behind, back-references (by number or by name),
conditional groups, atomic groups and possessive quantifiers. The scan walks the text once,
skipping escapes, character classes, `(?#...)` comments and, in verbose mode, whitespace and
`#` comments. An expression in RE2-only syntax that Python's `re` refuses (`\\Q...\\E`, `\\pN`)
is refused here although Kafka accepts it.
"""

from __future__ import annotations

import re
import warnings

OCTAL_DIGITS = frozenset("01234567")
# A bounded repeat as Python reads one: {m}, {m,}, {,n}, {m,n} (anything else is a literal "{").
_REPEAT = re.compile(r"\{\d*(?:,\d*)?\}")
# Inline flags: (?aiLmsux) sets them for the whole expression, (?flags-flags:...) for a group.
_FLAGS = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]*))?([:)])")
# What may follow "(?" and opens a construct RE2 lacks: look-ahead (= !), look-behind (<= <!),
# an atomic group (>), a conditional ((), a named back-reference (P=).
_NOT_RE2_GROUPS = ("=", "!", "<=", "<!", ">", "(", "P=")


def re2_compiles(pattern: str) -> bool:
    """Whether RE2/J compiles `pattern`, as far as the implementation can tell (see the
    module)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return not _uses_what_re2_lacks(pattern)


def _uses_what_re2_lacks(pattern: str) -> bool:
    """Whether `pattern`, which Python compiles, uses a construct RE2 has no form for."""
    size = len(pattern)
    verbose = [False]  # whether verbose mode is on, per open group
    i = 0
    while i < size:
        char = pattern[i]
        if verbose[-1] and char.isspace():
            i += 1
        elif verbose[-1] and char == "#":
            end = pattern.find("\n", i)
            i = size if end < 0 else end + 1
        elif char == "\\":
            if _is_back_reference(pattern, i):
                return True
            i += 2
        elif char == "[":
            i = _after_class(pattern, i)
        elif char in "*+?":
            if pattern.startswith("+", i + 1):
                return True
            i += 1
        elif char == "{":
            repeat = _REPEAT.match(pattern, i)
            if repeat is None or repeat.group() == "{}":
                i += 1
            elif pattern.startswith("+", repeat.end()):
                return True
            else:
                i = repeat.end()
        elif char == "(":
            if pattern.startswith("(?#", i):
                i = pattern.index(")", i) + 1
                continue
            if pattern.startswith("(?", i) and pattern.startswith(_NOT_RE2_GROUPS, i + 2):
                return True
            i = _open_group(pattern, i, verbose)
        elif char == ")":
            if len(verbose) > 1:
                verbose.pop()
            i += 1
        else:
            i += 1
    return False


def _is_back_reference(pattern: str, at: int) -> bool:
    """Whether the escape at `at` outside a class is a numbered back-reference: a digit 1-9 not
    starting a three-digit octal escape (Python's reading of `\\1` against `\\101`)."""
    digits = pattern[at + 1 : at + 4]
    if not digits or digits[0] not in "123456789":
        return False
    return not (len(digits) == 3 and all(d in OCTAL_DIGITS for d in digits))


def _after_class(pattern: str, at: int) -> int:
    """The index just past the character class opening at `at` (a leading "]" or "^]" is a
    member; an escape never closes it)."""
    i = at + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _open_group(pattern: str, at: int, verbose: list[bool]) -> int:
    """Enter the group opening at `at` (pushing its verbose mode) and return where its content
    starts; global flags "(?x)" switch verbose mode on for the whole expression."""
    flags = _FLAGS.match(pattern, at)
    if flags is None:
        verbose.append(verbose[-1])
        return at + 2 if pattern.startswith("(?P<", at) else at + 1
    on, off, closing = flags.group(1), flags.group(2) or "", flags.group(3)
    if closing == ")":
        if "x" in on:
            verbose[:] = [True] * len(verbose)
    else:
        verbose.append(("x" in on) or (verbose[-1] and "x" not in off))
    return flags.end()
