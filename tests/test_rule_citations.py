"""The impl cites the spec rule each branch implements: `# rule: <rule id>` comments in impl/*.py.

impl/ never imports the spec, so the citation is a comment holding the rule id string. This test
reads the comments (with `tokenize`, so a "# rule:" inside a string does not count) and checks
them against the coordinator's catalog (spec/rules.py):

- every cited id is a rule of the catalog (a rename or a typo in impl/ fails here);
- every non-defensive rule is cited at least once: the impl passes the same conformance vectors,
  so each reachable rule has a place in impl/ that implements it.

Defensive rules may be cited where impl/ keeps the branch (an Empty group's heartbeat, a stale
sync timer). The `*.group_dead` ones have no counterpart: impl/ drops a group from memory in the
same call that makes it Dead, so no request ever finds a Dead group.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from groupspec.spec.rules import REACHABLE_RULE_IDS, RULE_IDS, RULES

IMPL_DIR = Path(__file__).resolve().parent.parent / "impl"
CITATION = re.compile(r"#\s*rule:\s*(?P<ids>.*)$")
RULE_ID = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)+")


def _citations() -> dict[str, list[str]]:
    """Every rule id cited in impl/*.py, with the places (`file:line`) citing it."""
    cited: dict[str, list[str]] = {}
    paths = sorted(IMPL_DIR.glob("*.py"))
    assert paths, f"no impl sources under {IMPL_DIR}"
    for path in paths:
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            match = CITATION.match(token.string)
            if match is None:
                continue
            place = f"impl/{path.name}:{token.start[0]}"
            for rule_id in match["ids"].split(","):
                rule_id = rule_id.strip()
                assert RULE_ID.fullmatch(rule_id), f"{place}: malformed citation {token.string!r}"
                cited.setdefault(rule_id, []).append(place)
    return cited


def test_every_cited_rule_is_in_the_spec_catalog():
    unknown = {
        rule_id: places for rule_id, places in _citations().items() if rule_id not in RULE_IDS
    }
    assert not unknown, f"impl/ cites rules missing from spec/rules.py: {unknown}"


def test_every_non_defensive_rule_is_cited_in_impl():
    # impl/ follows the default Kafka version profile only, so other profiles' rules are exempt.
    cited = _citations()
    missing = [rule_id for rule_id in sorted(REACHABLE_RULE_IDS) if rule_id not in cited]
    assert not missing, f"no `# rule: <id>` in impl/*.py for {missing}"


def test_citations_are_found():
    # A guard on the parser itself: a change of comment format must not make the tests vacuous.
    cited = _citations()
    assert "join.static_member_replaced" in cited
    assert sum(len(places) for places in cited.values()) >= len(RULES)
