"""Where a run's time goes: each job's own `[job time]` line (subtask_induction.timing) and the benchmark that reads
them with the run's benchmark records (benchmarks/time_to_figure.py)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import time_to_figure  # noqa: E402

LINE = "[job time] wall {wall:.2f} s; start-up {start:.2f} s (to the first training step); evaluation {eval:.2f} s; " \
       "CPU {cpu:.2f} s on 1 thread(s)"


def job(run: Path, relative: str, rule: str, seconds: float, sampled_cpu: float, line: dict | None,
        benchmark: bool = True) -> None:
    log = run / "logs" / f"{relative}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("training...\n" + (LINE.format(**line) + "\n" if line else ""))
    if benchmark:
        record = run / "results/benchmarks" / f"{relative}.jsonl"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"s": seconds, "rule_name": rule, "wildcards": {}, "threads": 1,
                                      "cpu_time": sampled_cpu}) + "\n")


def row(text: str, family: str) -> list[str]:
    return next(line for line in text.splitlines() if line.startswith(f"| {family} |")).split(" | ")


def test_the_shares_are_the_jobs_own_seconds_over_their_job_seconds(tmp_path):
    job(tmp_path, "arithmetic/base", "arithmetic_base", 100.0, 70.0, {"wall": 99.5, "start": 5, "eval": 20, "cpu": 99})
    job(tmp_path, "arithmetic/pack", "arithmetic_transfer_pack_x", 50.0, 20.0, {"wall": 49.5, "start": 5, "eval": 0, "cpu": 49})
    # a rule without a benchmark record is counted from its own line
    job(tmp_path, "arithmetic/select", "", 0, 0, {"wall": 4.0, "start": 2, "eval": 0, "cpu": 4}, benchmark=False)
    text = time_to_figure.report(tmp_path, wall=90.0, cores=2)
    cells = row(text, "arithmetic")
    assert cells[1] == "3" and cells[2] == f"{154 / 60:.1f}"
    assert cells[3] == f"{100 * 12 / 154:.0f}% ({12 / 3:.1f} s a job)"
    assert cells[4] == f"{100 * 20 / 154:.0f}%"
    assert cells[5] == f"{100 * 152 / 154:.0f}%"  # the jobs' own CPU seconds, not Snakemake's sampled 90
    assert f"scheduling efficiency {100 * 154 / (2 * 90):.0f}%" in text
    assert "~:" not in text  # nothing estimated, no footnote


def test_a_run_whose_logs_say_nothing_is_marked_as_estimated(tmp_path, monkeypatch):
    monkeypatch.setattr(time_to_figure, "import_seconds", lambda step: 3.0)
    job(tmp_path, "vision/base", "vision_base", 60.0, 45.0, None)
    text = time_to_figure.report(tmp_path, wall=60.0, cores=1)
    cells = row(text, "vision")
    assert "~: not said by the jobs" in text
    assert cells[3] == f"~{100 * 3 / 60:.0f}% (~3.0 s a job)" and cells[4] == "not said" and cells[5] == "~75%"


def test_the_critical_path_is_the_longest_chain_of_dependent_jobs():
    jobs = [time_to_figure.Job("f", rule, {}, seconds, 1, None, None, None, 0.0)
            for rule, seconds in (("a", 10.0), ("b", 5.0), ("c", 20.0), ("d", 1.0))]
    nodes = {index: (job.rule, ()) for index, job in enumerate(jobs)}
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]  # a -> b -> d and a -> c -> d
    length, chain = time_to_figure.critical_path(jobs, nodes, edges)
    assert length == 31.0 and [job.rule for job in chain] == ["a", "c", "d"]


def test_every_job_of_a_real_run_says_its_time_and_the_benchmark_reads_them(smoke_run):
    benchmarked = sorted((smoke_run / "results/benchmarks").rglob("*.jsonl"))
    assert benchmarked
    for record in benchmarked:
        log = smoke_run / "logs" / record.relative_to(smoke_run / "results/benchmarks").with_suffix(".log")
        said = time_to_figure.said_by(log)
        assert said is not None, log
        assert 0 < float(said["start"]) < float(said["wall"]) and float(said["cpu"]) > 0, log.read_text()[-300:]
        seconds = json.loads(record.read_text().splitlines()[-1])["s"]
        assert float(said["wall"]) <= seconds + 1.0  # the job's own clock sits inside Snakemake's
    trained = [time_to_figure.said_by(log) for log in (smoke_run / "logs").rglob("*.log")]
    assert any(said and said["until"] == "first training step" and float(said["eval"]) > 0 for said in trained)
    text = time_to_figure.report(smoke_run)
    assert {"arithmetic", "vision", "submasking"} <= {line.split(" | ")[0][2:] for line in text.splitlines()
                                                       if line.startswith("| ") and not line.startswith("| family")}
    path = re.search(r"Critical path ([\d.]+) min, (\d+) jobs: (.*)", text)
    assert path and int(path.group(2)) >= 3, text[-600:]  # a base, what it feeds, and what that feeds at least
    longest = max(json.loads(record.read_text().splitlines()[-1])["s"] for record in benchmarked)
    assert float(path.group(1)) >= round(longest / 60, 1)  # no job is longer than the longest chain


def test_the_benchmark_runs_from_the_command_line(tmp_path):
    job(tmp_path, "submasking/task", "submasking_task", 10.0, 5.0, {"wall": 9.0, "start": 3, "eval": 1, "cpu": 9})
    out = tmp_path / "report.md"
    result = subprocess.run([sys.executable, str(REPO / "benchmarks/time_to_figure.py"), str(tmp_path), "--wall", "10",
                             "--cores", "1", "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert row(out.read_text(), "submasking")[3] == "30% (3.0 s a job)" and "Critical path: not computed" in out.read_text()


@pytest.mark.parametrize("until", ["start of main", "first training step"])
def test_the_job_line_parses(until):
    from subtask_induction import timing

    clock = timing.JobClock()
    clock.mark_start_up(until)
    said = time_to_figure.JOB_TIME.search(clock.line())
    assert said and said["until"] == until and float(said["start"]) >= 0
