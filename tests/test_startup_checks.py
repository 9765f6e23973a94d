"""What a run reads by name is checked while the DAG is built, every problem in one message, before any job:
a tree missing member WNID folders, a badly named cue-conflict stimulus, a missing weight file."""

import pytest
import yaml

from harness import REPO, snakemake


def test_a_dry_run_on_a_tree_missing_wnids_fails_at_start_up_naming_them(tmp_path):
    root = tmp_path / "imagenet"
    for split in ("train", "val"):
        (root / split / "n02123045").mkdir(parents=True)  # one tabby cat folder: 206 member folders missing
    stimuli = tmp_path / "stimuli"
    (stimuli / "cat").mkdir(parents=True)
    (stimuli / "cat" / "cat1-dog2.png").write_bytes(b"")
    (stimuli / "cat" / "cat2_dog1.png").write_bytes(b"")  # not <shape><i>-<texture><j>.png
    overlay = tmp_path / "paths.yaml"
    overlay.write_text(yaml.safe_dump({
        "families": ["vision"],
        "vision": {"data": {"imagenet": {"root": str(root)}, "cue_conflict": str(stimuli)},
                   "model": {"weights": str(tmp_path / "missing.bin")}, "pooling": {"segmenter": "colour_regions"}}}))
    result = snakemake(REPO, "-n", "--directory", str(tmp_path / "run"),
                       "--configfile", "config/config.yaml", "config/paper.yaml", str(overlay))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Job stats" not in output  # no job was listed, let alone run
    assert "206 of 207 member WNID folders are missing under" in output and "n02085782 (dog)" in output
    assert output.count("member WNID folders are missing") == 2  # train and val, each once
    assert "cat2_dog1.png: expected a file named <shape><i>-<texture><j>.png" in output
    assert output.count("missing.bin does not exist") == 1  # a wrong weight path, reported once


def test_an_imagenet_run_without_weights_is_refused_at_start_up(tmp_path):
    """Decided (CHANGELOG 0.3.0): a base is trained only on the generated world; ImageNet mode needs weights."""
    overlay = tmp_path / "paths.yaml"
    overlay.write_text(yaml.safe_dump({"families": ["vision"], "vision": {
        "data": {"source": "imagenet", "imagenet": {"root": str(tmp_path)}, "cue_conflict": str(tmp_path)},
        "model": {"weights": None}}}))
    result = snakemake(REPO, "-n", "--directory", str(tmp_path / "run"), "--configfile", "config/config.yaml", str(overlay))
    assert result.returncode != 0
    assert "config vision.model.weights: pretrained weight file (a base is trained only on the generated world) is " \
           "required here and not set" in result.stdout + result.stderr


def test_snakemake_from_the_venv_with_a_python_on_path_that_lacks_torch_stops_before_any_job(tmp_path):
    """`.venv/bin/snakemake` without the venv active: the jobs would run PATH's `python`, which lacks torch. A run
    stops when it starts, before any job, naming that Python, what it lacks and the fix; a dry run (no job runs)
    still plans."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"   # a Python without the dependencies, as a user's system Python would be
    python.write_text("#!/bin/sh\necho torch transformers\nexit 1\n")
    python.chmod(0o755)
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"}

    def snakemake_with_that_path(*args):
        return subprocess.run([sys.executable, "-m", "snakemake", *args, "--directory", str(tmp_path / "run"),
                               "--configfile", "config/config.yaml"], cwd=REPO, env=environment, text=True,
                              capture_output=True, timeout=300)

    result = snakemake_with_that_path("--cores", "1", "results/arithmetic/data/base/a+ab.pt")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and not (tmp_path / "run" / "results").exists()   # no job ran
    assert f"which is {python} here, and it lacks torch transformers" in output
    assert "source .venv/bin/activate" in output and "--sdm conda" in output
    assert snakemake_with_that_path("-n").returncode == 0


def test_the_base_interpreter_a_venv_links_to_is_not_taken_for_the_venv(tmp_path):
    """A venv's `python` is a link to its base interpreter, which lacks the venv's packages: a PATH whose `python` is
    that base interpreter must be probed, not matched to Snakemake's own Python by resolving links."""
    import os
    import subprocess
    import sys

    from subtask_induction.job_python import job_python_problem

    base = os.path.realpath(sys.executable)
    if subprocess.run([base, "-c", "import torch"], capture_output=True).returncode == 0:
        pytest.skip("the base interpreter has torch itself")
    (tmp_path / "python").symlink_to(base)
    problem = job_python_problem(str(tmp_path))
    assert problem is not None and "lacks torch" in problem
    assert job_python_problem(os.path.dirname(sys.executable)) is None   # the venv's own python passes
