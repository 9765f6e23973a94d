# Submasking family: its jobs (SWEEP.submasking, submasking/jobs.py: points and packs, where each task and
# backbone comes from, each step's settings and targets), and the family's checks of its data while the DAG is
# built.
from subtask_induction.submasking import jobs as sub_jobs

SUB = config.get("submasking", {})
SUB_JOBS = SWEEP.submasking
SUB_DIR = sub_jobs.DIR

if "submasking" in config["families"]:
    _sub_problems = submasking_data_problems(SUB)  # tasks and backbone files named in the config must exist
    if _sub_problems:
        raise ValueError("\n".join(_sub_problems))
elif any(task.get("root") and Path(task["root"]).is_dir() for task in SUB_JOBS.tasks.values()):
    print(
        f"warning: a submasking task folder exists, but `families` {config['families']} leaves submasking "
        f"out: add it to run the submasking family",
        file=sys.stderr,
    )
