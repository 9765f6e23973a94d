"""Transfer sweep points: train variants (SI or a control) on the target with n disambiguation rows.

One process trains a pack of points that share their shapes (depth and number of training rows) as one
stacked model (arithmetic.stacked; docs/running.md, "Packs"); a pack of one is a single point. Each point trains a
fixed number of epochs and records, per epoch, the eval accuracy (target-labelled a!=b rows), the
accuracy and loss on a held-out slice of its own training rows, and the test metrics. Its metrics.json
reports the test metrics under each selection protocol (see selection.py): `eval` (the paper's),
`train_holdout` and `last`; all three come from this one run.

Records: next to each metrics.json, `record.json` (a hard link to it) survives Snakemake deleting the
job's outputs. A pack restores every point whose record was written for the same fingerprint instead of
training it again, so adding a seed trains only the new points and a failed or killed pack does not
retrain its finished members. A point's fingerprint covers what its numbers depend on and nothing else:
its settings, n and seed; the rows it reads (its training rows, eval and test), the base's tensors and
architecture, the subnetwork's masks (and its mask scores, for a top-k point; not the files, whose metadata
changes when, say, a losing λ is added to the selection or the data pool grows for a larger n); the package
code it runs, the versions of the numeric libraries, the kernel pins and where it computes (CPU kernels,
threads, GPU: runtime.code_hash). --retrain ignores records; so does a point with
"retrain": true (a single-point rerun).
"""

import json

import torch

from ..arithmetic.data import competing_rules, split_holdout, transfer_training_rows
from ..arithmetic.model import (answer_metrics, build_gpt2, lm_loss, load_gpt2, mean_losses,
                                predict_answers, stacked_batches)
from ..arithmetic.stacked import StackedGPT2, optimizer_groups
from ..arithmetic.subtask_rows import discovery_rows, pack_batches, pack_loss, teacher_log_probs
from ..claims import correct_bits
from ..method.kinds import MASKED_METHODS
from ..method.masks import kept_fraction, load_subnetwork, top_k_masks
from ..method.transfer import prepare_transfer_model
from ..records import keep, restore, write_manifest
from ..runtime import code_hash, configure, load_torch, resolve_device, save_json, tensor_digest
from ..seeds import arithmetic_transfer_seeds
from ..selection import PROTOCOLS, select_all
from ..stacked_training import StackedAdamW
from ..training import fit
from .common import fingerprint, parser, provenance, require

POINT_KEYS = ("variant", "variant_settings", "n", "seed", "base", "subnetwork", "data", "out")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--points", type=json.loads, required=True,
                   help=f"JSON list of points, each with {list(POINT_KEYS)}; all with the same n")
    p.add_argument("--checkpoint", required=True, help="the pack's resume checkpoint")
    p.add_argument("--manifest", help="written last: the pack's points, and which were trained or restored")
    p.add_argument("--retrain", action="store_true", help="train every point, ignoring finished records")
    args = p.parse_args(argv)
    s, points = args.settings, args.points
    require(s, "training")
    t = s["training"]
    require(t, "epochs", "batch_size", "lr", "holdout_fraction", where="transfer training settings")
    if not points:
        raise SystemExit("error: --points lists no point")
    for point in points:
        require(point, *POINT_KEYS, where=f"point {point.get('out', point)}")
        require(point["variant_settings"], "method", "lr_scale", "inherit_unmasked", where=f"variant '{point['variant']}'")
    if len({point["n"] for point in points}) != 1:
        raise SystemExit(f"error: a pack shares its number of training rows; got n = {sorted({q['n'] for q in points})}")
    if len({point["out"] for point in points}) != len(points):
        raise SystemExit("error: two points of the pack write the same file")
    kinds = {point["variant_settings"].get("subtask_rows") for point in points}
    if len(kinds) != 1:
        raise SystemExit(f"error: a pack trains one kind of batch; got subtask_rows {sorted(map(str, kinds))}")
    kind = kinds.pop()  # None, or a baseline that also trains on the discovery's subtask rows (subtask_rows.py)
    if kind and any("subtask_data" not in point for point in points):
        raise SystemExit(f"error: subtask_rows {kind} needs each point's subtask_data (the discovery dataset)")
    seeds_of = {q["out"]: arithmetic_transfer_seeds(q.get("chain", 0), q["seed"]) for q in points}
    configure(args.threads, seeds_of[points[0]["out"]]["batches"])
    code = code_hash()  # the package modules this step imports and the numeric libraries
    bases, subnetworks, datasets = {}, {}, {}
    for point in points:
        if point["base"] not in bases:
            bases[point["base"]] = load_gpt2(point["base"])
        if point["subnetwork"] not in subnetworks:
            subnetworks[point["subnetwork"]] = load_subnetwork(point["subnetwork"])
        for key in ("data", "subtask_data") if kind else ("data",):
            if point[key] not in datasets:
                datasets[point[key]] = load_torch(point[key], ("splits", "n_numbers", "modulus", "computation"),
                                                  "arithmetic dataset")
    # What each input contributes to a point's numbers, by content (see the module docstring).
    base_digests = {path: tensor_digest({"state_dict": model.state_dict(), "layers": meta["layers"],
                                         "n_numbers": meta["n_numbers"], "model_settings": meta["model_settings"]})
                    for path, (model, meta) in bases.items()}
    mask_digests = {path: tensor_digest({"masks": subnetwork["masks"]}) for path, subnetwork in subnetworks.items()}
    score_digests = {path: tensor_digest({"scores": subnetwork.get("scores")}) for path, subnetwork in subnetworks.items()
                     if any(q["subnetwork"] == path and q["variant_settings"].get("top_k") for q in points)}
    for point in points:
        if point["variant_settings"].get("top_k") and subnetworks[point["subnetwork"]].get("scores") is None:
            raise SystemExit(f"error: variant '{point['variant']}' takes the top {point['variant_settings']['top_k']:g} "
                             f"of the mask scores, but {point['subnetwork']} holds no scores (written before "
                             f"version 0.2.0): run its discovery again")
    row_digests = {}

    def rows_digest(point):
        key = (point["data"], point["n"])
        if key not in row_digests:
            dataset = datasets[point["data"]]
            row_digests[key] = tensor_digest({
                "train": transfer_training_rows(dataset, point["n"]), "n_ambiguous": len(dataset["splits"]["ambiguous"]),
                "eval": dataset["splits"]["eval"], "test": dataset["splits"]["test"],
                "computation": dataset["computation"], "n_numbers": dataset["n_numbers"], "modulus": dataset["modulus"]})
        return row_digests[key]

    def point_config(point, meta, dataset, subnetwork):
        return {**s, "variant": point["variant_settings"], "variant_name": point["variant"],
                "n_disambiguation": point["n"], "seed": point["seed"], "chain": point.get("chain", 0),
                "target": dataset["computation"], "subtask": subnetwork.get("subtask"), "base": meta}

    def point_fingerprint(point):
        return fingerprint({**s, "variant": point["variant_settings"]}, point["n"], point.get("chain", 0), point["seed"], code,
                           base_digests[point["base"]], mask_digests[point["subnetwork"]], rows_digest(point),
                           *([tensor_digest({"subtask": discovery_rows(datasets[point["subtask_data"]],
                                                                        subnetworks[point["subnetwork"]])})] if kind else []),
                           *([score_digests[point["subnetwork"]]] if point["variant_settings"].get("top_k") else []),
                           code=False)

    restored = [] if args.retrain else [q for q in points
                                        if not q.get("retrain") and restore([q["out"]], point_fingerprint(q))]
    todo = [q for q in points if q not in restored]
    print(f"pack of {len(points)}: {len(restored)} restored from their records, {len(todo)} to train", flush=True)

    def manifest(failed=()):
        write_manifest(args.manifest, [q["out"] for q in points], [q["out"] for q in restored],
                       [q["out"] for index, q in enumerate(todo) if index not in failed],
                       [todo[index]["out"] for index in failed])

    if not todo:
        manifest()
        return
    device = resolve_device(args.device)
    models, trains, holdouts, evals, tests, rules, configs, transferred = [], [], [], [], [], [], [], []
    subtask, teacher = [], []  # per point, with subtask_rows: the discovery's rows and the subnetwork's answers
    for point in todo:
        (base, meta), subnetwork, dataset = bases[point["base"]], subnetworks[point["subnetwork"]], datasets[point["data"]]
        v = point["variant_settings"]
        rows = transfer_training_rows(dataset, point["n"])
        seeds = seeds_of[point["out"]]
        train, holdout = split_holdout(rows, len(dataset["splits"]["ambiguous"]), t["holdout_fraction"], seeds["holdout"])
        if len(holdout) == 0:
            raise SystemExit(f"error: holdout_fraction {t['holdout_fraction']} leaves no held-out row of {len(rows)}")
        fresh = build_gpt2(meta["n_numbers"], meta["layers"], meta["model_settings"], seed=transfer_init_seed(point, meta))
        # A size dial: the top fraction of the discovery's scores instead of its own hard mask.
        masks = top_k_masks(subnetwork["scores"], v["top_k"]) if v.get("top_k") else subnetwork["masks"]
        transferred.append(kept_fraction(masks)["overall"] if v["method"] in MASKED_METHODS else None)
        models.append(prepare_transfer_model(
            v["method"], base, fresh, masks, lr_scale=v["lr_scale"],
            inherit_unmasked=v["inherit_unmasked"], generator=torch.Generator().manual_seed(seeds["mask"])))
        trains.append(train.to(device))
        holdouts.append(holdout)
        evals.append(dataset["splits"]["eval"])
        tests.append(dataset["splits"]["test"])
        rules.append({rule: rule for rule in competing_rules(dataset["computation"], dataset["n_numbers"], dataset["modulus"])})
        configs.append(point_config(point, meta, dataset, subnetwork))
        if kind:
            rows_of_subtask = discovery_rows(datasets[point["subtask_data"]], subnetwork)
            subtask.append(rows_of_subtask.to(device))
            if kind == "distill":
                teacher.append(teacher_log_probs(base, subnetwork["masks"], rows_of_subtask).to(device))
    for name, parts in (("training", trains), ("held-out", holdouts), ("eval", evals), ("test", tests)):
        if len({len(part) for part in parts}) != 1:
            raise SystemExit(f"error: the pack's points have different numbers of {name} rows "
                             f"{[len(part) for part in parts]}; only points of one shape train together")
    batch_seeds = [seeds_of[point["out"]]["batches"] for point in todo]
    model = StackedGPT2.from_models(models, batch_seeds).to(device)
    del models
    optimizer = StackedAdamW(optimizer_groups(model, t["lr"], [q["variant_settings"]["lr_scale"] for q in todo]),
                             weight_decay=t.get("weight_decay", 0.01))
    holdout_rows, eval_rows, test_rows = (torch.stack(parts).to(device) for parts in (holdouts, evals, tests))
    modulus = datasets[todo[0]["data"]]["modulus"]

    def evaluate(net):
        held = predict_answers(net, holdout_rows)
        held_loss, held_answer_loss = mean_losses(net, holdout_rows)
        evaluated = predict_answers(net, eval_rows)
        tested = predict_answers(net, test_rows)
        out = []
        for index in range(len(todo)):
            test = answer_metrics(tested[index], test_rows[index], rules[index], modulus)
            out.append({"eval_accuracy": answer_metrics(evaluated[index], eval_rows[index])["accuracy"],
                        "holdout_accuracy": answer_metrics(held[index], holdout_rows[index])["accuracy"],
                        "holdout_loss": held_loss[index], "holdout_answer_loss": held_answer_loss[index],
                        "test_accuracy": test.pop("accuracy"),
                        # which test items it got right: paired tests between variants (claims.py)
                        "test_correct": correct_bits((tested[index] == test_rows[index][:, 3]).cpu()),
                        **{f"test_{key}": value for key, value in test.items()}})
        return out

    names = [f"{q['variant']} n={q['n']} seed={q['seed']}" for q in todo]
    if kind:
        if len({len(part) for part in subtask}) != 1:
            raise SystemExit(f"error: the pack's points read different numbers of subtask rows {[len(p) for p in subtask]}")
        subtask_seeds = [seeds_of[point["out"]]["subtask_batches"] for point in todo]
        loss_fn = pack_loss(kind)

        def batches(epoch):
            return pack_batches(trains, t["batch_size"], batch_seeds, subtask, teacher or None, subtask_seeds, epoch)
    else:
        loss_fn = lm_loss

        def batches(epoch):
            return stacked_batches(trains, t["batch_size"], batch_seeds, epoch)

    result = fit(
        model, optimizer, loss_fn, batches,
        evaluate, t["epochs"], select=None, checkpoint=args.checkpoint,
        checkpoint_interval_s=args.checkpoint_interval_s,
        fingerprint=fingerprint({"points": [point_fingerprint(q) for q in todo]}, code=False),
        desc=f"transfer pack of {len(todo)}" if len(todo) > 1 else f"transfer {names[0]}",
        settings={"points": names, **s},
    )
    for index, point in enumerate(todo):
        if index in result.failed:
            continue
        history = [{"epoch": record["epoch"], **record["points"][index], "seconds": record["seconds"]}
                   for record in result.history]
        protocols = select_all(history)  # the selected epochs keep their per-item test correctness; the curve not
        curve = [{key: value for key, value in record.items() if key != "test_correct"} for record in history]
        save_json({"metrics": protocols, "protocols": PROTOCOLS, "competing_rules": sorted(rules[index]),
                   "rows": {"train": len(trains[index]), "holdout": len(holdouts[index]), "test": len(test_rows[index]),
                            **({"subtask": len(subtask[index])} if kind else {})},
                   "curve": curve,
                   "mask_fraction": transferred[index],
                   "seed": point["seed"], "seeds": {**seeds_of[point["out"]], "init": transfer_init_seed(point, bases[point["base"]][1])},
                   "config": configs[index], "fingerprint": point_fingerprint(point),
                   "pack_size": len(todo), "provenance": provenance()}, point["out"])
        keep([point["out"]])
        print(f"{names[index]}: test accuracy " + ", ".join(
            f"{name} {record['test_accuracy']:.4f} (epoch {record['epoch']})" for name, record in protocols.items()))
    manifest(failed=sorted(result.failed))
    if result.failed:
        raise SystemExit("error: the loss became non-finite, so these points wrote nothing (their pack mates "
                         "finished and are kept; a rerun trains only these): "
                         + "; ".join(f"{names[index]} ({todo[index]['out']}): {why}"
                                     for index, why in sorted(result.failed.items())))


def transfer_init_seed(point, base_meta):
    """The transfer network's initial weights: its own fresh seed, or with `init: rewind` the base's own
    initialisation (the lottery-ticket rewind, a question of its own: seeds.py)."""
    if point["variant_settings"].get("init", "fresh") == "fresh":
        return arithmetic_transfer_seeds(point.get("chain", 0), point["seed"])["init"]
    if "seeds" not in base_meta:
        raise SystemExit(f"error: variant '{point['variant']}' rewinds to the base's initialisation, but {point['base']} "
                         "records no seeds (written before version 0.3.0): train the base again")
    return base_meta["seeds"]["init"]


if __name__ == "__main__":
    main()
