"""The arithmetic transfer step as a user runs it: resume, stale inputs, dropout at scoring, NaN losses."""

import json
from pathlib import Path

import pytest
import torch

from subtask_induction.method.masks import save_subnetwork
from subtask_induction.arithmetic.data import build_dataset
from subtask_induction.arithmetic.model import accuracy, build_gpt2, masked_weight_names, save_gpt2
from subtask_induction.runtime import load_torch, save_torch
from subtask_induction.arithmetic import transfer as arithmetic_pack
from subtask_induction.steps import arithmetic_transfer
from subtask_induction.records import fingerprint
from subtask_induction.training import NonFiniteLoss
from harness import points_file, transfer_identity

MODEL = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.2}  # dropout > 0: scoring must switch it off


class Interrupt(Exception):
    pass


@pytest.fixture
def inputs(tmp_path):
    def write_base(seed):
        base = build_gpt2(20, 1, MODEL, seed)
        save_gpt2(base, {"n_numbers": 20, "layers": 1, "model_settings": MODEL, "computation": "a+ab", "modulus": 7},
                  tmp_path / "base.pt")
        return base

    base = write_base(0)
    masks = {name: torch.rand(base.get_parameter(name).shape, generator=torch.Generator().manual_seed(1)) < 0.3
             for name in masked_weight_names(base)}
    save_subnetwork(tmp_path / "subnetwork.pt", masks, subtask="ab")
    save_torch(build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=40, eval_rows=30,
                             test_rows=30), tmp_path / "data.pt")
    return tmp_path, write_base


SI = {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True}


def point(folder, out, variant="si", settings=SI, seed=0, base="base.pt"):
    return {"identity": transfer_identity(variant, 30, seed), "variant_settings": settings, "base": str(folder / base),
            "subnetwork": str(folder / "subnetwork.pt"), "data": str(folder / "data.pt"), "out": str(out)}


def run_points(points, checkpoint, lr=3e-3, epochs=4, retrain=True, holdout=0.0):
    settings = {"training": {"epochs": epochs, "batch_size": 8, "lr": lr, "holdout_fraction": holdout}}
    arithmetic_transfer.main(["--points", points_file(points, Path(f"{checkpoint}.points.json")), "--checkpoint", str(checkpoint), "--device", "cpu",
                              "--checkpoint-interval-s", "0",
                              "--settings", json.dumps(settings)] + (["--retrain"] if retrain else []))
    return [json.loads(Path(q["out"]).read_text()) for q in points if Path(q["out"]).exists()]


def run(folder, out, lr=3e-3, epochs=4):
    """One point alone, as the single-point rule runs it (checkpoint next to its output)."""
    return run_points([point(folder, out)], f"{out}.ckpt", lr=lr, epochs=epochs)[0]


def numbers(record):
    """The numbers of a metrics.json, without wall-clock times."""
    strip = lambda entry: {k: v for k, v in entry.items() if k != "seconds"}  # noqa: E731
    return [strip(r) for r in record["curve"]], {name: strip(r) for name, r in record["metrics"].items()}


def interrupt_at_epoch(monkeypatch, epoch):
    real = arithmetic_pack.stacked_batches

    def batches(rows, batch_size, seeds, current):
        if current == epoch:
            raise Interrupt
        return real(rows, batch_size, seeds, current)

    monkeypatch.setattr(arithmetic_pack, "stacked_batches", batches)


def trained_rows_of_first_epoch(monkeypatch):
    """Records the rows each point of a pack is given to train on (its batches are drawn from them)."""
    seen = []
    real = arithmetic_pack.stacked_batches

    def batches(rows, batch_size, seeds, epoch):
        seen.append([part.clone() for part in rows])
        return real(rows, batch_size, seeds, epoch)

    monkeypatch.setattr(arithmetic_pack, "stacked_batches", batches)
    return seen


def as_pairs(rows):
    return sorted(map(tuple, rows.tolist()))


def test_the_papers_protocol_trains_on_every_ambiguous_row_and_all_n_and_says_so(inputs, monkeypatch):
    folder, _ = inputs
    seen = trained_rows_of_first_epoch(monkeypatch)
    record = run_points([point(folder, folder / "paper.json")], folder / "paper.ckpt")[0]
    splits = load_torch(folder / "data.pt", ("splits",), "dataset")["splits"]
    paper_rows = torch.cat([splits["ambiguous"], splits["disambiguation"][:30]])  # every a=b row + the first n
    assert len(splits["ambiguous"]) == 20 and as_pairs(seen[0][0]) == as_pairs(paper_rows)
    assert record["rows"] == {"train": 20 + 30, "ambiguous": 20, "disambiguation": 30, "holdout": 0,
                              "paper_rows": True, "eval": 30, "test": 30}
    # the paper's selection and the leak-free one, both from this one run; no holdout protocol without a holdout
    assert set(record["metrics"]) == set(record["protocols"]) == {"eval", "last"}
    assert record["metrics"]["last"]["epoch"] == 4 and "holdout_accuracy" not in record["curve"][0]


def test_a_holdout_run_trains_on_fewer_rows_than_the_papers_and_says_so(inputs, monkeypatch):
    folder, _ = inputs
    seen = trained_rows_of_first_epoch(monkeypatch)
    record = run_points([point(folder, folder / "held.json")], folder / "held.ckpt", holdout=0.2)[0]
    splits = load_torch(folder / "data.pt", ("splits",), "dataset")["splits"]
    own_rows = as_pairs(torch.cat([splits["ambiguous"], splits["disambiguation"][:30]]))
    trained = as_pairs(seen[0][0])
    assert len(trained) == 16 + 24 and set(trained) < set(own_rows)  # 20% of the a=b rows and of the n rows out
    assert sum(a == b for a, b, *_ in trained) == 16
    assert record["rows"] == {"train": 40, "ambiguous": 16, "disambiguation": 24, "holdout": 10,
                              "paper_rows": False, "eval": 30, "test": 30}
    assert set(record["metrics"]) == {"eval", "last", "train_holdout"}
    assert "holdout_accuracy" in record["curve"][0]


def test_resumed_run_equals_uninterrupted_run_with_dropout(inputs, monkeypatch, capsys):
    folder, _ = inputs
    reference = run(folder, folder / "reference.json")
    with monkeypatch.context() as patch:
        interrupt_at_epoch(patch, 2)
        with pytest.raises(Interrupt):
            run(folder, folder / "resumed.json")
    assert (folder / "resumed.json.ckpt").is_file() and not (folder / "resumed.json").exists()
    resumed = run(folder, folder / "resumed.json")
    assert "resuming" in "".join(capsys.readouterr())
    assert numbers(resumed) == numbers(reference)


def test_checkpoint_written_against_another_base_is_not_resumed(inputs, monkeypatch, capsys):
    folder, write_base = inputs
    with monkeypatch.context() as patch:
        interrupt_at_epoch(patch, 2)
        with pytest.raises(Interrupt):
            run(folder, folder / "point.json")
    write_base(seed=7)  # the base is retrained while the transfer job is down
    rerun = run(folder, folder / "point.json")
    assert "written for other settings or inputs" in "".join(capsys.readouterr())
    assert len(rerun["curve"]) == 4 and rerun["curve"][0]["epoch"] == 1
    fresh = run(folder, folder / "fresh.json")
    assert numbers(rerun) == numbers(fresh)  # the same numbers as a clean run on the new base


def test_fingerprint_covers_input_contents_but_not_the_checkpoint_interval(inputs):
    folder, write_base = inputs
    settings = {"lr": 1e-3, "checkpoint_interval_s": 60}
    first = fingerprint(settings, inputs=[folder / "base.pt"])
    assert fingerprint({**settings, "checkpoint_interval_s": 5}, inputs=[folder / "base.pt"]) == first
    assert fingerprint({**settings, "lr": 2e-3}, inputs=[folder / "base.pt"]) != first
    write_base(seed=3)
    assert fingerprint(settings, inputs=[folder / "base.pt"]) != first


def test_fingerprint_covers_where_the_numbers_are_computed(inputs):
    folder, _ = inputs
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = fingerprint({"lr": 1e-3}, inputs=[folder / "base.pt"])
        torch.set_num_threads(2)
        assert fingerprint({"lr": 1e-3}, inputs=[folder / "base.pt"]) != one  # another thread count: retrain
        torch.set_num_threads(1)
        assert fingerprint({"lr": 1e-3}, inputs=[folder / "base.pt"]) == one
    finally:
        torch.set_num_threads(before)


def test_nan_loss_stops_with_a_named_error_and_writes_nothing(inputs):
    folder, _ = inputs
    out = folder / "diverged.json"
    with pytest.raises(NonFiniteLoss, match=r"transfer si n=30 chain=0 replicate=0\] .*the loss is nan at epoch \d+") as error:
        run(folder, out, lr=1e30)
    assert "'lr': 1e+30" in str(error.value)  # the settings are named
    assert not out.exists()


def test_accuracy_is_scored_without_dropout_and_keeps_the_mode(tiny_gpt2):
    model = build_gpt2(20, 1, {**MODEL, "dropout": 0.5}, 0)
    rows = build_dataset("transfer", "a2+ab", n_numbers=20, modulus=7, seed=0, train_rows=40, eval_rows=30,
                         test_rows=30)["splits"]["test"]
    model.eval()
    reference = accuracy(model, rows)
    model.train()
    assert [accuracy(model, rows) for _ in range(3)] == [reference] * 3
    assert model.training


def test_a_discovery_from_a_row_subset_reads_only_those_rows(tmp_path, monkeypatch):
    """The label budget: --train-rows r trains on the first r subtask rows and on nothing else."""
    from subtask_induction.arithmetic.data import build_dataset
    from subtask_induction.arithmetic.model import build_gpt2, save_gpt2
    from subtask_induction.method.masks import load_subnetwork
    from subtask_induction.runtime import load_torch, save_torch
    from subtask_induction.steps import arithmetic_discover

    dataset = build_dataset("discovery", "ab", n_numbers=20, modulus=7, seed=0, train_rows=120, eval_rows=20,
                            test_rows=20)
    save_torch(dataset, tmp_path / "data.pt")
    settings = {"n_embd": 16, "n_head": 2, "n_inner": 32, "dropout": 0.0}
    save_gpt2(build_gpt2(20, 1, settings, seed=0), {"n_numbers": 20, "layers": 1, "model_settings": settings,
                                                    "computation": "a+ab", "modulus": 7}, tmp_path / "base.pt")
    seen = []
    real = arithmetic_discover.shuffled_batches

    def recording(rows, *args, **kwargs):
        batches = real(rows, *args, **kwargs)
        seen.extend(tuple(row) for batch in batches for row in batch.tolist())
        return batches

    monkeypatch.setattr(arithmetic_discover, "shuffled_batches", recording)
    arithmetic_discover.main(["--base", str(tmp_path / "base.pt"), "--data", str(tmp_path / "data.pt"),
                              "--l0-weight", "1e-4", "--train-rows", "30", "--device", "cpu", "--identity", '{"family": "arithmetic", "stage": "discovery_budget"}',
                              "--checkpoint-interval-s", "0",
                              "--settings", json.dumps({"seed": 0, "epochs": 2, "batch_size": 8, "lr": 1e-2,
                                                        "beta_final": 100, "mask_init": 0.1}),
                              "--out-subnetwork", str(tmp_path / "s.pt"), "--out-metrics", str(tmp_path / "m.json")])
    first = {tuple(row) for row in dataset["splits"]["train"][:30].tolist()}
    assert seen and set(seen) == first  # every batch row is one of the first 30, and all 30 were used
    record = load_subnetwork(tmp_path / "s.pt", ("scores", "train_rows"))
    assert record["train_rows"] == 30 and set(record["scores"]) == set(record["masks"])
    with pytest.raises(SystemExit, match="--train-rows 500"):
        arithmetic_discover.main(["--base", str(tmp_path / "base.pt"), "--data", str(tmp_path / "data.pt"),
                                  "--l0-weight", "1e-4", "--train-rows", "500", "--device", "cpu", "--identity", '{"family": "arithmetic", "stage": "discovery_budget"}',
                                  "--settings", json.dumps({"seed": 0, "epochs": 1, "batch_size": 8, "lr": 1e-2,
                                                            "beta_final": 100, "mask_init": 0.1}),
                                  "--out-subnetwork", str(tmp_path / "t.pt"), "--out-metrics", str(tmp_path / "n.json")])


def test_the_authors_init_draws_every_masked_weight_from_n0_002_and_leaves_the_rest(inputs):
    """masked_init_std (the authors' code's init, an option): the fresh masked weights, c_proj included, are
    drawn from N(0, 0.02) by their own seed; the kept weights, the inherited tensors and the seeds of the
    default are those of SI without the option."""
    from subtask_induction.arithmetic.transfer import Inputs, build_member

    folder, _ = inputs
    settings = {"training": {"epochs": 1, "batch_size": 8, "lr": 1e-3, "holdout_fraction": 0.0}}
    points = [point(folder, folder / "si.json"),
              point(folder, folder / "authors.json", "si_authors_init", {**SI, "masked_init_std": 0.02})]
    loaded = Inputs.load(points, settings)
    plain, authors = (build_member(q, loaded, torch.device("cpu")) for q in points)
    plain_state, authors_state = plain.model.state_dict(), authors.model.state_dict()
    drawn = [key for key in authors_state if key.endswith("parametrizations.weight.original")]
    assert drawn and all(not torch.equal(plain_state[key], authors_state[key]) for key in drawn)
    c_proj = torch.cat([authors_state[key].flatten() for key in drawn if "c_proj" in key])
    assert abs(float(c_proj.std()) - 0.02) < 0.002  # HF's own init gives these 0.02 / sqrt(2 layers) = 0.014
    assert abs(float(torch.cat([plain_state[key].flatten() for key in drawn if "c_proj" in key]).std()) - 0.0141) < 0.002
    assert all(torch.equal(plain_state[key], authors_state[key]) for key in plain_state if key not in drawn)
    assert set(point_seeds_of(authors)) - set(point_seeds_of(plain)) == {"masked_init"}


def point_seeds_of(member):
    return arithmetic_pack.point_seeds(member.point)


def test_a_magnitude_point_trains_in_a_pack_beside_si_and_records_its_overlap_with_the_subnetwork(inputs):
    """magnitude (issue 48) through the transfer step: it packs with SI, freezes as many weights as the subnetwork
    (its mask fraction equals SI's) and records its frozen set's Jaccard with the discovered one and chance."""
    folder, _ = inputs
    magnitude = {"kind": "magnitude", "lr_scale": 0.0, "inherit_unmasked": True}
    si, rival = run_points([point(folder, folder / "si.json"), point(folder, folder / "mag.json", "magnitude",
                                                                     magnitude)], folder / "mag.ckpt")
    assert rival["mask_fraction"] == si["mask_fraction"] and "overlap_with_subnetwork" not in si
    overlap = rival["overlap_with_subnetwork"]
    assert 0 <= overlap["jaccard"] <= 1 and 0 < overlap["chance"] < 1
    assert overlap["density_first"] == overlap["density_second"]   # count-matched, tensor by tensor
