"""A user's folders are tracked by content (listing.py): one image replaced in an ImageNet-shaped tree reruns
the ImageNet-16 builder; an untouched tree reruns nothing; a changed cue-conflict folder reruns its check."""

import io
import os
import shutil
import time

import numpy as np
import yaml
from PIL import Image

from harness import REPO, jobs_run, snakemake


def jpeg(rng) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)).save(buffer, format="JPEG")
    return buffer.getvalue()


def test_one_replaced_image_reruns_the_builder_and_an_untouched_tree_nothing(tmp_path):
    from subtask_induction.vision.classes import CATEGORIES, read_class_table

    rng = np.random.default_rng(0)
    table = read_class_table()
    root = tmp_path / "imagenet"
    for wnid in (wnid for category in CATEGORIES for wnid in table[category]):
        for split, count in (("train", 2), ("val", 1)):
            (root / split / wnid).mkdir(parents=True)
            for i in range(count):
                (root / split / wnid / f"{wnid}_{i}.JPEG").write_bytes(jpeg(rng))
    stimuli = tmp_path / "stimuli"
    for k, shape in enumerate(CATEGORIES):
        (stimuli / shape).mkdir(parents=True)
        Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)).save(
            stimuli / shape / f"{shape}1-{CATEGORIES[(k + 1) % 16]}1.png")
    (tmp_path / "weights.bin").write_bytes(b"")
    overlay = tmp_path / "paths.yaml"
    overlay.write_text(yaml.safe_dump({"families": ["vision"], "vision": {
        "data": {"source": "imagenet", "cue_conflict": str(stimuli),
                 "imagenet": {"root": str(root), "discovery_per_class": 2, "eval_per_class": 1, "min_fill": 0.0}},
        "model": {"weights": str(tmp_path / "weights.bin")}}}))
    targets = ["results/vision/data/imagenet16", "results/vision/data/cue_conflict_check.json"]

    def run(*extra):
        return snakemake(REPO, *targets, "--cores", "1", "--directory", str(tmp_path / "run"),
                         "--configfile", "config/config.yaml", str(overlay), *extra)

    first = run()
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert sorted(jobs_run(first)) == ["vision_check_cue_conflict", "vision_check_user_tree", "vision_imagenet16"]
    untouched = run("-n")
    assert untouched.returncode == 0 and "Nothing to be done" in untouched.stdout + untouched.stderr
    time.sleep(0.01)
    replaced = root / "train" / table["cat"][0] / f"{table['cat'][0]}_1.JPEG"
    replaced.write_bytes(jpeg(rng))  # same name, other content (and size or time)
    os.utime(replaced, ns=(time.time_ns(), time.time_ns()))
    again = run("-n")
    assert again.returncode == 0 and sorted(jobs_run(again)) == ["vision_check_user_tree", "vision_imagenet16"], \
        again.stdout[-2000:]
    assert run().returncode == 0
    # times change, bytes do not: a touched image, then the whole tree copied without its times (a cluster's
    # scratch disk, rsync without -t, a restore) plan nothing
    later = time.time_ns() + 10**9
    os.utime(replaced, ns=(later, later))
    touched = run("-n")
    assert touched.returncode == 0 and "Nothing to be done" in touched.stdout + touched.stderr, touched.stdout[-2000:]
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, copy_function=shutil.copyfile)
    shutil.rmtree(root)
    copy.rename(root)
    copied = run("-n")
    assert copied.returncode == 0 and "Nothing to be done" in copied.stdout + copied.stderr, copied.stdout[-2000:]
    next((stimuli / "cat").iterdir()).unlink()  # a stimulus removed
    changed = run("-n")
    assert changed.returncode == 0 and jobs_run(changed) == ["vision_check_cue_conflict"], changed.stdout[-2000:]


def test_a_new_or_changed_cue_conflict_folder_reruns_its_evaluation_and_no_training(smoke_run, tmp_path):
    """The cue-conflict scores come from the saved models in a rule of their own: pointing the config at a
    folder of one's own stimuli, or changing one image in it, reruns the check, that evaluation, the tables and
    figures, and no base, discovery or transfer."""
    import copy
    import shutil

    import time

    from harness import clone_run, smoke_config, step_of, work_done, write_config

    workdir = clone_run(smoke_run, tmp_path / "run")
    stimuli = tmp_path / "stimuli"
    shutil.copytree(workdir / "results/vision/data/world/cue_conflict", stimuli)
    config = copy.deepcopy(smoke_config())
    config["vision"]["data"]["cue_conflict"] = str(stimuli)
    write_config(workdir, config)
    training = {"vision_base", "vision_discover", "vision_transfer", "vision_mean_pool", "vision_world"}
    expected = {"vision_check_cue_conflict", "vision_cue_conflict", "vision_aggregate", "vision_plots",
                "vision_samples", "resources_report", "all"}
    before = (workdir / "results/vision/summary/table1.md").read_text()
    expected |= {"packed_points"}  # the cue-conflict pack's points name the new folder
    planned = snakemake(workdir, "-n", "--cores", "2")  # what a new folder would run
    assert planned.returncode == 0, (planned.stdout + planned.stderr)[-3000:]
    steps = [step_of(rule) for rule in jobs_run(planned)]
    assert set(steps) == expected and steps.count("vision_cue_conflict") == 1  # one pack: both chains' scores
    started = time.time()
    time.sleep(1)
    new_folder = snakemake(workdir, "--cores", "2")
    assert new_folder.returncode == 0, (new_folder.stdout + new_folder.stderr)[-3000:]
    assert set(map(step_of, jobs_run(new_folder))) == expected
    assert work_done(new_folder, workdir, started).count("vision_cue_conflict") == 2  # both chains scored again
    assert (workdir / "results/vision/summary/table1.md").read_text() == before  # the same stimuli, the same table
    next((stimuli / "cat").iterdir()).unlink()  # one stimulus removed
    changed = snakemake(workdir, "-n", "--cores", "2")
    assert changed.returncode == 0, (changed.stdout + changed.stderr)[-3000:]
    steps = set(map(step_of, jobs_run(changed)))
    assert steps <= expected and "vision_cue_conflict" in steps and not training & steps


def test_a_listing_is_written_once_and_only_when_the_folder_changes(tmp_path):
    """track_folder runs at every parse (a cluster job's own Snakemake too): an unchanged folder writes nothing,
    a changed one rewrites its record atomically, and no temporary file is left behind."""
    import os

    from subtask_induction.listing import track_folder

    folder = tmp_path / "images" / "cat"
    folder.mkdir(parents=True)
    (folder / "a.png").write_bytes(b"one")
    record = tmp_path / "listings" / "cat.json"
    track_folder(tmp_path / "images", record)
    first = record.read_text(), os.stat(record).st_mtime_ns
    track_folder(tmp_path / "images", record)
    assert (record.read_text(), os.stat(record).st_mtime_ns) == first
    (folder / "b.png").write_bytes(b"two")
    track_folder(tmp_path / "images", record)
    assert record.read_text() != first[0]
    assert [p.name for p in record.parent.iterdir() if p.name.endswith(".tmp")] == []
