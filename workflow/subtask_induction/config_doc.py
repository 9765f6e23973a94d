"""config/README.md from the config schema: every key, its type and limits, its description, and its value
in the embedded default (config/config.yaml) and in the paper configuration (config/paper.yaml).

    PYTHONPATH=workflow python -m subtask_induction.config_doc > config/README.md     # or: make config-doc

tests/test_config_doc.py keeps the file in step with the schema (and every key described).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
HEADER = """# Configuration keys

Generated from `workflow/schemas/config.schema.yaml` by `make config-doc`; do not edit by hand. The
workflow validates the config against that schema before any job starts, so a key that is not listed
here, or a value outside its limits, stops the run with a message naming it.

- `config/config.yaml` is the embedded default: a CPU-sized run on generated and bundled data.
- `config/paper.yaml` holds the paper's settings. Give it as `snakemake TARGETS --configfile config/paper.yaml`:
  Snakemake merges it over the default, and it states every key its families use (docs/running.md, "The
  paper's settings"), so no CPU default leaks into a paper run.
- `a.b[].c` is key `c` of every item of the list `a.b`; `a.<name>.c` is key `c` of every entry of the
  mapping `a` (named by you).
- Values are shown as YAML would write them; "—" means the file does not set the key.

| key | type and limits | description | default | paper |
|---|---|---|---|---|
"""


def resolve(node: dict, schema: dict) -> dict:
    """The node with `$ref` (and `allOf` parts) merged in."""
    while "$ref" in node:
        target = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    if "allOf" in node:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            part = resolve(part, schema)
            merged.setdefault("properties", {}).update(part.get("properties", {}))
            for key, value in part.items():
                if key not in ("properties", "required", "not", "if", "then", "else"):
                    merged.setdefault(key, value)
        node = merged
    return node


def type_text(node: dict) -> str:
    if "const" in node:
        return f"`{node['const']}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{value}`" for value in node["enum"])
    if "oneOf" in node:
        return " or ".join(type_text(option) for option in node["oneOf"] if "type" in option or "enum" in option
                           or "const" in option) or "see description"
    kinds = node.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    text = " or ".join(kinds)
    limits = []
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in node:
            limits.append(f"{sign} {node[key]}")
    if node.get("minItems"):
        limits.append(f"at least {node['minItems']} item{'s' if node['minItems'] > 1 else ''}")
    if "pattern" in node and "string" in kinds:
        limits.append(f"matching `{node['pattern']}`")
    return text + (f" ({', '.join(limits)})" if limits else "")


def value_text(config: dict, path: list[str]):
    node = config
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return "—"
        node = node[part]
    if isinstance(node, (dict, list)) and len(json.dumps(node)) > 40:
        return "see the file"
    return f"`{json.dumps(node)}`"


def rows(node: dict, schema: dict, path: list[str], configs: list[dict]) -> list[tuple]:
    """(key, type, description, default, paper) for `node` and everything under it."""
    node = resolve(node, schema)
    out = []
    name = ".".join(path)
    shown = not path[-1].endswith("]") if path else False
    if path and shown:
        plain = all("[]" not in part and not part.startswith("<") for part in path)
        values = [value_text(config, path) if plain else "" for config in configs]
        items = resolve(node.get("items", {}), schema) if node.get("type") == "array" else {}
        kind = type_text(node)
        if items and "properties" not in items:
            kind += " of " + type_text(items)
        out.append((name, kind, node.get("description", "").replace("\n", " ").replace("|", "\\|"), *values))
    for key, child in node.get("properties", {}).items():
        out += rows(child, schema, path + [key], configs)
    items = resolve(node.get("items", {}), schema) if node.get("type") == "array" else {}
    for key, child in items.get("properties", {}).items():
        out += rows(child, schema, path[:-1] + [path[-1] + "[]", key], configs)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and "properties" in resolve(extra, schema):
        for key, child in resolve(extra, schema)["properties"].items():
            out += rows(child, schema, path + ["<name>", key], configs)
    return out


def undescribed(schema: dict) -> list[str]:
    """Keys whose schema node has no description."""
    configs = [{}, {}]
    return [key for key, _, description, *_ in rows(schema, schema, [], configs) if not description]


def document() -> str:
    schema = yaml.safe_load(SCHEMA.read_text())
    configs = [yaml.safe_load((ROOT / f"config/{name}.yaml").read_text()) for name in ("config", "paper")]
    lines = [f"| `{key}` | {kind} | {description} | {default} | {paper} |"
             for key, kind, description, default, paper in rows(schema, schema, [], configs)]
    return HEADER + "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(document())
