# Helpers shared by the rule files: settings passed to steps, target lists, wildcard constraints.
import json
import re


def as_json(settings):
    """Settings for a step, as a deterministic JSON string (params changes trigger reruns)."""
    return json.dumps(settings, sort_keys=True)


def number_tag(value):
    """1e-06 for 1.0e-6: how a float looks in a path."""
    return f"{value:g}"


def one_of(values):
    return "|".join(re.escape(str(value)) for value in values)



def training_resources():
    return {"gpu": config["resources"]["gpu_per_training_job"]}


FAMILY_TARGETS = {}


def final_targets():
    return [target for family in config["families"] for target in FAMILY_TARGETS[family]()]
