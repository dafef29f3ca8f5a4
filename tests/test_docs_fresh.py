"""docs/spec.md's rule index is generated from the code; it must match the current spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupspec.cli.main import build_parser
from groupspec.cli.reference_command import python_version, reference_markdown, with_reference
from groupspec.coverage.rule_index import with_generated_index

SPEC_DOC = Path(__file__).resolve().parent.parent / "docs" / "spec.md"


def test_rule_index_in_docs_is_current():
    text = SPEC_DOC.read_text(encoding="utf-8")
    assert text == with_generated_index(text), (
        "docs/spec.md is stale: run `groupspec rules --update-doc docs/spec.md`"
    )


def test_a_stale_index_is_detected():
    text = SPEC_DOC.read_text(encoding="utf-8")
    stale = text.replace("| `join.invalid_session_timeout` |", "| `join.invented_rule` |")
    assert stale != text
    assert stale != with_generated_index(stale)


def test_spec_doc_lists_every_kip848_rule():
    """docs/spec.md, the rule catalog, holds a row for every rule of spec/kip848/rules.py, in
    the generated block that the freshness test above keeps current."""
    from groupspec.coverage.rule_index import GENERATED_END, KIP848_SIDE

    text = SPEC_DOC.read_text(encoding="utf-8")
    marker = KIP848_SIDE.other_markers[0]
    block = text[text.index(marker) : text.index(GENERATED_END, text.index(marker))]
    missing = [r.rule_id for r in KIP848_SIDE.rules if f"| `{r.rule_id}`" not in block]
    assert not missing, f"docs/spec.md lacks KIP-848 rows {missing}"
    stale = text.replace(block, marker + "\n")
    assert stale != with_generated_index(stale)


CONSUMER_DOC = SPEC_DOC.parent / "consumer.md"


def test_consumer_rule_index_in_docs_is_current():
    text = CONSUMER_DOC.read_text(encoding="utf-8")
    assert text == with_generated_index(text), (
        "docs/consumer.md is stale: run `groupspec rules --update-doc docs/consumer.md`"
    )


KIP848_DOC = SPEC_DOC.parent / "kip-848.md"


def test_kip848_rule_index_in_docs_is_current():
    text = KIP848_DOC.read_text(encoding="utf-8")
    assert text == with_generated_index(text), (
        "docs/kip-848.md is stale: run `groupspec rules --update-doc docs/kip-848.md`"
    )


def test_the_kip848_example_runs():
    """The first Python block of docs/kip-848.md runs, and its asserts hold."""
    text = KIP848_DOC.read_text(encoding="utf-8")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, str(KIP848_DOC), "exec"), {})


CLI_DOC = SPEC_DOC.parent / "cli.md"


def test_cli_reference_in_docs_is_current():
    text = CLI_DOC.read_text(encoding="utf-8")
    formatted_by = f"Formatted by Python {python_version()}'s argparse"
    if formatted_by not in text:
        # argparse's layout changes between Python versions; the reference is generated and
        # compared with the version CI runs (named in the file).
        pytest.skip(f"docs/cli.md was formatted by another Python than {python_version()}")
    assert text == with_reference(text, build_parser()), (
        "docs/cli.md is stale: run `groupspec cli-reference --update-doc docs/cli.md`"
    )


def test_a_stale_cli_reference_is_detected():
    text = CLI_DOC.read_text(encoding="utf-8")
    stale = text.replace("--update-doc FILE", "--update-docs FILE", 1)
    assert stale != text
    assert with_reference(stale, build_parser()) != stale
    every = reference_markdown(build_parser())
    for command in ("check", "diagram", "bugs", "cli-reference"):
        assert f"## `groupspec {command}`" in every


def test_presets_and_parameters_in_docs_are_current():
    from groupspec.cli.presets_command import BEGIN, END, presets_markdown

    document = (SPEC_DOC.parent / "checking.md").read_text(encoding="utf-8")
    start = document.index(BEGIN) + len(BEGIN)
    assert document[start : document.index(END, start)] == "\n" + presets_markdown(), (
        "docs/checking.md is stale: run `groupspec presets --update-doc docs/checking.md`"
    )


COVERAGE_DOC = SPEC_DOC.parent / "coverage.md"


def _coverage_block(document: str, begin: str | None = None) -> str:
    from groupspec.cli.coverage_command import BEGIN, END

    begin = begin or BEGIN
    start = document.index(begin) + len(begin)
    return document[start : document.index(END, start)]


def test_rule_coverage_table_in_docs_matches_the_presets_records():
    from groupspec.cli.coverage_command import KIP848_BEGIN
    from groupspec.coverage.presets import recorded
    from groupspec.coverage.profiles import kip848_markdown

    document = COVERAGE_DOC.read_text(encoding="utf-8")
    coverage = recorded()
    stale = "docs/coverage.md is stale: run `groupspec coverage --recorded --update-doc docs/coverage.md`"
    assert _coverage_block(document) == "\n" + coverage.markdown(), stale
    assert coverage.kip848.reached, "no KIP-848 preset records its rules"
    assert _coverage_block(document, KIP848_BEGIN) == "\n" + kip848_markdown(coverage.kip848), stale


def test_a_stale_coverage_table_is_detected():
    from groupspec.coverage.presets import recorded

    document = COVERAGE_DOC.read_text(encoding="utf-8")
    stale = document.replace("| heartbeat.accepted | ✓", "| heartbeat.accepted |  ", 1)
    assert stale != document
    assert _coverage_block(stale) != "\n" + recorded().markdown()
