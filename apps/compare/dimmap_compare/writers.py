"""results.csv (one row per run), results.json (everything) and results.h5 (one group per
experiment, attributes for machine, commit, parameters and versions), each written under a
temporary name and renamed, so an interrupted run never leaves a file that looks complete."""
import csv
import json
import math
import os

import h5py
import numpy as np

from . import SCHEMA, VERSION
from .results import write_atomic

CSV_COLUMNS = ["experiment", "figure", "panel", "config", "x", "repeat", "status", "value", "metric", "unit",
               "wall_s", "peak_bytes", "budget_bytes", "buffer_bytes", "threads", "error", "command"]


def write_csv(path, results):
    def write(f):
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in results:
            for run in r.runs:
                params = run.get("params") or {}
                w.writerow({"experiment": r.name, "figure": r.figure, "panel": run["panel"], "config": run["config"],
                            "x": run["x"], "repeat": run["repeat"], "status": run["status"],
                            "value": "" if run["value"] is None else run["value"], "metric": r.metric, "unit": r.unit,
                            "wall_s": "" if run["wall_s"] is None else round(run["wall_s"], 4),
                            "peak_bytes": run["peak_bytes"] if run["peak_bytes"] is not None else "",
                            "budget_bytes": run["budget_bytes"], "buffer_bytes": params.get("buffer_bytes") or "",
                            "threads": params.get("threads", ""), "error": run["error"], "command": run["command"]})
    write_atomic(path, write)


def write_json(path, document):
    write_atomic(path, lambda f: json.dump(document.to_dict(), f, indent=1, default=str))


def _flat(prefix, d):
    """Nested dict -> {prefix.key: scalar}; lists and dicts inside become JSON strings."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(f"{prefix}{k}.", v))
        elif isinstance(v, (list, tuple)):
            out[f"{prefix}{k}"] = json.dumps(v)
        elif v is None:
            out[f"{prefix}{k}"] = ""
        else:
            out[f"{prefix}{k}"] = v
    return out


def _column(group, name, values):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values) and \
            any(v is not None for v in values):
        data = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    else:
        data = np.array(["" if v is None else str(v) for v in values], dtype=h5py.string_dtype())
    group.create_dataset(name, data=data)


def _x_value(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else math.nan


def _write_experiment(f, r):
    g = f.create_group(r.name)
    attrs = {"title": r.title, "figure": r.figure, "about": r.about, "metric": r.metric, "unit": r.unit,
             "x_label": r.x_label, "x_unit": r.x_unit, "kind": r.kind, "statistic": r.statistic,
             "higher_is_better": r.higher_is_better, "started": r.started, "wall_s": r.wall_s,
             "unavailable": r.unavailable, "interrupted": r.interrupted,
             "params_json": json.dumps(r.params, default=str), "provenance_json": json.dumps(r.provenance)}
    attrs.update(_flat("param.", r.params))
    prov = dict(r.provenance)
    attrs.update(_flat("machine.", prov.pop("machine", {})))
    attrs.update(_flat("git.", prov.pop("git", {})))
    attrs.update(_flat("version.", prov.pop("versions", {})))
    attrs.update(_flat("", prov))
    for k, v in attrs.items():
        g.attrs[k] = v
    runs = g.create_group("runs")
    cols = {"panel": [], "config": [], "x": [], "x_value": [], "repeat": [], "status": [], "value": [],
            "wall_s": [], "peak_bytes": [], "budget_bytes": [], "error": [], "command": []}
    for run in r.runs:
        for k in cols:
            cols[k].append(_x_value(run["x"]) if k == "x_value" else (str(run["x"]) if k == "x" else run[k]))
    for k, v in cols.items():
        _column(runs, k, v)
    summary = g.create_group("summary")
    rows = r.summary()
    keys = ["panel", "config", "x", "x_value", "runs", "ok", "status", "value", "median", "mean", "stdev", "variance",
            "min", "max", "peak_bytes", "budget_bytes", "data_bytes", "not_out_of_core", "error"]
    for k in keys:
        vals = [(_x_value(s["x"]) if k == "x_value" else (str(s["x"]) if k == "x" else s[k])) for s in rows]
        _column(summary, k, vals)
    ratios = g.create_group("ratios")
    for i, (ratio, points) in enumerate(r.ratio_points()):
        d = ratios.create_dataset(f"ratio_{i}", data=np.array([p.value for p in points], dtype=np.float64))
        d.attrs["label"], d.attrs["num"], d.attrs["den"], d.attrs["panel"] = ratio.label, ratio.num, ratio.den, ratio.panel
        d.attrs["x"] = json.dumps([p.x for p in points])
        # Spread over the repeats (null where a side ran once) and the noise verdict per x.
        d.attrs["low"] = json.dumps([p.low for p in points])
        d.attrs["high"] = json.dumps([p.high for p in points])
        d.attrs["within_noise"] = json.dumps([p.within_noise for p in points])
        d.attrs["not_out_of_core"] = json.dumps([p.not_out_of_core for p in points])


def write_h5(path, document):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["schema"] = SCHEMA
            f.attrs["dimmap_compare_version"] = VERSION
            for k, v in _flat("meta.", document.meta).items():
                f.attrs[k] = v
            for r in document.experiments.values():
                _write_experiment(f, r)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
