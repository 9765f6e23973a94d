# Submasking family: a frozen pretrained backbone adapted to downstream tasks by a binary mask over its
# weights plus a new head (FS), against a linear probe (LP), full fine-tuning (FFT) and their
# self-supervised variants. One result folder per (backbone, task, adaptation, label fraction, seed).


include: "submasking_helpers.smk"


rule submasking_task:
    output:
        directory(f"{SUB_DIR}/tasks/{{task}}"),
    log:
        "logs/submasking/tasks/{task}.log",
    benchmark:
        f"{BENCH_DIR}/submasking/tasks/{{task}}.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    resources:
        **rule_requests("submasking_task"),
    params:
        source=lambda wildcards: SUB_JOBS.tasks[wildcards.task]["source"],
        settings=lambda wildcards: SUB_JOBS.task_settings(),
    message:
        JOB_LINE
    shell:
        step("submasking_task") + " --name {params.source} --settings {params.settings:q} --out {output:q} "
        "> {log:q} 2>&1"


rule submasking_check_task:
    input:
        root=lambda wildcards: SUB_JOBS.tasks[wildcards.task]["root"],
        listing=lambda wildcards: tracked(SUB_JOBS.tasks[wildcards.task]["root"], f"submasking_{wildcards.task}"),
    output:
        f"{SUB_DIR}/checks/{{task}}.json",
    log:
        "logs/submasking/checks/{task}.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]  # images decoded at once
    resources:
        **rule_requests("submasking_check_task"),
    params:
        what=lambda wildcards: f"task folder (submasking.tasks.{wildcards.task}.root)",
    message:
        JOB_LINE
    shell:
        step("check_images")
        + " --root {input.root:q} --what {params.what:q} --out {output:q} --threads {threads} > {log:q} 2>&1"


# A pack's points, as its step reads them (--points): a local job in Snakemake's own process whose params
# are the points, so a change to them reruns the pack through the new file (as arithmetic_pack_points).
rule submasking_pack_points:
    output:
        sub_jobs.PACK_POINTS,
    log:
        "logs/submasking/packs/{pack}.points.log",
    wildcard_constraints:
        pack=one_of(SUB_JOBS.members) or "-",
    params:
        points=lambda wildcards: SUB_JOBS.pack_points(wildcards.pack),
    message:
        JOB_LINE
    run:
        write_points(output[0], params.points, log[0])


# The points, one pack of points per job (submasking/jobs.py): points of one task train one after another in one
# process, each on its own backbone; finished points come back from their records (sweep.py).
for _pack, _members in SUB_JOBS.packs:

    rule:
        name:
            f"submasking_pack_{_pack}"
        input:
            points=sub_jobs.PACK_POINTS.format(pack=_pack),
            task=SUB_JOBS.task_root(_members[0].task),
            task_check=SUB_JOBS.task_check(_members[0].task),
            backbones=SUB_JOBS.pack_backbones(_pack),
        output:
            manifest=f"{SUB_DIR}/packs/{_pack}.json",  # first: a DAG lookup of it never compiles the points' patterns
            metrics=[point.metrics for point in _members],
            masks=[point.mask for point in _members],
        log:
            f"logs/submasking/packs/{_pack}.log",
        benchmark:
            f"{BENCH_DIR}/submasking/packs/{_pack}.jsonl"
        priority: pack_priority("submasking_pack", _members)
        conda:
            "../../envs/subtask-induction.yaml"
        threads: config["threads_per_job"]
        resources:
            **pack_resources("submasking_pack", _members),
        params:
            device=config["device"],
        message:
            JOB_LINE
        shell:
            train_step("submasking_train") + " --task-root {input.task:q} --points {input.points:q} "
            "--manifest {output.manifest:q} --threads {threads} --device {params.device} > {log:q} 2>&1"


rule submasking_aggregate:
    input:
        metrics=[point.metrics for point in SUB_JOBS.points],
        masks=[point.mask for point in SUB_JOBS.points],
    output:
        with_report(SUB_JOBS.tables(), sub_jobs.CAPTIONS, "Submasking", "Tables"),
        with_report(SUB_JOBS.figures(), sub_jobs.CAPTIONS, "Submasking", "Figures"),
    log:
        "logs/submasking/aggregate.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        grid=SUB_JOBS.grid(),
        out=lambda wildcards, output: str(Path(output[0]).parents[1]),
    message:
        JOB_LINE
    shell:
        step("submasking_aggregate") + " --grid {params.grid:q} --out {params.out:q} " "> {log:q} 2>&1"
