"""Bad input never ends in a traceback: one line on stderr naming the file, line or option, and
exit 2, before any work starts (issue 20). Also: worker counts capped to the cores, presets,
replays and traces that used to be accepted silently, and errors that went to stdout."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.checker.check_report import with_digests
from groupspec.cli import arguments
from groupspec.cli.main import main
from groupspec.models.preset_models import model_names
from groupspec.models.presets import PRESET_DIRECTORY
from groupspec.models.swarm_space import SPACE_DIRECTORY

ROOT = Path(__file__).resolve().parent.parent
HEADER = '{"format":"groupspec-trace","version":1}\n'
HEARTBEAT = (
    '{"ts":%s,"conn":"a","dir":"request","key":12,"ver":4,"corr":%s,'
    '"body":{"group_id":"g","generation_id":1,"member_id":"m","group_instance_id":null}}\n'
)
ANSWER = (
    '{"ts":%s,"conn":"a","dir":"response","key":12,"ver":4,"corr":%s,"body":{"error_code":25}}\n'
)
VALID_TRACE = HEADER + HEARTBEAT % (5, 1) + ANSWER % (6, 1)


def run(*argv: str) -> tuple[int, str, str]:
    """`groupspec ARGV` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int, out: str, err: str, *names: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr that names each of `names`."""
    assert (code, out) == (2, ""), (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    for name in names:
        assert name in err, err


# -- the tracebacks of the table ----------------------------------------------------------


def test_a_binary_preset_is_named_with_its_line(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"[model]\n\xff\xfe\x00binary")
    assert_one_line_error(*run("check", str(junk)), "junk.bin", "line 2", "not UTF-8")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "two-phase", "--json", "{dir}"],
        ["check", "two-phase", "--diagram", "{dir}"],
        ["validate", "{trace}", "--json", "{dir}"],
        ["simulate", "two-phase", "--json", "{dir}"],
        ["swarm", "--json", "{dir}"],
        ["bugs", "--json", "{dir}"],
        ["coverage", "--json", "{dir}"],
        ["vectors", "--run", "{trace}", "--json", "{dir}"],
        ["bench", "checker", "--json", "{dir}"],
        ["record", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--out", "{dir}"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_directory_as_output_file_is_refused_before_any_work(tmp_path, argv):
    trace = tmp_path / "t.jsonl"
    trace.write_text(VALID_TRACE)
    option = argv[argv.index("{dir}") - 1]
    code, out, err = run(*[a.format(dir=tmp_path, trace=trace) for a in argv])
    assert_one_line_error(code, out, err, option, f"{tmp_path} is a directory")


@pytest.mark.parametrize(
    "argv",
    [
        ["diagram", "--out", "{file}"],
        ["probe", "--trace-dir", "{file}"],
        ["workload", "--trace-dir", "{file}"],
        ["workload", "--trace-dir", "{file}/below"],
        ["vectors", "--out", "{file}"],
        ["serve", "--data-dir", "{file}"],
        ["bench", "oracle", "--keep", "{file}"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_an_existing_file_as_output_directory_is_refused_before_any_work(tmp_path, argv):
    existing = tmp_path / "a-file"
    existing.write_text("kept\n")
    code, out, err = run(*[a.format(file=existing) for a in argv])
    assert_one_line_error(code, out, err, f"{existing} is a file, not a directory")
    assert existing.read_text() == "kept\n"


def test_an_output_file_in_a_missing_directory_is_refused(tmp_path):
    target = tmp_path / "missing" / "result.json"
    assert_one_line_error(
        *run("check", "two-phase", "--json", str(target)), "--json", "does not exist"
    )


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"ts":NaN,"conn":"a","dir":"close"}', "NaN is not a JSON number"),
        ('{"ts":Infinity,"conn":"a","dir":"close"}', "Infinity is not a JSON number"),
        ('{"ts":1e999,"conn":"a","dir":"close"}', "beyond a finite number"),
        ("[" * 100_000, "nested deeper than"),
    ],
)
def test_hostile_json_in_a_trace_names_the_line(tmp_path, line, problem):
    trace = tmp_path / "t.jsonl"
    trace.write_text(HEADER + HEARTBEAT % (5, 1) + line + "\n")
    assert_one_line_error(*run("validate", str(trace)), f"{trace}:3:", problem)


def test_binary_bytes_are_reported_on_their_own_line(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(HEADER.encode() + b"\xff\xfe binary\n")
    assert_one_line_error(*run("validate", str(trace)), f"{trace}:2:", "not UTF-8")


@pytest.mark.parametrize(
    "corr", [str(2**31), str(10**30), "9" * 5000], ids=["2^31", "1e30", "5000 digits"]
)
def test_an_enormous_correlation_id_is_reported_on_its_line(tmp_path, corr):
    trace = tmp_path / "t.jsonl"
    trace.write_text(HEADER + HEARTBEAT % (1, 1) + ANSWER % (2, 1) + HEARTBEAT % (3, corr))
    code, out, err = run("validate", str(trace))
    assert_one_line_error(code, out, err, f"{trace}:4:")
    assert "32-bit" in err or "4300 digits" in err


def test_a_port_out_of_range_is_refused():
    assert_one_line_error(*run("serve", "--port", "99999"), "--port", "99999")
    assert_one_line_error(*run("serve", "--advertised-port", "-1"), "--advertised-port")


def test_serving_on_a_port_already_taken_is_bad_input():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "groupspec.cli.main", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert_one_line_error(done.returncode, done.stdout, done.stderr, "groupspec serve:")


# -- questionable acceptance ----------------------------------------------------------------------


def test_workers_above_the_cores_are_capped_with_a_warning(monkeypatch):
    monkeypatch.setattr(arguments, "available_cores", lambda: 2)
    code, out, err = run("check", "two-phase", "--workers", "1000", "--quiet", "--no-liveness")
    assert code == 0
    assert "--workers 1000 is more than the 2 cores available; using 2" in err
    assert "workers: 2" in out


@pytest.mark.parametrize("command", ["check", "bugs", "coverage", "swarm", "diagram"])
def test_workers_below_one_are_refused(command):
    assert_one_line_error(*run(command, "--workers", "0"), "--workers must be at least 1")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "[model]"),
        ("[parameters]\nmax_generation = 1\n", "[model]"),
        ("[model]\n", "description"),
    ],
    ids=["empty", "no [model]", "blank description"],
)
def test_a_preset_that_says_nothing_is_refused(tmp_path, text, problem):
    preset = tmp_path / "p.toml"
    preset.write_text(text)
    assert_one_line_error(*run("check", str(preset)), str(preset), problem)


def test_dev_null_is_not_a_preset():
    assert_one_line_error(*run("check", "/dev/null"), "/dev/null", "[model]")


@pytest.fixture(scope="module")
def recorded_check(tmp_path_factory) -> dict:
    """A `check --json` document with a counterexample (two-phase commit, made to fail)."""
    path = tmp_path_factory.mktemp("replay") / "result.json"
    code, _, _ = run(
        "check", "two-phase", "--set", "tm_commits_early=true", "--quiet", "--json", str(path)
    )
    assert code == 1
    return json.loads(path.read_text())


def test_replay_refuses_an_unknown_format(tmp_path, recorded_check):
    document = dict(recorded_check, format=99)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(with_digests(document)))
    assert_one_line_error(*run("replay", str(path)), str(path), '"format" 99')


@pytest.mark.parametrize(
    ("field", "value"),
    [("overrides", {}), ("preset_file", "/elsewhere.toml"), ("parameters", {"rms": 9})],
)
def test_replay_names_a_field_edited_after_the_check(tmp_path, recorded_check, field, value):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(dict(recorded_check, **{field: value})))
    assert_one_line_error(*run("replay", str(path)), str(path), repr(field), "edited")


def test_replay_of_the_written_file_reproduces(tmp_path, recorded_check):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(recorded_check))
    code, out, _ = run("replay", str(path))
    assert code == 1 and "1/1 violations reproduced" in out


@pytest.mark.parametrize("api", ["FindCoordinator", "Heartbeat", "DescribeGroups", "DeleteGroups"])
def test_a_trace_event_of_an_unknown_api_version_is_refused_with_its_line(tmp_path, api):
    bodies = {
        "FindCoordinator": (10, {"key_type": 0, "coordinator_keys": ["g"]}),
        "Heartbeat": (12, {"group_id": "g", "generation_id": 1, "member_id": "m"}),
        "DescribeGroups": (15, {"groups": ["g"]}),
        "DeleteGroups": (42, {"groups_names": ["g"]}),
    }
    key, body = bodies[api]
    event = {"ts": 5, "conn": "a", "dir": "request", "key": key, "ver": 99, "corr": 1, "body": body}
    trace = tmp_path / "t.jsonl"
    trace.write_text(HEADER + json.dumps(event) + "\n")
    assert_one_line_error(*run("validate", str(trace)), f"{trace}:2:", "99")


# -- errors go to stderr; one catalog of presets -------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["diagram", "--workers", "0"],
        ["rules", "--update-doc", "/nonexistent.md"],
        ["bugs", "--update-doc", "/nonexistent.md"],
        ["cli-reference", "--update-doc", "/nonexistent.md"],
        ["partition", "g", "--partitions", "0"],
        ["diagram", "--check", "--format", "png"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_errors_go_to_stderr(argv):
    assert_one_line_error(*run(*argv), argv[1] if argv[1].startswith("--") else argv[2])


def test_the_no_preset_error_and_the_help_list_the_same_presets():
    _, help_text, _ = run("check", "--help")
    _, _, err = run("check", "no-such-preset")
    listed = err.split("known: ", 1)[1].strip().split(", ")
    assert tuple(listed) == model_names()
    flat = " ".join(help_text.split()).replace("- ", "-")
    assert all(name in flat for name in listed)


# -- the hostile-input property -------------------------------------------------------------------

# Raw text spliced into a file: what JSON and TOML readers choke on.
HOSTILE_TOKENS = (
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "nan",
    "inf",
    "9" * 5000,
    "[" * 100_000,
    "{a={" * 300,
    '"\\ud800"',
    "1979-05-27T07:32:00Z",
    "null",
    "true",
    "-1",
    str(2**70),
    '"x"',
    "[]",
    "{}",
    "\x00",
    "]",
    "\n",
    "\n\n[model]\n",
)
HOSTILE_BYTES = (b"\xff\xfe", b"\x80", b"\xc3", b"\x1f\x8b\x08")


def _seed_vectors() -> str:
    with gzip.open(ROOT / "tests" / "vectors" / "eager-2.jsonl.gz", "rt", encoding="utf-8") as f:
        return "".join(next(f) for _ in range(4))


def _seed_replay() -> str:
    return json.dumps(
        with_digests(
            {
                "format": 1,
                "preset": "two-phase",
                "preset_file": str(PRESET_DIRECTORY / "two-phase.toml"),
                "overrides": {"tm_commits_early": "true"},
                "violations": [
                    {"property": "Consistency", "kind": "invariant", "trace": [{"label": "x"}]}
                ],
            }
        ),
        indent=1,
    )


# Each reader of files: how to run it on FILE, the exit codes its documentation allows for a
# valid file (bounded so a valid file costs little), and a valid file to mutate.
READERS = {
    "preset": (
        ["check", "{file}", "--max-states", "30", "--no-liveness", "--quiet"],
        {0, 1},
        (PRESET_DIRECTORY / "two-phase.toml").read_text(),
    ),
    "preset-simulate": (
        ["simulate", "{file}", "--runs", "1", "--steps", "5", "--quiet"],
        {0, 1},
        (PRESET_DIRECTORY / "eager-2.toml").read_text(),
    ),
    "swarm space": (
        ["swarm", "{file}", "--list", "--runs", "1"],
        {0},
        (SPACE_DIRECTORY / "default.toml").read_text(),
    ),
    "trace": (["validate", "{file}", "--no-shrink"], {0, 1, 3}, VALID_TRACE),
    "vectors": (
        ["vectors", "--run", "{file}", "--adapter", "spec", "--quiet"],
        {0, 1},
        _seed_vectors(),
    ),
    "replay": (["replay", "{file}"], {0, 1}, _seed_replay()),
}


@st.composite
def hostile_files(draw: st.DrawFn, seed: str) -> bytes:
    """A file a user might hand over by mistake, or an attacker on purpose: random bytes, an
    empty file, or a valid file truncated, with lines repeated, with bytes that are not UTF-8
    spliced in, or with values (after "=" or ":") replaced by hostile text."""
    kinds = ["bytes", "empty", "truncate", "lines", "bytes-in-line", "values", "values"]
    kind = draw(st.sampled_from(kinds))
    data = seed.encode("utf-8")
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b" \n\n"]))
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "bytes-in-line":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from(HOSTILE_BYTES)) + data[at:]
    lines = seed.splitlines(keepends=True)
    if kind == "lines":
        for _ in range(draw(st.integers(1, 3))):
            copied = draw(st.sampled_from(lines))
            lines.insert(draw(st.integers(0, len(lines))), copied)
        return "".join(lines).encode("utf-8")
    text = seed
    starts = [i + 1 for i, c in enumerate(text) if c in "=:"]
    for start in sorted(draw(st.lists(st.sampled_from(starts), min_size=1, max_size=3)))[::-1]:
        end = start
        while end < len(text) and text[end] not in ",}\n":
            end += 1
        text = text[:start] + draw(st.sampled_from(HOSTILE_TOKENS)) + text[end:]
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(
    max_examples=10,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_hostile_file_ends_in_a_traceback(tmp_path, reader, data):
    argv, verdicts, seed = READERS[reader]
    content = data.draw(hostile_files(seed), label="file")
    suffix = ".toml" if reader.startswith("preset") or reader == "swarm space" else ".jsonl"
    path = tmp_path / f"hostile{suffix}"
    path.write_bytes(content)
    code, out, err = run(*[a.format(file=path) for a in argv])
    assert "Traceback" not in out + err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
        assert str(path) in err or path.name in err, err
    else:
        assert code in verdicts, (code, out, err)
