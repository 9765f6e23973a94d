"""One seed per role: no fresh network starts where another model started (seeds.py), read from what the
smoke run's steps recorded and rebuilt from those seeds."""

import json

import pytest
import torch

from subtask_induction.arithmetic.model import build_gpt2, masked_weight_names
from subtask_induction.seeds import (arithmetic_base_seeds, arithmetic_discovery_seeds,
                                     arithmetic_transfer_seeds, role_seed, vision_seeds,
                                     vision_train_subset_seed)
from subtask_induction.vision.models import build_classifier, load_classifier
from harness import transfer_identity


def test_no_two_roles_and_no_two_chains_share_a_seed():
    seeds = {}
    for chain in range(4):
        seeds.update({("arithmetic base", chain, role): seed for role, seed in arithmetic_base_seeds(chain, "a+ab", 2).items()})
        seeds.update({("arithmetic discovery", chain, role): seed
                      for role, seed in arithmetic_discovery_seeds(chain, "a+ab", "ab", 2).items()})
        for transfer in range(3):
            seeds.update({("arithmetic transfer", chain, transfer, role): seed
                          for role, seed in arithmetic_transfer_seeds(chain, transfer).items()})
        for stage in ("base", "discovery", "transfer", "cross_domain"):
            seeds.update({("vision", stage, chain, role): seed for role, seed in vision_seeds(stage, chain).items()})
        seeds[("vision", "train subset", chain)] = vision_train_subset_seed(chain)
    assert len(set(seeds.values())) == len(seeds) == 4 * (2 + 1 + 3 * 5 + 2 + 2 + 3 + 2 + 1)
    with pytest.raises(ValueError, match="unknown seed role"):
        role_seed("base", "arithmetic", 0)
    # replicate r of chain c draws from the number 100 c + r, as every record before the word "replicate" did
    assert arithmetic_transfer_seeds(2, 1)["init"] == role_seed("transfer init", "arithmetic", 2, 201)


def _gpt2_masked(settings, seed):
    model = build_gpt2(settings["n_numbers"], settings["layers"], settings["model"], seed)
    state = model.state_dict()
    return {name: state[name] for name in masked_weight_names(model)}


def test_arithmetic_transfer_networks_start_from_no_base_initialisation(smoke_run):
    runs = smoke_run / "results/arithmetic"
    bases = {chain: json.loads((runs / f"chain{chain}/base/a+ab/layers1/metrics.json").read_text()) for chain in (0, 1)}
    settings = {"n_numbers": 20, "layers": 1, "model": bases[0]["config"]["model"]}
    base_inits = {chain: _gpt2_masked(settings, record["seeds"]["init"]) for chain, record in bases.items()}
    assert bases[0]["seeds"] == arithmetic_base_seeds(0, "a+ab", 1)
    for chain in (0, 1):
        for variant in ("si", "sampled", "random"):
            point = json.loads((runs / f"chain{chain}/transfer/a+ab/ab/a2+ab/layers1/{variant}/n10/replicate0/metrics.json")
                               .read_text())
            assert set(point["seeds"]) >= {"init", "mask", "holdout", "batches"}
            assert point["seeds"]["init"] not in {record["seeds"]["init"] for record in bases.values()}
            fresh = _gpt2_masked(settings, point["seeds"]["init"])
            for other, initial in base_inits.items():
                for name, tensor in fresh.items():
                    assert not torch.equal(tensor, initial[name]), (chain, variant, other, name)


def test_vision_scratch_and_random_init_discovery_start_from_no_base_initialisation(smoke_run):
    runs = smoke_run / "results/vision"
    _, spec = load_classifier(runs / "chain0/base/model.pt")
    bases = {chain: json.loads((runs / f"chain{chain}/base/metrics.json").read_text())["seeds"] for chain in (0, 1)}
    base_inits = {chain: build_classifier(spec, seeds["init"]).state_dict() for chain, seeds in bases.items()}
    starts = {}
    for chain in (0, 1):
        starts[f"scratch chain{chain}"] = json.loads((runs / f"chain{chain}/transfer/scratch/metrics.json").read_text())["seeds"]["init"]
        starts[f"si chain{chain}"] = json.loads((runs / f"chain{chain}/transfer/si/metrics.json").read_text())["seeds"]["init"]
        random_discovery = next((runs / f"chain{chain}/discovery/random").glob("lambda*/metrics.json"))
        starts[f"random-init discovery chain{chain}"] = json.loads(random_discovery.read_text())["seeds"]["init"]
    assert len(set(starts.values())) == len(starts) - 2  # si and scratch of one chain share the fresh network
    for name, seed in starts.items():
        state = build_classifier(spec, seed).state_dict()
        for chain, initial in base_inits.items():
            conv = [key for key in state if key.endswith("conv1.weight")]
            assert conv and all(not torch.equal(state[key], initial[key]) for key in conv), (name, chain)


def test_rewind_starts_the_transfer_network_at_the_base_initialisation():
    from subtask_induction.arithmetic.transfer import transfer_init_seed

    base_meta = {"seeds": arithmetic_base_seeds(0, "a+ab", 2)}
    point = {"identity": transfer_identity("si_rewind"), "base": "base.pt",
             "variant_settings": {"kind": "subnetwork", "lr_scale": 0.0, "inherit_unmasked": True, "init": "rewind"}}
    assert transfer_init_seed(point, base_meta) == base_meta["seeds"]["init"]
    fresh = {**point, "variant_settings": {**point["variant_settings"], "init": "fresh"}}
    assert transfer_init_seed(fresh, base_meta) == arithmetic_transfer_seeds(0, 0)["init"] != base_meta["seeds"]["init"]
    with pytest.raises(ValueError, match="records no seeds"):   # legacy.OutsideSupport: an older record
        transfer_init_seed(point, {})
