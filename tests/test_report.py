"""`snakemake --report` of the smoke run: every family's figures and summary tables, each with its caption."""

import re
import zipfile
from html import unescape
from pathlib import Path

from harness import REPO, snakemake


def test_report_holds_every_figure_and_table_with_its_caption(smoke_run, tmp_path):
    names, html = report_html(smoke_run, tmp_path / "report.zip")
    figures = {"fig3", "fig6", "fig7", "protocols", "inheritance", "dial", "discovery_curves", "overlap",  # arithmetic
               "fig5", "fig11", "per_class", "samples",  # vision
               "sparsity_per_layer", "label_fractions", "mask_similarity"}  # submasking
    assert {f"{figure}.png" for figure in figures} <= names, sorted(names)
    tables = {"transfer.csv", "table3.csv", "overlap.csv", "table1.csv", "table2.csv", "chains.csv", "comparisons.md",
              "diagnostics.csv", "points.csv", "accuracy.csv", "mask_stability.csv", "resources.md"}
    assert tables <= names, sorted(names)
    # every caption file is used, and its text reaches the report (the workflow-level description too); the
    # label budget's appear only when budget variants run (test_beyond.py checks them there)
    captions = [caption for caption in sorted((REPO / "workflow/report").rglob("*.rst"))
                if caption.relative_to(REPO / "workflow/report").with_suffix("").as_posix() not in ONLY_WITH_A_BUDGET]
    assert_captions_in(html, captions)


ONLY_WITH_A_BUDGET = {"arithmetic/budget", "arithmetic/budget_table"}


def report_html(workdir: Path, report: Path) -> tuple[set[str], str]:
    """`snakemake --report` of a finished run: the file names in it and its page."""
    result = snakemake(workdir, "--report", str(report))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with zipfile.ZipFile(report) as archive:
        names = {Path(name).name for name in archive.namelist()}
        html = archive.read("report/report.html").decode()
    return names, re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), html)  # the page's JSON escapes


def assert_captions_in(html: str, captions: list[Path]) -> None:
    text = plain(html)
    for caption in captions:
        assert plain(caption.read_text())[:40] in text, caption


def plain(markup: str) -> str:
    """The words of a text (no HTML tags or entities, no punctuation), to find a caption in the page."""
    return " ".join(re.findall(r"[A-Za-z0-9]+", re.sub(r"<[^>]+>", " ", unescape(markup))))
