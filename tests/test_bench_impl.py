"""`groupspec bench impl` at tiny sizes: the report has its fields and spec and impl agree.

Timings are figures, never asserted; only the work done and the agreement are."""

import json

from groupspec.bench.impl_bench import bench_scale, bench_stream, build_stream
from groupspec.cli.main import main


def test_stream_runs_through_both_sides_with_identical_responses():
    figures = bench_stream(groups=3, members=2, rounds=4)
    assert figures.requests == sum(1 for item in build_stream(3, 2, 4) if item.ref is not None)
    assert figures.responses_compared == figures.requests
    assert figures.responses_differing == 0
    assert figures.spec_requests_per_s > 0 and figures.impl_requests_per_s > 0
    assert figures.ratio == figures.impl_requests_per_s / figures.spec_requests_per_s


def test_scale_run_reports_memory_and_heartbeats():
    figures = bench_scale(groups=40, members=3, heartbeat_passes=2, batch=16)
    assert figures.heartbeats == 40 * 3 * 2
    assert figures.setup_requests == 40 * 3 * 3  # two joins and a sync per member
    assert figures.heartbeats_per_s > 0 and figures.heap_entries >= 40 * 3
    assert figures.bytes_per_group == figures.memory_bytes / 40


def test_cli_prints_the_report_and_writes_json(tmp_path, capsys):
    out = tmp_path / "impl.json"
    argv = [
        "bench",
        "impl",
        "--groups",
        "2",
        "--members",
        "2",
        "--rounds",
        "3",
        "--kip848-groups",
        "1",
    ]
    code = main([*argv, "--scale-groups", "20", "--heartbeat-passes", "1", "--json", str(out)])
    assert code == 0
    report = capsys.readouterr().out
    for field in ("spec", "impl", "ratio", "bytes per group", "heartbeats/s"):
        assert field in report
    document = json.loads(out.read_text())
    assert document["stream"]["responses_differing"] == 0
    assert document["scale"]["groups"] == 20
    assert set(document["stream"]) >= {"spec_requests_per_s", "impl_requests_per_s", "ratio"}


def test_cli_can_skip_the_scale_run_and_refuses_bad_sizes(capsys):
    argv = ["bench", "impl", "--groups", "1", "--rounds", "1", "--scale-groups", "0"]
    assert main([*argv, "--kip848-groups", "0"]) == 0
    assert "scale" not in capsys.readouterr().out
    assert main(["bench", "impl", "--groups", "0"]) == 2
    assert main(["bench", "impl", "--heartbeat-passes", "0"]) == 2
    assert "bench impl" in capsys.readouterr().err


def test_the_consumer_protocol_load_runs_on_both_sides_with_identical_responses():
    """Joins, heartbeats, a leave and a rejoin per group: both sides answer every heartbeat
    alike, and the rebalances really happen (epochs move past the joins)."""
    from groupspec.bench.kip848_impl_bench import bench_kip848, run_impl

    figures = bench_kip848(groups=2, members=3, rounds=4)
    assert figures.requests == 2 * 3 + 2 * 3 * 4
    assert figures.responses_compared == figures.requests
    assert figures.responses_differing == 0
    assert figures.ratio == figures.impl_requests_per_s / figures.spec_requests_per_s
    _, answers = run_impl(2, 3, 4)
    assert max(answer.member_epoch for answer in answers) > 3
    assert any(answer.member_epoch == -1 for answer in answers)


def test_cli_reports_the_consumer_protocol_load(tmp_path, capsys):
    out = tmp_path / "impl.json"
    argv = ["bench", "impl", "--groups", "1", "--rounds", "1", "--scale-groups", "0"]
    argv += ["--kip848-groups", "2", "--kip848-members", "2", "--kip848-rounds", "2"]
    assert main([*argv, "--json", str(out)]) == 0
    assert "consumer protocol (KIP-848)" in capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["kip848"]["responses_differing"] == 0
    assert document["kip848"]["requests"] == 2 * 2 + 2 * 2 * 2
    assert main(["bench", "impl", "--kip848-members", "0"]) == 2
