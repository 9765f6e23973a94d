"""Result files are written atomically and readable as the umask allows (shared project directories)."""

import os
import stat
from pathlib import Path

import pytest

from subtask_induction.runtime import save_json, save_text


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_results_get_the_permissions_the_umask_allows(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        save_json({"a": 1}, tmp_path / "metrics.json")
        save_text("x", tmp_path / "table.md")
    finally:
        os.umask(previous)
    for name in ("metrics.json", "table.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_two_saves_of_the_same_model_are_byte_identical(tmp_path):
    """A saved model's bytes depend on its tensors alone, not on the temporary file it was written through (torch
    names the archive inside after the file it writes): identical runs give files with identical checksums."""
    import hashlib

    import torch

    from subtask_induction.arithmetic.model import build_gpt2
    from subtask_induction.runtime import save_torch

    state = build_gpt2(20, 1, {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}, seed=3).state_dict()
    for name in ("first", "second"):
        save_torch({"state_dict": state, "meta": {"layers": 1}}, tmp_path / name / "model.pt")
    digests = {hashlib.sha256((tmp_path / name / "model.pt").read_bytes()).hexdigest() for name in ("first", "second")}
    assert len(digests) == 1
    assert torch.equal(torch.load(tmp_path / "first/model.pt", weights_only=True)["state_dict"]["transformer.wte.weight"],
                       state["transformer.wte.weight"])


def test_a_jobs_provenance_names_the_commit_of_the_code_it_ran(tmp_path):
    """Every metrics.json's provenance names the git commit of the package the job ran (issue 93), and None where the
    package is not in a checkout (a copy, an installed package)."""
    import shutil
    import subprocess
    import sys

    from subtask_induction.records import provenance

    repo = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    assert provenance()["code"]["commit"] == head.stdout.strip()
    copy = tmp_path / "copy"
    shutil.copytree(repo / "workflow" / "subtask_induction", copy / "subtask_induction",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                          "from subtask_induction.records import code_commit; print(code_commit())", str(copy)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "None", out.stderr[-2000:]
