"""Spark is one optional extra (`pip install 'groupspec[spark]'`) living in one place:
only checker/spark/ imports pyspark, and without it every `--engine spark` is one line of bad
input (exit 2) naming what to install."""

from __future__ import annotations

import pytest
from layers import ROOT, imports_of, source_files
from test_module_imports import run_python


def test_only_checker_spark_imports_pyspark():
    outside = [
        f"{found.path}:{found.line}: imports {found.module}"
        for path in source_files()
        if not path.startswith("checker/spark/")
        for found in imports_of(path, (ROOT / path).read_text())
        if found.module.split(".")[0] in ("pyspark", "py4j")
    ]
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "two-phase", "--engine", "spark"],
        ["simulate", "two-phase", "--engine", "spark", "--runs", "1"],
        ["swarm", "--engine", "spark", "--runs", "1"],
        ["validate", "tests", "--engine", "spark", "--out", "unused.parquet"],
        ["bench", "spark"],
    ],
    ids=lambda argv: argv[0],
)
def test_the_spark_engine_without_pyspark_is_one_line_of_bad_input(argv):
    done = run_python(f"from groupspec.cli.main import main\nraise SystemExit(main({argv!r}))\n")
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"groupspec {argv[0]}") and "pip install 'groupspec[spark]'" in line
