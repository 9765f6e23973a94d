# Vision family (paper §5, App. C): images -> mean-pooled images -> base model -> subnetwork discovery on
# pooled images (pretrained and random init) -> Subtask Induction and baselines -> Table 1/2, figures.


include: "vision_helpers.smk"


rule vision_world:
    output:
        directory(f"{VIS_DIR}/data/world"),
    log:
        "logs/vision/data/world.log",
    benchmark:
        f"{BENCH_DIR}/vision/data/world.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    resources:
        **rule_requests("vision_world"),
    params:
        settings=VIS_JOBS.world_settings(),
    message:
        JOB_LINE
    shell:
        step("vision_world") + " --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"


# Shape bias by augmentation (the texture_swap variants): the world's training images re-rendered with textures
# no class uses, replaying the world's own draws (checked image by image against the world's files).
rule vision_texture_swap:
    input:
        world=f"{VIS_DIR}/data/world",
    output:
        directory(vis_jobs.TEXTURE_SWAP),
    log:
        "logs/vision/data/texture_swap.log",
    benchmark:
        f"{BENCH_DIR}/vision/data/texture_swap.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    resources:
        **rule_requests("vision_world"),
    params:
        settings=VIS_JOBS.world_settings(split="train"),
    message:
        JOB_LINE
    shell:
        step("vision_texture_swap") + " --world {input.world:q} --settings {params.settings:q} --out {output:q} "
        "> {log:q} 2>&1"


# A user's tree is checked by a rule of its own before its builder runs: every image decoded, the splits drawn
# and their fill checked, nothing written. Its record is named by the tree's content digest (listing.py) and the
# builder reads it as `ancient`: a failing check stops the run before the builder starts, so Snakemake never
# deletes a finished build for one bad image, and a tree put back to a finished content finds its record again
# and plans nothing; new content is a new record, so the builder reruns.
rule vision_check_user_tree:
    input:
        # ancient: the record's name holds the tree's content; a copied tree's new folder times say nothing
        root=lambda wildcards: ancient(VIS_JOBS.tree_root(wildcards.tree)),
    output:
        f"{VIS_DIR}/data/checks/{{tree}}/{{digest}}.json",
    log:
        "logs/vision/data/checks/{tree}/{digest}.log",
    wildcard_constraints:
        tree=one_of(VIS_USER_TREES),
        digest="[0-9a-f]{64}",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]  # images decoded at once
    resources:
        **rule_requests("vision_check_user_tree"),
    params:
        settings=lambda wildcards: VIS_JOBS.tree_settings(wildcards.tree),
        gates=lambda wildcards: VIS_JOBS.tree_gates(wildcards.tree),
    message:
        JOB_LINE
    shell:
        step("vision_{wildcards.tree}") + " --check-only --root {input.root:q} --settings {params.settings:q} "
        "{params.gates} --out {output:q} --threads {threads} > {log:q} 2>&1"


# The builder of each source that splits a user's tree (vision/sources.py): ImageNet-16's member folders, or any
# class-per-folder tree (each class its own member), split and checked alike.
for _tree in VIS_USER_TREES:

    rule:
        name:
            f"vision_{_tree}"
        input:
            root=ancient(VIS_JOBS.tree_root(_tree)),
            check=ancient(vis_tree_check(_tree)),
        output:
            directory(f"{VIS_DIR}/data/{_tree}"),
        log:
            f"logs/vision/data/{_tree}.log",
        benchmark:
            f"{BENCH_DIR}/vision/data/{_tree}.jsonl"
        conda:
            "../../envs/subtask-induction.yaml"
        threads: config["threads_per_job"]  # images decoded at once (check before training)
        resources:
            **rule_requests(f"vision_{_tree}"),
        params:
            settings=VIS_JOBS.tree_settings(_tree),
            gates=VIS_JOBS.tree_gates(_tree),
        message:
            JOB_LINE
        shell:
            step(f"vision_{_tree}") + " --root {input.root:q} --settings {params.settings:q} {params.gates} "
            "--out {output:q} --threads {threads} > {log:q} 2>&1"


# The cue-conflict images are opened once before any training job runs (a bad stimulus stops the run first); the
# training jobs wait on this check but do not rerun after it: only the cue-conflict evaluation reads the images.
rule vision_check_cue_conflict:
    input:
        unpack(lambda wildcards: vis_cue_conflict_inputs()),
    output:
        vis_jobs.CUE_CONFLICT_CHECK,
    log:
        "logs/vision/data/cue_conflict_check.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]  # images decoded at once (check before training)
    resources:
        **rule_requests("vision_check_cue_conflict"),
    params:
        root=VIS_JOBS.cue_conflict(),
    message:
        JOB_LINE
    shell:
        step("check_images") + " --root {params.root:q} --what 'cue-conflict folder (vision.data.cue_conflict)' "
        "--out {output:q} --threads {threads} > {log:q} 2>&1"


rule vision_mean_pool:
    input:
        data=VIS_JOBS.data_dir(),
    output:
        directory(f"{VIS_DIR}/pooled/{{split}}/shard{{shard}}"),
    log:
        f"logs/vision/pooled/{{split}}/shard{{shard}}.log",
    benchmark:
        f"{BENCH_DIR}/vision/pooled/{{split}}/shard{{shard}}.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    resources:
        **training_resources("vision_mean_pool"),
    params:
        images=lambda wildcards: VIS_JOBS.split(wildcards.split),
        shards=lambda wildcards: VIS["pooling"]["shards"][wildcards.split],
        settings=VIS_JOBS.pooling_settings(),
        device=config["device"],
    message:
        JOB_LINE
    shell:
        step("vision_pool") + " --images {params.images:q} --shard {wildcards.shard} "
        "--shards {params.shards} --settings {params.settings:q} --threads {threads} --device {params.device} "
        "--out {output:q} > {log:q} 2>&1"


# The bases and the discoveries, several points to a job (config pack_sizes; point_packs.smk): what one point
# reads, is given and writes.
POINT_SPECS["vision_base"] = PointSpec(
    inputs=lambda w: {**vis_inputs(), "weights": VIS["model"]["weights"] or []},
    argv=lambda w, i: [
        "--train",
        VIS_JOBS.base_train(),
        "--eval",
        VIS_JOBS.split("eval"),
        "--test",
        VIS_JOBS.split("test"),
        "--pooled-test",
        *i.pooled_test,
        "--settings",
        VIS_JOBS.base_settings(w.chain),
        "--identity",
        VIS_JOBS.base_identity(w.chain),
        "--out-model",
        f"{VIS_DIR}/chain{w.chain}/base/model.pt",
        "--out-metrics",
        f"{VIS_DIR}/chain{w.chain}/base/metrics.json",
    ],
    outputs=lambda w: [f"{VIS_DIR}/chain{w.chain}/base/metrics.json", f"{VIS_DIR}/chain{w.chain}/base/model.pt"],
    checkpoints=lambda w: [f"{VIS_DIR}/chain{w.chain}/base/model.pt.ckpt"],
    priority=100,  # everything of a chain waits on its base
)


POINT_SPECS["vision_discover"] = PointSpec(
    inputs=lambda w: {**vis_inputs("discovery", "eval"), "base": f"{VIS_DIR}/chain{w.chain}/base/model.pt"},
    argv=lambda w, i: [
        "--base",
        i.base,
        "--init",
        w.init,
        "--pooled-train",
        *i.pooled_discovery,
        "--pooled-eval",
        *i.pooled_eval,
        "--test",
        VIS_JOBS.split("test"),
        "--pooled-test",
        *i.pooled_test,
        "--l0-weight",
        w.l0,
        "--settings",
        VIS_JOBS.discovery_settings(w.chain, w.init),
        "--identity",
        VIS_JOBS.discovery_identity(w.chain, w.init, w.l0),
        "--out-subnetwork",
        f"{vis_discovery_folder(w)}/subnetwork.pt",
        "--out-metrics",
        f"{vis_discovery_folder(w)}/metrics.json",
    ],
    outputs=lambda w: [f"{vis_discovery_folder(w)}/metrics.json", f"{vis_discovery_folder(w)}/subnetwork.pt"],
    checkpoints=lambda w: [f"{vis_discovery_folder(w)}/subnetwork.pt.ckpt"],
    priority=90,  # the transfers that read a subnetwork wait on it
)


# A checkpoint, as in the arithmetic family: transfer reads the chosen lambda's own subnetwork.pt.
checkpoint vision_select_subnetwork:
    input:
        expand(
            f"{VIS_DIR}/chain{{{{chain}}}}/discovery/{{{{init}}}}/lambda{{l0}}/subnetwork.pt",
            l0=VIS_JOBS.l0_tags,
        ),
    output:
        f"{VIS_CHAIN_DIR}/discovery/{{init}}/selected.json",
    log:
        f"logs/vision/chain{{chain}}/discovery/{{init}}/select.log",
    threads: 1
    params:
        floor=lambda wildcards: VIS_JOBS.select_floor(wildcards.init),
    message:
        JOB_LINE
    run:
        select_in_process(input, output[0], params.floor, log[0])


POINT_SPECS["vision_transfer"] = PointSpec(
    inputs=vis_transfer_inputs,
    argv=lambda w, i: [
        "--base",
        i.base,
        *(["--subnetwork", i.subnetwork] if i.subnetwork else []),
        "--train",
        VIS_JOBS.transfer_train(w.variant),
        "--eval",
        VIS_JOBS.split("eval"),
        "--pooled-eval",
        *i.pooled_eval,
        "--pooled-discovery",
        *i.pooled_discovery,
        "--test",
        VIS_JOBS.split("test"),
        "--pooled-test",
        *i.pooled_test,
        "--settings",
        VIS_JOBS.transfer_settings(w.chain, w.variant),
        "--identity",
        VIS_JOBS.transfer_identity(w.chain, w.variant),
        "--out",
        f"{vis_transfer_folder(w)}/metrics.json",
        "--out-model",
        f"{vis_transfer_folder(w)}/model.pt",
    ],
    outputs=lambda w: [f"{vis_transfer_folder(w)}/metrics.json", f"{vis_transfer_folder(w)}/model.pt"],
    checkpoints=lambda w: [f"{vis_transfer_folder(w)}/metrics.json.ckpt"],
)


# Arithmetic -> vision (config vision.cross_domain): the arithmetic GPT-2's matrices in a world ViT of its block
# shapes, the subnetwork under the ViT's names, and a fresh ViT, for the cross-domain transfer variants.
rule vision_cross_domain:
    input:
        gpt2=lambda wildcards: VIS_JOBS.arithmetic_base(wildcards.chain),
        subnetwork=lambda wildcards: arith_selected_subnetwork(wildcards.chain, *VIS_JOBS.arithmetic_subnetwork()),
    output:
        gpt2=f"{vis_jobs.CROSS_DOMAIN}/gpt2.pt",
        fresh=f"{vis_jobs.CROSS_DOMAIN}/fresh.pt",
        subnetwork=f"{vis_jobs.CROSS_DOMAIN}/subnetwork.pt",
        metrics=f"{vis_jobs.CROSS_DOMAIN}/metrics.json",
    log:
        f"logs/vision/chain{{chain}}/cross_domain.log",
    benchmark:
        f"{BENCH_DIR}/vision/chain{{chain}}/cross_domain.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    resources:
        **rule_requests("vision_cross_domain"),
    params:
        settings=lambda wildcards: VIS_JOBS.cross_domain_settings(wildcards.chain),
    message:
        JOB_LINE
    shell:
        step("vision_cross_domain") + " --gpt2 {input.gpt2:q} --subnetwork {input.subnetwork:q} "
        "--settings {params.settings:q} --out-gpt2 {output.gpt2:q} --out-fresh {output.fresh:q} "
        "--out-subnetwork {output.subnetwork:q} --out {output.metrics:q} > {log:q} 2>&1"


# The cue-conflict scores of one chain's models, from the saved models: a new cue-conflict folder reruns this
# and the tables, no training.


POINT_SPECS["vision_cue_conflict"] = PointSpec(
    inputs=vis_cue_conflict_point_inputs,
    argv=lambda w, i: [
        "--cue-conflict",
        VIS_JOBS.cue_conflict(),
        "--base",
        i.base,
        "--subnetworks",
        *i.subnetworks,
        "--transfers",
        *i.transfers,
        "--settings",
        VIS_JOBS.settings(w.chain),
        "--out",
        f"{VIS_DIR}/chain{w.chain}/cue_conflict.json",
    ],
    outputs=lambda w: [f"{VIS_DIR}/chain{w.chain}/cue_conflict.json"],
)


# The first chain that counts (with spare chains, its roster's first).
rule vision_diagnostics:
    input:
        unpack(lambda wildcards: vis_inputs("discovery")),
        base=lambda wildcards: f"{VIS_DIR}/chain{vis_on_roster().chains[0]}/base/model.pt",
        subnetwork=lambda wildcards: vis_selected_subnetwork(vis_on_roster().chains[0], "pretrained"),
    output:
        csv=with_report([f"{VIS_DIR}/summary/diagnostics.csv"], vis_jobs.CAPTIONS, "Vision", "Tables")[0],
        md=f"{VIS_DIR}/summary/diagnostics.md",
    log:
        "logs/vision/diagnostics.log",
    benchmark:
        f"{BENCH_DIR}/vision/diagnostics.jsonl"
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]
    resources:
        **training_resources("vision_diagnostics"),
    params:
        settings=lambda wildcards: vis_on_roster().diagnostics_settings(),
        train=VIS_JOBS.split("train"),
        test=VIS_JOBS.split("test"),
        outdir=lambda wildcards, output: Path(output.csv).parent,
        device=config["device"],
    message:
        JOB_LINE
    shell:
        step("vision_diagnostics") + " --base {input.base:q} --subnetwork {input.subnetwork:q} "
        "--train {params.train:q} --pooled-discovery {input.pooled_discovery:q} --test {params.test:q} "
        "--pooled-test {input.pooled_test:q} --settings {params.settings:q} --threads {threads} "
        "--device {params.device} --outdir {params.outdir:q} > {log:q} 2>&1"


# With spare chains (vision.spare_chains; roster.py): the chains that count, once every planned and spare base is in.
checkpoint vision_roster:
    input:
        VIS_JOBS.base_metrics(chains=VIS_JOBS.candidates),
    output:
        vis_jobs.ROSTER,
    log:
        "logs/vision/roster.log",
    params:
        planned=VIS_JOBS.chains,
        spares=VIS_JOBS.spares,
        threshold=lambda wildcards: roster_threshold("vision"),
    message:
        JOB_LINE
    run:
        write_roster("vision", params.planned, params.spares, input, output[0], log[0])


rule vision_aggregate:
    input:
        base=vis_aggregate_input("base"),
        discovery=vis_aggregate_input("discovery"),
        selected=vis_aggregate_input("selected"),
        transfer=vis_aggregate_input("transfer"),
        cue_conflict=vis_aggregate_input("cue_conflict"),
    output:
        with_report(VIS_JOBS.tables(), vis_jobs.CAPTIONS, "Vision", "Tables"),
    log:
        "logs/vision/aggregate.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        outdir=lambda wildcards, output: Path(output[0]).parent,
        report=VIS_JOBS.report_settings(),
    message:
        JOB_LINE
    shell:
        step("vision_aggregate") + " --base {input.base:q} --discovery {input.discovery:q} "
        "--selected {input.selected:q} --transfer {input.transfer:q} --cue-conflict {input.cue_conflict:q} "
        "--report {params.report:q} --outdir {params.outdir:q} > {log:q} 2>&1"


rule vision_plots:
    input:
        VIS_JOBS.tables(),
    output:
        with_report(VIS_JOBS.figures(), vis_jobs.CAPTIONS, "Vision", "Figures"),
    log:
        "logs/vision/plots.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        summary=lambda wildcards, input: Path(input[0]).parent,
        outdir=lambda wildcards, output: Path(output[0]).parent,
    message:
        JOB_LINE
    shell:
        step("vision_plots") + " --summary {params.summary:q} --outdir {params.outdir:q} > {log:q} 2>&1"


rule vision_samples:
    input:
        data=VIS_JOBS.data_dir(),
        pooled_test=VIS_JOBS.pooled("test"),
        # not ancient: a new folder, a new figure
        cue_conflict_check=vis_jobs.CUE_CONFLICT_CHECK if VIS_JOBS.cue_conflict() else [],
    output:
        with_report([f"{VIS_DIR}/figures/samples.png"], vis_jobs.CAPTIONS, "Vision", "Figures")[0],
    log:
        "logs/vision/samples.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        test=VIS_JOBS.split("test"),
        cue_conflict=VIS_JOBS.cue_conflict(),
        settings=VIS_JOBS.samples_settings(),
    message:
        JOB_LINE
    shell:
        step("vision_samples") + " --test {params.test:q} --pooled-test {input.pooled_test:q} "
        "--cue-conflict {params.cue_conflict:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
