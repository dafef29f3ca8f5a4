"""The mutation score docs/mutation.md quotes is the one its campaign files hold.

docs/mutation-runs/ keeps the JSON of the seed-3 campaign (`groupspec mutation --sample 100
--seed 3 ... --json`) and of its run survivors judged again (`--mutant ID ...`); the campaign
takes forty minutes, so CI recomputes the figures from the files rather than the campaign.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs"
RUNS = DOCS / "mutation-runs"

# Infected survivors the triage in docs/mutation.md argues equivalent (same states up to a
# renaming, or a change only a rule label or a redundant check sees), by module and line.
TRIAGED_EQUIVALENT = {
    ("step.py", 76),
    ("member_ids.py", 85),
    ("consumer/config.py", 27),
    ("config.py", 9),
    ("hashing.py", 5),
    ("hashing.py", 17),
    ("join.py", 155),
    ("consumer/poll.py", 47),
    ("consumer/machine.py", 237),
}
# The one equivalent mutant among several on one line: sticky.py:240's `i + 1` → `i * 1`.
TRIAGED_EQUIVALENT_IDS = {"assignors/sticky.py:core/ReplaceBinaryOperator_Add_Mul:1"}


def _mutants() -> dict[str, dict[str, Any]]:
    """Each drawn mutant's last verdict: the campaign's, replaced by the re-judging's."""
    campaign = json.loads((RUNS / "seed3-campaign.json").read_text(encoding="utf-8"))
    again = json.loads((RUNS / "seed3-survivors-rejudged.json").read_text(encoding="utf-8"))
    mutants = {m["id"]: m for m in campaign["mutants"]}
    assert len(mutants) == campaign["sample"] == 100
    for mutant in again["mutants"]:
        assert mutant["id"] in mutants, f"{mutant['id']} was not drawn by the campaign"
        mutants[mutant["id"]] = mutant
    return mutants


def _infection(mutant: dict[str, Any]) -> str | None:
    return (mutant.get("infection") or {}).get("verdict")


def _doc() -> str:
    return " ".join((DOCS / "mutation.md").read_text(encoding="utf-8").split())


def test_the_rejudged_figures_in_the_docs_are_the_files():
    mutants = list(_mutants().values())
    killed = [m for m in mutants if m["kind"] != "survived"]
    survived = [m for m in mutants if m["kind"] == "survived"]
    unreachable = [m for m in survived if _infection(m) is None]
    uninfected = [m for m in survived if _infection(m) == "not infected"]
    infected = [m for m in survived if _infection(m) == "infected"]
    equivalent = [
        m
        for m in infected
        if (m["module"], m["line"]) in TRIAGED_EQUIVALENT or m["id"] in TRIAGED_EQUIVALENT_IDS
    ]
    run = len(mutants) - len(unreachable)
    infecting = run - len(uninfected)
    row = (
        f"| killed by the checker (of 100 drawn) | 57 | 58 | **{len(killed)}** | "
        f"| in code none of the eleven presets runs (unreachable) | 15 | 15 | {len(unreachable)} | "
        f"| survived, not infected (equivalent on every explored state) | 11 | 12 | "
        f"{len(uninfected)} | | survived, infected | 17 | 15 | {len(infected)} | "
        f"| kill rate over the mutants whose code a preset runs ({run}) | 67.1% | 68.2% | "
        f"**{100 * len(killed) / run:.1f}%** | | over the mutants that infect (automatic) | "
        f"77.0% | 79.5% | **{100 * len(killed) / infecting:.1f}%** | "
        f"| over the mutants that infect, less the ten triaged equivalent | | | "
        f"**{100 * len(killed) / (infecting - len(equivalent)):.1f}%** "
        f"({len(killed)} of {infecting - len(equivalent)}) |"
    )
    assert len(equivalent) == 10
    assert row in _doc()


def test_every_infected_survivor_is_triaged_in_the_docs():
    table = _doc()
    for mutant in _mutants().values():
        if mutant["kind"] == "survived" and _infection(mutant) == "infected":
            line = str(mutant["line"])
            name = f"`{mutant['module']}:{line}"
            sticky_row = mutant["module"] == "assignors/sticky.py" and re.search(
                rf"`:{line}`|`assignors/sticky.py:{line}`", table
            )
            assert name in table or sticky_row, f"{name} is not in the triage table"
