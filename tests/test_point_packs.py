"""The one-point steps in packs (config pack_sizes; steps/point_pack.py, point_packs.smk): a pack killed with SIGKILL
midway retrains only its unfinished points when the same command runs again, to the numbers of a run never killed;
points of a pack are restored by their fingerprints; the packs are a function of the config alone.

(That a point's numbers do not depend on its pack is the smoke record's test: the stored record was made one point to
a process, the smoke config packs two chains to a job.)"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import REPO, copy_workflow, jobs_run, smoke_config
from record import VOLATILE
from subtask_induction.workflow_config import normalise


def arithmetic_bases_config(chains=(0, 1, 2)) -> dict:
    """Arithmetic alone, three chains whose bases train in one pack (a few seconds each)."""
    config = smoke_config("arithmetic")
    config["arithmetic"]["chains"] = list(chains)
    config["arithmetic"]["base"]["epochs"] = 60  # about a second a point: the kill lands while one trains
    config["pack_sizes"] = {**config["pack_sizes"], "arithmetic_base": 4}
    return config


def targets(config: dict) -> list[str]:
    return normalise(config).arithmetic.base_metrics()


def stable(path: Path):
    """A metrics.json without what differs between two runs of the same code (times, fingerprints, provenance)."""
    def keep(value):
        if isinstance(value, dict):
            return {k: keep(v) for k, v in value.items() if not VOLATILE.search(k)}
        return [keep(v) for v in value] if isinstance(value, list) else value
    return keep(json.loads(path.read_text()))


def run(workdir: Path, config: dict, timeout=600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *targets(config)], cwd=workdir, env=env,
                          text=True, capture_output=True, timeout=timeout)


def finished_points(workdir: Path) -> set[str]:
    """The points whose records hold a fingerprint: what a pack keeps as each point finishes."""
    return {str(record.parent.relative_to(workdir) / "metrics.json")
            for record in (workdir / "results/arithmetic").rglob("base/*/*/record.json")
            if "fingerprint" in json.loads(record.read_text())}


@pytest.mark.user_path
def test_a_pack_killed_midway_retrains_only_its_unfinished_points_and_one_point_retrains_alone(tmp_path):
    config = arithmetic_bases_config()
    clean, killed = copy_workflow(tmp_path / "clean", config), copy_workflow(tmp_path / "killed", config)
    result = run(clean, config)
    assert result.returncode == 0, result.stderr[-3000:]

    # the same command, its pack's process killed with SIGKILL once its first point is kept, while the next trains
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    snakemake = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", *targets(config)], cwd=killed,
                                 env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 300
    while not finished_points(killed) and time.time() < deadline and snakemake.poll() is None:
        time.sleep(0.02)
    pack = subprocess.run(["pgrep", "-f", "subtask_induction.steps.point_pack"], capture_output=True, text=True)
    assert pack.stdout.split(), "no pack process to kill: the pack finished before its first record was seen"
    for pid in pack.stdout.split():
        os.kill(int(pid), signal.SIGKILL)
    snakemake.communicate(timeout=300)
    assert snakemake.returncode != 0  # the killed job failed the run
    kept = finished_points(killed)
    planned = set(targets(config))
    assert kept and kept < planned, kept

    again = run(killed, config)
    assert again.returncode == 0, again.stderr[-3000:]
    manifest = json.loads(next((killed / "results/arithmetic/packs/arithmetic_base").glob("*[0-9a-f].json")).read_text())
    assert set(manifest["restored"]) == kept
    assert set(manifest["trained"]) == planned - kept
    for point in planned:
        assert stable(killed / point) == stable(clean / point), point

    # one point again (config retrain_points): its pack alone reruns, trains it to the same numbers, restores its mates;
    # the next plain run restores all of them (its points file changed back) and trains nothing
    one = sorted(planned)[1]
    again = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", one, "--config", f"retrain_points=[{one}]"],
                           cwd=clean, env=env, text=True, capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    manifest = json.loads(next((clean / "results/arithmetic/packs/arithmetic_base").glob("*[0-9a-f].json")).read_text())
    assert manifest["trained"] == [one] and set(manifest["restored"]) == planned - {one}
    assert stable(clean / one) == stable(killed / one)
    plain = run(clean, config)
    assert plain.returncode == 0, plain.stderr[-3000:]
    manifest = json.loads(next((clean / "results/arithmetic/packs/arithmetic_base").glob("*[0-9a-f].json")).read_text())
    assert manifest["trained"] == [] and set(manifest["restored"]) == planned


def test_a_pack_restores_its_points_by_fingerprint_and_trains_a_changed_one(tmp_path):
    """A pack run twice restores every point; a point whose input changed trains again, its mates are restored."""
    from subtask_induction.steps import point_pack

    data = tmp_path / "data.txt"
    data.write_text("one")
    calls = []

    def fake_main(argv):  # a one-point step: writes its metrics JSON from its input's content
        out = argv[argv.index("--out") + 1]
        calls.append(out)
        Path(out).write_text(json.dumps({"read": data.read_text(), "out": out}))

    points = [{"name": f"p{i}", "argv": ["--out", str(tmp_path / f"p{i}" / "metrics.json")],
               "outputs": [str(tmp_path / f"p{i}" / "metrics.json")],
               "reads": [str(data)] if i == 1 else [], "checkpoints": []} for i in range(3)]
    for point in points:
        Path(point["outputs"][0]).parent.mkdir()
    listed = tmp_path / "points.json"
    listed.write_text(json.dumps(points))
    arguments = ["--step", "arithmetic_base", "--points", str(listed), "--manifest", str(tmp_path / "manifest.json")]
    module = __import__("subtask_induction.steps.arithmetic_base", fromlist=["main"])
    original, module.main = module.main, fake_main
    try:
        point_pack.main(arguments)
        assert len(calls) == 3
        point_pack.main(arguments)
        assert len(calls) == 3  # every point restored
        data.write_text("two")
        point_pack.main(arguments)
    finally:
        module.main = original
    assert calls[3:] == [points[1]["outputs"][0]]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["trained"] == [points[1]["outputs"][0]]
    assert sorted(manifest["restored"]) == [points[0]["outputs"][0], points[2]["outputs"][0]]


def test_packs_are_a_function_of_the_config_and_a_pack_holds_at_most_its_size():
    config = smoke_config()
    config["vision"]["chains"] = [0, 1, 2, 3, 4]
    config["pack_sizes"] = {**config["pack_sizes"], "vision_transfer": 3, "vision_base": 2}
    first, second = normalise(json.loads(json.dumps(config))), normalise(json.loads(json.dumps(config)))
    for rule, packed in first.vision.packed.items():
        assert packed.packs == second.vision.packed[rule].packs
        assert all(len(members) <= config["pack_sizes"][rule] for _, members in packed.packs)
        assert sorted(json.dumps(p, sort_keys=True) for _, m in packed.packs for p in m) == sorted(
            json.dumps(p, sort_keys=True) for p in packed.points)
    transfer = first.vision.packed["vision_transfer"]
    for _, members in transfer.packs:  # a baseline never waits on a discovery in a pack of the variants that read one
        assert len({first.vision.discovery_of(point["variant"]) is None for point in members}) == 1
