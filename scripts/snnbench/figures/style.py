"""The one style of every figure: palette, journal sizes, fonts, resolution, the invalid mark.

`style()` sets matplotlib's rcParams directly (seaborn's "paper" context and "ticks" style, then
our sizes), so a figure whose panels need no seaborn never imports it (seaborn pulls in
scipy.stats: about a second per figure job); tests/test_figures.py checks the values against
seaborn's own `set_theme`.
"""

from __future__ import annotations

import itertools

import matplotlib
import matplotlib.colors

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402

PALETTE = "colorblind"  # Okabe-Ito-like, safe for the common colour-vision deficiencies
# seaborn's "colorblind" palette (sns.color_palette("colorblind").as_hex(); checked by a test).
PALETTE_COLORS = (
    "#0173b2",
    "#de8f05",
    "#029e73",
    "#d55e00",
    "#cc78bc",
    "#ca9161",
    "#fbafe4",
    "#949494",
    "#ece133",
    "#56b4e9",
)
MM = 1 / 25.4
SINGLE_COLUMN_IN = 89 * MM  # Nature / Cell Press / eLife single column
DOUBLE_COLUMN_IN = 183 * MM  # full page width
ROW_HEIGHT_IN = 2.1
FONT_PT = 7  # journals ask for 5-8 pt at print size
DPI = 300
INVALID = {"marker": "X", "color": "#d62728", "s": 30, "zorder": 5, "linewidths": 0}
DISTURBED = {"marker": "o", "facecolors": "none", "edgecolors": "0.2", "s": 60, "zorder": 6, "linewidths": 0.8}
# seaborn.set_theme(context="paper", style="ticks", font="DejaVu Sans): the values that differ from
# matplotlib's defaults and that RC below does not set anew.
SEABORN_PAPER_TICKS = {
    "axes.axisbelow": True,
    "axes.edgecolor": ".15",
    "axes.labelcolor": ".15",
    "axes.linewidth": 1.0,
    "font.family": ["DejaVu Sans"],
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "grid.color": ".8",
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "patch.linewidth": 0.8,
    "text.color": ".15",
    "xtick.color": ".15",
    "ytick.color": ".15",
    "xtick.major.size": 4.8,
    "ytick.major.size": 4.8,
    "xtick.major.width": 1.0,
    "ytick.major.width": 1.0,
    "xtick.minor.size": 3.2,
    "ytick.minor.size": 3.2,
    "xtick.minor.width": 0.8,
    "ytick.minor.width": 0.8,
}
RC = {
    **SEABORN_PAPER_TICKS,
    "axes.prop_cycle": cycler(color=PALETTE_COLORS),
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT - 1,
    "ytick.labelsize": FONT_PT - 1,
    "legend.fontsize": FONT_PT - 1,
    "legend.title_fontsize": FONT_PT - 1,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "errorbar.capsize": 2,
    "pdf.fonttype": 42,  # TrueType in PDFs: text stays editable
    "savefig.dpi": DPI,
}


def style() -> None:
    """Matplotlib's defaults, then the one style (what every figure is drawn with)."""
    plt.rcdefaults()  # the backend stays
    plt.rcParams.update(RC)


def colors(values) -> dict:
    """One palette colour per distinct value, in order of first appearance (cycling beyond ten)."""
    values = list(dict.fromkeys(values))
    cycle = itertools.cycle(matplotlib.colors.to_rgb(c) for c in PALETTE_COLORS)
    return dict(zip(values, cycle, strict=False))


def lighter(color, j: int) -> tuple:
    """The j-th series' shade of a colour: the first as is, later ones mixed with white."""
    mix = min(0.25 * j, 0.75)
    return tuple(c + (1 - c) * mix for c in matplotlib.colors.to_rgb(color))
