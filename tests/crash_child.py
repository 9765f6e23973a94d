"""A child process for the crash sweep (tests/test_crash_sweep.py): runs the upgrade, the rollback or a record store,
and kills itself with SIGKILL (no `finally`, no `except` runs) just before its KILL_AT-th filesystem mutation, as
Python's audit events count them: `open` for writing, os.rename, os.replace, os.remove, os.rmdir, os.mkdir, os.chmod,
os.utime. KILL_AT -1 runs to the end and prints the kind of each mutation (one line, in order) and how many it
made (the last line).

    python tests/crash_child.py upgrade|rollback|store FOLDER KILL_AT [DATA]
"""

import os
import signal
import sys
from pathlib import Path

sys.dont_write_bytecode = True   # an import's .pyc is not the tool's mutation
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from subtask_induction import upgrade  # noqa: E402
from subtask_induction.pages import run_records  # noqa: E402

EVENTS = {"os.rename", "os.replace", "os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.utime"}
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def mutation(event: str, args) -> bool:
    if event in EVENTS:
        return True
    if event == "open":
        _, mode, flags = args
        return bool((isinstance(mode, str) and set(mode) & set("wax+")) or (flags or 0) & WRITING)
    return False


def main() -> None:
    action, folder = sys.argv[1], Path(sys.argv[2])
    # KILL_AT: a mutation's index, or `after:EVENT:TEXT`: the mutation right after the first EVENT on a path with TEXT
    kill_at, after = (-1, sys.argv[3].split(":", 2)[1:]) if sys.argv[3].startswith("after:") else (int(sys.argv[3]), None)
    count, kinds = 0, []

    def hook(event, args):
        nonlocal count, kill_at
        if mutation(event, args):
            if count == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            if after and kill_at < 0 and event == after[0] and after[1] in str(args[0]):
                kill_at = count + 1
            kinds.append(event)
            count += 1

    if action == "store":   # git's and pandas' imports happen before the hook counts
        import pandas  # noqa: F401
        import yaml  # noqa: F401
    sys.addaudithook(hook)
    if action == "upgrade":
        upgrade.upgrade_run(folder, log=lambda *_: None)
    elif action == "rollback":
        done = upgrade.rollback(folder)
        assert not done.skipped, done.skipped
    else:
        run_records.store(folder, "default", "t", "make reproduce", ["config/config.yaml"], 10.0, "1 min",
                          Path(sys.argv[4]))
    print(" ".join(kinds))
    print(count)


if __name__ == "__main__":
    main()
