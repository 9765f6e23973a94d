"""Arithmetic figures: curves of different experiments are never averaged together."""

import itertools

import numpy as np
import pandas as pd
import pytest

from subtask_induction.arithmetic import figures
from subtask_induction.arithmetic.paper import AUTHORS_CURVES, PAPER_STYLE
from subtask_induction.labels import TRANSFER


def synthetic_transfer():
    """Two experiments on the same target: everything of one scores 1.0, of the other 0.0."""
    rows = []
    variants = {"si": ("subnetwork", 0.0, True), "si_fresh": ("subnetwork", 0.0, False), "si_lr": ("subnetwork", 0.1, True),
                "sampled": ("sampled", 0.0, True), "random": ("random", 0.0, False), "full": ("full", 0.0, True)}
    for (base, subtask, score), (variant, (kind, scale, inherit)), layers, n, seed, protocol in itertools.product(
            [("a+ab", "ab", 1.0), ("a2+b2", "a2", 0.0)], variants.items(), [2, 3], [0, 10], [0, 1],
            ["eval", "last"]):
        rows.append({"base": base, "subtask": subtask, "target": "a2+ab", "layers": layers, "variant": variant,
                     "kind": kind, "lr_scale": scale, "inherit_unmasked": inherit, "n": n, "chain": 0, "replicate": seed,
                     "protocol": protocol, "test_accuracy": score, "paper_rows": True})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("draw", [
    lambda t, out: figures.fig3(t, out, "last"),
    lambda t, out: figures.fig6(t, out, "last"),
    lambda t, out: figures.fig7(t, out, "last"),
    lambda t, out: figures.protocols_figure(t, out, ["eval", "last"]),
    lambda t, out: figures.inheritance(t, out, "last", 10),
    lambda t, out: figures.dial(t, out, "last", 10),
])
def test_figures_keep_experiments_apart(draw, monkeypatch, tmp_path):
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda figure, outdir, name: drawn.append(figure) or [])
    draw(synthetic_transfer(), tmp_path)
    figure, = drawn
    seen = set()
    for ax in figure.axes:
        title = ax.get_title()
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), dtype=float)
            if len(y) == 0:
                continue
            assert len(set(y.tolist())) == 1, f"a curve in '{title}' mixes experiments: {y}"
            if "->" in title:  # curve panels are titled by their experiment
                expected = 1.0 if title.startswith("ab of a+ab") else 0.0
                assert y[0] == expected, title
            seen.add(float(y[0]))
    assert seen == {0.0, 1.0}, "both experiments must be drawn"


@pytest.mark.parametrize("draw", [
    lambda t, out: figures.fig3(t, out, "last"),
    lambda t, out: figures.fig7(t, out, "last"),
    lambda t, out: figures.inheritance(t, out, "last", 10),
    lambda t, out: figures.dial(t, out, "last", 10),
])
def test_curves_in_one_panel_average_the_same_depths(draw, monkeypatch, tmp_path):
    """Analyses run at fewer depths (the default runs them at 2 layers only): a panel must not compare
    si averaged over 2 and 3 layers with a variant that has only 2 layers. Depth 3 scores 0, depth 2 scores 1."""
    transfer = synthetic_transfer()
    transfer = transfer[transfer["base"] == "a+ab"].copy()
    transfer["test_accuracy"] = np.where(transfer["layers"] == 2, 1.0, 0.0)
    only_two = ~transfer["variant"].isin(["si", "sampled", "random"]) & (transfer["layers"] == 3)
    transfer = transfer[~only_two]
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda figure, outdir, name: drawn.append(figure) or [])
    draw(transfer, tmp_path)
    figure, = drawn
    for ax in figure.axes:
        labels = [line.get_label() for line in ax.get_lines() if len(line.get_ydata())]
        means = {float(np.mean(line.get_ydata())) for line in ax.get_lines() if len(line.get_ydata())}
        if "mean over depths" in ax.get_title():  # fig3: only the variants that ran at every depth
            assert not any(label.startswith(("si_fresh", "full", "si_lr")) for label in labels), labels
            continue
        assert len(means) <= 1, f"'{ax.get_title()}' compares curves over different depths: {means}"


def test_transfer_table_names_each_variants_depths():
    from subtask_induction.arithmetic.tables import transfer_markdown

    transfer = synthetic_transfer()
    transfer = transfer[~((transfer["variant"] == "full") & (transfer["layers"] == 3))]
    text = transfer_markdown(transfer, ["last"])
    assert "| full | 2 |" in text and "| si | 2, 3 |" in text


@pytest.mark.parametrize("figure", [figures.fig3, figures.fig6])
def test_the_authors_curves_and_the_texts_values_are_drawn_only_when_asked_and_only_on_its_experiment(
        figure, monkeypatch, tmp_path):
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda fig, outdir, name: drawn.append(fig) or [])
    figure(synthetic_transfer(), tmp_path, "last", paper_reference=True)
    figure(synthetic_transfer(), tmp_path, "last")
    marked, plain = drawn
    reference = lambda text: text.startswith(("paper text:", "authors:"))  # noqa: E731
    labels = [[text for text in ax.get_legend_handles_labels()[1] if reference(text)] for ax in marked.axes]
    assert any("random init 50.6% at n = 1,000" in " ".join(axis) for axis in labels)  # the ab of a+ab -> a2+ab row
    # the 2-layer panel of the main experiment carries the authors' five curves (their figure has no 3 layers)
    assert any({f"authors: {TRANSFER[kind].word}" for kind in AUTHORS_CURVES} <= set(axis) for axis in labels)
    assert any(not axis for axis in labels)  # the other experiment's row carries no paper values
    assert not any(reference(text) for ax in plain.axes for text in ax.get_legend_handles_labels()[1])


def test_fig6_draws_the_papers_encoding_and_the_authors_2_layer_values(monkeypatch, tmp_path):
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda fig, outdir, name: drawn.append(fig) or [])
    figures.fig6(synthetic_transfer(), tmp_path, "last", paper_reference=True)
    panel = next(ax for ax in drawn[0].axes if ax.get_title() == "ab of a+ab -> a2+ab: 2 layers (last)")
    lines = {line.get_label(): line for line in panel.get_lines()}
    for variant, kind in (("si", "subnetwork"), ("sampled", "sampled"), ("random", "random"), ("full", "full")):
        ours, theirs = lines[variant], lines[f"authors: {TRANSFER[kind].word}"]
        assert ours.get_marker() == PAPER_STYLE[kind]["marker"] and ours.get_color() == PAPER_STYLE[kind]["color"]
        assert theirs.get_color() == ours.get_color() and theirs.get_linestyle() == "--"
    assert lines["si_fresh"].get_color() not in {style["color"] for style in PAPER_STYLE.values()} or \
        lines["si_fresh"].get_marker() == "."  # not the paper's SI: not drawn as it
    si = lines[f"authors: {TRANSFER['subnetwork'].word}"]
    assert dict(zip(si.get_xdata(), si.get_ydata()))[1000] == pytest.approx(0.932)  # their 2-layer panel


def test_the_paper_comparison_sets_ours_beside_the_text_and_the_authors_curves():
    from subtask_induction.arithmetic.paper import paper_comparison_markdown

    rows = []
    curves = {"si": ("subnetwork", {0: 0.5, 100: 0.95, 1000: 0.995, 6400: 1.0}),
              "sampled": ("sampled", {0: 0.5, 100: 0.6, 1000: 0.9, 6400: 0.99}),
              "sampled_fresh": ("sampled", {0: 0.1, 100: 0.1, 1000: 0.1, 6400: 0.1}),  # not the paper's form
              "random": ("random", {0: 0.4, 100: 0.5, 1000: 0.6, 6400: 0.7}),
              "sampled_authors": ("sampled_authors", {0: 0.3, 100: 0.3, 1000: 0.55, 6400: 0.98}),
              "si_authors_init": ("subnetwork", {1000: 0.2})}  # an authors'-code setting: beside SI, not in it
    for (variant, (kind, curve)), seed, protocol in itertools.product(curves.items(), [0, 1], ["eval", "last"]):
        for n, accuracy in curve.items():
            rows.append({"base": "a+ab", "subtask": "ab", "target": "a2+ab", "layers": 2, "variant": variant, "n": n,
                         "kind": kind, "lr_scale": 0.0,
                         "inherit_unmasked": variant in ("si", "sampled", "si_authors_init"),
                         "chain": 0, "replicate": seed, "protocol": protocol, "test_accuracy": accuracy + (0.01 if protocol == "eval" else 0),
                         "top_k": None, "discovery_rows": None, "paper_rows": True,
                         "masked_init_std": 0.02 if variant == "si_authors_init" else None})
    base = pd.DataFrame([{"base": "a+ab", "layers": 2, "chain": 0, "test_accuracy": 0.9995}])
    kept = pd.DataFrame([{"base": "a+ab", "subtask": "ab", "layers": 2, "chain": 0, "kept_percent": 9.5,
                          "l0_weight": 1e-7, "test_accuracy": 1.0}])
    text = paper_comparison_markdown(base, kept, pd.DataFrame(rows))
    assert "the paper's rows" in text
    assert "| kept % of the masked weights (Table 3) | 7.68 | 9.50 (λ 1e-07) |" in text
    # the authors' 2-layer values at our sizes; their smallest n on their own grid (0.95 and 0.99 at 1,600)
    assert "| SI | authors' figure | 0.318 | 0.442 | 0.932 | 1.000 | 1,600 | 1,600 |" in text
    assert ("| SI | ours `last` (si) | 0.500 ± 0.000 (2) | 0.950 ± 0.000 (2) | 0.995 ± 0.000 (2) | "
            "1.000 ± 0.000 (2) | 100 | 1,000 |") in text
    assert "| `sampled` | ours `eval` (sampled) |" in text and "sampled_fresh" not in text
    # the authors' code's control beside their curve, not counted as ours
    assert ("| `sampled` | ours `last` (sampled_authors: N−k of the base's weights frozen, as the authors' "
            "code) | 0.300 ± 0.000 (2) | 0.300 ± 0.000 (2) | 0.550 ± 0.000 (2) | 0.980 ± 0.000 (2) | 6,400 | "
            "not by 6,400 |") in text
    assert ("| SI | ours `last` (si_authors_init: fresh masked weights N(0, 0.02), as the authors' "
            "code) |  |  | 0.200 ± 0.000 (2) |  | not by 1,000 | not by 1,000 |") in text
    assert "| SI near-perfect with 1,000 rows | ≥ 0.99 | 0.932 | 1.005 ± 0.000 (2) | 0.995 ± 0.000 (2) |" in text
    assert ("| random init trained on the same data (1,000 rows) | 0.506 | 0.461 | 0.610 ± 0.000 (2) | "
            "0.600 ± 0.000 (2) |") in text
    # sampled reaches 0.99: the authors' at 6,400 against SI's 1,600 (4x); ours `last` at 6,400 against 1,000
    assert "| 6x | 4.0x (6,400 / 1,600) | 6.4x (6,400 / 1,000) | 6.4x (6,400 / 1,000) |" in text
