"""The results page's figures read at a glance (issue 56): our two selection protocols differ in colour and line
style, each size we ran has its spread, no line crosses a size of the authors' grid we did not run, a curve we did not
run says so, the text's claims have one marker, and tick labels stay legible at README width."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from subtask_induction.arithmetic.paper import authors_curves  # noqa: E402
from subtask_induction.labels import VISION  # noqa: E402
from subtask_induction.pages import figures, results, run_records  # noqa: E402
from subtask_induction.pages.curves import our_curves  # noqa: E402

SHOWN_PX = 900   # the README's width on GitHub
MIN_TICK_PX = 9


@pytest.fixture(scope="module")
def curves():
    records = run_records.load_all()
    return {layers: our_curves(records[name].csv("arithmetic/transfer.csv"))
            for name, layers in results.PAPER_DEPTHS.items()}


def saved_width(figure, tmp_path) -> int:
    path = tmp_path / "figure.png"
    figure.savefig(path, dpi=figures.DPI, bbox_inches="tight")
    return Image.open(path).size[0]


def test_fig6_tick_labels_are_legible_at_readme_width(curves, tmp_path):
    figure = figures.fig6_figure(curves)
    sizes = [label.get_fontsize() for ax in figure.axes for label in ax.get_xticklabels() + ax.get_yticklabels()]
    scale = SHOWN_PX / saved_width(figure, tmp_path)
    smallest = min(sizes) * figures.DPI / 72 * scale
    assert smallest >= MIN_TICK_PX, f"tick labels {smallest:.1f} px tall at {SHOWN_PX} px wide"


def test_fig6_protocols_differ_in_colour_and_style_and_lines_skip_sizes_we_did_not_run(curves):
    figure = figures.fig6_figure(curves)
    styles = {figures.OURS: set(), figures.OURS_LAST: set()}
    theirs = authors_curves()
    grids = {(layers, curve): sorted(theirs[(theirs["depth"] == layers) & (theirs["kind"] == curve)]["n"])
             for layers in curves for curve in figures.AUTHORS_CURVES}
    depths = sorted(curves)
    for index, ax in enumerate(figure.axes):
        layers, curve = depths[index // 5], list(figures.AUTHORS_CURVES)[index % 5]
        for line in ax.get_lines():
            if line.get_color() in styles and line.get_linestyle() != "None":
                styles[line.get_color()].add(line.get_linestyle())
                xs = sorted(x / (1.12 if line.get_color() == figures.OURS_LAST else 1) for x in line.get_xdata())
                for a, b in zip(xs, xs[1:]):
                    between = [m for m in grids[(layers, curve)] if a + 1e-6 < m < b - 1e-6]
                    assert not between, f"{layers} layers, {curve}: a line from {a:g} to {b:g} crosses {between}"
    assert styles[figures.OURS] and styles[figures.OURS_LAST]
    assert styles[figures.OURS].isdisjoint(styles[figures.OURS_LAST]), styles


def test_fig6_shows_spread_not_run_and_one_marker_for_the_text(curves):
    figure = figures.fig6_figure(curves)
    texts = [(i, t.get_text()) for i, ax in enumerate(figure.axes) for t in ax.texts]
    not_run = {i for i, text in texts if text.startswith("not run")}
    assert not_run == {6, 8}, not_run   # 12 layers: full and complement were not run
    bars = [c for ax in figure.axes for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    assert bars, "no error bars"
    stars = [line for ax in figure.axes for line in ax.get_lines() if line.get_marker() == "*"]
    assert stars and len({(line.get_color(), line.get_markersize()) for line in stars}) == 1
    legend = figure.legends[0]
    assert sum("the paper's text" in t.get_text() for t in legend.get_texts()) == 1


def test_segments_break_where_the_authors_ran_a_size_we_did_not():
    assert figures.segments([0, 100, 250, 640, 1000], [0, 10, 16, 100, 160, 250, 400, 640, 1000]) == \
        [[0], [100], [250], [640, 1000]]
    assert figures.segments([0, 10], [0, 10, 100]) == [[0, 10]]


def test_fig6_says_why_a_curve_was_not_run_and_draws_chance(curves):
    figure = figures.fig6_figure(curves, not_run={12: "not in the plan"})
    texts = [t.get_text() for ax in figure.axes for t in ax.texts]
    assert texts.count("not run:\nnot in the plan") == 2, texts
    chance = [line for ax in figure.axes for line in ax.get_lines()
              if set(line.get_ydata()) == {figures.CHANCE_ARITHMETIC}]
    assert len(chance) == len(figure.axes)
    assert all(ax.get_ylim()[0] < figures.CHANCE_ARITHMETIC for ax in figure.axes)


def paired(models=("si", "scratch"), runs=(0, 1, 2)):
    per_run = pd.DataFrame([{"model": m, "chain": c, "pooled_accuracy": 0.5 if m == "si" else 0.2}
                            for m in models for c in runs])
    means = per_run.groupby("model", as_index=False)["pooled_accuracy"].mean()
    return means, per_run


def test_paired_panels_follow_each_run_across_bars_with_its_own_marker():
    means, per_run = paired()
    figure = figures.paired_panels_figure(means, per_run, "model", "chain",
                                          {"pooled_accuracy": ("pooled accuracy", "on pooled images")},
                                          ["si", "scratch"], "vision", title="t", highlight="si",
                                          chance={"pooled_accuracy": 1 / 16}, chance_label="chance", run_name="chain")
    ax = figure.axes[0]
    assert ax.get_ylabel() and ax.get_ylim()[1] == 100
    collections = [c for c in ax.collections if len(c.get_offsets()) == 2]
    assert len(collections) == 3, "one marker set per run, spanning both bars"
    dots = {tuple(d) for c in collections for d in c.get_offsets()}
    assert len(dots) == 6, "equal values of two runs drawn on one spot"
    joins = [line for line in ax.get_lines() if len(line.get_xdata()) == 2 and line.get_linestyle() == "-"]
    assert len(joins) == 3, "a line joins each run's values across the bars"
    assert any(set(line.get_ydata()) == {100 / 16} for line in ax.get_lines()), "no chance line"
    legend = {t.get_text() for t in figure.legends[0].get_texts()}
    assert legend == {"mean over chains (SI in blue)", "run: chain 0", "run: chain 1", "run: chain 2", "chance"}
    key = "\n".join(t.get_text() for t in figure.texts)
    assert VISION["si"].key() in key and VISION["scratch"].key() in key and "pooled accuracy: on pooled images" in key


def test_paired_panels_call_a_users_own_variant_by_its_config_name():
    means, per_run = paired(models=("si", "my_variant"))
    figure = figures.paired_panels_figure(means, per_run, "model", "chain",
                                          {"pooled_accuracy": ("pooled accuracy", "on pooled images")},
                                          ["si", "my_variant"], "vision", title="t", highlight="si",
                                          chance={}, chance_label="chance", run_name="chain")
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["SI", "my_variant"]
