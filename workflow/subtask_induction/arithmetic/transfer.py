"""Arithmetic transfer points trained as one pack (docs/running.md, "Packs"): what each point reads and what its
numbers depend on (`Inputs`, its fingerprint), each point's model and rows built exactly as a lone run builds
them (`build_member`), the stacked training, the per-epoch evaluation and each point's metrics.json. The step
(steps/arithmetic_transfer.py) parses, loads and hands this to sweep.run_pack.

A point's fingerprint covers what its numbers depend on and nothing else: its settings, n, chain and
replicate; the rows it reads (its training rows, eval and test), the base's tensors and architecture, the
subnetwork's masks (and its mask scores, for a top-k point; not the files, whose metadata changes when, say,
a losing λ is added to the selection or the data pool grows for a larger n); the package code it runs, the
versions of the numeric libraries, the kernel pins and where it computes (CPU kernels, threads, GPU:
runtime.code_hash).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..rounding import fixed
from ..method.kinds import batch_rows
from ..method.masks import kept_fraction, load_subnetwork
from ..method.overlap import mask_overlap
from ..method.transfer import TransferPlan, control_masks
from ..protocols import PROTOCOLS, improves, run_protocols, select_all
from ..records import fingerprint, provenance
from ..runtime import code_hash, load_torch, resolve_device, save_json, tensor_digest
from ..seeds import arithmetic_transfer_seeds
from ..stacked_training import StackedAdamW
from ..timing import evaluating
from ..training import Checkpointing, EpochRun, Schedule, fit
from ..legacy import upgrade_record
from .data import competing_rules, split_holdout, trained_rows, transfer_training_rows
from .model import (answer_metrics, build_gpt2, gpt2_from, lm_loss, mean_losses, mimetic_init, predict_answers,
                    read_gpt2, redraw_masked_weights, stacked_batches)
from .stacked import StackedGPT2, optimizer_groups
from .subtask_rows import add_task_marker, discovery_rows, mark, pack_batches, pack_loss, teacher_log_probs


def point_seeds(point):
    v, identity = point["variant_settings"], point["identity"]
    return arithmetic_transfer_seeds(identity["chain"], identity["replicate"], task_marker=batch_rows(v)[1],
                                     masked_init=bool(v.get("masked_init_std")), mimetic=v.get("init") == "mimetic")


@dataclass
class Inputs:
    """What the pack's points read, each file loaded once, and what each contributes to a point's numbers,
    by content (see the module docstring)."""

    settings: dict
    subtask_rows: str | None  # None, or a baseline that also trains on the discovery's subtask rows (subtask_rows.py)
    marked: bool  # whether those rows carry the task marker (subtask_rows.py)
    code: str  # the package modules this step imports and the numeric libraries
    bases: dict = field(default_factory=dict)  # base path -> its file as read (read_gpt2); its digest is read from it
    models: dict = field(default_factory=dict)  # base path -> (GPT-2, meta), built when a point to train first needs it
    subnetworks: dict = field(default_factory=dict)
    datasets: dict = field(default_factory=dict)
    digests: dict = field(default_factory=dict)

    @classmethod
    def load(cls, points: list[dict], settings: dict) -> Inputs:
        subtask_rows, marked = batch_rows(points[0]["variant_settings"])
        inputs = cls(settings, subtask_rows, marked, code_hash())
        for point in points:
            if point["base"] not in inputs.bases:
                inputs.bases[point["base"]] = read_gpt2(point["base"])
            if point["subnetwork"] not in inputs.subnetworks:
                inputs.subnetworks[point["subnetwork"]] = load_subnetwork(point["subnetwork"])
            for key in ("data", "subtask_data") if subtask_rows else ("data",):
                if point[key] not in inputs.datasets:
                    inputs.datasets[point[key]] = load_torch(
                        point[key], ("splits", "n_numbers", "modulus", "computation"), "arithmetic dataset")
        for point in points:
            if point["variant_settings"].get("top_k") and inputs.subnetworks[point["subnetwork"]].get("scores") is None:
                raise SystemExit(f"error: variant '{point['identity']['variant']}' takes the top {point['variant_settings']['top_k']:g} "
                                 f"of the mask scores, but {point['subnetwork']} holds no scores (written before "
                                 f"version 0.2.0): run its discovery again")
        return inputs

    def _digest(self, key, make):
        if key not in self.digests:
            self.digests[key] = make()
        return self.digests[key]

    def base(self, path) -> tuple:
        """(GPT-2, meta) of a base, built on first use: a pack whose points are all restored from their records
        builds no model, and its process never imports transformers (issue 81)."""
        if path not in self.models:
            self.models[path] = gpt2_from(self.bases[path], path)
        return self.models[path]

    def base_meta(self, path) -> dict:
        return {key: value for key, value in self.bases[path].items() if key != "state_dict"}

    def base_digest(self, path):
        """The base's tensors as its file holds them: what load_state_dict copies into the built model (the same
        keys, strictly; the dtypes save_gpt2 wrote), so the digest of the built model's state_dict."""
        checkpoint = self.bases[path]
        return self._digest(("base", path), lambda: tensor_digest({
            "state_dict": checkpoint["state_dict"], "layers": checkpoint["layers"],
            "n_numbers": checkpoint["n_numbers"], "model_settings": checkpoint["model_settings"]}))

    def rows_digest(self, point):
        dataset = self.datasets[point["data"]]
        n = point["identity"]["n"]
        return self._digest(("rows", point["data"], n), lambda: tensor_digest({
            "train": transfer_training_rows(dataset, n), "n_ambiguous": len(dataset["splits"]["ambiguous"]),
            "eval": dataset["splits"]["eval"], "test": dataset["splits"]["test"],
            "computation": dataset["computation"], "n_numbers": dataset["n_numbers"], "modulus": dataset["modulus"]}))

    def fingerprint(self, point) -> str:
        return self._digest(("point", point["out"]), lambda: self._point_fingerprint(point))

    def _point_fingerprint(self, point) -> str:
        subnetwork = self.subnetworks[point["subnetwork"]]
        extra = []
        if self.subtask_rows:
            extra.append(self._digest(("subtask", point["subtask_data"], point["subnetwork"]), lambda: tensor_digest(
                {"subtask": discovery_rows(self.datasets[point["subtask_data"]], subnetwork)})))
        if point["variant_settings"].get("top_k"):
            extra.append(self._digest(("scores", point["subnetwork"]),
                                      lambda: tensor_digest({"scores": subnetwork.get("scores")})))
        masks = self._digest(("masks", point["subnetwork"]), lambda: tensor_digest({"masks": subnetwork["masks"]}))
        identity = point["identity"]
        return fingerprint({**self.settings, "variant": point["variant_settings"]}, identity["n"], identity["chain"],
                           identity["replicate"], self.code, self.base_digest(point["base"]), masks, self.rows_digest(point),
                           *extra, code=False)


@dataclass
class Member:
    """One point of the pack as it trains: its own model (before stacking), rows and record fields."""

    point: dict
    plan: TransferPlan
    model: torch.nn.Module
    train: torch.Tensor
    holdout: torch.Tensor
    rows: dict  # what it trains on, by kind (arithmetic.data.trained_rows)
    eval: torch.Tensor
    test: torch.Tensor
    rules: dict  # competing rule -> its name, for the test agreement metrics
    config: dict
    transferred: float | None  # the kept fraction of the transferred mask (masked kinds)
    subtask: torch.Tensor | None = None  # with subtask_rows: the discovery's rows (marked with task_marker)
    teacher: torch.Tensor | None = None  # with subtask_rows distill: the subnetwork's answers on them
    subtask_test: torch.Tensor | None = None  # with subtask_rows: the subtask's test rows, as its rows are given
    overlap: dict | None = None  # magnitude: its frozen set against the discovered one (Jaccard, per-tensor chance)

    @property
    def name(self) -> str:
        identity = self.point["identity"]
        return f"{identity['variant']} n={identity['n']} chain={identity['chain']} replicate={identity['replicate']}"


def train_points(todo: list[dict], inputs: Inputs, device: str, checkpoint: str, checkpoint_interval_s: float):
    """Build every point's model as for a lone run, stack them, train them as one (resuming from `checkpoint`),
    write each point's metrics.json: yields each point once written (or with why it failed), for run_pack to keep."""
    t = inputs.settings["training"]
    device = resolve_device(device)
    pack = [build_member(point, inputs, device) for point in todo]
    check_shapes(pack)
    plans = [member.plan for member in pack]
    model = StackedGPT2.from_models([member.model for member in pack],
                                    [point_seeds(member.point)["batches"] for member in pack], plans).to(device)
    for member in pack:
        member.model = None  # the stacked model holds the weights now
    optimizer = StackedAdamW(optimizer_groups(model, t["lr"], plans), weight_decay=t.get("weight_decay", 0.01))
    loss_fn, batches = pack_batches_and_loss(pack, inputs.subtask_rows, t["batch_size"])
    names = [member.name for member in pack]
    evaluation = PackEvaluation(pack, model, device, inputs.datasets[todo[0]["data"]]["modulus"],
                                run_protocols(t["holdout_fraction"] > 0))
    result = fit(
        model, optimizer, loss_fn, batches, evaluation, Schedule(t["epochs"], select=None),
        Checkpointing(checkpoint, checkpoint_interval_s,
                      fingerprint({"points": [inputs.fingerprint(q) for q in todo]}, code=False)),
        EpochRun(desc=f"transfer pack of {len(todo)}" if len(todo) > 1 else f"transfer {names[0]}",
                 settings={"points": names, **inputs.settings}),
    )
    histories = [[{"epoch": record["epoch"], **record["points"][index], "seconds": record["seconds"]}
                  for record in result.history] for index in range(len(pack))]  # each point's own epochs
    selected = evaluation.selected(model, histories)
    for index, member in enumerate(pack):
        if index in result.failed:
            yield member.point, f"{member.name}, the loss became non-finite: {result.failed[index]}"
            continue
        write_point(member, selected[index], histories[index], len(pack), inputs)
        yield member.point, None


def build_member(point: dict, inputs: Inputs, device) -> Member:
    """A point's transfer model, exactly as a lone run builds it, with its rows."""
    (base, meta), subnetwork = inputs.base(point["base"]), inputs.subnetworks[point["subnetwork"]]
    dataset, v, t = inputs.datasets[point["data"]], point["variant_settings"], inputs.settings["training"]
    n = point["identity"]["n"]
    rows = transfer_training_rows(dataset, n)
    seeds = point_seeds(point)
    train, holdout = split_holdout(rows, len(dataset["splits"]["ambiguous"]), t["holdout_fraction"], seeds["holdout"])
    if t["holdout_fraction"] > 0 and len(holdout) == 0:
        raise SystemExit(f"error: holdout_fraction {t['holdout_fraction']} leaves no held-out row of {len(rows)}")
    fresh = build_gpt2(meta["n_numbers"], meta["layers"], meta["model_settings"], seed=transfer_init_seed(point, meta))
    if v.get("masked_init_std"):  # the authors' code's init of the fresh masked weights (an option: docs/results.md)
        fresh = redraw_masked_weights(fresh, v["masked_init_std"], seeds["masked_init"])
    if v.get("init") == "mimetic":   # a data-free rival: attention set to look trained (issue 59)
        fresh = mimetic_init(fresh, seeds["mimetic"])
    plan = TransferPlan.from_settings(v)
    masks = plan.masks(subnetwork)
    model = plan.build(base, fresh, masks, torch.Generator().manual_seed(seeds["mask"]))
    if inputs.marked:
        model = add_task_marker(model, meta["n_numbers"], seeds["marker"])
    member = Member(
        point=point,
        plan=plan,
        model=model,
        train=train.to(device), holdout=holdout,
        rows=trained_rows(len(dataset["splits"]["ambiguous"]), n, t["holdout_fraction"]),
        eval=dataset["splits"]["eval"], test=dataset["splits"]["test"],
        rules={rule: rule for rule in competing_rules(dataset["computation"], dataset["n_numbers"], dataset["modulus"])},
        config={**inputs.settings, "variant": v, "target": dataset["computation"], "subtask": subnetwork.get("subtask"),
                "base": meta},
        transferred=kept_fraction(masks)["overall"] if plan.freezes_weights else None,
    )
    if plan.kind == "magnitude":   # does the discovery pick the largest weights? (issue 48)
        member.overlap = mask_overlap(masks, control_masks("magnitude", masks, None, base.state_dict()))
    if inputs.subtask_rows:
        subtask_data = inputs.datasets[point["subtask_data"]]
        rows_of_subtask, subtask_test = discovery_rows(subtask_data, subnetwork), subtask_data["splits"]["test"]
        given = (lambda rows: mark(rows, meta["n_numbers"])) if inputs.marked else (lambda rows: rows)  # noqa: E731
        member.subtask, member.subtask_test = given(rows_of_subtask).to(device), given(subtask_test)
        if inputs.subtask_rows == "distill":  # the subnetwork answers the rows it knows, unmarked
            member.teacher = teacher_log_probs(base, subnetwork["masks"], rows_of_subtask).to(device)
    return member


def check_shapes(pack: list[Member]) -> None:
    """Points train together only when their row counts are equal (a stacked batch has one shape)."""
    for name in ("train", "holdout", "eval", "test") + (("subtask", "subtask_test") if pack[0].subtask is not None else ()):
        sizes = [len(getattr(member, name)) for member in pack]
        if len(set(sizes)) != 1:
            raise SystemExit(f"error: the pack's points have different numbers of {name} rows {sizes}; "
                             "only points of one shape train together")


def pack_batches_and_loss(pack: list[Member], subtask_rows: str | None, batch_size: int):
    """The pack's loss and its batches of an epoch (each point's own batch order)."""
    trains = [member.train for member in pack]
    batch_seeds = [point_seeds(member.point)["batches"] for member in pack]
    if not subtask_rows:
        return lm_loss, lambda epoch: stacked_batches(trains, batch_size, batch_seeds, epoch)
    subtask = [member.subtask for member in pack]
    teacher = [member.teacher for member in pack] if subtask_rows == "distill" else None
    subtask_seeds = [point_seeds(member.point)["subtask_batches"] for member in pack]
    return pack_loss(subtask_rows), lambda epoch: pack_batches(trains, batch_size, batch_seeds, subtask, teacher,
                                                       subtask_seeds, epoch)


class PackEvaluation:
    """Every point's numbers, each scored where a protocol reads it (protocols.py).

    After each epoch (`__call__`): what selection reads, the eval accuracy and in a holdout run the held-out
    slice's accuracy and losses, and for a point trained beside subtask rows its accuracy on the subtask's test
    rows (as its rows are given: marked or not), so a reader sees whether it learnt the subtask too. For each
    protocol that selects on these, every point's weights are kept at the epoch that protocol selects so far
    (protocols.improves: ties go to the later epoch).
    After training (`selected`): the test rows scored once per protocol, on the kept weights (`last`: the final
    ones). A forward pass of the same weights over the same rows in the same batches gives the same bits, so
    these are the numbers a test pass after every epoch gives at the selected epochs, for two or three test passes
    instead of one per epoch. The kept weights go into the pack's checkpoint (`state_dict`): a resumed pack
    selects as an uninterrupted one."""

    def __init__(self, pack: list[Member], model: StackedGPT2, device, modulus: int, protocols: tuple[str, ...]):
        self.pack, self.modulus, self.protocols = pack, modulus, protocols
        self.holdout_rows, self.eval_rows, self.test_rows = (
            torch.stack([getattr(member, name) for member in pack]).to(device) for name in ("holdout", "eval", "test"))
        self.subtask_rows = (torch.stack([member.subtask_test for member in pack]).to(device)
                             if pack[0].subtask_test is not None else None)
        # what training changes (StackedGPT2's checkpoint: the subnetwork only where a point trains it)
        self.parameters = [model.weights] + ([model.subnetwork] if bool(model.subnetwork_trains.any()) else [])
        self.watched = [protocol for protocol in protocols if protocol != "last"]
        self.kept = {protocol: [parameter.detach().clone() for parameter in self.parameters] for protocol in self.watched}
        self.best = {protocol: [None] * len(pack) for protocol in self.watched}  # the signals each kept epoch had
        self.epoch = 0

    def __call__(self, net) -> list[dict]:
        if len(self.holdout_rows[0]):
            held = predict_answers(net, self.holdout_rows)
            held_loss, held_answer_loss = mean_losses(net, self.holdout_rows)
        evaluated = predict_answers(net, self.eval_rows)
        subtask = predict_answers(net, self.subtask_rows) if self.subtask_rows is not None else None
        out = []
        for index in range(len(self.pack)):
            out.append({"eval_accuracy": answer_metrics(evaluated[index], self.eval_rows[index])["accuracy"],
                        **({"holdout_accuracy": answer_metrics(held[index], self.holdout_rows[index])["accuracy"],
                            "holdout_loss": held_loss[index], "holdout_answer_loss": held_answer_loss[index]}
                           if len(self.holdout_rows[0]) else {}),
                        **({"subtask_test_accuracy": answer_metrics(subtask[index], self.subtask_rows[index])["accuracy"]}
                           if subtask is not None else {})})
        self.epoch += 1
        self._keep([{"epoch": self.epoch, **point} for point in out])
        return out

    def _keep(self, signals: list[dict]) -> None:
        for protocol in self.watched:
            improved = [improves(protocol, point, best) for point, best in zip(signals, self.best[protocol])]
            rows = torch.tensor(improved, device=self.parameters[0].device)
            for kept, parameter in zip(self.kept[protocol], self.parameters):
                kept[rows] = parameter.detach()[rows]
            self.best[protocol] = [point if better else best
                                   for point, best, better in zip(signals, self.best[protocol], improved)]

    def state_dict(self) -> dict:
        return {"kept": self.kept, "best": self.best, "epoch": self.epoch}

    def load_state_dict(self, state: dict) -> None:
        self.kept = {protocol: [kept.to(self.parameters[0].device) for kept in tensors]
                     for protocol, tensors in state["kept"].items()}
        self.best, self.epoch = state["best"], state["epoch"]

    def _test(self, net) -> list[dict]:
        from ..claims import correct_bits  # here, not at the top: claims imports pandas, a restored pack needs none

        tested = predict_answers(net, self.test_rows)
        out = []
        for index, member in enumerate(self.pack):
            test = answer_metrics(tested[index], self.test_rows[index], member.rules, self.modulus)
            out.append({"test_accuracy": test.pop("accuracy"),
                        # which test items it got right: paired tests between variants (claims.py)
                        "test_correct": correct_bits((tested[index] == self.test_rows[index][:, 3]).cpu()),
                        **{f"test_{key}": value for key, value in test.items()}})
        return out

    @torch.no_grad()
    def selected(self, net, histories: list[list[dict]]) -> list[dict[str, dict]]:
        """Per point (its own epochs in `histories`): protocol -> the selected epoch's record (select_all's), its
        test metrics added."""
        with evaluating():
            tested = {"last": self._test(net)} if "last" in self.protocols else {}
            final = [parameter.detach().clone() for parameter in self.parameters]
            for protocol in self.watched:
                for parameter, kept in zip(self.parameters, self.kept[protocol]):
                    parameter.data.copy_(kept)
                tested[protocol] = self._test(net)
            for parameter, weights in zip(self.parameters, final):
                parameter.data.copy_(weights)
        out = []
        for index, own in enumerate(histories):
            chosen = select_all(own, self.protocols)
            for protocol in self.watched:  # the kept weights are from the epoch the protocol selects
                if self.best[protocol][index]["epoch"] != chosen[protocol]["epoch"]:
                    raise RuntimeError(f"{self.pack[index].name}: the weights kept for '{protocol}' are from epoch "
                                       f"{self.best[protocol][index]['epoch']}, it selects {chosen[protocol]['epoch']}")
            out.append({protocol: _with_test(record, tested[protocol][index]) for protocol, record in chosen.items()})
        return out


def _with_test(record: dict, test: dict) -> dict:
    """The selected epoch's record with its test metrics, in the order a per-epoch test pass wrote them."""
    head = {key: value for key, value in record.items() if key not in ("seconds", "last_epoch")}
    return {**head, **test, "seconds": record["seconds"], "last_epoch": record["last_epoch"]}


def write_point(member: Member, protocols: dict[str, dict], curve: list[dict], pack_size: int, inputs: Inputs) -> None:
    """The point's metrics.json: each protocol's selected epoch (with its test metrics and per-item test
    correctness), the curve (what selection reads, every epoch), what it read and its seeds."""
    point = member.point
    save_json({"metrics": protocols, "protocols": {name: PROTOCOLS[name] for name in protocols},
               "competing_rules": sorted(member.rules),
               "rows": {**member.rows, "eval": len(member.eval), "test": len(member.test),
                        **({"subtask": len(member.subtask), "task_marker": inputs.marked}
                           if member.subtask is not None else {})},
               "curve": curve,
               "mask_fraction": member.transferred,
               **({"overlap_with_subnetwork": member.overlap} if member.overlap is not None else {}),
               "identity": point["identity"],
               "seeds": {**point_seeds(point), "init": transfer_init_seed(point, inputs.base_meta(point["base"]))},
               "config": member.config, "fingerprint": inputs.fingerprint(point),
               "pack_size": pack_size, "provenance": provenance()}, point["out"])
    print(f"{member.name}: test accuracy " + ", ".join(
        f"{name} {fixed(record['test_accuracy'], 4)} (epoch {record['epoch']})" for name, record in protocols.items()))


def transfer_init_seed(point, base_meta):
    """The transfer network's initial weights: its own fresh seed (`init: fresh`, and `mimetic`, which then sets its
    attention), or with `init: rewind` the base's own initialisation (the lottery-ticket rewind: seeds.py)."""
    if point["variant_settings"].get("init", "fresh") in ("fresh", "mimetic"):
        return arithmetic_transfer_seeds(point["identity"]["chain"], point["identity"]["replicate"])["init"]
    return upgrade_record(base_meta, "base", point["base"])["seeds"]["init"]
