"""Prose that cannot contradict the code: every pointer to a section ("(README, "X")", "(docs/running.md, "X")", a
link with an #anchor) names a heading that exists; the CHANGELOG's newest entry names only keys, folders and fields
that exist, or marks a name as old; lists of config files in prose equal the files."""

import re

import yaml

from harness import REPO

# Where hand-written pointers live: the docs (not their history, nor the CHANGELOG's older entries: they quote the pages
# of their version; the newest entry is test_the_changelog_s_newest_entry_names_what_exists's), the configs and
# their generated README, the schema's descriptions, the profiles, the Makefile and the code's docstrings and comments
SOURCES = sorted({*REPO.glob("README.md"), *(REPO / "docs").glob("*.md"),
                  *(REPO / "config").rglob("*.yaml"), *(REPO / "config").glob("*.md"), *(REPO / "profiles").rglob("*.yaml"),
                  REPO / "workflow" / "schemas" / "config.schema.yaml", REPO / "Makefile", REPO / "Snakefile",
                  *(REPO / "workflow").rglob("*.py"), *(REPO / "workflow" / "rules").glob("*.smk"),
                  *(REPO / "benchmarks").glob("*.py")})
POINTER = re.compile(r"\((README|CHANGELOG|docs/(?:history/)?[\w.-]+\.md|config/README\.md)(?:\.md)?, \"?([^\")]+?)\"?[;)]")


def flat(text: str) -> str:
    """Comment markers and line breaks of a wrapped sentence out: `(README, "The paper's\\n# settings")` reads whole."""
    return re.sub(r"\s*\n\s*(?:#+|//)?\s*", " ", text)


def headings(document: str) -> list[str]:
    path = REPO / (document if document.endswith(".md") else f"{document}.md")
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return [line.lstrip("#").strip() for line in text.splitlines() if re.match(r"#{1,6} ", line)]


def sections(document: str) -> list[str]:
    """What a pointer may name: a heading, or the bold label that opens an entry (docs/decisions.md's are bullets)."""
    path = REPO / (document if document.endswith(".md") else f"{document}.md")
    labels = re.findall(r"^(?:- )?\*\*(.+?)\*\*", path.read_text(), flags=re.M)
    return headings(document) + labels


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower().replace("`", "")).replace(" ", "-")


def pointers():
    found = []
    for path in SOURCES:
        for document, section in POINTER.findall(flat(path.read_text())):
            found.append((str(path.relative_to(REPO)), document, section.strip()))
    return found


def test_every_pointer_to_a_section_names_a_heading_that_exists():
    assert len(pointers()) > 20   # the pattern still finds the pointers
    broken = [f"{where}: ({document}, {section!r})" for where, document, section in pointers()
              if not any(h.lower().startswith(section.lower()) for h in sections(document))]
    assert broken == [], "pointers to sections that do not exist:\n" + "\n".join(broken)


LINK = re.compile(r"\]\(([\w./-]*\.md)?#([\w-]+)\)")


def test_every_section_link_resolves_to_a_heading():
    broken = []
    for path in SOURCES:
        if path.suffix != ".md":
            continue
        for target, anchor in LINK.findall(path.read_text()):
            document = (path.parent / target).resolve() if target else path
            if not document.exists():
                continue   # a missing file is test_pages' to report
            text = document.read_text()
            anchors = {slug(h) for h in headings(str(document.relative_to(REPO)))} | set(
                re.findall(r'<a id="([\w-]+)"', text))
            if anchor not in anchors:
                broken.append(f"{path.relative_to(REPO)}: {target}#{anchor}")
    assert broken == [], "links to anchors no heading makes:\n" + "\n".join(broken)


def newest_changelog_entry() -> str:
    text = (REPO / "CHANGELOG.md").read_text()
    return text.split("\n## ")[1]


def known_names() -> set[str]:
    """Every name a reader can find today: the schema's keys, the points' fields and folder words, the record tables'
    columns, the package's modules, functions and classes, the config and make files' names."""
    names = set()

    def keys(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    names.update(value)
                keys(value)
        elif isinstance(node, list):
            for value in node:
                keys(value)

    keys(yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()))
    for path in (REPO / "workflow").rglob("*.py"):
        source = path.read_text()
        names.add(path.stem)
        names.update(re.findall(r"^\s*(?:def|class) (\w+)", source, re.M))
        names.update(re.findall(r"^(\w+) =", source, re.M))
        names.update(re.findall(r"^    (\w+): ", source, re.M))   # dataclass fields (points.py's identities)
        names.update(re.findall(r"[\"'](\w+)[\"']", source))      # the keys and columns the code writes
    for path in (REPO / "docs" / "data").rglob("*.csv"):
        names.update(path.read_text().splitlines()[0].split(","))
    for path in (REPO / "workflow" / "rules").glob("*.smk"):
        names.update(re.findall(r"\b(\w+)\(", path.read_text()))   # the Snakemake functions the rules call
    names.update(re.search(r"^\.PHONY: (.+)$", (REPO / "Makefile").read_text(), re.M).group(1).split())
    return names


COMMANDS = ("make ", "pytest ", "snakemake ", "python ", "git ", "pip ")


def path_exists(name: str, known: set[str]) -> bool:
    """A path or folder pattern (`docs/data/<run>/planned/`, `.../replicate{r}/`) exists when it matches a file of the
    repository, or (outputs: results/, logs/) when its literal words are names the code knows."""
    pattern = re.sub(r"<[^>]+>|\{[^}]+\}|\.\.\.", "*", name.split()[0].rstrip(",/"))
    if any(REPO.glob(pattern)) or any(REPO.glob("**/" + pattern)):
        return True
    words = [w for w in re.split(r"[^A-Za-z_]+", re.sub(r"<[^>]+>|\{[^}]+\}", "", name)) if len(w) > 2]
    return name.startswith(("results/", "logs/")) and all(w in known for w in words)


# A sentence may name what is gone only to say so
OLD = re.compile(r"\b(was|were|formerly|before|old|renamed|removed|moved|gone|until|then called|no longer|instead)\b",
                 re.I)


def test_the_changelog_s_newest_entry_names_what_exists():
    """Each backticked name of the newest entry exists today (a key, a field, a column, a module, a function, a file,
    a folder pattern), or stands in a sentence that marks it old."""
    known = known_names()
    stale = []
    for sentence in re.split(r"(?<=\.)\s+(?=[A-Z*(`-])", flat(newest_changelog_entry())):
        for name in re.findall(r"`([^`]+)`", sentence):
            if name.startswith(COMMANDS) or "(" in name:
                continue   # a command line or an expression, not a name
            if "/" in name or re.search(r"\.(smk|py|ya?ml|md|cff|csv|json|txt)\b", name):
                exists = path_exists(name, known)
            elif "{" in name:   # a folder pattern, `replicate{r}`: a point's folder template has `/replicate{`
                exists = f"/{name.split('{')[0]}{{" in (REPO / "workflow" / "subtask_induction" / "points.py").read_text()
            else:
                words = [w for w in re.split(r"[^\w]+", name) if w and not w.isdigit()]
                exists = name in known or all(w in known or len(w) < 3 for w in words)
            if not exists and not OLD.search(sentence):
                stale.append(f"`{name}` in: {sentence[:160]}")
    assert stale == [], "the newest CHANGELOG entry names what no longer exists:\n" + "\n".join(stale)


def test_the_paper_overlays_table_lists_every_overlay_file():
    """docs/running.md's overlay table names each config/paper_*.yaml and each config/paper_hypotheses/*.yaml, and
    says no more than a file does (the hypotheses are not 'one setting each': the whole pipeline changes all)."""
    text = (REPO / "docs" / "running.md").read_text()
    table = text.split("| overlay (after `config/paper.yaml`) |")[1].split("\n\n")[0]
    files = sorted(str(p.relative_to(REPO)) for p in [*(REPO / "config").glob("paper_*.yaml"),
                                                     *(REPO / "config" / "paper_hypotheses").glob("*.yaml")])
    missing = [f for f in files if f"`{f}`" not in table]
    assert missing == [], f"docs/running.md's overlay table leaves out {missing}"
    assert "*.yaml" not in table


def test_make_test_paper_is_described_by_the_families_it_runs():
    """`make test-paper` runs the paper_slice tests; the Makefile and docs/own-data.md name exactly their families."""
    source = (REPO / "tests" / "test_paper_slice.py").read_text()
    families = set(re.findall(r'"families": \["(\w+)"\]', source))
    assert families == {"vision", "submasking"}, families   # if this changes, the sentences below must too
    makefile = (REPO / "Makefile").read_text()
    comment = re.search(r"((?:^#.*\n)+)test-paper:", makefile, re.M).group(1)
    own_data = flat((REPO / "docs" / "own-data.md").read_text())
    sentence = next(s for s in re.split(r"(?<=\.)\s", own_data) if "`make test-paper`" in s)
    for where, text in (("Makefile", comment), ("docs/own-data.md", sentence)):
        assert "each family" not in text and all(f in text for f in families), (where, text)
