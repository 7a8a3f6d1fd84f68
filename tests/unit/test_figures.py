"""Every panel drawn from a small table with failed and invalid points: what it shows (axes,
series, number of points, values), not only that a file exists."""

from __future__ import annotations

import os
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import BOUNDS, REPO
from snnbench import families, figures, planning
from snnbench.dev import synthetic
from snnbench.network import references
from snnbench.network.models import pd14
from snnbench.network.phases import PHASES
from snnbench.planning import panels
from snnbench.schemas import schema_default
from snnbench.tables import collect

TOLERANCE = {"ks_alpha": 0.001, "ks_margin": {"rate": 0.03, "cv_isi": 0.03, "correlation": 0.06}}
EXPERIMENT = synthetic.experiment(simulators=("nest", "brian2-cpp"), threads=(1, 2, 4, 8), seeds=(1, 2, 3))
SPECS = planning.expand_points(EXPERIMENT)
FAILED = next(s["path"] for s in SPECS if s["simulator"] == "nest" and s["resources"]["virtual_processes"] == 1)
IMPLAUSIBLE = next(s["path"] for s in SPECS if s["simulator"] == "nest" and s["resources"]["virtual_processes"] == 2)
OFF_REFERENCE = next(s["path"] for s in SPECS if s["simulator"] == "brian2-cpp" and s["seed"] == 3)
VPS = [1, 2, 4, 8]
SERIES = ["brian2-cpp", "nest"]  # series appear in the order of the table (sorted by simulator)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    paths = synthetic.write_experiment(
        root, EXPERIMENT, failed=[FAILED], implausible=[IMPLAUSIBLE], off_reference=[OFF_REFERENCE]
    )
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    points["path"] = points["path"].map(str)
    stats = [root / path / "stats.npz" for path in references.figure_points(SPECS)]
    return points, stats


@pytest.fixture
def data(tables):
    return figures.PanelData(tables[0].copy(), series="simulator")


def draw(name, data):
    figures.style()
    fig, ax = plt.subplots()
    figures.PANELS[name].draw(ax, data)
    return fig, ax


def series_lines(ax) -> dict[str, np.ndarray]:
    """The lines of a seaborn line plot with markers, by legend label: label -> (x, y)."""
    lines = [line for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    return {label: np.array(line.get_xydata()) for label, line in zip(labels, lines, strict=False)}


CROSSES = ("failed / invalid", "outside: invalid", "invalid (at its value)", "failed / no value (on the axis)")


def crosses(ax) -> np.ndarray:
    marked = [c for c in ax.collections if c.get_label() in CROSSES]
    return np.concatenate([c.get_offsets() for c in marked]) if marked else np.zeros((0, 2))


def test_a_value_less_invalid_point_sits_on_the_axis_whatever_the_limits_and_the_legend_lists_what_is_drawn(data):
    """The default experiment's invalid 2-thread points have no efficiency (NaN): drawn at the lower y limit
    of the moment, they landed at a made-up value once efficiency() reset the axis (issue 52)."""
    points = data.points.copy()
    invalid = points.index[~points["valid"]]
    points.loc[invalid, "efficiency"] = np.nan
    _, ax = draw("efficiency", figures.PanelData(points, series="simulator"))
    on_axis = [c for c in ax.collections if c.get_label() == "failed / no value (on the axis)"]
    assert len(on_axis) == 1 and len(on_axis[0].get_offsets()) == len(invalid)
    assert on_axis[0].get_offset_transform() == ax.get_xaxis_transform() and set(on_axis[0].get_offsets()[:, 1]) == {0}
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "failed / no value (on the axis)" in labels and "invalid (at its value)" not in labels


def medians(points, column, simulator) -> list[float]:
    ok = points[points["valid"] & (points["simulator"] == simulator)]
    return ok.groupby("vps")[column].median().reindex(VPS).tolist()


def test_table_marks_failed_implausible_and_off_reference_points(tables):
    points, _ = tables
    by_path = points.set_index("path")
    assert by_path.loc[FAILED, "status"] == "failed" and not by_path.loc[FAILED, "valid"]
    assert by_path.loc[IMPLAUSIBLE, "activity_plausible"] == False  # noqa: E712 (object column)
    assert by_path.loc[OFF_REFERENCE, "validation_passed"] == False  # noqa: E712
    assert "KS" in by_path.loc[OFF_REFERENCE, "validation_problems"]
    assert by_path.loc[OFF_REFERENCE, "validation_excess_rate"] > 1
    assert points["valid"].sum() == len(points) - 3


def test_real_time_factor(data):
    _, ax = draw("real_time_factor", data)
    lines = series_lines(ax)
    assert set(lines) == {"nest", "brian2-cpp"}
    for simulator, xy in lines.items():
        assert list(xy[:, 0]) == VPS
        assert xy[:, 1] == pytest.approx(medians(data.points, "real_time_factor", simulator))
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "virtual processes"
    assert "real-time factor" in ax.get_ylabel()
    marked = crosses(ax)
    assert len(marked) == 3  # failed, implausible, off the reference
    bad = data.points.set_index("path").loc[[IMPLAUSIBLE, OFF_REFERENCE], "real_time_factor"]
    assert sorted(marked[:, 1])[1:] == pytest.approx(sorted(bad))  # the failed one sits on the axis


def test_disturbed_points_are_ringed_at_their_value(data):
    points = data.points.assign(disturbed=False)
    hit = points.index[points["valid"]][:2]
    points.loc[hit, "disturbed"] = True
    _, ax = draw("real_time_factor", figures.PanelData(points, series="simulator"))
    ringed = [c for c in ax.collections if c.get_label() == "disturbed (others used its CPUs)"]
    assert len(ringed) == 1
    assert sorted(ringed[0].get_offsets()[:, 1]) == pytest.approx(sorted(points.loc[hit, "real_time_factor"]))


def test_efficiency_is_one_at_the_fewest_vps(data):
    _, ax = draw("efficiency", data)
    lines = series_lines(ax)
    assert set(lines) == {"nest", "brian2-cpp"}
    assert lines["brian2-cpp"][0, 1] == pytest.approx(1.0, abs=0.01)  # median over seeds of T0 / T
    assert np.all(np.diff(lines["brian2-cpp"][:, 1]) < 0)  # synthetic times have a serial part
    assert any(line.get_linestyle() == "--" and list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines())


def test_memory_per_node_in_gb(data):
    _, ax = draw("memory_per_node", data)
    xy = series_lines(ax)["nest"]
    expected = [m / 1024 for m in medians(data.points, "peak_rss_mb_sum", "nest")]
    assert xy[:, 1] == pytest.approx(expected)
    assert ax.get_ylabel() == "peak memory per node (GB)" and ax.get_ylim()[0] == 0


def bar_stacks(ax) -> dict[str, list]:
    """Bars by legend label (each label's colour): label -> [(x, bottom, height)]."""
    colors = {}
    for handle, text in zip(ax.get_legend().legend_handles, ax.get_legend().get_texts(), strict=True):
        if hasattr(handle, "get_facecolor") and text.get_text() not in (
            "failed / invalid",
            *(f"{s} (shade)" for s in SERIES),
        ):
            colors[text.get_text()] = tuple(np.round(handle.get_facecolor(), 3))
    stacks = {label: [] for label in colors}
    for patch in ax.patches:
        color = np.array(patch.get_facecolor()[:3])
        for label, c in colors.items():
            # The first series has the legend's colour, later ones lighter shades of it.
            if any(np.allclose(color, figures.lighter(c[:3], j), atol=2e-3) for j in range(len(SERIES))):
                stacks[label].append((patch.get_x() + patch.get_width() / 2, patch.get_y(), patch.get_height()))
    return stacks


def test_construction_and_propagation_stacked(data):
    _, ax = draw("construction_propagation", data)
    stacks = bar_stacks(ax)
    assert set(stacks) == {"construction", "propagation"}
    assert all(len(bars) == 2 * len(VPS) for bars in stacks.values())  # per VP count, one bar per simulator
    points = data.points
    valid = points[points["valid"]]
    nest = valid[valid["simulator"] == "nest"]
    construction = nest[[f"time_{p}_s" for p in figures.CONSTRUCTION]].sum(axis=1).groupby(nest["vps"]).median()
    nest_bars = sorted(stacks["construction"])[SERIES.index("nest") :: 2]  # series in table order
    assert [h for _, _, h in nest_bars] == pytest.approx(construction.reindex(VPS).tolist())
    for (x1, _, h1), (x2, b2, _) in zip(sorted(stacks["construction"]), sorted(stacks["propagation"]), strict=True):
        assert x1 == x2 and b2 == pytest.approx(h1)  # propagation sits on construction
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8"]
    assert len(crosses(ax)) == 3


def test_phase_fractions_sum_to_one(data):
    _, ax = draw("phase_fractions", data)
    stacks = bar_stacks(ax)
    assert list(stacks) == list(PHASES)
    tops = {}
    for bars in stacks.values():
        for x, bottom, height in bars:
            tops[round(x, 6)] = max(tops.get(round(x, 6), 0), bottom + height)
    assert len(tops) == 2 * len(VPS) and list(tops.values()) == pytest.approx([1.0] * 8, abs=0.02)


def test_real_time_factor_phases_without_and_with_detailed_timers(data):
    _, ax = draw("real_time_factor_phases", data)
    assert list(bar_stacks(ax)) == ["simulate"]
    assert ax.get_legend().get_title().get_text() == "no detailed\ntimers recorded"

    # NEST's rows name its detailed timers (snnbench.network.rows, from its registry entry), empty without them.
    assert [c for c in data.points if c.startswith("simulate_detail_")] == [
        "simulate_detail_update_s",
        "simulate_detail_collocate_s",
        "simulate_detail_communicate_s",
        "simulate_detail_deliver_s",
    ]
    points = data.points.copy()
    nest = points["simulator"] == "nest"
    shares = {"update": 0.5, "collocate": 0.1, "deliver": 0.2}
    for label, share in shares.items():
        points[f"simulate_detail_{label}_s"] = (points["time_simulate_s"] * share).where(nest)
    _, ax = draw("real_time_factor_phases", figures.PanelData(points))
    stacks = bar_stacks(ax)
    assert list(stacks) == ["update", "collocate", "deliver", "other"]  # no communicate timer: not shown
    nest_update = sorted(stacks["update"])[SERIES.index("nest") :: 2]
    rtf = medians(points, "real_time_factor", "nest")
    assert [h for _, _, h in nest_update] == pytest.approx([0.5 * r for r in rtf], rel=1e-6)
    other = sorted(stacks["other"])[SERIES.index("nest") :: 2]
    assert [h for _, _, h in other] == pytest.approx([0.2 * r for r in rtf], rel=1e-6)


def test_time_to_solution_shows_simulate_and_total(data):
    _, ax = draw("time_to_solution", data)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"nest", "brian2-cpp", "simulate", "all phases"} <= set(labels)
    lines = [line for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())]
    assert len(lines) == 4  # 2 simulators x (simulate, all phases)
    totals = sorted(max(line.get_ydata()) for line in lines)
    assert totals[-1] == pytest.approx(
        max(max(medians(data.points, "time_total_s", s)) for s in ("nest", "brian2-cpp"))
    )


def test_weak_scaling_axis_names_model_size(tmp_path):
    exp = synthetic.experiment(name="weak", threads=(1, 2, 4), seeds=(1,), scaling="weak")
    paths = synthetic.write_experiment(tmp_path, exp, with_stats=False)
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    _, ax = draw("efficiency", figures.PanelData(points))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1\nN=0.05", "2\nN=0.1", "4\nN=0.2"]
    xy = series_lines(ax)["nest"]
    times = points.set_index("vps")["time_simulate_s"]
    assert xy[:, 1] == pytest.approx([times[1] / times[v] for v in (1, 2, 4)])  # weak: T0 / T


def test_simulator_comparison_bars(data):
    _, ax = draw("simulator_comparison", data)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [*SERIES, "failed / invalid"]
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert len(bars) == 2 * len(VPS)
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"1x1x{v}\nN=0.1" for v in VPS]
    nest = sorted(bars, key=lambda p: p.get_x())[SERIES.index("nest") :: 2]
    assert [p.get_height() for p in nest] == pytest.approx(medians(data.points, "real_time_factor", "nest"))
    assert len(crosses(ax)) == 3


def test_rates_with_reference(data):
    _, ax = draw("rates", data)
    reference = [c for c in ax.collections if c.get_label() == "reference"]
    assert len(reference) == 1 and len(reference[0].get_offsets()) == 8
    assert reference[0].get_offsets()[0, 1] == pytest.approx(0.402)  # NEST example reference, L23E
    dots = sum(len(c.get_offsets()) for c in ax.collections if c.get_label() != "reference")
    assert dots == 8 * int((data.points["status"] == "ok").sum())  # every finished point, invalid ones too
    assert [t.get_text() for t in ax.get_xticklabels()] == list(pd14.POPULATIONS)


def test_rates_of_many_points_as_boxes(data):
    many = pd.concat([data.points, data.points.assign(seed=data.points["seed"] + 10)], ignore_index=True)
    _, ax = draw("rates", figures.PanelData(many))
    boxes = [p for p in ax.patches if isinstance(p, matplotlib.patches.PathPatch)]
    assert len(boxes) == 8 * 2  # populations x simulators
    invalid = next(c for c in ax.collections if c.get_label() == "invalid (median)")
    bad = many[~many["valid"] & (many["status"] == "ok")]
    assert np.asarray(invalid.get_offsets())[0, 1] == pytest.approx(bad["rate_L23E_hz"].median())


def test_distributions_per_population(tables):
    points, stats = tables
    data = figures.PanelData(points, distributions=figures.load_distributions(stats, points))
    # One seed per simulator and shape; the failed point (nest, 1 VP, seed 1) has no statistics.
    assert data.distributions["path"].nunique() == 2 * len(VPS) - 1
    _, ax = draw("rate_distribution", data)
    boxes = [p for p in ax.patches if isinstance(p, matplotlib.patches.PathPatch)]
    assert len(boxes) == 8 * 2  # populations x simulators
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [*SERIES, "invalid (median)"]
    # The implausible point (nest, 2 VPs, seed 1) is left out of the boxes: its medians are crosses.
    implausible = data.distributions[(data.distributions["path"] == IMPLAUSIBLE)]
    medians_rate = implausible[implausible["statistic"] == "rate"].groupby("population")["value"].median()
    marked = next(c for c in ax.collections if c.get_label() == "invalid (median)").get_offsets()
    expected = medians_rate.reindex(list(pd14.POPULATIONS)).tolist()
    assert list(np.asarray(marked)[:, 1]) == pytest.approx(expected)
    _, ax = draw("correlation_distribution", data)
    assert ax.get_ylabel() == "correlation coefficient"
    _, ax = draw("cv_isi_distribution", figures.PanelData(points))
    assert ax.texts[0].get_text() == "no spike statistics"


def test_a_figure_names_the_versions_the_machine_and_the_dates_it_shows(data):
    points = data.points.assign(
        simulator_version=np.where(data.points["simulator"] == "nest", "3.10.0", "2.9.0"),
        machine="host1",
        started_utc=["2026-11-27T10:00:00+00:00"] + ["2026-11-28T09:00:00+00:00"] * (len(data.points) - 1),
    )
    line = figures.provenance_line(points)
    assert line == "brian2-cpp 2.9.0, nest 3.10.0 · machine host1 · 2026-11-27 to 2026-11-28"
    fig = figures.draw(["efficiency"], figures.PanelData(points), title="unit", note=line)
    assert fig._suptitle.get_text() == "unit\n" + line


def test_a_series_whose_points_are_all_invalid_has_no_box_and_no_legend_entry(tables):
    """The default experiment's validation figure listed the 2-thread shape, all of whose points were invalid,
    in its legend without drawing it (issue 52): its medians are crosses, its name is not in the legend."""
    points, stats = tables
    points = points.copy()
    points.loc[points["simulator"] == "brian2-cpp", "valid"] = False
    data = figures.PanelData(points, distributions=figures.load_distributions(stats, points))
    _, ax = draw("rate_distribution", data)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["nest", "invalid (median)"]


def test_a_shared_ensembles_runs_are_drawn_beside_the_points_they_judged(tables):
    """An experiment of brian2-cpp alone, judged by nest's runs in another table (a shared ensemble): its
    distributions show nest beside it; without that table, brian2-cpp alone."""
    points, stats = tables
    own, ensemble = points[points["simulator"] == "brian2-cpp"], points[points["simulator"] == "nest"]
    data = figures.PanelData(own.copy(), reference=ensemble.copy())
    assert len(data.with_reference) == len(points) and figures.PanelData(own).with_reference is own
    other_table = figures.PanelData(own.copy(), reference=ensemble.assign(experiment="ensemble-pd14-0123456789"))
    assert set(other_table.with_reference["experiment"]) == set(own["experiment"])  # judged as its own reference
    data.distributions = figures.load_distributions(stats, data.with_reference)
    _, ax = draw("rate_distribution", data)
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == SERIES
    alone = figures.PanelData(own.copy())
    alone.distributions = figures.load_distributions(stats, alone.with_reference)
    _, ax = draw("rate_distribution", alone)
    assert set(alone.distributions["simulator"]) == {"brian2-cpp"}


def test_distributions_of_many_area_populations_are_pooled_by_type():
    names = [f"A{i}-{kind}" for i in range(20) for kind in ("E", "I")]  # 40 populations, more than a panel draws
    dist, boxes, label = figures.activity.pooled_by_type(pd.DataFrame({"population": names, "value": 1.0}), names)
    assert boxes == ["E", "I"] and set(dist["population"]) == {"E", "I"} and "40 populations" in label
    few = names[:8]
    assert figures.activity.pooled_by_type(pd.DataFrame({"population": few}), few)[1] == few


def test_rates_by_simulator(data):
    from snnbench.network.judging import rate_agreement

    _, ax = draw("rates_by_simulator", data)
    valid = data.points[data.points["valid"]]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    bars = {label: [p.get_height() for p in c] for label, c in zip(labels, ax.containers, strict=True)}
    assert set(bars) == set(SERIES)
    for simulator, heights in bars.items():
        rates = valid[valid["simulator"] == simulator][[f"rate_{p}_hz" for p in pd14.POPULATIONS]]
        assert heights == pytest.approx(rates.mean().to_list())  # mean over the valid points, per population
    verdict = rate_agreement.agreement(data.points).dropna(subset=["agrees"]).groupby("simulator")["agrees"].all()
    word = "agrees" if verdict["brian2-cpp"] else "differs"
    group, rates = ax.get_title(loc="right").split("\n")
    assert rates == f"rates vs nest within its seeds' spread: brian2-cpp: {word}"
    assert group.startswith("vs nest, all runs: brian2-cpp: ")
    assert [t.get_text() for t in ax.get_xticklabels()] == list(pd14.POPULATIONS)


def test_validation_distances(data):
    _, ax = draw("validation_distances", data)
    within = next(c for c in ax.collections if c.get_label() == "within tolerance")
    outside = crosses(ax)
    checked = int(data.points["validation_checked"].sum())
    assert len(within.get_offsets()) + len(outside) == 3 * checked
    assert len(outside) >= 1 and np.all(outside[:, 1] > 1)
    assert outside[:, 0].round().astype(int).tolist().count(0) == 1  # the rate of the off-reference point
    assert [t.get_text() for t in ax.get_xticklabels()] == ["rate", "cv isi", "correlation"]


def test_the_reference_point_judged_against_itself_is_named_not_drawn_at_zero(data):
    """Under the one-run rule (the default experiment) the reference point's distances are 0 by construction."""
    points = data.points.copy()
    checked = points.index[points["validation_checked"].astype(bool)]
    points.loc[checked[0], "validation_reference_point"] = points.loc[checked[0], "path"]
    _, ax = draw("validation_distances", figures.PanelData(points, series="simulator"))
    within = next(c for c in ax.collections if c.get_label() == "within tolerance")
    assert len(within.get_offsets()) + len(crosses(ax)) == 3 * (len(checked) - 1)
    assert "not drawn: the reference point (judged against itself)" in [t.get_text() for t in ax.texts]
    alone = points.loc[[checked[0]]]  # an experiment of one point (as a SLURM test's)
    _, ax = draw("validation_distances", figures.PanelData(alone, series="simulator"))
    assert "only the reference point, judged against itself" in [t.get_text() for t in ax.texts]


def test_panels_without_valid_points_say_so(data):
    failed = data.points.assign(status="failed", valid=False)
    for name in ("real_time_factor", "construction_propagation", "efficiency", "simulator_comparison"):
        _, ax = draw(name, figures.PanelData(failed))
        assert "no valid points" in [t.get_text() for t in ax.texts], name


def test_figure_layout_files_and_caption(tmp_path, data):
    panels = ["construction_propagation", "real_time_factor", "efficiency", "memory_per_node"]
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    fig = figures.draw(panels, data, png, pdf, title="synthetic")
    assert fig.get_size_inches() == pytest.approx([figures.DOUBLE_COLUMN_IN, 2 * figures.ROW_HEIGHT_IN])
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["A", "B", "C", "D"]
    assert png.read_bytes()[:4] == b"\x89PNG" and pdf.read_bytes()[:4] == b"%PDF"
    one = figures.draw(["efficiency"], data)
    assert one.get_size_inches()[0] == pytest.approx(figures.SINGLE_COLUMN_IN) and one.axes[0].get_title() == ""
    assert figures.draw(["rates"], data).get_size_inches()[0] == pytest.approx(figures.DOUBLE_COLUMN_IN)
    text = figures.caption(panels)
    assert text.startswith("A: network construction") and "D: peak resident memory" in text
    with pytest.raises(ValueError, match="unknown panels"):
        figures.draw(["no_such_panel"], data)


def test_adding_a_panel_is_one_function(data):
    @figures.panel("number of points per simulator")
    def points_per_simulator(ax, data):
        counts = data.points.groupby(data.series).size()
        ax.bar(counts.index, counts.to_numpy())

    try:
        fig = figures.draw(["points_per_simulator"], data)
        assert [p.get_height() for p in fig.axes[0].patches] == [12, 12]
        assert figures.caption(["points_per_simulator"]) == "Number of points per simulator."
    finally:
        del figures.PANELS["points_per_simulator"]


def test_planning_knows_every_panel_without_the_figure_modules():
    """The panel names planning checks a config against (read from the figure modules' source) are the
    registered panels, and checking a config imports neither a figure module nor matplotlib."""
    assert sorted(panels.names()) == sorted(figures.PANELS)
    check = (
        "import sys; from snnbench import planning; config = planning.read_config(['config/config.yaml']); "
        "planning.plan(config); assert not [m for m in sys.modules if m.startswith(('matplotlib', 'snnbench.figures'))]"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "scripts"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", check], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_comparison_across_tables(data):
    points = data.points
    cluster = points.assign(real_time_factor=points["real_time_factor"] * 2)
    both = pd.concat([points.assign(table="here"), cluster.assign(table="cluster/synthetic")], ignore_index=True)
    _, ax = draw("real_time_factor", figures.PanelData(both[both["simulator"] == "nest"], series="table"))
    lines = series_lines(ax)
    assert set(lines) == {"here", "cluster/synthetic"}
    assert lines["cluster/synthetic"][:, 1] == pytest.approx(2 * lines["here"][:, 1])


def test_shapes_with_the_same_vps_are_not_pooled(tmp_path):
    exp = synthetic.experiment(name="grid", threads=(1, 2), seeds=(1, 2))
    exp["resources"]["ranks_per_node"] = [1, 2]
    paths = synthetic.write_experiment(tmp_path, exp, with_stats=False)
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    _, ax = draw("construction_propagation", figures.PanelData(points))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["1 (1x1x1)", "2 (1x1x2)", "2 (1x2x1)", "4 (1x2x2)"]
    assert len(bar_stacks(ax)["construction"]) == 4
    _, ax = draw("memory_per_node", figures.PanelData(points))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"1x1", "1x2", "2x1", "2x2"} <= set(legend)  # one line per layout of a node
    lines = [line for line in ax.get_lines() if line.get_marker() not in ("None", "_", "") and len(line.get_xdata())]
    two_vps = [line for line in lines if list(line.get_xdata()) == [2.0]]
    memory = points[points["vps"] == 2].groupby("shape")["peak_rss_mb_sum"].median() / 1024
    assert sorted(line.get_ydata()[0] for line in two_vps) == pytest.approx(sorted(memory))


def test_style_is_seaborns_paper_ticks_without_importing_seaborn():
    import subprocess
    import sys

    from snnbench.figures.style import PALETTE_COLORS, SEABORN_PAPER_TICKS

    probe = "import sys; from snnbench import figures; figures.style(); print('seaborn' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "False"  # a figure without seaborn panels never pays its import (scipy.stats)
    import seaborn as sns

    sns.set_theme(context="paper", style="ticks", palette=figures.PALETTE, font="DejaVu Sans")
    theirs = dict(matplotlib.rcParams)
    figures.style()
    for key, value in SEABORN_PAPER_TICKS.items():
        assert matplotlib.rcParams[key] == (pytest.approx(theirs[key]) if isinstance(value, float) else theirs[key]), (
            key
        )
    assert list(PALETTE_COLORS) == sns.color_palette(figures.PALETTE).as_hex()
    assert matplotlib.rcParams["pdf.fonttype"] == 42 and matplotlib.rcParams["savefig.dpi"] == 300


def test_panel_names_are_unique_across_families():
    training_panels = [p for panels in families.get("snn-training").figures({}).values() for p in panels]
    assert len(training_panels) == len(set(training_panels)) and set(training_panels) <= set(figures.PANELS)
    pd14_panels = {p for p, spec in figures.PANELS.items() if ".training" not in spec.draw.__module__}
    assert pd14_panels.isdisjoint(training_panels)
    named = {p for panels in schema_default("figures", "experiment").values() for p in panels}
    assert named <= pd14_panels  # the default figures' panel names are unchanged

    def rates(ax, data):  # the name of an activity panel, in another module
        pass

    with pytest.raises(ValueError, match="registered twice"):
        figures.panel("another rates panel")(rates)
    assert figures.PANELS["rates"].draw.__module__ == "snnbench.figures.activity"


def test_a_points_table_read_back_takes_the_figures_columns_without_a_warning(tables, tmp_path):
    """plot_figure reads points.csv (164 columns for the default experiment) and panels add columns: pandas read
    a block per column and warned "highly fragmented" at each (PerformanceWarning in every figure's log)."""
    import warnings

    from snnbench.tables.frames import read_points, write_table

    write_table(tables[0], tmp_path / "points.csv")
    points = read_points(tmp_path / "points.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        for k in range(3):
            points[f"added_{k}"] = 1.0
