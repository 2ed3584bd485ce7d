"""Load a directory of per-day utilisation CSVs (the data/planetlab format).

One file per day, `NAME.csv` or `NAME.csv.gz`, day named by NAME; header `vm,u000,u001,...`; a row per
VM with its utilisation samples in percent. The sample step is 86400 s / number of samples unless
given. All days must have the same number of samples.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np

from lanes.consolidate.trace import Trace
from lanes.errors import LanesError


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def day_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".csv"):
        name = name.removesuffix(suffix)
    return name


def read_day(path: Path) -> tuple[list[str], np.ndarray]:
    """VM names and a (VMs, samples) float array of one day's CSV."""
    try:
        with _open_text(path) as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, EOFError, csv.Error) as e:
        raise LanesError(f"{path}: cannot read: {e}") from None
    if not rows or not rows[0] or rows[0][0].strip() != "vm" or len(rows[0]) < 2:
        raise LanesError(f"{path}: expected a header 'vm,u000,u001,...'")
    width = len(rows[0])
    names: list[str] = []
    values: list[list[str]] = []
    seen: set[str] = set()
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != width:
            raise LanesError(f"{path}:{lineno}: {len(row)} fields, header has {width}")
        name = row[0].strip()
        if not name or name in seen:
            raise LanesError(f"{path}:{lineno}: empty or repeated VM name {name!r}")
        seen.add(name)
        names.append(name)
        values.append(row[1:])
    if not names:
        raise LanesError(f"{path}: no VM rows")
    try:
        arr = np.array(values, dtype=np.float64)
    except ValueError:
        raise LanesError(f"{path}: non-numeric utilisation value") from None
    if not np.all(np.isfinite(arr)) or arr.min() < 0:
        raise LanesError(f"{path}: utilisation must be finite and >= 0")
    return names, arr


def day_files(data_dir: Path) -> list[Path]:
    if not data_dir.is_dir():
        raise LanesError(f"{data_dir}: not a directory")
    files = sorted(p for p in data_dir.iterdir() if p.name.endswith((".csv", ".csv.gz")) and p.is_file())
    if not files:
        raise LanesError(f"{data_dir}: no .csv or .csv.gz day files")
    return files


def load_trace(data_dir: Path | str, step_s: float | None = None) -> Trace:
    """All days in `data_dir` on the union of their VM names (absent VM-days are zero)."""
    files = day_files(Path(data_dir))
    per_day = [read_day(f) for f in files]
    widths = {arr.shape[1] for _, arr in per_day}
    if len(widths) != 1:
        raise LanesError(f"{data_dir}: days differ in number of samples {sorted(widths)}")
    n_samples = widths.pop()
    if step_s is None:
        step_s = 86400.0 / n_samples
    if step_s <= 0:
        raise LanesError("the sample step must be positive")
    vms = sorted({n for names, _ in per_day for n in names})
    index = {n: i for i, n in enumerate(vms)}
    util = np.zeros((len(files), len(vms), n_samples))
    present = np.zeros((len(files), len(vms)), dtype=bool)
    for d, (names, arr) in enumerate(per_day):
        idx = np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))
        util[d, idx] = arr
        present[d, idx] = True
    return Trace(days=[day_name(f) for f in files], vms=vms, util=util, present=present, step_s=step_s)


def write_day(path: Path, names: list[str], util: np.ndarray, decimals: int = 1) -> None:
    """Write one day in the same format (gzipped if the name ends in .gz), values rounded."""
    width = max(3, len(str(util.shape[1] - 1)))
    lines = ["vm," + ",".join(f"u{i:0{width}d}" for i in range(util.shape[1]))]
    rounded = np.round(np.asarray(util, dtype=np.float64), decimals)
    for name, row in zip(names, rounded, strict=True):
        if decimals <= 0 or np.all(row == np.floor(row)):
            lines.append(name + "," + ",".join(map(str, row.astype(np.int64).tolist())))
        else:
            lines.append(name + "," + ",".join(map(str, row.tolist())))
    text = "\n".join(lines) + "\n"
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
