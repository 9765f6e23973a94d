# What the run's jobs used against what they asked for (results/resources.md): read from the benchmark
# records every job rule writes (the configured jobs' records, params.rules). On a first cluster run it
# tells the user how to set the profile.


rule resources_report:
    input:
        # after every family's tables, when every job has written its record; the records themselves are not
        # inputs: matching hundreds of them to their rules costs seconds in every DAG build
        [target for target in final_targets() if target not in RESOURCES_REPORT],
    output:
        markdown=report(RESOURCES_REPORT[0], caption="../report/resources.rst", category="Resources"),
        csv=RESOURCES_REPORT[1],
    log:
        "logs/resources.log",
    conda:
        "../../envs/subtask-induction.yaml"
    threads: 1
    params:
        rules=benchmark_files(),  # record -> rule
    message:
        JOB_LINE
    script:
        "../scripts/resources_report.py"


# resources.rules names rules by their names: a misspelt one would silently request nothing. (Imported as a
# module, the rules carry the importer's prefix, e.g. si_arithmetic_base.) A packed step's entry is one point's
# request, which its packs' rules scale (point_packs.smk).
_rule_names = [rule.name for rule in workflow.rules] + list(PACKED)
_unknown_rules = sorted(
    name
    for name in config["resources"].get("rules", {})
    if not any(known == name or known.endswith(f"_{name}") for known in _rule_names)
)
if _unknown_rules:
    raise ValueError(f"config resources.rules: {_unknown_rules} are not rules of this workflow")
