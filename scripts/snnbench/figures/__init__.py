"""Publication figures of every benchmark family from points tables (PNG and PDF, one style).

A figure is a grid of panels named in the config (`figures.experiment` for the figures of every
PD14 experiment, `figures.comparisons` for figures across result tables) or by a family
(`training.FIGURES` for snn-training). A panel is one function `draw(ax, data)` registered with
`@panel(caption)`; adding a panel means writing that function in its topic module.

Modules: style (palette, sizes, fonts, the invalid mark), registry (PanelData, @panel, PANELS,
caption, layout, draw, the spike statistics), axes (drawing helpers shared by panels), and the
panels by topic: performance, activity, side_by_side, race (PD14), same_network (one network on every
simulator), plasticity (hpc_benchmark), areas (the multi-area model), training (snn-training) and
snn_data (snn-data).

Every panel works for any series: the series of a panel are the values of `data.series`
(`simulator` within a PD14 experiment, `table` across result tables, `framework` for
snn-training). Failed points and invalid ones are kept out of the curves and drawn as red crosses.
"""

from snnbench.figures import (
    activity,
    areas,
    performance,
    plasticity,
    race,
    same_network,
    side_by_side,
    snn_data,
    training,
    training_memory,
)
from snnbench.figures.axes import ERRORBAR, MAX_DOTS
from snnbench.figures.performance import CONSTRUCTION, PROPAGATION, detailed_timer_columns
from snnbench.figures.registry import (
    PANELS,
    Panel,
    PanelData,
    by_machine,
    caption,
    draw,
    layout,
    load_distributions,
    needs_distributions,
    panel,
    provenance_line,
)
from snnbench.figures.style import (
    DOUBLE_COLUMN_IN,
    FONT_PT,
    INVALID,
    PALETTE,
    ROW_HEIGHT_IN,
    SINGLE_COLUMN_IN,
    colors,
    lighter,
    style,
)
from snnbench.network import validation

__all__ = [
    "CONSTRUCTION",
    "DOUBLE_COLUMN_IN",
    "ERRORBAR",
    "FONT_PT",
    "INVALID",
    "MAX_DOTS",
    "PALETTE",
    "PANELS",
    "PROPAGATION",
    "ROW_HEIGHT_IN",
    "SINGLE_COLUMN_IN",
    "PanelData",
    "Panel",
    "activity",
    "areas",
    "by_machine",
    "caption",
    "colors",
    "detailed_timer_columns",
    "draw",
    "layout",
    "lighter",
    "provenance_line",
    "load_distributions",
    "needs_distributions",
    "panel",
    "performance",
    "plasticity",
    "same_network",
    "side_by_side",
    "snn_data",
    "race",
    "style",
    "training",
    "training_memory",
    "validation",
]
