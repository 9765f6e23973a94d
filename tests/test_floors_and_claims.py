"""What a run refuses to report: an empty or chance-level subnetwork, an unreadable user image, and a claim
one chain cannot support."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from subtask_induction.method.masks import save_subnetwork
from subtask_induction.steps import check_images, select_subnetwork
from subtask_induction.claims import judge


def subnetwork(path, kept, accuracy, chance=0.25, l0=1e-6):
    mask = torch.zeros(8, dtype=torch.bool)
    mask[: int(8 * kept)] = True
    save_subnetwork(path, {"w": mask}, kept={"overall": kept, "per_tensor": {"w": kept}}, l0_weight=l0,
                    eval_accuracy=accuracy, chance_accuracy=chance, mask_method="continuous_sparsification")
    return str(path)


def test_an_empty_subnetwork_stops_the_run_at_selection(tmp_path):
    empty = subnetwork(tmp_path / "a.pt", kept=0.0, accuracy=0.9)
    with pytest.raises(SystemExit, match="keeps 0.00% of the masked weights"):
        select_subnetwork.main(["--subnetworks", empty, "--out", str(tmp_path / "s.json"), "--floor"])
    assert not (tmp_path / "s.json").exists()


def test_a_chance_level_subnetwork_stops_the_run_and_a_good_one_passes(tmp_path):
    chance = subnetwork(tmp_path / "a.pt", kept=0.5, accuracy=0.25, chance=0.25)
    with pytest.raises(SystemExit, match="no better than chance"):
        select_subnetwork.main(["--subnetworks", chance, "--out", str(tmp_path / "s.json"), "--floor"])
    good = subnetwork(tmp_path / "b.pt", kept=0.25, accuracy=0.9, l0=1e-7)
    select_subnetwork.main(["--subnetworks", chance, good, "--out", str(tmp_path / "s.json"), "--floor"])
    record = json.loads((tmp_path / "s.json").read_text())
    assert record["subnetwork"] == good and record["chance_accuracy"] == 0.25 and len(record["candidates"]) == 2
    # without --floor (the random-init control of Fig 11, expected at chance) the selection goes through
    select_subnetwork.main(["--subnetworks", chance, "--out", str(tmp_path / "r.json")])


def test_an_unreadable_image_in_a_users_folder_is_named_before_any_training(tmp_path):
    folder = tmp_path / "stimuli" / "cat"
    folder.mkdir(parents=True)
    Image.new("RGB", (4, 4)).save(folder / "cat1-dog2.png")
    (folder / "cat2-dog1.png").write_bytes(b"\x89PNG broken")
    with pytest.raises(SystemExit) as error:
        check_images.main(["--root", str(tmp_path / "stimuli"), "--what", "cue-conflict folder",
                           "--out", str(tmp_path / "check.json")])
    assert str(folder / "cat2-dog1.png") in str(error.value) and "1 unreadable" in str(error.value)
    (folder / "cat2-dog1.png").unlink()
    check_images.main(["--root", str(tmp_path / "stimuli"), "--out", str(tmp_path / "check.json")])
    assert json.loads((tmp_path / "check.json").read_text())["images"] == 1


@pytest.mark.parametrize("differences, verdict", [
    ([0.3], "too few chains to decide"),
    ([1.0, 2.0, 1.5, 0.5, 3.0], "too few chains to decide"),      # 2/2^5 = 0.0625: even unanimous cannot decide
    ([1.0, 2.0, 1.5, 0.5, 3.0, 2.5], "holds"),                    # 2/2^6 = 0.031
    ([-1.0, -2.0, -1.5, -0.5, -3.0, -2.5], "reversed"),
    ([1.0, -2.0, 1.5, -0.5, 3.0, -2.5], "no evidence either way"),
    ([0.0] * 6, "no evidence either way"),
])
def test_the_rule_decides_only_what_its_chains_can(differences, verdict):
    judged = judge({"n = 0": pd.Series(differences, index=[str(c) for c in range(len(differences))])})
    assert judged["n = 0"].verdict == verdict


def test_replicates_are_averaged_inside_their_chain_and_a_missing_run_is_incomplete():
    runs = pd.Series([1.0, 3.0, 2.0, 2.0], index=["0/0", "0/1", "1/0", "1/1"])
    judged = judge({250: runs})[250]
    assert judged.chains == ("0", "1") and judged.means == (2.0, 2.0)
    gap = judge({250: pd.Series([1.0, float("nan")], index=["0/0", "1/0"])})[250]
    assert not gap.complete and gap.verdict == "incomplete" and "1/0 missing" in gap.tally.gaps


def test_a_single_run_shows_no_spread_and_last_epoch_selections_are_marked():
    from subtask_induction.arithmetic.tables import transfer_markdown

    rows = []
    for seed, (accuracy, last) in enumerate(((0.5, True), (0.7, False))):
        rows.append({"base": "a+ab", "subtask": "ab", "target": "a2+ab", "layers": 2, "variant": "si", "n": 10,
                     "chain": seed, "replicate": 0, "protocol": "train_holdout", "test_accuracy": accuracy,
                     "last_epoch": last, "paper_rows": False})
    rows.append({**rows[0], "variant": "random", "test_accuracy": 0.25, "last_epoch": False})
    text = transfer_markdown(pd.DataFrame(rows), ["train_holdout"])
    assert "| si | 2 | 0.600 ± 0.141 ‡1/2 |" in text
    assert "| random | 2 | 0.250 (1 run) |" in text and "± 0.000" not in text


def test_every_protocol_says_whether_it_chose_the_last_epoch():
    from subtask_induction.protocols import select_all

    history = [{"epoch": e, "eval_accuracy": a, "holdout_accuracy": a, "holdout_answer_loss": 1.0}
               for e, a in ((1, 0.2), (2, 0.9), (3, 0.5))]
    chosen = select_all(history)
    assert chosen["eval"]["epoch"] == 2 and chosen["eval"]["last_epoch"] is False
    assert chosen["last"]["last_epoch"] is True


def test_a_one_item_difference_is_a_tie_and_a_large_one_a_win():
    """chains.md's per-run difference is the table's accuracies' (full precision), and it counts (`*`) only where
    McNemar's exact test on the same test items says it is beyond noise."""
    import pandas as pd

    from subtask_induction.arithmetic.tables import run_differences
    from subtask_induction.claims import correct_bits, mcnemar_p

    rng = np.random.default_rng(0)
    base = rng.random(500) < 0.8
    one_more = base.copy()
    one_more[np.flatnonzero(~base)[0]] = True  # right on exactly one more test item
    many_more = base.copy()
    many_more[np.flatnonzero(~base)[:40]] = True
    rows = pd.DataFrame([{"chain": chain, "replicate": 0, "variant": variant, "test_items": 500,
                          "test_accuracy": float(np.float32(correct.mean())), "test_correct": correct_bits(correct)}
                         for chain, better in enumerate((one_more, many_more))
                         for variant, correct in (("si", better), ("sampled", base))])
    difference, counted = run_differences(rows, "si", "sampled", [(0, 0), (1, 0)])
    assert difference["0/0"] == 100 * (one_more.mean() - base.mean())   # the exact fraction, not the float32 it was stored as
    assert counted["0/0"] == 0.0
    assert counted["1/0"] == difference["1/0"] == pytest.approx(8.0)
    # exact McNemar: 6 discordant items all one way give p = 2 / 2**6
    assert mcnemar_p(np.array([True] * 6), np.array([False] * 6)) == pytest.approx(2 / 64)


def test_transfer_records_keep_which_test_items_each_selected_epoch_got_right(smoke_run):
    from subtask_induction.claims import bits_correct

    point = json.loads((smoke_run / "results/arithmetic/chain0/transfer/a+ab/ab/a2+ab/layers1/si/n10/replicate0/metrics.json")
                       .read_text())
    assert point["rows"]["test"] == 40
    for chosen in point["metrics"].values():
        correct = bits_correct(chosen["test_correct"], point["rows"]["test"])
        assert len(correct) == 40 and correct.mean() == pytest.approx(chosen["test_accuracy"])
    assert all("test_correct" not in epoch for epoch in point["curve"])
    chains = (smoke_run / "results/arithmetic/summary/chains.md").read_text()
    assert "| 1 | 10 | si vs sampled | 0/0, 1/0 |" in chains and "McNemar" in chains
    assert "test_correct" not in (smoke_run / "results/arithmetic/summary/transfer.csv").read_text()


def test_shape_bias_differences_count_only_beyond_bootstrap_noise():
    from subtask_induction.claims import shape_bias_difference

    rng = np.random.default_rng(1)
    shape = rng.random(300) < 0.4
    texture = ~shape & (rng.random(300) < 0.5)
    difference, p, counted = shape_bias_difference(shape, texture, shape, texture)
    assert difference == 0 and counted == 0
    flipped = texture.copy()
    flipped[np.flatnonzero(texture)[0]] = False  # one texture decision fewer: a one-item difference
    assert shape_bias_difference(shape, flipped, shape, texture)[2] == 0.0
    strong = shape | texture  # every texture decision became a shape decision
    difference, p, counted = shape_bias_difference(strong, np.zeros(300, bool), shape, texture)
    assert p < 0.01 and counted == difference > 30


@pytest.mark.parametrize("workers", [1, 2])
def test_a_jpeg_cut_at_half_its_bytes_is_unreadable_named_by_its_path(tmp_path, workers):
    """PIL's verify() passes a truncated JPEG; the check decodes (draft mode) and names it."""
    import io

    from subtask_induction.images import read_rgb, unreadable

    rng = np.random.default_rng(0)
    good, cut = tmp_path / "good.JPEG", tmp_path / "cut.JPEG"
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (128, 128, 3)).astype(np.uint8)).save(buffer, format="JPEG", quality=90)
    good.write_bytes(buffer.getvalue())
    cut.write_bytes(buffer.getvalue()[:len(buffer.getvalue()) // 2])
    with Image.open(cut) as image:
        image.verify()  # the old check: no complaint
    bad = unreadable([good, cut, good], workers)
    assert [path for path, _ in bad] == [cut] and "truncated" in bad[0][1]
    with pytest.raises(OSError, match=str(cut)):  # a read after the check names its file too
        read_rgb(cut)


def test_an_empty_file_and_a_text_file_named_as_an_image_are_told_apart(tmp_path):
    from subtask_induction.images import unreadable

    empty, text = tmp_path / "x.jpg", tmp_path / "y.png"
    empty.write_bytes(b"")
    text.write_text("not an image")
    bad = dict(unreadable([empty, text]))
    assert bad[empty] == "empty file (0 bytes)"
    assert "cannot identify image file" in bad[text]


def test_the_comparisons_chains_md_makes_are_the_configs_pairs_and_no_others():
    from subtask_induction.arithmetic.tables import chains_markdown

    rows = [{"base": "a+ab", "subtask": "ab", "target": "a2+ab", "layers": 2, "variant": variant, "n": 10,
             "chain": chain, "replicate": 0, "protocol": "last", "test_accuracy": accuracy + chain / 100,
             "paper_rows": True, "train_rows": 30}
            for chain in (0, 1) for variant, accuracy in (("si", 0.9), ("sampled", 0.6), ("random", 0.4))]
    frame = pd.DataFrame(rows)
    text = chains_markdown(frame, "last", [["random", "sampled"], ["si", "not_run"]])
    assert "| 2 | 10 | random vs sampled | 0/0, 1/0 |" in text
    assert "si vs sampled" not in text and "not_run" not in text  # only the configured pairs, both run
    assert "si vs sampled" in chains_markdown(frame, "last", [["si", "sampled"]])

