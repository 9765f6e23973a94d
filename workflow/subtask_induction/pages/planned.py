"""The points a run record's configs planned: what its tables must hold, read from the config files at the
record's own commit (`git show <commit>:<file>`), merged as Snakemake merges them (config/config.yaml, then each
--configfile in order), old keys renamed and the schema's defaults set as the Snakefile does, then the sweep's
points (points.py) of every family the config runs.

A record stores them (`planned/<family>.csv`) when it is stored, so the pages never need the git history: a claim
is computed from exactly the runs they name, and a table that lacks one of them is refused or, where run.yaml's
`known_gaps` names it, said to be a gap."""

from __future__ import annotations

import subprocess
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import yaml

from ..files import write_text
from ..points import VISION_MODEL_ROWS, arithmetic_points, submasking_points, vision_points
from ..workflow_config import upgrade_keys
from .settings import merged

REPO = Path(__file__).resolve().parents[3]
SCHEMA = "workflow/schemas/config.schema.yaml"
DEFAULT_CONFIG = "config/config.yaml"
FAMILIES = ("arithmetic", "vision", "submasking")
# How a family's points are found in its record's tables: (table, {point column: table column}).
POINT_TABLES = {"arithmetic": ("arithmetic/transfer.csv", {}),
                "vision": ("vision/chains.csv", {"variant": "model"}),
                "submasking": ("submasking/points.csv", {})}


def point_rows(table: pd.DataFrame, family: str) -> pd.DataFrame:
    """A family's table less its rows that are not sweep points (vision: the base and the subnetworks)."""
    return table[~table["variant"].isin(VISION_MODEL_ROWS)] if family == "vision" else table


def file_at(repo: Path, commit: str | None, path: str) -> str:
    """A file's text at `commit` (None: the working tree)."""
    if commit is None:
        return (Path(repo) / path).read_text()
    found = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True)
    if found.returncode:
        raise FileNotFoundError(f"{path} at commit {commit}: {found.stderr.strip()}")
    return found.stdout


def effective_config(configs: list[str], commit: str | None = None, repo: Path = REPO) -> dict:
    """The config a run with these --configfile files had: the default first, as the Snakefile's `configfile:`,
    each file over it in order (the files as at `commit`); old keys renamed and the defaults set by the schema of
    `repo`'s working tree (today's: it knows every key an older file can hold, under today's name)."""
    from snakemake.utils import validate

    config = yaml.safe_load(file_at(repo, commit, DEFAULT_CONFIG))
    for name in configs:
        if name != DEFAULT_CONFIG:
            config = merged(config, yaml.safe_load(file_at(repo, commit, name)) or {})
    upgrade_keys(config)
    validate(config, str(Path(repo) / SCHEMA))
    return config


def planned_points(config: dict, rosters: dict[str, list[int]] | None = None) -> dict[str, pd.DataFrame]:
    """{family: one row per point the config plans} for every family it runs; `rosters` {family: the chains that
    count} where its plan names spare chains (roster.py): the points of those chains, a spare in a failed chain's
    place."""
    rosters = rosters or {}

    def on_roster(section: dict, family: str) -> dict:
        return {**section, "chains": rosters[family]} if family in rosters else section

    makers = {"arithmetic": lambda c: arithmetic_points(on_roster(c["arithmetic"], "arithmetic")),
              "vision": lambda c: vision_points(on_roster(c["vision"], "vision")),
              "submasking": lambda c: submasking_points(c["submasking"])}
    out = {}
    for family in config.get("families", FAMILIES):
        rows = [asdict(point) for point in makers[family](config)]
        frame = pd.DataFrame(rows)
        if family == "submasking" and len(frame):
            frame["fraction"] = frame["fraction"].astype(float)
        out[family] = frame
    return out


def rosters(folder: Path, config: dict) -> dict[str, list[int]]:
    """{family: its roster's chains} of a run's tables (`folder`/<family>/roster.csv, a run's summary folder's parent
    or a record), for each family whose plan names spare chains; a plan with spares and no roster is refused (its
    chains are not known)."""
    from ..roster import read

    out = {}
    for family in ("arithmetic", "vision"):
        if family not in config.get("families", FAMILIES) or not (config.get(family) or {}).get("spare_chains"):
            continue
        path = Path(folder) / family / "roster.csv"
        if not path.is_file():
            path = Path(folder) / family / "summary" / "roster.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: {family}'s plan names spare chains, but its roster.csv is missing, so "
                                    "the chains that count are not known")
        out[family] = read(path, family).chains
    return out


def read_planned(folder: Path) -> dict[str, pd.DataFrame]:
    return {path.stem: pd.read_csv(path) for path in sorted((Path(folder) / "planned").glob("*.csv"))}


def write_planned(points: dict[str, pd.DataFrame], folder: Path) -> None:
    """Each family's planned points as planned/<family>.csv, written atomically and durably (files.py)."""
    for family, frame in points.items():
        write_text(Path(folder) / "planned" / f"{family}.csv", frame.to_csv(index=False, lineterminator="\n"))


def matching(frame: pd.DataFrame, where: dict) -> pd.Series:
    """Which rows of `frame` hold, in each column `where` names, its value or one of its values (a list); compared
    as text, so a table read as text and one read as numbers match alike."""
    found = pd.Series(True, index=frame.index)
    for column, value in where.items():
        if column not in frame:
            raise ValueError(f"no planned point has the column {column!r}")
        found &= frame[column].astype(str).isin([str(v) for v in (value if isinstance(value, list) else [value])])
    return found


def gap_rows(frame: pd.DataFrame, gaps: list[dict]) -> pd.Series:
    """Which planned points a record's `known_gaps` names (each gap: {family, why, and column: value or [values]})."""
    named = pd.Series(False, index=frame.index)
    for gap in gaps:
        named |= matching(frame, {column: value for column, value in gap.items() if column not in ("family", "why")})
    return named


def expected_points(planned: dict[str, pd.DataFrame], gaps: list[dict]) -> dict[str, pd.DataFrame]:
    """The planned points less the known gaps: what a record's tables must hold."""
    out = {}
    for family, frame in planned.items():
        mine = [gap for gap in gaps if gap.get("family") == family]
        out[family] = frame[~gap_rows(frame, mine)].reset_index(drop=True) if mine else frame
    return out
