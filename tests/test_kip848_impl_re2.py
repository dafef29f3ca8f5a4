"""The implementation's own check of what RE2/J compiles (impl/kip848/re2_syntax.py, a scan of
the expression's text) against the specification's (spec/kip848/regex.py, Python's parse tree):
they agree on the expressions the specification's tests name and on random expressions built
from the constructs either treats specially (look-arounds, back-references, possessive and
atomic forms, classes, escapes, inline flags, verbose mode and comments)."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.impl.kip848.re2_syntax import re2_compiles
from groupspec.spec.kip848.regex import compiles_as_re2

NAMED = [
    "t.*",
    "t[01]",
    "orders|payments",
    "(?P<n>t)0",
    "(",
    "t(?=0)",
    "(t)\\1",
    "t*+",
    "(?>t)",
    "(?<=a)b",
    "(?<!a)b",
    "a(?!b)",
    "(?P<n>a)(?P=n)",
    "(a)?(?(1)b|c)",
    "a{1,2}+",
    "a{2}",
    "a{,3}",
    "a{}+",
    "[(?=]x",
    "[]+]+",
    "\\(?=x",
    "(a)\\101",
    "(?x) a # (?=b)\n c",
    "(?x:[ #]) (?=b)",
    "(?#(?=b))a",
    "\\d++",
    "a?+",
    "(?i)T0",
    "(?-i:t)0",
    "",
]

# Pieces whose concatenations reach every branch of both checks.
PIECES = [
    "a",
    "t",
    "0",
    ".",
    "*",
    "+",
    "?",
    "{1}",
    "{1,2}",
    "{,2}",
    "{",
    "}",
    "(",
    ")",
    "(?:",
    "(?=",
    "(?!",
    "(?<=",
    "(?<!",
    "(?>",
    "(?P<g>",
    "(?P=g)",
    "(?(1)",
    "(?#c)",
    "(?x)",
    "(?x:",
    "(?-x:",
    "(?i)",
    "[",
    "]",
    "^",
    "|",
    "\\",
    "\\1",
    "\\12",
    "\\101",
    "\\0",
    "\\d",
    " ",
    "#",
    "\n",
]


@pytest.mark.parametrize("pattern", NAMED)
def test_the_checks_agree_on_the_named_expressions(pattern):
    assert re2_compiles(pattern) == compiles_as_re2(pattern)


# How many grammatical random expressions Python compiles that the checks accepted and refused.
SEEN = {"accepted": 0, "refused": 0}

ATOMS = ["a", "t", ".", "[a(]", "[]?]", "\\d", "\\(", "\\101", "(a)\\1", "(?P<n>a)(?P=n)"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{1,2}", "*?", "*+", "++", "?+", "{1,2}+"]
OPENERS = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:", "(?x: ", "(?#"]


def _expressions(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, st.sampled_from(QUANTIFIERS)).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("|".join),
        st.tuples(st.sampled_from(OPENERS), inner).map(lambda parts: f"{parts[0]}{parts[1]})"),
    )


GRAMMATICAL = st.recursive(st.sampled_from(ATOMS), _expressions, max_leaves=6)


@settings(max_examples=3_000, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_the_checks_agree_on_random_expressions(pattern):
    assert re2_compiles(pattern) == compiles_as_re2(pattern)


@settings(max_examples=2_000, derandomize=True, deadline=None)
@given(GRAMMATICAL)
def test_the_checks_agree_on_random_grammatical_expressions(pattern):
    answer = re2_compiles(pattern)
    assert answer == compiles_as_re2(pattern)
    if _python_compiles(pattern):
        SEEN["accepted" if answer else "refused"] += 1


def test_the_random_expressions_python_compiles_reach_both_answers():
    """Among the grammatical random expressions Python compiles, the checks accept many and refuse many:
    the comparison is not only of syntax errors."""
    if not any(SEEN.values()):
        test_the_checks_agree_on_random_grammatical_expressions()
    assert SEEN["accepted"] >= 100 and SEEN["refused"] >= 100, SEEN


def _python_compiles(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except re.error:
        return False
    return True
