"""The command outputs docs/checking.md and docs/bugs.md quote are what the commands print now
(tests/doc_outputs.py generates them; seconds and rates are not compared)."""

from __future__ import annotations

import pytest
from doc_outputs import DOCUMENTS, normalized, quoted_outputs, stale

QUOTED = [quoted for document in DOCUMENTS for quoted in quoted_outputs(document)]


def test_the_documents_quote_outputs():
    assert {quoted.document.name for quoted in QUOTED} == {"checking.md", "bugs.md"}
    assert all(quoted.body.startswith(f"$ {quoted.command}\n") for quoted in QUOTED)


@pytest.mark.parametrize("quoted", QUOTED, ids=[q.command for q in QUOTED])
def test_a_quoted_output_is_what_its_command_prints(quoted):
    problem = stale(quoted)
    assert problem is None, (
        f"{quoted.document.name}: `{quoted.command}`: {problem}; "
        "run `python tests/doc_outputs.py --update-doc`"
    )


def test_only_seconds_rates_and_progress_lines_are_not_compared():
    printed = "verdict: pass\ndistinct states: 288   transitions: 1,145   depth: 10\n"
    assert normalized(printed + "elapsed: 0.02 s   12,238 states/s   workers: 1") == normalized(
        printed + "elapsed: 9.50 s   31 states/s   workers: 1"
    )
    assert normalized(printed.replace("288", "289")) != normalized(printed)
    progress = "eager-2: 7,329 states  17,929 transitions  queue 896  depth 29  1,389 states/s  5 s"
    assert normalized(progress) == []
