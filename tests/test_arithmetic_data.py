"""Data invariants: coverage, one global held-out split, correct labels, derived competing rules."""

from pathlib import Path

import pytest
import torch
import yaml

from subtask_induction.arithmetic.data import (COMPUTATIONS, build_dataset, competing_rules, labels, split_holdout,
                                               transfer_training_rows)

REPO = Path(__file__).resolve().parents[1]

REFERENCE = {  # written out independently of data.COMPUTATIONS
    "a+ab": lambda a, b: a + a * b, "a2+b2": lambda a, b: a**2 + b**2, "a2+ab": lambda a, b: a**2 + a * b,
    "a2+ab+b2": lambda a, b: a**2 + a * b + b**2, "a3+ab": lambda a, b: a**3 + a * b,
    "a2-b2": lambda a, b: a**2 - b**2, "ab": lambda a, b: a * b, "a": lambda a, b: a,
    "a2": lambda a, b: a**2, "a+b": lambda a, b: a + b, "2a2": lambda a, b: 2 * a**2, "2b2": lambda a, b: 2 * b**2,
}
SIZES = dict(n_numbers=30, modulus=7, seed=0, eval_rows=50, test_rows=60)


def pair_set(rows):
    return {(int(a), int(b)) for a, b in rows[:, :2]}


@pytest.mark.parametrize("computation", sorted(COMPUTATIONS))
def test_labels_match_python_modulo_for_every_computation(computation):
    pairs = torch.tensor([(a, b) for a in range(0, 30, 3) for b in range(0, 30, 4)])
    expected = [REFERENCE[computation](int(a), int(b)) % 7 for a, b in pairs]
    assert labels(pairs, computation, 7).tolist() == expected


@pytest.mark.parametrize("purpose", ["base", "discovery"])
def test_training_rows_cover_every_number_and_eval_test_are_disjoint(purpose):
    data = build_dataset(purpose, "a+ab", train_rows=200, **SIZES)
    splits = data["splits"]
    train = splits["train"]
    assert len(train) == 200 and len(pair_set(train)) == 200
    assert set(train[:30, 0].tolist()) == set(range(30)) == set(train[:30, 1].tolist())
    assert not pair_set(train) & pair_set(splits["eval"])
    assert not pair_set(train) & pair_set(splits["test"])
    assert not pair_set(splits["eval"]) & pair_set(splits["test"])
    assert (train[:, 2] == 30).all() and train[:, 3].tolist() == [(a + a * b) % 7 for a, b in train[:, :2].tolist()]


def test_transfer_ambiguous_disambiguation_and_nesting():
    data = build_dataset("transfer", "a2+ab", train_rows=100, **SIZES)
    splits = data["splits"]
    assert splits["ambiguous"][:, 0].tolist() == list(range(30)) == splits["ambiguous"][:, 1].tolist()
    assert (splits["disambiguation"][:, 0] != splits["disambiguation"][:, 1]).all()
    training = pair_set(splits["ambiguous"]) | pair_set(splits["disambiguation"])
    assert not training & pair_set(splits["eval"]) and not training & pair_set(splits["test"])
    small, large = transfer_training_rows(data, 10), transfer_training_rows(data, 40)
    assert len(small) == 40 and torch.equal(small, large[:40])
    with pytest.raises(ValueError, match="101 disambiguation rows"):
        transfer_training_rows(data, 101)


def test_same_seed_same_rows_other_seed_other_rows():
    one = build_dataset("base", "a+ab", train_rows=100, **SIZES)["splits"]["train"]
    again = build_dataset("base", "a+ab", train_rows=100, **SIZES)["splits"]["train"]
    other = build_dataset("base", "a+ab", train_rows=100, **{**SIZES, "seed": 1})["splits"]["train"]
    assert torch.equal(one, again) and not torch.equal(one, other)


def test_too_many_rows_is_a_clear_error():
    with pytest.raises(ValueError, match="do not fit"):
        build_dataset("base", "a+ab", train_rows=900, **SIZES)
    with pytest.raises(KeyError, match="unknown computation"):
        build_dataset("base", "a*b", train_rows=100, **SIZES)


def _ids(rows, n_numbers):
    return rows[:, 0] * n_numbers + rows[:, 1]


@pytest.mark.parametrize("config_file", ["config/config.yaml", "config/paper.yaml"])
def test_eval_and_test_pairs_are_disjoint_from_every_stage_training_rows(config_file):
    """One global split: the same eval/test pairs in every dataset, none of them in any training set."""
    config = yaml.safe_load((REPO / config_file).read_text())["arithmetic"]
    data, n = config["data"], config["n_numbers"]
    common = dict(n_numbers=n, modulus=config["modulus"], seed=config["seed"], eval_rows=data["eval_rows"],
                  test_rows=data["test_rows"])
    wanted = {("base", e["base"]) for e in config["experiments"]} | {
        ("discovery", e["subtask"]) for e in config["experiments"]} | {
        ("transfer", t) for e in config["experiments"] for t in e["targets"]}
    heldout, training = set(), []
    for purpose, computation in sorted(wanted):
        rows = (max(config["transfer"]["disambiguation_rows"]) if purpose == "transfer"
                else data[purpose]["train_rows"])
        splits = build_dataset(purpose, computation, train_rows=rows, **common)["splits"]
        heldout.add((tuple(_ids(splits["eval"], n).tolist()), tuple(_ids(splits["test"], n).tolist())))
        training += [_ids(splits[name], n) for name in ("train", "ambiguous", "disambiguation") if name in splits]
    assert len(heldout) == 1, "every stage must use the same eval and test pairs"
    (eval_ids, test_ids), = heldout
    held = torch.tensor(eval_ids + test_ids)
    assert len(set(eval_ids) & set(test_ids)) == 0
    for ids in training:
        assert not torch.isin(ids, held).any()


def test_competing_rules_are_derived_for_each_target():
    assert sorted(competing_rules("a2+ab", 30, 7)) == ["2a2", "2b2", "a2+b2"]
    # a2-b2 is 0 and a2+ab+b2 is 3a^2 on every a=b row: none of the listed rules agrees there,
    # so the fixed list 2a2, 2b2, a2+b2 the pipeline used to log for every target is wrong for them.
    assert competing_rules("a2-b2", 30, 7) == []
    assert competing_rules("a2+ab+b2", 30, 7) == []
    same = torch.arange(30)[:, None].repeat(1, 2)
    for rule in competing_rules("a2+ab", 30, 7):
        assert torch.equal(labels(same, rule, 7), labels(same, "a2+ab", 7))


def test_holdout_takes_its_share_of_both_kinds_of_rows_and_nothing_else():
    data = build_dataset("transfer", "a2+ab", train_rows=100, **SIZES)
    rows = transfer_training_rows(data, 50)
    train, holdout = split_holdout(rows, 30, 0.2, seed=3)
    assert len(holdout) == 6 + 10 and len(train) == 24 + 40
    assert pair_set(train) | pair_set(holdout) == pair_set(rows) and not pair_set(train) & pair_set(holdout)
    assert sum(int(a == b) for a, b in holdout[:, :2].tolist()) == 6


def test_the_authors_coverage_rows_cover_every_number_and_lead_the_pool():
    """disambiguation: coverage (the authors' data generator): the pool's first n_numbers rows hold one a≠b pair per
    number, that number on either side, none held out or repeated; the rest of the pool follows, every pair once."""
    from subtask_induction.arithmetic.data import build_dataset

    kwargs = dict(n_numbers=30, modulus=7, seed=3, train_rows=None, eval_rows=40, test_rows=40)
    coverage = build_dataset("transfer", "a2+ab", disambiguation="coverage", **kwargs)
    uniform = build_dataset("transfer", "a2+ab", **kwargs)
    pool, lead = coverage["splits"]["disambiguation"], coverage["splits"]["disambiguation"][:30]
    ids = lambda rows: set((rows[:, 0] * 30 + rows[:, 1]).tolist())  # noqa: E731
    numbers = set()
    for a, b in lead[:, :2].tolist():
        assert a != b
        numbers |= {a, b}
    assert len(ids(lead)) == 30 and set(range(30)) <= numbers
    held = ids(coverage["splits"]["eval"]) | ids(coverage["splits"]["test"])
    assert not ids(pool) & held and len(ids(pool)) == len(pool) == len(uniform["splits"]["disambiguation"])
    assert ids(pool) == ids(uniform["splits"]["disambiguation"])   # the same pairs, the coverage rows first
    assert not torch.equal(pool[:30], uniform["splits"]["disambiguation"][:30])
