# Submasking family: a frozen pretrained backbone adapted to downstream tasks by a binary mask over its
# weights plus a new head (FS), against a linear probe (LP), full fine-tuning (FFT) and their
# self-supervised variants. One result folder per (backbone, task, method, label fraction, seed).
# Helpers and target lists live in common.smk.


wildcard_constraints:
    backbone=one_of(SUB_BACKBONES or ["-"]),
    task=one_of(SUB_TASKS or ["-"]),
    method=one_of(SUB.get("methods", []) or ["-"]),
    fraction=one_of(number_tag(f) for f in SUB.get("label_fractions", [])) or "-",


rule submasking_task:
    output:
        directory(f"{SUB_DIR}/tasks/{{task}}"),
    log:
        "logs/submasking/tasks/{task}.log",
    benchmark:
        f"{BENCH_DIR}/submasking/tasks/{{task}}.jsonl"
    params:
        source=lambda wildcards: SUB_TASKS[wildcards.task]["source"],
        settings=lambda wildcards: as_json({"seed": SUB["seed"], "image_size": SUB["task_image_size"],
                                            **SUB.get("embedded", {})}),
    threads: 1
    conda:
        "../../envs/subtask-induction.yaml"
    shell:
        step("submasking_task") + " --name {params.source} --settings {params.settings:q} --out {output:q} "
        "> {log:q} 2>&1"


rule submasking_check_task:
    input:
        lambda wildcards: SUB_TASKS[wildcards.task]["root"],
    output:
        f"{SUB_DIR}/checks/{{task}}.json",
    log:
        "logs/submasking/checks/{task}.log",
    params:
        what=lambda wildcards: f"task folder (submasking.tasks.{wildcards.task}.root)",
    threads: 1
    conda:
        "../../envs/subtask-induction.yaml"
    shell:
        step("check_images") + " --root {input:q} --what {params.what:q} --out {output:q} > {log:q} 2>&1"


rule submasking_train:
    input:
        task=lambda wildcards: sub_task_root(wildcards.task),
        task_check=lambda wildcards: sub_task_check(wildcards.task),
        backbone=lambda wildcards: sub_backbone_file(wildcards.backbone),
    output:
        metrics=f"{SUB_POINT}/metrics.json",
        mask=f"{SUB_POINT}/mask.pt",
    log:
        f"logs/submasking/{{backbone}}/{{task}}/{{method}}/fraction{{fraction}}/seed{{seed}}.log",
    benchmark:
        f"{BENCH_DIR}/submasking/{{backbone}}/{{task}}/{{method}}/fraction{{fraction}}/seed{{seed}}.jsonl"
    params:
        settings=sub_train_settings,
        backbone_arg=lambda wildcards, input: (f"--backbone {input.backbone}"
                                               if SUB_BACKBONES[wildcards.backbone]["source"] == "vision_base" else ""),
        device=config["device"],
    threads: config["threads_per_job"]
    resources:
        **training_resources(),
    conda:
        "../../envs/subtask-induction.yaml"
    shell:
        then_remove_checkpoints(
            train_step("submasking_train") + " {params.backbone_arg} --task-root {input.task:q} --method {wildcards.method} "
            "--fraction {wildcards.fraction} --seed {wildcards.seed} --settings {params.settings:q} --threads {threads} "
            "--device {params.device} --out-metrics {output.metrics:q} --out-mask {output.mask:q} > {log:q} 2>&1",
            "mask", suffixes=(".ckpt", ".ckpt.pretext"),
        )


rule submasking_aggregate:
    input:
        metrics=sub_points("metrics.json"),
        masks=sub_points("mask.pt"),
    output:
        with_report(expand(f"{SUB_DIR}/summary/{{table}}", table=SUB_TABLES), SUB_CAPTIONS, "Submasking", "Tables"),
        with_report(expand(f"{SUB_DIR}/figures/{{figure}}.{{ext}}", figure=SUB_FIGURES, ext=["png", "pdf"]),
                    SUB_CAPTIONS, "Submasking", "Figures"),
    log:
        "logs/submasking/aggregate.log",
    params:
        pattern=lambda wildcards: SUB_POINT,  # a function: Snakemake would fill the braces of a plain string
        grid=as_json(sub_grid()),
        out=lambda wildcards, output: str(Path(output[0]).parents[1]),
    threads: 1
    conda:
        "../../envs/subtask-induction.yaml"
    shell:
        step("submasking_aggregate") + " --pattern {params.pattern:q} --grid {params.grid:q} --out {params.out:q} "
        "> {log:q} 2>&1"
