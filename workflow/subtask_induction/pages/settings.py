"""The README's table of the paper's settings against config/paper.yaml and the default (config/config.yaml).

The paper column and the "why" column are prose about the paper and our choices; the two config columns are
read from the config files, so the table cannot say what the configs do not (a test renders it again)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from ..vision.sources import source_of

CONFIG = Path(__file__).resolve().parents[3] / "config"


def merged(base: dict, overlay: dict) -> dict:
    """`overlay` over `base` as Snakemake merges a second --configfile: mappings key by key, anything else replaced."""
    out = copy.deepcopy(base)
    for key, value in overlay.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def configs(root: Path = CONFIG) -> tuple[dict, dict]:
    """(the default config, the effective paper config: config/paper.yaml over the default, as Snakemake merges)."""
    default = yaml.safe_load((root / "config.yaml").read_text())
    paper = merged(default, yaml.safe_load((root / "paper.yaml").read_text()))
    return default, paper


def _number(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if value == 0:
        return "0"
    if value < 0:
        return "−" + _number(-value)
    if isinstance(value, float) and (value < 1e-2 or value >= 1e4):
        return f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e")
    if isinstance(value, (int, float)) and value >= 1000:
        return f"{value:,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _list(values) -> str:
    return ", ".join(_number(v) for v in values)


def _sizes(values) -> str:
    return _list(values) if len(values) <= 4 else f"{_number(values[0])}…{_number(values[-1])}, {len(values)} sizes"


def _optimiser(section: dict) -> str:
    name = section.get("optimizer", "adamw")
    text = {"sgd": f"SGD m {section.get('momentum', 0):g}", "adamw": "AdamW"}.get(name, name)
    return f"{text}, lr {_number(section['lr'])}, wd {_number(section['weight_decay'])}"


def _stopping(base: dict) -> str:
    parts = [f"{base['epochs']} epochs"]
    if base.get("patience"):
        parts.append(f"patience {base['patience']}")
    if base.get("stop_at"):
        parts.append(f"stop at eval ≥ {base['stop_at']:g}")
    return ", ".join(parts)


def _vision_data(c: dict) -> str:
    source = source_of(c["vision"])
    if not source.user_tree:
        return f"{source.what}, {c['vision']['data'][source.name]['image_size']} px"
    return f"{source.what} (`USER`)"


def _pooling(c: dict) -> str:
    pooling = c["vision"]["pooling"]
    if pooling["segmenter"] == "sam":
        sam = pooling["sam"]
        return (f"SAM {sam['model_type']}, {sam['points_per_side']} points/side, {sam['crop_n_layers']} crop layer, "
                f"masks ≥ {pooling['min_area']} px")
    return f"weights-free colour regions, ≥ {pooling['min_area']} px"


def _vision_model(c: dict) -> str:
    model = c["vision"]["model"]
    width = "real width" if not model.get("model_kwargs") else f"channels {model['model_kwargs'].get('channels')}"
    weights = "weight file (`USER`)" if model.get("weights") else "trained on the world"
    return f"{model['arch']}, {width}, {weights}"


def _per_class(c: dict) -> str:
    data = c["vision"]["data"]
    if not source_of(c["vision"]).user_tree:
        per_class = data[data["source"]]["per_class"]
        return f"{per_class['discovery']} / {per_class['eval']}"
    section = data[data["source"]]
    return f"{_number(section['discovery_per_class'])} / {section['eval_per_class']}"


# (hyperparameter, the paper's value, the config's value (a function of an effective config), why the default differs)
ROWS = [
    ("GPT-2: numbers (mod 7); depths; width, heads, MLP; dropout", "0…999; 2-12; 128, 4, 512; — (HF's 0.1)",
     lambda c: f"{c['arithmetic']['n_numbers']}; {_list(c['arithmetic']['layers'])}; {c['arithmetic']['model']['n_embd']}, "
               f"{c['arithmetic']['model']['n_head']}, {c['arithmetic']['model']['n_inner']}; "
               f"{_number(c['arithmetic']['model']['dropout'])}", "CPU time: fewer pairs, fewer depths"),
    ("chains × replicates (main experiment)", "1 × —",
     lambda c: f"{len(c['arithmetic']['chains'])} × "
               f"{len(c['arithmetic']['experiments'][0].get('replicates', c['arithmetic']['transfer']['replicates']))}",
     "the verdict rule judges a claim over chains (docs/decisions.md)"),
    ("base: rows, optimiser, batch, stopping", "200k (20% of pairs), AdamW 5e-4, 50, ~50 epochs with early stopping",
     lambda c: f"{_number(c['arithmetic']['data']['base']['train_rows'])}, {_optimiser(c['arithmetic']['base'])}, "
               f"{c['arithmetic']['base']['batch_size']}, {_stopping(c['arithmetic']['base'])}",
     "fewer rows learn faster at a higher lr"),
    ("discovery: rows, batch, lr, epochs", "50k, 500, 1e-3, 50",
     lambda c: f"{_number(c['arithmetic']['data']['discovery']['train_rows'])}, "
               f"{c['arithmetic']['discovery']['batch_size']}, {_number(c['arithmetic']['discovery']['lr'])}, "
               f"{c['arithmetic']['discovery']['epochs']}", "CPU time"),
    ("discovery: λ, β_final, mask init", "{1e-7, 5e-7, 1e-8}, 100, −0.1",
     lambda c: f"{{{_list(c['arithmetic']['discovery']['l0_weights'])}}}, "
               f"{c['arithmetic']['discovery']['beta_final']}, {_number(c['arithmetic']['discovery']['mask_init'])}",
     "one λ that finds a sparse ab subnetwork in the default's epochs"),
    ("transfer: n (disambiguation rows)", "0…10,000, 17 sizes",
     lambda c: _sizes(c["arithmetic"]["transfer"]["disambiguation_rows"]), "CPU time"),
    ("transfer: epochs, lr, batch", "100, 2e-4 (of 5 searched), 50",
     lambda c: f"{c['arithmetic']['transfer']['epochs']}, {_number(c['arithmetic']['transfer']['lr'])}, "
               f"{c['arithmetic']['transfer']['batch_size']}",
     "lr chosen on the eval split (docs/decisions.md)"),
    ("eval / test pairs", "1,000 / 1,000 (overlapping training)",
     lambda c: f"{_number(c['arithmetic']['data']['eval_rows'])} / {_number(c['arithmetic']['data']['test_rows'])}, "
               "disjoint from every stage", "fewer pairs"),
    ("figures' selection protocol", "best eval accuracy (target labels)",
     lambda c: f"`{c['arithmetic']['report']['protocol']}` (all in the tables)", ""),
    ("vision data; images per class (discovery / eval); chains", "16-class ImageNet; ≤1000 / 100; 1",
     lambda c: f"{_vision_data(c)}; {_per_class(c)}; {len(c['vision']['chains'])}", "no downloads; CPU time"),
    ("mean pooling", "SAM vit_h, 16 points/side, 1 crop layer, masks ≥ 100 px", _pooling,
     "no checkpoint to download; small images"),
    ("vision model", "timm resnet18 / ViT-B/16, pretrained", _vision_model, "CPU; no weights to download"),
    ("vision discovery: epochs, batch, λ, mask init", "100, 32, {1e-6, 1e-7, 1e-8}, −0.1",
     lambda c: f"{c['vision']['discovery']['epochs']}, {c['vision']['discovery']['batch_size']}, "
               f"{{{_list(c['vision']['discovery']['l0_weights'])}}}, {_number(c['vision']['discovery']['mask_init'])}",
     "from −0.1 the mask had to grow a classifier from few images (docs/decisions.md)"),
    ("vision transfer: optimiser; batch; epochs", "SGD m 0.9, lr 1e-3, wd 1e-4; 128; ~33k steps",
     lambda c: f"{_optimiser(c['vision']['transfer'])}; {c['vision']['transfer']['batch_size']}; "
               f"{c['vision']['transfer']['epochs']}", "CPU time"),
    ("submasking: epochs, batch, mask lr", "the draft: 30, 32, Adam 0.02 at S0 = 1 (1e-4 at 1e-2)",
     lambda c: f"{c['submasking']['training']['epochs']}, {c['submasking']['training']['batch_size']}, "
               f"{_number(c['submasking']['training']['mask_lr'])}", "CPU time"),
]


def settings_table(root: Path = CONFIG) -> str:
    """The Markdown table, every config cell read from the configs under `root`."""
    default, paper = configs(root)
    lines = ["| hyperparameter | paper | `config/paper.yaml` | default (`config/config.yaml`) | why the default differs |",
             "|---|---|---|---|---|"]
    for label, text, read, why in ROWS:
        ours, theirs = read(default), read(paper)
        lines.append(f"| {label} | {text} | {'same' if theirs == text else theirs} | {ours} | "
                     f"{'' if ours == theirs else why} |")
    return "\n".join(lines)
