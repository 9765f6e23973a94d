"""Datasets of `a b SEP c` rows, c = f(a, b) mod m, for every computation of the paper.

Numbers 0..n-1 are tokens 0..n-1 and SEP is token n. A pair (a, b) has id a*n + b. Eval and test pairs
are drawn once for every stage (heldout_pairs) and no stage's training rows contain them, so accuracy
measures generalisation and no weight any stage passes on was fit on a test pair (the authors' were).
"""

from __future__ import annotations

import torch

from ..runtime import derive_seed

# App. B.4 computations and subtasks, plus 2a2 and 2b2: rules the a=b rows of a2+ab leave open.
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
PURPOSES = ("base", "discovery", "transfer")


def labels(pairs: torch.Tensor, computation: str, modulus: int) -> torch.Tensor:
    """c = f(a, b) mod modulus, always in 0..modulus-1 (torch.remainder is non-negative here)."""
    if computation not in COMPUTATIONS:
        raise KeyError(f"unknown computation '{computation}'; known: {sorted(COMPUTATIONS)}")
    a, b = pairs[:, 0].long(), pairs[:, 1].long()
    return torch.remainder(COMPUTATIONS[computation](a, b), modulus)


def competing_rules(target: str, n_numbers: int, modulus: int) -> list[str]:
    """The rules the a=b rows leave open: every other computation in COMPUTATIONS that agrees
    with `target` on every a=b pair but is a different function on the a!=b pairs."""
    same = torch.arange(n_numbers)[:, None].repeat(1, 2)
    grid = torch.cartesian_prod(torch.arange(n_numbers), torch.arange(n_numbers))
    expected_same, expected_all = labels(same, target, modulus), labels(grid, target, modulus)
    return [rule for rule in COMPUTATIONS
            if rule != target
            and torch.equal(labels(same, rule, modulus), expected_same)
            and not torch.equal(labels(grid, rule, modulus), expected_all)]


def encode(pairs: torch.Tensor, computation: str, n_numbers: int, modulus: int) -> torch.Tensor:
    """Rows [a, b, SEP, c] as a LongTensor of shape (N, 4)."""
    sep = torch.full((len(pairs), 1), n_numbers, dtype=torch.long)
    return torch.cat([pairs.long(), sep, labels(pairs, computation, modulus)[:, None]], dim=1)


def _pairs(ids: torch.Tensor, n_numbers: int) -> torch.Tensor:
    return torch.stack([ids // n_numbers, ids % n_numbers], dim=1)


def heldout_pairs(n_numbers: int, seed: int, eval_rows: int, test_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The eval and test pair ids, drawn once for every stage and computation: uniform over a!=b pairs
    (every a=b pair is a transfer training row). No stage trains on them."""
    generator = torch.Generator().manual_seed(derive_seed("arithmetic held-out pairs", seed))
    order = torch.randperm(n_numbers * n_numbers, generator=generator)
    order = order[order // n_numbers != order % n_numbers]
    if eval_rows + test_rows > len(order):
        raise ValueError(f"{eval_rows} eval + {test_rows} test rows exceed the {len(order)} a!=b pairs of "
                         f"{n_numbers} numbers")
    return order[:eval_rows], order[eval_rows:eval_rows + test_rows]


def _covering_lead(n_numbers: int, held: set[int], generator: torch.Generator) -> torch.Tensor:
    """Pairs (i, pi(i)) for a random permutation pi, so every number appears as a and as b, repaired by
    swaps so that no lead pair is a held-out pair."""
    pi = torch.randperm(n_numbers, generator=generator).tolist()
    candidates = torch.randperm(n_numbers, generator=generator).tolist()
    for i in range(n_numbers):
        if i * n_numbers + pi[i] not in held:
            continue
        for j in candidates:
            if i * n_numbers + pi[j] not in held and j * n_numbers + pi[i] not in held:
                pi[i], pi[j] = pi[j], pi[i]
                break
        else:
            raise ValueError(f"no lead row for number {i} avoids the held-out pairs")
    return torch.tensor([i * n_numbers + pi[i] for i in range(n_numbers)])


def coverage_pairs(n_numbers: int, excluded: set[int], generator: torch.Generator) -> torch.Tensor:
    """The authors' "coverage" disambiguation rows (their data generator): one a≠b pair per number i, i on a random
    side, the other number uniform over the rest; never an excluded (held-out) pair, no pair twice; in random
    order, so the first n of them are a random subset."""
    ids, taken = [], set(excluded)
    for i in range(n_numbers):
        while True:
            other = int(torch.randint(n_numbers - 1, (1,), generator=generator))
            other += other >= i
            pair = i * n_numbers + other if bool(torch.randint(2, (1,), generator=generator)) else other * n_numbers + i
            if pair not in taken:
                break
        taken.add(pair)
        ids.append(pair)
    return torch.tensor(ids)[torch.randperm(n_numbers, generator=generator)]


DISAMBIGUATION = ("uniform", "coverage")


def build_dataset(
    purpose: str,
    computation: str,
    *,
    n_numbers: int,
    modulus: int,
    seed: int,
    train_rows: int | None,
    eval_rows: int,
    test_rows: int,
    disambiguation: str = "uniform",
) -> dict:
    """Splits of rows for one purpose, around the one global held-out split (heldout_pairs).

    eval and test are the global held-out pairs labelled by `computation`: the same pairs for every
    stage, so no stage's training rows contain any stage's eval or test pair.
    base / discovery: `train` starts with n rows (i, pi(i)) so every number appears as a and as b,
    then uniform pairs up to train_rows. transfer: `ambiguous` holds every a=b pair; `disambiguation`
    is an ordered pool of a!=b pairs of which a sweep point takes the first n (nested sizes). With
    train_rows None the pool holds every a!=b pair that is not held out, so it does not depend on the
    sweep's largest n: adding an n rewrites nothing a finished point read. `disambiguation` "coverage" puts the
    authors' coverage rows (coverage_pairs) first in the pool, so n <= n_numbers takes a random subset of them and
    a larger n adds uniform pairs to all of them, as their data generator does; "uniform" (the paper's text)
    draws the whole pool uniformly.
    """
    if disambiguation not in DISAMBIGUATION:
        raise ValueError(f"disambiguation '{disambiguation}': choose from {DISAMBIGUATION}")
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose '{purpose}'; choose from {sorted(PURPOSES)}")
    if modulus > n_numbers:
        raise ValueError(f"modulus {modulus} exceeds n_numbers {n_numbers}: answers must be number tokens")
    eval_ids, test_ids = heldout_pairs(n_numbers, seed, eval_rows, test_rows)
    held = torch.cat([eval_ids, test_ids])
    generator = torch.Generator().manual_seed(derive_seed("arithmetic training pairs", seed, purpose))
    numbers = torch.arange(n_numbers)
    if purpose == "transfer":
        lead = numbers * n_numbers + numbers
    else:
        lead = _covering_lead(n_numbers, set(held.tolist()), generator)
    order = torch.randperm(n_numbers * n_numbers, generator=generator)
    rest = order[~torch.isin(order, torch.cat([lead, held]))]
    if purpose == "transfer":
        rest = rest[rest // n_numbers != rest % n_numbers]
        if disambiguation == "coverage":
            coverage = coverage_pairs(n_numbers, set(held.tolist()), torch.Generator().manual_seed(
                derive_seed("arithmetic coverage rows", seed)))
            rest = torch.cat([coverage, rest[~torch.isin(rest, coverage)]])
    if train_rows is None and purpose != "transfer":
        raise ValueError(f"{purpose} data: train_rows is required (only the transfer pool may take every pair)")
    pool_rows = (len(rest) if train_rows is None else train_rows) - (len(lead) if purpose != "transfer" else 0)
    if pool_rows < 0 or pool_rows > len(rest):
        raise ValueError(
            f"{purpose} data: {train_rows} training rows do not fit in {n_numbers}x{n_numbers} pairs besides "
            f"{len(held)} held-out and {len(lead)} reserved rows; lower the row counts or raise n_numbers"
        )
    pool = rest[:pool_rows]
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


def trained_rows(n_ambiguous: int, n_disambiguation: int, fraction: float) -> dict:
    """What a transfer point trains on: its a=b and disambiguation rows less the held-out share of each
    (rounded down). With fraction 0 these are the paper's rows, every a=b row and all n (`paper_rows`)."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"holdout fraction must lie in [0, 1), got {fraction}")
    held = int(n_ambiguous * fraction), int(n_disambiguation * fraction)
    return {"train": n_ambiguous + n_disambiguation - sum(held), "ambiguous": n_ambiguous - held[0],
            "disambiguation": n_disambiguation - held[1], "holdout": sum(held), "paper_rows": sum(held) == 0}


def split_holdout(rows: torch.Tensor, n_ambiguous: int, fraction: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, holdout) from a transfer point's own rows: `fraction` of the ambiguous rows and of the
    disambiguation rows each (rounded down; trained_rows), so the holdout is labelled by nothing beyond the
    point's n. It is the signal of the `train_holdout` protocol, in a run of its own: the paper trains on all
    of them (fraction 0: no holdout, every row trained)."""
    counts = trained_rows(n_ambiguous, len(rows) - n_ambiguous, fraction)
    generator = torch.Generator().manual_seed(derive_seed("transfer holdout", seed))
    train, holdout = [], []
    for part, kept in ((rows[:n_ambiguous], counts["ambiguous"]), (rows[n_ambiguous:], counts["disambiguation"])):
        order = torch.randperm(len(part), generator=generator)
        cut = len(part) - kept
        holdout.append(part[order[:cut]])
        train.append(part[order[cut:]])
    return torch.cat(train), torch.cat(holdout)
