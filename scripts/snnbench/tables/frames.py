"""Tables as files: points.csv and the other tables written by Arrow and read by pandas, and the
columns derived from a table's rows (a point's shape).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv


def _arrow_column(values: pd.Series) -> pa.Array:
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one column (e.g. 2 and "2x"): as text
        return pa.array(values.map(lambda v: None if pd.isna(v) else str(v)), from_pandas=True)


def write_table(frame: pd.DataFrame, path) -> None:
    """A table as CSV (booleans as true/false, empty for missing), written by Arrow: about six
    times faster than pandas for the long tables of large experiments (24 validation rows per
    point). Read back with read_points."""
    columns = {str(name): _arrow_column(frame[name]) for name in frame.columns}
    pa_csv.write_csv(pa.table(columns), path)


def read_points(path) -> pd.DataFrame:
    """A points.csv as written by collect. Read whole (not in chunks): sparse columns such as
    rates_agree_with_nest (empty for most rows) would otherwise get a type per chunk. Consolidated (copy): pandas
    reads a block per column, and past 100 blocks every column a figure adds warned "highly fragmented"."""
    return pd.read_csv(path, low_memory=False).copy()


def shapes(rows: pd.DataFrame) -> pd.Series:
    """nodes x ranks per node x threads per rank of each row, e.g. 1x2x4."""
    parts = [rows[k].astype(str) for k in ("nodes", "ranks_per_node", "threads_per_rank")]
    return parts[0] + "x" + parts[1] + "x" + parts[2]
