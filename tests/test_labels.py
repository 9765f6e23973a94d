"""One vocabulary (issue 66): every transfer kind, vision model, submasking adaptation and default data set has one
label in labels.py; the figures drawn from the stored records name things only by those labels and show no markup;
the glossary's list of names is the registry's."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

from subtask_induction import labels  # noqa: E402
from subtask_induction.arithmetic.paper import AUTHORS_CURVES  # noqa: E402
from subtask_induction.method.kinds import KINDS  # noqa: E402
from subtask_induction.pages import figures, results, run_records  # noqa: E402
from subtask_induction.pages.__main__ import REPO  # noqa: E402
from subtask_induction.submasking.adaptations import ADAPTATIONS  # noqa: E402


def test_every_kind_adaptation_default_model_and_data_set_has_a_label():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert set(KINDS) <= set(labels.TRANSFER)
    assert set(ADAPTATIONS) <= set(labels.SUBMASKING)
    assert {"base", "subnetwork", *config["vision"]["transfer"]["variants"]} <= set(labels.VISION)
    tasks = [task["name"] for task in config["submasking"]["tasks"]]
    assert all(labels.DATA[task].classes for task in tasks)
    assert {b["name"] for b in config["submasking"]["backbones"]} <= set(labels.DATA)
    assert config["vision"]["data"]["source"] in labels.DATA


def test_a_name_outside_the_registry_is_called_by_its_config_name():
    assert labels.label("vision", "my_variant").word == "my_variant"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Every figure `make docs` draws from the stored records, by file name, not saved."""
    shown = {}
    keep = figures._save
    figures._save = lambda figure, path: shown.setdefault(path.name, figure) and path
    try:
        results.figures(run_records.load_all(), tmp_path_factory.mktemp("docs"))
    finally:
        figures._save = keep
    yield shown
    for figure in shown.values():
        plt.close(figure)


def texts(figure) -> list[str]:
    found = [t.get_text() for t in figure.texts] + [figure._suptitle.get_text() if figure._suptitle else ""]
    for ax in figure.axes:
        found += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
        found += [t.get_text() for t in ax.get_xticklabels()]
    for legend in figure.legends:
        found += [t.get_text() for t in legend.get_texts()]
    return found


def test_figures_name_models_only_by_the_registry_and_show_no_markup(drawn):
    assert {"fig6.png", "vision_table1.png", "submasking.png", "subnetworks.png"} <= set(drawn)
    for name, figure in drawn.items():
        assert not [t for t in texts(figure) if "`" in t], f"{name}: backticks drawn literally"
    vision, submasking = drawn["vision_table1.png"], drawn["submasking.png"]
    words = {label.word for label in labels.VISION.values()}
    assert {t.get_text() for ax in vision.axes for t in ax.get_xticklabels()} <= words
    words = {label.word for label in labels.SUBMASKING.values()}
    assert {t.get_text() for ax in submasking.axes for t in ax.get_xticklabels()} <= words
    assert {ax.get_title() for ax in submasking.axes} <= {label.word for label in labels.DATA.values()}
    titles = [ax.get_title() for ax in drawn["fig6.png"].axes if ax.get_title()]
    assert titles == [labels.TRANSFER[curve].word for curve in AUTHORS_CURVES]


def test_the_vision_figure_names_its_data_and_holds_blur_pooled_scratch_only_on_the_default_s_chains(drawn):
    figure = drawn["vision_table1.png"]
    assert labels.DATA["world"].word in figure._suptitle.get_text()
    ticks = {t.get_text() for t in figure.axes[0].get_xticklabels()}
    # blur-pooled scratch stands beside the default's models only where the beyond record's SI runs are the default's
    # own (the same chains, the same numbers); a beyond record of an older default is left out, not paired
    records = run_records.load_all()
    si = [records[name].csv("vision/chains.csv").query("model == 'si'").sort_values("chain").reset_index(drop=True)
          for name in ("default", "beyond")]
    paired = si[0].equals(si[1][si[0].columns])
    assert (labels.VISION["scratch_blurpool"].word in ticks) == paired


def test_the_glossary_lists_the_registry():
    assert labels.glossary() in (REPO / "docs" / "glossary.md").read_text()
