# The one-point steps that run in packs (config pack_sizes; steps/point_pack.py; docs/running.md, "Packs"): each
# family's rule file says what one point reads, writes and is given (POINT_SPECS), and here each pack becomes one
# job, `<rule>_pack_<name>`, whose outputs are its points' outputs. A pack runs its points one after another in one
# process: the imports and the start-up are paid once a pack; a finished point comes back from its records, so a
# pack that runs again (a point added, a base retrained, a kill) trains only the points whose fingerprint changed.
include: "point_packs_helpers.smk"


# A pack's points, as its step reads them (--points): a local job in Snakemake's own process.
rule packed_points:
    input:
        # the points' own inputs (and the checkpoints whose choice the points name), not ancient: with ancient ones a
        # new cue-conflict folder reran its check but not these points (Snakemake did not see their params change),
        # and the pack would have scored the old folder; writing the same points again costs nothing
        lambda wildcards: packed_inputs(wildcards.step, wildcards.pack),
    output:
        "results/{family}/packs/{step}/{pack}.points.json",
    log:
        "logs/{family}/packs/{step}/{pack}.points.log",
    wildcard_constraints:
        family=one_of(config["families"]),
        step=one_of(PACKED) or "-",
        pack=one_of({pack for packed in PACKED.values() for pack in packed.members}) or "-",
    params:
        points=packed_points,
    message:
        JOB_LINE
    run:
        write_points(output[0], params.points, log[0])


for _rule, _packed in PACKED.items():
    for _pack, _members in _packed.packs:

        rule:
            name:
                f"{_rule}_pack_{_pack}"
            input:
                partial(packed_inputs, _rule, _pack),
                points=_packed.points_file(_pack),
            output:
                # the manifest first: a DAG lookup of it matches here and never compiles the points' patterns
                manifest=_packed.manifest(_pack),
                points=[path for point in _members for path in POINT_SPECS[_rule].outputs(SimpleNamespace(**point))],
            log:
                _packed.log(_pack),
            benchmark:
                _packed.benchmark(_pack)
            priority: POINT_SPECS[_rule].priority
            conda:
                "../../envs/subtask-induction.yaml"
            threads: config["threads_per_job"]
            resources:
                **packed_resources(_rule, len(_members)),
            params:
                step=_rule,
                device=config["device"],
            message:
                JOB_LINE
            shell:
                train_step("point_pack") + " --step {params.step} --points {input.points:q} "
                "--manifest {output.manifest:q} --threads {threads} --device {params.device} > {log:q} 2>&1"
