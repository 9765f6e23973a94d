"""`python -m subtask_induction.pages [--check]` (`make docs`): render docs/results.md, its figures, the README's
generated blocks (the verdict, the claims table, the timings, the `make beyond` line), docs/running.md's settings
table and docs/glossary.md's names (labels.py) from the run records, the configs, the Makefile and the label registry.
With --check it writes nothing and exits 1 naming every page that differs from its render."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .. import labels
from . import results, run_records, settings

REPO = Path(__file__).resolve().parents[3]
BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END generated: (?P=name) -->)",
                   re.DOTALL)


OWN_TRIAL = "own_data_trial"   # a timing record: the README's own-data trial on a small folder tree


def timings(records: dict) -> str:
    """The first screen's times: the default's `make reproduce`, `make test` and the own-data trial (each its wall
    time's leading figure, its record linked; the machine and plain step once where they share one), then the
    paper's scale on one GPU."""
    # the newest fresh-clone timing of make reproduce (time_to_figure's record) before the default record's own
    reproduce = next((name for name in (results.TIMING, "default") if name in records), None)
    items = [(name, what) for name, what in ((reproduce, "`make reproduce`"), ("make_test", "`make test`"),
                                               (OWN_TRIAL, "the own-data trial")) if name in records]
    machines = {(records[name].provenance["machine"], records[name].provenance["plain_step_ms"]) for name, _ in items}
    parts = []
    for name, what in items:
        p = records[name].provenance
        wall = re.match(r"\d+ min \d+ s|\d+ s", str(p["wall"]))
        where = ("" if len(machines) == 1 else
                 f" on {p['machine']}, [plain step](docs/glossary.md#plain-step) {p['plain_step_ms']} ms")
        parts.append(f"{what} {wall.group(0) if wall else p['wall']}{where} "
                     f"([record](docs/results.md#run-{name.lower()}))")
    lines = []
    if parts:
        machine = (f"on {next(iter(machines))[0]}, [plain step](docs/glossary.md#plain-step) "
                   f"{next(iter(machines))[1]} ms (yours scales with it): " if len(machines) == 1 else "")
        lines.append(f"- {machine[:1].upper() + machine[1:] if machine else ''}" + "; ".join(parts) + ".")
    lines.append(f"- The paper's scale on one GPU (used when present: `device: auto`): {paper_scale_time(records)}")
    return "\n".join(lines)


def make_beyond(makefile: Path) -> str:
    """The quick start's `make beyond` line, naming the config files the Makefile's target gives, in order."""
    text = makefile.read_text()
    questions = re.search(r"^BEYOND_QUESTIONS := (.+)$", text, re.M).group(1).split()
    recipe = re.search(r"^beyond: .*\n((?:\t.*\n)+)", text, re.M).group(1)
    recipe = recipe.replace("$(BEYOND_QUESTIONS:%=config/beyond/%.yaml)",
                            " ".join(f"config/beyond/{q}.yaml" for q in questions))
    runs = [[f for f in re.findall(r"config/[\w/.-]+\.yaml", line) if f != "config/config.yaml"]
            for line in recipe.splitlines() if "snakemake" in line]
    folders = [re.search(r"--directory (\S+)", line) for line in recipe.splitlines() if "snakemake" in line]
    parts = [", ".join(files) + (f" (in {folder.group(1)})" if folder else "") for files, folder in zip(runs, folders)]
    return "make beyond                        # the experiments beyond the paper: " + "; then ".join(parts)


def paper_scale_time(records: dict) -> str:
    """The paper's scale on one GPU, from the GPU check's record: the arithmetic transfer grid's training steps in the
    largest pack it timed that the pipeline uses (128), and "unmeasured" for the rest."""
    if results.GPU_CHECK not in records:
        return "unmeasured (no GPU record)."
    record = records[results.GPU_CHECK]
    text = record.text("pack_throughput.md")
    estimate = text.split("estimated paper arithmetic transfer grid")[1]
    points = re.search(r"\((\d+) points\) on ([^,]+),", estimate)
    table = run_records.markdown_tables(estimate)[0][1].set_index("run")
    hours = table.loc["pack of 128", "device-hours"]
    return (f"the arithmetic transfer grid ({int(points.group(1)):,} transfers) trains in about {hours} GPU-hours on "
            f"one {points.group(2)}, 128 transfers at once, training steps only "
            "([record](docs/results.md#run-gpu_check)); vision and submasking at the paper's scale are unmeasured.")


def readme_blocks(records: dict) -> dict[str, str]:
    return {"verdict": results.readme_verdict(records), "claims": results.readme_claims(records),
            "timings": timings(records), "beyond": make_beyond(REPO / "Makefile")}


def running_blocks() -> dict[str, str]:
    return {"settings": settings.settings_table()}


def glossary_blocks() -> dict[str, str]:
    return {"names": labels.glossary()}


def fill(text: str, blocks: dict[str, str], where: str) -> str:
    found = set()

    def replace(match):
        name = match["name"]
        if name not in blocks:
            raise KeyError(f"{where}: no generator for the block {name!r}")
        found.add(name)
        return match.group(1) + blocks[name].rstrip("\n") + "\n" + match.group(4)

    out = BLOCK.sub(replace, text)
    missing = set(blocks) - found
    if missing:
        raise KeyError(f"{where}: the blocks {sorted(missing)} have no BEGIN/END markers")
    return out


def pages(repo: Path = REPO, data: Path | None = None) -> dict[Path, str]:
    """{path: its rendered text} of every generated page."""
    records = run_records.load_all(data or repo / "docs" / "data")
    readme, running, glossary = repo / "README.md", repo / "docs" / "running.md", repo / "docs" / "glossary.md"
    return {repo / "docs" / "results.md": results.render(records),
            readme: fill(readme.read_text(), readme_blocks(records), "README.md"),
            running: fill(running.read_text(), running_blocks(), "docs/running.md"),
            glossary: fill(glossary.read_text(), glossary_blocks(), "docs/glossary.md")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 on a difference")
    parser.add_argument("--data", type=Path, help="the run records' folder (default: docs/data)")
    args = parser.parse_args(argv)
    try:
        rendered = pages(data=args.data)
    except run_records.RecordError as error:   # one line per bad record, no traceback
        for line in str(error).removeprefix("error: ").splitlines():
            print(line, file=sys.stderr)
        return 2
    stale = [path for path, text in rendered.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} differs from its render: run `make docs`", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(rendered[path])
        print(f"wrote {path.relative_to(REPO)}")
    for path in results.figures(run_records.load_all(args.data or REPO / "docs" / "data"), REPO / "docs"):
        print(f"drew {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
