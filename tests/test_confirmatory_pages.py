"""The confirmatory record's pages (issue 93, item 3), on a stand-in made from the decisive record's tables: the
README's headline rows read it, the exploratory record's verdict beside each row, every row whose verdict differs
named with both numbers, and the first screen saying what a confirmatory record is. The other records' sections
read what they read before it."""

import shutil

import pandas as pd
import pytest
import yaml

from harness import REPO
from subtask_induction.pages import first_screen, readme, results, run_records
from subtask_induction.pages.sections import confirmatory


def stand_in(tmp_path, shift: float = 0.0, gap: int | None = None):
    """docs/data with a record `confirmatory` made of the decisive record's arithmetic and vision tables and
    `vision_authors`' si_authors rows (the same chains), its `sampled` moved by -`shift` points at n = 0:
    the claims and pages read it as they will read the real one. `gap`: that arithmetic chain's rows left out and
    named as a known gap (a store of a part of the run)."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "docs" / "data", data)
    shutil.rmtree(data / "confirmatory", ignore_errors=True)   # a stored one: replaced by the stand-in
    folder = data / "confirmatory"
    shutil.copytree(data / "decisive", folder, ignore=shutil.ignore_patterns("submasking"))
    transfer = pd.read_csv(folder / "arithmetic/transfer.csv")
    moved = (transfer["variant"] == "sampled") & (transfer["n"] == 0)
    transfer.loc[moved, "test_accuracy"] -= shift / 100
    if gap is not None:
        transfer = transfer[transfer["chain"] != gap]
    transfer.to_csv(folder / "arithmetic/transfer.csv", index=False)
    theirs = data / "vision_authors" / "vision"
    for table in ("chains.csv", "table1.csv"):
        mine = pd.read_csv(folder / "vision" / table)
        added = pd.read_csv(theirs / table)
        pd.concat([mine, added[added["model"] == "si_authors"]]).to_csv(folder / "vision" / table, index=False)
    planned = pd.read_csv(folder / "planned/vision.csv")
    extra = pd.DataFrame({"chain": sorted(set(planned["chain"])), "variant": "si_authors"})
    pd.concat([planned, extra]).to_csv(folder / "planned/vision.csv", index=False)
    (folder / "planned/submasking.csv").unlink()
    run = yaml.safe_load((folder / "run.yaml").read_text())
    run["title"] = "A stand-in of the confirmatory record"
    run["note"] = "measured 300 job-minutes, beside the plan's estimate of 347"
    if gap is not None:
        run["known_gaps"] = [{"family": "arithmetic", "chain": gap, "why": "not run yet"}]
    (folder / "run.yaml").write_text(yaml.safe_dump(run, sort_keys=False))
    return run_records.load_all(data)


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    records = stand_in(tmp_path_factory.mktemp("moved"), shift=6.0)
    return records, results.all_claims(records)


def test_the_confirmatory_record_judges_its_thirteen_planned_claims_and_no_other(moved):
    records, found = moved
    mine = [claim for claim in found if claim.record == "confirmatory"]
    ids = {claim.id for claim in mine}
    assert len(mine) == len(ids) == 13
    assert {i for i, *_ in first_screen.HEADLINES if not i.startswith("submasking")} <= ids
    assert not [i for i in ids if "shape_bias" in i or "mixture" in i or i.endswith("si_authors-si/pooled_accuracy")]
    # the exploratory claims stay, after it, with their own verdicts
    assert [c.record for c in found if c.id == "arithmetic/si-sampled"] == ["confirmatory", "decisive"]


def test_the_headline_table_reads_it_with_the_exploratory_verdict_beside_each_row(moved):
    records, found = moved
    table = first_screen.table(found, records).splitlines()
    assert table[0].endswith("| [exploratory](docs/glossary.md#confirmatory) verdict: = same, ≠ not |")
    body = table[2:]
    mark = lambda line: line.rstrip(" |").rsplit("| ", 1)[1]   # noqa: E731
    arithmetic = [line for line in body if line.split(" | ")[1].startswith("n = ")][:9]
    # `sampled` moved at n = 0 only: its row alone is marked as differing from `decisive`
    assert [mark(line) for line in arithmetic] == ["**≠**"] + ["="] * 8
    vision = [line for line in body if "(Table 1)" in line]
    assert len(vision) == 5 and all(mark(line) == "= / =" for line in vision)   # SI, then si_authors
    submasking = [line for line in body if "submasking" in line or "textures" in line]
    assert submasking and all(mark(line) == "— (its own record)" for line in submasking)
    assert all(len(line) <= 300 for line in table)
    lead = first_screen.finding(found, records)
    assert "the `confirmatory` record" in lead and lead.startswith("- *Confirmatory*: ")


def test_every_row_whose_verdict_differs_is_named_with_both_numbers(moved, tmp_path):
    records, found = moved
    differ = [pair for pair in confirmatory.pairs(found) if pair.differs]
    # `sampled` moved by -6 points at n = 0: the decisive record's undecided -0.4 now holds
    assert [(p.confirmed.id, p.where) for p in differ if p.confirmed.family == "arithmetic"] == [
        ("arithmetic/si-sampled", "n = 0")]
    bullets = readme.headlines(records, found).replace("\n  ", " ").splitlines()   # a bullet's wrapped lines, joined
    line = next(l for l in bullets if "exploratory record's verdict differs" in l)
    mine, theirs = differ[0].judged()
    assert f"{mine.summary()} ({mine.said()}), `decisive` {theirs.summary()} ({theirs.said()})" in line
    page = results.render(records, found, short=readme.short)
    assert "## The confirmatory record: the headlines decided once (`make confirmatory`)" in page
    assert f"{len(differ)} of {len(confirmatory.pairs(found))} verdicts differ" in page
    # unmoved, nothing differs and the line says so
    plain = stand_in(tmp_path, shift=0.0)
    again = results.all_claims(plain)
    assert not [p for p in confirmatory.pairs(again) if p.differs]
    assert "- **Where the exploratory record's verdict differs**: nowhere" in readme.headlines(plain, again)


def test_the_other_records_sections_read_what_they_read_before_it(moved):
    records, found = moved
    before = {k: v for k, v in records.items() if k != "confirmatory"}
    page, old = results.render(records, found, short=readme.short), results.render(before)
    section = lambda text, title: text.split(title, 1)[1].split("\n## ", 1)[0]
    for title in ("## SI as the authors' code ran it", "## Why SI loses the shape", "## The protocol: `last`"):
        assert section(page, title) == section(old, title), title


def test_a_part_of_it_shows_no_verdict_and_says_it_is_in_part(tmp_path):
    """Judged once, whole: a store that lacks a chain's points decides nothing, the pages keep the exploratory answer
    and the verdict lines say the record is stored in part, naming the chain still to run."""
    records = stand_in(tmp_path, shift=6.0, gap=16)
    found = results.all_claims(records)
    assert not [claim for claim in found if claim.record == "confirmatory"]
    assert next(c for c in found if c.id == "arithmetic/si-sampled").record == "decisive"
    lines = readme.readme_verdict(records, found).splitlines()
    assert any(line.startswith("- **Stored in part**: the confirmatory record") and "chain 16 still to run" in line
               for line in lines)
