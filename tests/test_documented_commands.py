"""Every `snakemake` command in a shell block of the README and docs/ runs: each is dry-run as written (in a
temporary working directory), so a path, target or option that drifts from the workflow fails here."""

import re
import shlex
from pathlib import Path

import pytest

from harness import REPO, snakemake

DOCUMENTS = ["README.md", *sorted(str(path.relative_to(REPO)) for path in (REPO / "docs").glob("*.md"))]


def documented_commands() -> list[tuple[str, str, dict]]:
    """(document, command, the shell variables set before it in its block)."""
    found = []
    for document in DOCUMENTS:
        text = (REPO / document).read_text()
        for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, re.S):
            variables = {}
            for line in block.splitlines():
                line = line.split(" #")[0].strip()
                assigned = re.match(r"^([A-Z_]+)=(\S+)$", line)
                if assigned:
                    variables[assigned.group(1)] = assigned.group(2)
                elif line.startswith("snakemake"):
                    found.append((document, line, dict(variables)))
    return found


def distinct(commands: list[tuple[str, str, dict]]) -> list[tuple[str, str, dict]]:
    """One entry per command and variables: the same command in two documents is dry-run once, named by both."""
    by_command: dict[tuple, list[str]] = {}
    for document, command, variables in commands:
        by_command.setdefault((command, tuple(sorted(variables.items()))), []).append(document)
    return [(", ".join(dict.fromkeys(documents)), command, dict(variables))
            for (command, variables), documents in by_command.items()]


COMMANDS = distinct(documented_commands())


def test_the_documents_hold_commands_to_check():
    named = {name for documents, _, _ in COMMANDS for name in documents.split(", ")}
    assert len(COMMANDS) >= 10 and named >= {"README.md", "docs/running.md"}


@pytest.mark.parametrize("document, command, variables", COMMANDS, ids=[f"{d}: {c}" for d, c, _ in COMMANDS])
def test_a_documented_command_dry_runs(document, command, variables, tmp_path):
    for name, value in variables.items():
        command = command.replace(f"${name}", value)
    words = shlex.split(command)[1:]
    if "--report" in words:  # a report needs a finished run: check its target file alone is accepted
        words = words[:words.index("--report")] + words[words.index("--report") + 2:]
    if "--directory" in words:  # a run folder of the user's: here inside the temporary one
        at = words.index("--directory") + 1
        words[at] = str(tmp_path / words[at])
    else:
        words += ["--directory", str(tmp_path)]
        if not any(word.startswith("--configfile") for word in words):
            words += ["--configfile", "config/config.yaml"]  # the Snakefile's own default, found from the repository
    configfile = words.index("--configfile") if "--configfile" in words else None
    if configfile is not None and "config/config.yaml" not in words:
        words.insert(configfile + 1, "config/config.yaml")  # what `configfile:` reads in the repository itself
    result = snakemake(REPO, *words, "-n", "--quiet", "rules")
    assert result.returncode == 0, f"{document}: `{command}` fails:\n{(result.stdout + result.stderr)[-2500:]}"
