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
from ..files import write_text
from . import first_screen, readme, results, run_records, settings, verdicts, wording
from .page import REPO


BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END generated: (?P=name) -->)",
                   re.DOTALL)




def running_blocks() -> dict[str, str]:
    return {"settings": settings.settings_table()}


def glossary_blocks() -> dict[str, str]:
    return {"names": labels.glossary(), "precedence": wording.precedence_table()}


def decisions_blocks() -> dict[str, str]:
    return {"precedence": wording.precedence_table()}


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
    found = results.all_claims(records)   # the claims once, for every page that shows them
    front, running, glossary = repo / "README.md", repo / "docs" / "running.md", repo / "docs" / "glossary.md"
    decisions = repo / "docs" / "decisions.md"
    return {repo / "docs" / "results.md": results.render(records, found, readme.readme_verdict(records, found), readme.short),
            front: fill(front.read_text(), readme.blocks(records, found), "README.md"),
            running: fill(running.read_text(), running_blocks(), "docs/running.md"),
            glossary: fill(glossary.read_text(), glossary_blocks(), "docs/glossary.md"),
            decisions: fill(decisions.read_text(), decisions_blocks(), "docs/decisions.md"),
            **verdicts.files(found, repo / "docs" / "verdicts")}


def orphaned(rendered: dict[Path, str], folder: Path = verdicts.FOLDER) -> list[Path]:
    """The verdict files no stored record makes any more (its record was removed or renamed): served as current, they
    would name verdicts of no record."""
    return sorted(path for path in folder.glob("*.csv") if path not in rendered)


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
    gone = orphaned(rendered)
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} differs from its render: run `make docs`", file=sys.stderr)
        for path in gone:
            print(f"{path.relative_to(REPO)}: its record docs/data/{path.stem} is gone; `make docs` removes the file "
                  "(restore the record to keep it)", file=sys.stderr)
        return 1 if stale or gone else 0
    for path in gone:   # derived from a record no longer stored: made again if the record comes back
        path.unlink()
        print(f"removed {path.relative_to(REPO)}: its record docs/data/{path.stem} is gone")
    for path in stale:
        write_text(path, rendered[path])   # atomic: a killed render leaves each page whole, old or new
        print(f"wrote {path.relative_to(REPO)}")
    records = run_records.load_all(args.data or REPO / "docs" / "data")
    headlines = first_screen.draw(results.all_claims(records), REPO / "docs" / "figures" / "headlines.png", records)
    for path in results.figures(records, REPO / "docs") + [headlines]:
        print(f"drew {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
