# Arithmetic family (paper §4, App. B): data -> base GPT-2 -> ab subnetwork -> transfer sweep -> figures.


include: "arithmetic_helpers.smk"


rule arithmetic_data:
    output:
        f"{ARITH_DIR}/data/{{purpose}}/{{computation}}.pt",
    log:
        f"logs/arithmetic/data/{{purpose}}/{{computation}}.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        settings=lambda wildcards: ARITH_JOBS.data_settings(wildcards.purpose),
    message:
        JOB_LINE
    shell:
        step("arithmetic_data") + " --purpose {wildcards.purpose} --computation {wildcards.computation:q} "
        "--settings {params.settings:q} --out {output:q} > {log:q} 2>&1"


# The bases and the discoveries, several points to a job (config pack_sizes; point_packs.smk): what one point
# reads, is given and writes.


POINT_SPECS["arithmetic_base"] = PointSpec(
    inputs=lambda w: {"data": f"{ARITH_DIR}/data/base/{w.base}.pt"},
    argv=lambda w, i: [
        "--data",
        i.data,
        "--layers",
        w.layers,
        "--settings",
        ARITH_JOBS.base_settings(w.chain),
        "--identity",
        ARITH_JOBS.base_identity(w.chain, w.base, w.layers),
        "--out-model",
        f"{arith_base_folder(w)}/model.pt",
        "--out-metrics",
        f"{arith_base_folder(w)}/metrics.json",
    ],
    outputs=lambda w: [f"{arith_base_folder(w)}/metrics.json", f"{arith_base_folder(w)}/model.pt"],
    checkpoints=lambda w: [f"{arith_base_folder(w)}/model.pt.ckpt"],
    priority=100,  # everything of a chain waits on its base
)


POINT_SPECS["arithmetic_discover"] = PointSpec(
    inputs=lambda w: {"base": f"{arith_base_folder(w)}/model.pt", "data": f"{ARITH_DIR}/data/discovery/{w.subtask}.pt"},
    argv=lambda w, i: [
        "--base",
        i.base,
        "--data",
        i.data,
        "--l0-weight",
        w.l0,
        "--settings",
        ARITH_JOBS.discovery_settings(w.chain),
        "--identity",
        ARITH_JOBS.discovery_identity(w.chain, w.base, w.subtask, w.layers, w.l0),
        "--out-subnetwork",
        f"{arith_discovery_folder(w)}/subnetwork.pt",
        "--out-metrics",
        f"{arith_discovery_folder(w)}/metrics.json",
    ],
    outputs=lambda w: [f"{arith_discovery_folder(w)}/metrics.json", f"{arith_discovery_folder(w)}/subnetwork.pt"],
    checkpoints=lambda w: [f"{arith_discovery_folder(w)}/subnetwork.pt.ckpt"],
    priority=90,  # every transfer pack waits on the subnetworks
)


# A checkpoint: the packs read the chosen lambda's own subnetwork.pt, found from selected.json once this
# has run, so adding a lambda that loses reruns no pack (docs/running.md, "What reruns after a change").
checkpoint arithmetic_select_subnetwork:
    input:
        expand(
            f"{ARITH_DIR}/chain{{{{chain}}}}/discovery/{{{{base}}}}/{{{{subtask}}}}/layers{{{{layers}}}}/lambda{{l0}}/subnetwork.pt",
            l0=ARITH_JOBS.l0_tags,
        ),
    output:
        f"{ARITH_CHAIN_DIR}/discovery/{{base}}/{{subtask}}/layers{{layers}}/selected.json",
    log:
        f"logs/arithmetic/chain{{chain}}/discovery/{{base}}/{{subtask}}/layers{{layers}}/select.log",
    threads: 1
    params:
        check=ARITH_JOBS.select_check(),
    message:
        JOB_LINE
    run:
        select_in_process(input, output[0], params.check, log[0])


# A pack's points, as its step reads them (--points): a local job in Snakemake's own process. Its params are
# the points, so a change to them (a point added, a subnetwork chosen anew, retrain_points) rewrites the file,
# and the new file reruns the pack; the console line of the pack stays short.
rule arithmetic_pack_points:
    input:
        arith_pack_points_inputs,
    output:
        arith_jobs.PACK_POINTS,
    log:
        f"logs/arithmetic/transfer/packs/{{pack}}.points.log",
    wildcard_constraints:
        pack=one_of(ARITH_JOBS.members) or "-",
    params:
        points=arith_pack_points,
    message:
        JOB_LINE
    run:
        write_points(output[0], params.points, log[0])


# The transfer sweep, one pack of points per job (arithmetic/jobs.py; docs/running.md, "Packs"). Each point's
# metrics.json is an output of its pack; a pack restores finished points from their records, and trains
# again only the points in config `retrain_points` (a single-point rerun).
for _pack, _members in ARITH_JOBS.packs:

    rule:
        name:
            f"arithmetic_transfer_pack_{_pack}"
        input:
            partial(arith_pack_inputs, _pack),
            points=arith_jobs.PACK_POINTS.format(pack=_pack),
            # Every selection the pack reads, so that the DAG holds all of them from the start; ancient():
            # a selection rerun that keeps its choice (a λ added that loses) must not rerun the pack.
            selections=[ancient(path) for path in ARITH_JOBS.pack_selections(_pack)],
        output:
            # The manifest first: a DAG lookup of it matches here and never compiles the points' patterns.
            manifest=ARITH_JOBS.pack_manifest(_pack),
            points=[point.metrics for point in _members],
        log:
            f"logs/arithmetic/transfer/packs/{_pack}.log",
        benchmark:
            f"{BENCH_DIR}/arithmetic/transfer/packs/{_pack}.jsonl"
        priority: pack_priority("transfer_pack", _members)
        conda:
            "../../envs/subtask-induction.yaml"
        threads: config["threads_per_job"]
        resources:
            **pack_resources("transfer_pack", _members),
        params:
            settings=ARITH_JOBS.transfer_settings(),
            checkpoint=f"{ARITH_DIR}/transfer/packs/{_pack}.ckpt",
            device=config["device"],
        message:
            JOB_LINE
        shell:
            # the checkpoint goes once the step has returned
            train_step("arithmetic_transfer") + " --points {input.points:q} --settings {params.settings:q} "
            "--manifest {output.manifest:q} "
            "--checkpoint {params.checkpoint:q} --threads {threads} --device {params.device} "
            "> {log:q} 2>&1 && rm -f {params.checkpoint:q}"


# With spare chains (arithmetic.spare_chains; roster.py): once every planned and spare base is in, the chains that
# count; the tables are then built from those chains alone, so a replaced chain runs no discovery and no transfer.
checkpoint arithmetic_roster:
    input:
        ARITH_JOBS.base_metrics(chains=ARITH_JOBS.candidates),
    output:
        arith_jobs.ROSTER,
    log:
        "logs/arithmetic/roster.log",
    params:
        planned=ARITH_JOBS.chains,
        spares=ARITH_JOBS.spares,
        threshold=lambda wildcards: roster_threshold("arithmetic"),
    message:
        JOB_LINE
    run:
        write_roster("arithmetic", params.planned, params.spares, input, output[0], log[0])


rule arithmetic_aggregate:
    input:
        base=arith_aggregate_input("base"),
        discovery=arith_aggregate_input("discovery"),
        transfer=arith_aggregate_input("transfer"),
    output:
        with_report(ARITH_JOBS.tables(), arith_jobs.CAPTIONS, "Arithmetic", "Tables"),
    log:
        "logs/arithmetic/aggregate.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        outdir=lambda wildcards, output: Path(output[0]).parent,
        protocol=ARITH["report"]["protocol"],
        comparisons=as_json(ARITH["report"]["comparisons"]),
    message:
        JOB_LINE
    shell:
        step("arithmetic_aggregate")
        + " --base {input.base:q} --discovery {input.discovery:q} --transfer {input.transfer:q} "
        "--protocol {params.protocol} --comparisons {params.comparisons:q} --outdir {params.outdir:q} > {log:q} 2>&1"


rule arithmetic_plots:
    input:
        transfer=f"{ARITH_DIR}/summary/transfer.csv",
        curves=f"{ARITH_DIR}/summary/discovery_curves.csv",
    output:
        with_report(ARITH_JOBS.figures(), arith_jobs.CAPTIONS, "Arithmetic", "Figures"),
    log:
        "logs/arithmetic/plots.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        outdir=lambda wildcards, output: Path(output[0]).parent,
        report=as_json(ARITH["report"]),
    message:
        JOB_LINE
    shell:
        step("arithmetic_plots")
        + " --transfer {input.transfer:q} --curves {input.curves:q} --report {params.report:q} "
        "--outdir {params.outdir:q} > {log:q} 2>&1"


# How many labelled subtask rows does a discovery need? The discovery from only the first `rows` subtask
# rows (variants with discovery_rows transfer it), for as many optimiser steps as the every-row discovery
# (--match-steps: labels, not steps, differ), at the λ the selection chose from every row: `reference`
# (that choice; ancient: only which file it is matters, and another choice reruns this) pins the λ.
rule arithmetic_discover_budget:
    input:
        base=f"{ARITH_CHAIN_DIR}/base/{{base}}/layers{{layers}}/model.pt",
        data=f"{ARITH_DIR}/data/discovery/{{subtask}}.pt",
        reference=lambda wildcards: ancient(
            arith_selected_subnetwork(wildcards.chain, wildcards.base, wildcards.subtask, wildcards.layers)
        ),
    output:
        subnetwork=f"{arith_jobs.BUDGET_PATH}/subnetwork.pt",
        metrics=f"{arith_jobs.BUDGET_PATH}/metrics.json",
    log:
        f"logs/arithmetic/chain{{chain}}/discovery_budget/{{base}}/{{subtask}}/layers{{layers}}/rows{{rows}}.log",
    benchmark:
        f"{BENCH_DIR}/arithmetic/chain{{chain}}/discovery_budget/{{base}}/{{subtask}}/layers{{layers}}/rows{{rows}}.jsonl"
    wildcard_constraints:
        rows=r"\d+",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]
    resources:
        **training_resources("arithmetic_discover_budget"),
    params:
        settings=lambda wildcards: ARITH_JOBS.discovery_settings(wildcards.chain),
        l0=lambda wildcards: arith_chosen_l0(wildcards.chain, wildcards),
        identity=lambda wildcards: ARITH_JOBS.budget_identity(
            wildcards.chain, wildcards.base, wildcards.subtask, wildcards.layers, wildcards.rows
        ),
        device=config["device"],
    message:
        JOB_LINE
    shell:
        then_remove_checkpoints(
            train_step("arithmetic_discover") + " --base {input.base:q} --data {input.data:q} --l0-weight {params.l0} "
            "--train-rows {wildcards.rows} --match-steps --settings {params.settings:q} --identity {params.identity:q} --threads {threads} --device {params.device} "
            "--out-subnetwork {output.subnetwork:q} --out-metrics {output.metrics:q} > {log:q} 2>&1",
            "subnetwork",
        )


rule arithmetic_budget:
    input:
        budget=ARITH_JOBS.budget_subnetworks(),
        data=ARITH_JOBS.budget_data(),
        full=lambda wildcards: arith_budget_full(),  # the selections' choices: known once they have run
        transfer=f"{ARITH_DIR}/summary/transfer.csv",
    output:
        table=with_report([f"{ARITH_DIR}/summary/budget.csv"], arith_jobs.CAPTIONS, "Arithmetic", "Label budget")[0],
        markdown=f"{ARITH_DIR}/summary/budget.md",
        png=with_report([f"{ARITH_DIR}/figures/budget.png"], arith_jobs.CAPTIONS, "Arithmetic", "Label budget")[0],
        pdf=f"{ARITH_DIR}/figures/budget.pdf",
    log:
        "logs/arithmetic/budget.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        variants=ARITH_JOBS.budget_variants(),
        n=ARITH_JOBS.budget_n(),
        protocol=ARITH["report"]["protocol"],
        figures=lambda wildcards, output: Path(output.png).parent,
    message:
        JOB_LINE
    shell:
        step("arithmetic_budget") + " --budget {input.budget:q} --full {input.full:q} --data {input.data:q} "
        "--transfer {input.transfer:q} "
        "--variants {params.variants:q} --n {params.n} --protocol {params.protocol} --table {output.table:q} "
        "--markdown {output.markdown:q} --figures {params.figures:q} > {log:q} 2>&1"


# Is "the" subnetwork unique? The default discovery repeated with one change at a time (seed, λ, mask
# method), and the overlap of the kept sets against chance (arithmetic.overlap).
rule arithmetic_overlap_discover:
    input:
        base=f"{ARITH_DIR}/chain{ARITH_JOBS.overlap_chain}/base/{{base}}/layers{{layers}}/model.pt",
        data=f"{ARITH_DIR}/data/discovery/{{subtask}}.pt",
        # the selection's choice pins the run's λ (unless the run sets its own); ancient: only which file
        reference=lambda wildcards: ancient(
            arith_selected_subnetwork(ARITH_JOBS.overlap_chain, wildcards.base, wildcards.subtask, wildcards.layers)
        ),
    output:
        subnetwork=f"{ARITH_DIR}/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}/subnetwork.pt",
        metrics=f"{ARITH_DIR}/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}/metrics.json",
    log:
        f"logs/arithmetic/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}.log",
    benchmark:
        f"{BENCH_DIR}/arithmetic/overlap/{{base}}/{{subtask}}/layers{{layers}}/{{run}}.jsonl"
    wildcard_constraints:
        run=one_of(ARITH_JOBS.overlap_runs) or "-",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: config["threads_per_job"]
    resources:
        **training_resources("arithmetic_overlap_discover"),
    params:
        settings=lambda wildcards: ARITH_JOBS.overlap_settings(wildcards.run),
        identity=lambda wildcards: ARITH_JOBS.overlap_identity(
            wildcards.base, wildcards.subtask, wildcards.layers, wildcards.run
        ),
        l0=arith_overlap_l0,
        device=config["device"],
    message:
        JOB_LINE
    shell:
        then_remove_checkpoints(
            train_step("arithmetic_discover") + " --base {input.base:q} --data {input.data:q} --l0-weight {params.l0} "
            "--settings {params.settings:q} --identity {params.identity:q} --threads {threads} --device {params.device} "
            "--out-subnetwork {output.subnetwork:q} --out-metrics {output.metrics:q} > {log:q} 2>&1",
            "subnetwork",
        )


rule arithmetic_overlap:
    input:
        default=arith_overlap_selected,  # each run is compared with the subnetwork the selection chose
        runs=ARITH_JOBS.overlap_subnetworks(),
        chains=arith_chain_subnetworks,
    output:
        table=with_report(
            [f"{ARITH_DIR}/summary/overlap.csv"], arith_jobs.CAPTIONS, "Arithmetic", "Subnetwork overlap"
        )[0],
        markdown=f"{ARITH_DIR}/summary/overlap.md",
        png=with_report([f"{ARITH_DIR}/figures/overlap.png"], arith_jobs.CAPTIONS, "Arithmetic", "Subnetwork overlap")[
            0
        ],
        pdf=f"{ARITH_DIR}/figures/overlap.pdf",
    log:
        "logs/arithmetic/overlap.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        figures=lambda wildcards, output: Path(output.png).parent,
    message:
        JOB_LINE
    shell:
        step("arithmetic_overlap")
        + " --subnetworks {input.default:q} {input.runs:q} {input.chains:q} --table {output.table:q} "
        "--markdown {output.markdown:q} --figures {params.figures:q} > {log:q} 2>&1"
