"""Datasets of `a b SEP c` rows, c = f(a, b) mod m, for every computation of the paper.

Numbers 0..n-1 are tokens 0..n-1 and SEP is token n. A pair (a, b) has id a*n + b. Eval and test rows
are drawn from pairs no training row uses, so accuracy measures generalisation (the authors' did not).
"""

from __future__ import annotations

import torch

# App. B.4 computations, subtasks, and the competing rules an a=b-only training set cannot rule out.
COMPUTATIONS = {
    "a+ab": lambda a, b: a + a * b,
    "a2+b2": lambda a, b: a * a + b * b,
    "a2+ab": lambda a, b: a * a + a * b,
    "a2+ab+b2": lambda a, b: a * a + a * b + b * b,
    "a3+ab": lambda a, b: a * a * a + a * b,
    "a2-b2": lambda a, b: a * a - b * b,
    "ab": lambda a, b: a * b,
    "a": lambda a, b: a,
    "a2": lambda a, b: a * a,
    "a+b": lambda a, b: a + b,
    "2a2": lambda a, b: 2 * a * a,
    "2b2": lambda a, b: 2 * b * b,
}
COMPETING_RULES = ("2a2", "2b2", "a2+b2")
PURPOSES = {"base": 0, "discovery": 1, "transfer": 2}


def labels(pairs: torch.Tensor, computation: str, modulus: int) -> torch.Tensor:
    """c = f(a, b) mod modulus, always in 0..modulus-1 (torch.remainder is non-negative here)."""
    if computation not in COMPUTATIONS:
        raise KeyError(f"unknown computation '{computation}'; known: {sorted(COMPUTATIONS)}")
    a, b = pairs[:, 0].long(), pairs[:, 1].long()
    return torch.remainder(COMPUTATIONS[computation](a, b), modulus)


def encode(pairs: torch.Tensor, computation: str, n_numbers: int, modulus: int) -> torch.Tensor:
    """Rows [a, b, SEP, c] as a LongTensor of shape (N, 4)."""
    sep = torch.full((len(pairs), 1), n_numbers, dtype=torch.long)
    return torch.cat([pairs.long(), sep, labels(pairs, computation, modulus)[:, None]], dim=1)


def _pairs(ids: torch.Tensor, n_numbers: int) -> torch.Tensor:
    return torch.stack([ids // n_numbers, ids % n_numbers], dim=1)


def build_dataset(
    purpose: str,
    computation: str,
    *,
    n_numbers: int,
    modulus: int,
    seed: int,
    train_rows: int,
    eval_rows: int,
    test_rows: int,
) -> dict:
    """Splits of rows for one purpose.

    base / discovery: `train` starts with n rows (i, pi(i)) so every number appears as a and as b,
    then uniform pairs up to train_rows. transfer: `ambiguous` holds every a=b pair; `disambiguation`
    is an ordered pool of a!=b pairs of which a sweep point takes the first n (nested sizes).
    eval and test are uniform over the pairs, disjoint from each other and from every training row.
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose '{purpose}'; choose from {sorted(PURPOSES)}")
    if modulus > n_numbers:
        raise ValueError(f"modulus {modulus} exceeds n_numbers {n_numbers}: answers must be number tokens")
    generator = torch.Generator().manual_seed(seed * 1_000_003 + PURPOSES[purpose])
    numbers = torch.arange(n_numbers)
    if purpose == "transfer":
        lead = numbers * n_numbers + numbers
    else:
        lead = numbers * n_numbers + torch.randperm(n_numbers, generator=generator)
    order = torch.randperm(n_numbers * n_numbers, generator=generator)
    rest = order[~torch.isin(order, lead)]
    if purpose == "transfer":
        rest = rest[rest // n_numbers != rest % n_numbers]
    pool_rows = train_rows if purpose == "transfer" else train_rows - len(lead)
    needed = eval_rows + test_rows + pool_rows
    if pool_rows < 0 or needed > len(rest):
        raise ValueError(
            f"{purpose} data: {train_rows} training + {eval_rows} eval + {test_rows} test rows do not fit in "
            f"{n_numbers}x{n_numbers} pairs with {len(lead)} reserved rows; lower the row counts or raise n_numbers"
        )
    eval_ids, test_ids = rest[:eval_rows], rest[eval_rows:eval_rows + test_rows]
    pool = rest[eval_rows + test_rows:needed]
    rows = lambda ids: encode(_pairs(ids, n_numbers), computation, n_numbers, modulus)  # noqa: E731
    splits = {"eval": rows(eval_ids), "test": rows(test_ids)}
    if purpose == "transfer":
        splits.update(ambiguous=rows(lead), disambiguation=rows(pool))
    else:
        splits["train"] = rows(torch.cat([lead, pool]))
    return {"purpose": purpose, "computation": computation, "n_numbers": n_numbers, "modulus": modulus,
            "seed": seed, "splits": splits}


def transfer_training_rows(dataset: dict, n_disambiguation: int) -> torch.Tensor:
    """The ambiguous a=b rows plus the first n disambiguation rows."""
    pool = dataset["splits"]["disambiguation"]
    if n_disambiguation > len(pool):
        raise ValueError(f"{n_disambiguation} disambiguation rows asked for, the dataset holds {len(pool)}")
    return torch.cat([dataset["splits"]["ambiguous"], pool[:n_disambiguation]])
