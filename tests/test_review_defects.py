"""Issue 80's review defects 4-6, each with the test that failed before its fix: a record's load-check cache keyed by
other bytes than the ones checked, a refused `--plan` that left its record unloadable, and a run listed twice that
crashed chains.md's comparisons instead of being named as the tally names it."""

import shutil
import types

import pandas as pd
import pytest
import yaml

from harness import REPO
from subtask_induction import claims
from subtask_induction.arithmetic.tables import chains_markdown, run_differences
from subtask_induction.pages import planned as planning
from subtask_induction.pages import run_records

DATA = REPO / "docs" / "data"


def copied(tmp_path, name):
    data = tmp_path / "data"
    shutil.copytree(DATA / name, data / name)
    return data


def leftovers(data):
    """What a store or plan left beside the records (its lock aside)."""
    return sorted(p.name for p in data.iterdir() if p.name.startswith(".") and p.name != run_records.STORE_LOCK)


def contents(folder):
    """Every file of a folder, by relative path: its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# Defect 4: load read run.yaml, then took the digest that keys the cache of passed checks: bytes edited in between
# were remembered as checked, and a later load of them was accepted unread.
def test_run_yaml_edited_between_its_read_and_the_digest_is_checked_again(tmp_path, monkeypatch):
    data = copied(tmp_path, "paper_depth2_same_labels")   # its known_gaps excuse its family's missing transfer.csv
    run_yaml = data / "paper_depth2_same_labels" / "run.yaml"
    good = run_yaml.read_text()
    bad = yaml.safe_dump({key: value for key, value in yaml.safe_load(good).items() if key != "known_gaps"},
                         sort_keys=False)
    edits = []

    def parse_then_edit(text):   # called by load after it read run.yaml: a writer edits the file meanwhile
        parsed = yaml.safe_load(text)
        if not edits:
            edits.append(1)
            run_yaml.write_text(bad)
        return parsed
    monkeypatch.setattr(run_records, "yaml", types.SimpleNamespace(safe_load=parse_then_edit,
                                                                   safe_dump=yaml.safe_dump))
    first = run_records.load("paper_depth2_same_labels", data)   # checks the run.yaml it read: passes
    assert first.provenance["known_gaps"] and edits and run_yaml.read_text() == bad
    with pytest.raises(run_records.RecordError, match="transfer.csv is missing"):
        run_records.load("paper_depth2_same_labels", data)   # the edited bytes were never checked
    run_yaml.write_text(good)
    run_records.load("paper_depth2_same_labels", data)


# Defect 5: plan() wrote planned/*.csv into the stored record before checking it: a refused plan left a record that
# no longer loaded. It now stages a copy and swaps it in as store() does.
def test_a_refused_plan_leaves_the_record_as_it_was(tmp_path, monkeypatch):
    data = copied(tmp_path, "groupnorm")
    folder = data / "groupnorm"
    before = contents(folder)
    stored = planning.read_planned(folder)
    unrun = stored["vision"].head(1).assign(chain=999)   # a point no table of the record holds
    monkeypatch.setattr(planning, "effective_config", lambda *args, **kwargs: {})
    monkeypatch.setattr(planning, "planned_points",
                        lambda config, rosters=None: {"vision": pd.concat([stored["vision"], unrun], ignore_index=True)})
    with pytest.raises(run_records.RecordError, match="lacks 1 point"):
        run_records.plan("groupnorm", data)
    assert contents(folder) == before
    assert leftovers(data) == []   # no staging folder, no old record, no intent
    run_records.load("groupnorm", data)


def test_an_accepted_plan_is_swapped_in_whole(tmp_path, monkeypatch):
    data = copied(tmp_path, "groupnorm")
    folder = data / "groupnorm"
    before = contents(folder)
    stored = planning.read_planned(folder)
    monkeypatch.setattr(planning, "effective_config", lambda *args, **kwargs: {})
    monkeypatch.setattr(planning, "planned_points", lambda config, rosters=None: stored)
    assert run_records.plan("groupnorm", data) == folder / "planned"
    after = contents(folder)
    assert sorted(after) == sorted(before)
    assert {k: v for k, v in after.items() if not k.startswith("planned/")} == \
        {k: v for k, v in before.items() if not k.startswith("planned/")}
    assert leftovers(data) == []
    run_records.load("groupnorm", data)


# Defect 6: a run with two rows of a variant crashed run_differences (reindex on duplicate labels) instead of being
# named "twice or more", as claims.tally names a duplicated run.
def transfer_rows(twice):
    rows = [{"chain": chain, "replicate": 0, "variant": variant, "test_accuracy": accuracy, "test_items": 1000}
            for chain in range(3) for variant, accuracy in (("si", 0.6 + chain / 100), ("sampled", 0.5))]
    if twice:
        rows.append({"chain": 1, "replicate": 0, "variant": "si", "test_accuracy": 0.7, "test_items": 1000})
    return pd.DataFrame(rows)


def test_a_run_listed_twice_is_named_not_a_crash():
    runs = [(0, 0), (1, 0), (2, 0)]
    difference, counted = run_differences(transfer_rows(twice=True), "si", "sampled", runs)
    tallied = claims.tally(difference)
    assert tallied.duplicated == ("1/0",) and not tallied.complete
    assert "1/0 twice or more" in tallied.gaps
    assert list(counted.index) == list(difference.index)
    judged = claims.judge({1000: difference})[1000]
    assert not judged.complete and "1/0 twice or more" in judged.tally.gaps
    # a run named but absent stays one NaN (missing), the others as before
    difference, _ = run_differences(transfer_rows(twice=False), "si", "sampled", [*runs, (3, 0)])
    assert list(difference.index) == ["0/0", "1/0", "2/0", "3/0"] and pd.isna(difference["3/0"])
    assert claims.tally(difference).missing == ("3/0",)


def test_chains_md_names_a_run_listed_twice():
    rows = transfer_rows(twice=True).assign(base="a+ab", subtask="ab", target="a2+ab", layers=2, n=1000,
                                            protocol="last", paper_rows=True)
    text = chains_markdown(rows, "last", [["si", "sampled"]])
    assert "incomplete: 1/0 twice or more" in text


# Issue 80, defect 2: claims are paired across records by their id, and a whole decisive record adds to the default's
# claims without removing one it does not judge.

def test_a_default_claim_the_decisive_record_does_not_judge_stays_on_the_pages():
    from subtask_induction.pages import results

    records = run_records.load_all()
    found = results.all_claims(records)
    decisive_ids = {claim.id for claim in found if claim.record == "decisive"}
    assert "submasking/fs-fft" not in decisive_ids   # the decisive record plans no fine-tuning of its backbones
    kept = [claim for claim in found if claim.id == "submasking/fs-fft"]
    assert len(kept) == 1 and kept[0].record == "default"


def test_a_renamed_claim_is_still_paired_by_its_id(monkeypatch):
    from subtask_induction.pages import claims as claim_module
    from subtask_induction.pages import results

    records = run_records.load_all()
    renamed = [(first, second, text + " (reworded)") if second == "sampled" else (first, second, text)
               for first, second, text in claim_module.ARITHMETIC_CLAIMS]
    made = claim_module.arithmetic_default
    # the default's records word it anew; the decisive record keeps the old words
    monkeypatch.setattr(claim_module, "arithmetic_default",
                        lambda record, *a, **k: made(record, *a, **({"questions": renamed} if record.name in
                                                                    ("default", "default_replication") and not a
                                                                    and "questions" not in k else {}), **k))
    found = results.default_claims(records, "arithmetic", results.decisive_claims(records))
    sampled = [claim for claim in found if claim.id == "arithmetic/si-sampled"]
    assert len(sampled) == 1 and sampled[0].record == "decisive"
    assert "`default`:" in sampled[0].beside and "not in the record" not in sampled[0].beside
