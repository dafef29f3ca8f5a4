"""docs/spec.md's rule index is generated from the code; it must match the current spec."""

from __future__ import annotations

from pathlib import Path

from groupspec.checker.rule_index import with_generated_index

SPEC_DOC = Path(__file__).resolve().parent.parent / "docs" / "spec.md"


def test_rule_index_in_docs_is_current():
    text = SPEC_DOC.read_text(encoding="utf-8")
    assert text == with_generated_index(text), (
        "docs/spec.md is stale: run `groupspec rules --update-doc docs/spec.md`"
    )


def test_a_stale_index_is_detected():
    text = SPEC_DOC.read_text(encoding="utf-8")
    stale = text.replace("| `join.group_created` |", "| `join.group_invented` |")
    assert stale != text
    assert stale != with_generated_index(stale)


CONSUMER_DOC = SPEC_DOC.parent / "consumer.md"


def test_consumer_rule_index_in_docs_is_current():
    text = CONSUMER_DOC.read_text(encoding="utf-8")
    assert text == with_generated_index(text), (
        "docs/consumer.md is stale: run `groupspec rules --update-doc docs/consumer.md`"
    )
