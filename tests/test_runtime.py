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
