"""The worked example of docs/assignors.md runs, and prints exactly what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "assignors.md"


def _block(marker: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {re.escape(marker)} -->\n```\w+\n(.*?)```", text, re.DOTALL)
    assert match, f"docs/assignors.md has no block marked {marker!r}"
    return match.group(1)


def test_the_worked_example_is_short_and_prints_what_the_doc_says():
    code = _block("example: own-assignor")
    assert len(code.strip().splitlines()) < 30
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == _block("example: own-assignor output")


def test_an_eager_sticky_assignor_without_user_data_is_judged_fresh_every_round():
    # The warning of docs/assignors.md, "What an assignor is": nothing fails, moves go up.
    import dataclasses

    from groupspec.oracle.assignor.assignor_scenarios import run_scenario, scenario_named
    from groupspec.oracle.assignor.kafka_python import kafka_python_assignor

    sticky = kafka_python_assignor("sticky")
    blind = dataclasses.replace(sticky, user_data=None)
    scale_out = scenario_named("scale-out")
    with_data, without = run_scenario(scale_out, sticky), run_scenario(scale_out, blind)
    assert (with_data.moves, with_data.optimal_moves) == (4, 4)
    assert (without.moves, without.optimal_moves) == (12, 4)
    assert not with_data.findings and not without.findings
