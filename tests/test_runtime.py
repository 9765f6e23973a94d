"""Result files are written atomically and readable as the umask allows (shared project directories)."""

import os
import stat

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
