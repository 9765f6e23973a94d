"""Data invariants: coverage, disjoint eval/test, correct labels for every computation."""

import pytest
import torch

from subtask_induction.arithmetic.data import COMPUTATIONS, build_dataset, labels, transfer_training_rows

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
