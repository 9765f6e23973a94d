"""The README's method-library example runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_method_library_example_runs(capsys):
    text = README.read_text()
    section = text.split("## The method library in your own model", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section should hold one python example"
    namespace = {}
    exec(compile(blocks[0], "README.md example", "exec"), namespace)  # noqa: S102 - our own README
    assert "kept " in capsys.readouterr().out
    kept = namespace["kept_fraction"](namespace["subnetwork"])["overall"]
    assert 0 < kept < 1
    assert namespace["torch"].equal(namespace["rebuilt"](namespace["x"]), namespace["backbone"](namespace["x"]))
