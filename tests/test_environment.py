"""One source of truth for the software: the pinned requirements, the conda environment and the venv agree,
and the steps reach the package through PYTHONPATH alone, in a Python that has the dependencies but not the
package (a conda env or a cluster's Python)."""

import os
import re
import site
import subprocess
import tomllib
import venv
from importlib import metadata

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from harness import REPO, copy_workflow, smoke_config, snakemake


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path, applicable_here=False) -> dict[str, str]:
    """name -> version of a uv-compiled lock; every pin carries its wheels' hashes. With `applicable_here`,
    only the pins whose marker holds on this machine (the lock is universal: win32-only pins, say)."""
    found = {}
    for entry in re.split(r"\n(?=\S)", path.read_text().strip()):  # a pin, its hashes and its "# via" lines
        if entry.startswith("#"):
            continue
        requirement = Requirement(entry.split("\\")[0].strip())
        assert "--hash=sha256:" in entry, f"{path}: {requirement.name} has no hash"
        (version,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if not applicable_here or requirement.marker is None or requirement.marker.evaluate():
            found[normalise(requirement.name)] = version
    return found


def test_requirements_pin_every_dependency_and_the_conda_environment_pins_the_same():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = pins(REPO / "envs/requirements.txt")
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = normalise(requirement.name)
        assert name in runtime, f"{name} is a dependency but not pinned in envs/requirements.txt"
        assert requirement.specifier.contains(Version(runtime[name])), (name, runtime[name], str(requirement.specifier))
    environment = yaml.safe_load((REPO / "envs/subtask-induction.yaml").read_text())
    pip = next(item["pip"] for item in environment["dependencies"] if isinstance(item, dict))
    assert {normalise(Requirement(line).name): Requirement(line).specifier for line in pip} == {
        name: Requirement(f"{name}=={version}").specifier for name, version in runtime.items()}
    # the test lock is the runtime lock plus the test tools, at the same versions
    test = pins(REPO / "envs/requirements-test.txt")
    assert {name: test.get(name) for name in runtime} == runtime and "pytest" in test
    # the env file must not depend on its location: Snakemake copies it to .snakemake/conda/<hash>.yaml
    assert not [line for line in pip if line.startswith(("-e", "-r", ".", "/", "file:")) or "../" in line]
    python = next(item for item in environment["dependencies"] if isinstance(item, str) and item.startswith("python="))
    assert Requirement(f"python{project['requires-python']}").specifier.contains(Version(python.split("=")[1]))


def test_this_python_holds_the_pinned_versions():
    wanted = pins(REPO / "envs/requirements-test.txt", applicable_here=True)
    installed = {normalise(d.metadata["Name"]): d.version for d in metadata.distributions()}
    differ = {name: (version, installed.get(name)) for name, version in wanted.items() if installed.get(name) != version}
    assert not differ, f"the venv differs from envs/requirements*.txt (pinned, installed): {differ}; reinstall or `make lock`"


def dependencies_only_python(folder):
    """A Python that sees every package this one has, except this project: a fresh venv whose .pth file
    adds a mirror of this interpreter's site-packages without the project (and without its editable hook)."""
    mirror = folder / "site"
    mirror.mkdir(parents=True)
    for packages in site.getsitepackages():
        for entry in os.scandir(packages):
            name = entry.name.lower()
            if "subtask_induction" in name or "subtask-induction" in name or name.endswith((".pth", ".egg-link")):
                continue
            if not (mirror / entry.name).exists():
                (mirror / entry.name).symlink_to(entry.path)
    venv.create(folder / "env", with_pip=False)
    lib = next((folder / "env/lib").glob("python3*")) / "site-packages"
    (lib / "dependencies.pth").write_text(f"{mirror}\n")
    return folder / "env/bin"


def test_a_step_runs_where_the_package_is_not_installed(tmp_path):
    bin_dir = dependencies_only_python(tmp_path / "python")
    clean = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    probe = subprocess.run([str(bin_dir / "python"), "-c", "import torch, subtask_induction"], env=clean,
                           capture_output=True, text=True)
    assert "No module named 'subtask_induction'" in probe.stderr, probe.stderr  # torch imports, the package does not
    workdir = copy_workflow(tmp_path / "wf", smoke_config("arithmetic"))
    target = "results/arithmetic/data/base/a+ab.pt"
    result = snakemake(workdir, target, "--cores", "1",
                       env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": ""})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (workdir / target).stat().st_size > 0
