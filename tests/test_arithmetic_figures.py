"""Arithmetic figures: curves of different experiments are never averaged together."""

import itertools

import numpy as np
import pandas as pd
import pytest

from subtask_induction.arithmetic import figures


def synthetic_transfer():
    """Two experiments on the same target: everything of one scores 1.0, of the other 0.0."""
    rows = []
    variants = {"si": ("subnetwork", 0.0, True), "si_fresh": ("subnetwork", 0.0, False), "si_lr": ("subnetwork", 0.1, True),
                "sampled": ("sampled", 0.0, True), "random": ("random", 0.0, False), "full": ("full", 0.0, True)}
    for (base, subtask, score), (variant, (method, scale, inherit)), layers, n, seed, protocol in itertools.product(
            [("a+ab", "ab", 1.0), ("a2+b2", "a2", 0.0)], variants.items(), [2, 3], [0, 10], [0, 1],
            ["eval", "train_holdout", "last"]):
        rows.append({"base": base, "subtask": subtask, "target": "a2+ab", "layers": layers, "variant": variant,
                     "method": method, "lr_scale": scale, "inherit_unmasked": inherit, "n": n, "seed": seed,
                     "protocol": protocol, "test_accuracy": score})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("draw", [
    lambda t, out: figures.fig3(t, out, "train_holdout"),
    lambda t, out: figures.fig6(t, out, "train_holdout"),
    lambda t, out: figures.fig7(t, out, "train_holdout"),
    lambda t, out: figures.protocols_figure(t, out, ["eval", "train_holdout", "last"]),
    lambda t, out: figures.inheritance(t, out, "train_holdout", 10),
    lambda t, out: figures.dial(t, out, "train_holdout", 10),
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
    lambda t, out: figures.fig3(t, out, "train_holdout"),
    lambda t, out: figures.fig7(t, out, "train_holdout"),
    lambda t, out: figures.inheritance(t, out, "train_holdout", 10),
    lambda t, out: figures.dial(t, out, "train_holdout", 10),
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
    text = transfer_markdown(transfer, ["train_holdout"])
    assert "| full | 2 |" in text and "| si | 2, 3 |" in text


@pytest.mark.parametrize("figure", [figures.fig3, figures.fig6])
def test_the_papers_stated_values_are_marked_only_when_asked_and_only_on_its_experiment(figure, monkeypatch, tmp_path):
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda fig, outdir, name: drawn.append(fig) or [])
    figure(synthetic_transfer(), tmp_path, "train_holdout", paper_reference=True)
    figure(synthetic_transfer(), tmp_path, "train_holdout")
    marked, plain = drawn
    labels = [[text for text in ax.get_legend_handles_labels()[1] if text.startswith("paper:")] for ax in marked.axes]
    assert any("50.6%" in " ".join(axis) for axis in labels)  # the ab of a+ab -> a2+ab row
    assert any(not axis for axis in labels)  # the other experiment's row carries no paper values
    assert not any(text.startswith("paper:") for ax in plain.axes for text in ax.get_legend_handles_labels()[1])


def test_the_paper_comparison_finds_where_each_curve_reaches_near_perfect():
    from subtask_induction.arithmetic.paper import paper_comparison_markdown

    rows = []
    curves = {"si": {0: 0.5, 100: 0.95, 1000: 0.995, 10000: 1.0}, "sampled": {0: 0.5, 100: 0.6, 1000: 0.9, 10000: 0.99},
              "random": {0: 0.4, 100: 0.5, 1000: 0.6, 10000: 0.7}}
    for (variant, curve), seed, protocol in itertools.product(curves.items(), [0, 1], ["eval", "train_holdout", "last"]):
        for n, accuracy in curve.items():
            rows.append({"base": "a+ab", "subtask": "ab", "target": "a2+ab", "layers": 2, "variant": variant, "n": n,
                         "seed": seed, "protocol": protocol, "test_accuracy": accuracy, "top_k": None, "discovery_rows": None})
    base = pd.DataFrame([{"base": "a+ab", "layers": 2, "chain": 0, "test_accuracy": 0.9995}])
    kept = pd.DataFrame([{"base": "a+ab", "subtask": "ab", "layers": 2, "chain": 0, "kept_percent": 9.5,
                          "l0_weight": 1e-7, "test_accuracy": 1.0}])
    text = paper_comparison_markdown(base, kept, pd.DataFrame(rows))
    assert "| kept % of the masked weights (Table 3) | 7.68 | 9.50 (λ 1e-07) |" in text
    assert "| si | 0.500 ± 0.000 / 0.500 ± 0.000 |" in text and "| 1,000 / 1,000 |" in text
    assert "SI reaches 0.99 at n = 1,000 (paper: 1,000); sampled at n = 10,000, 10.0x SI's (paper: about 6x)" in text
    assert "random init's mean over the n grid 55.0% (paper 50.6%" in text
