"""The results of experiments: every run, summaries per point, ratios, and the document that
results.json holds (and results.csv / results.h5 / the plots / the table are made from)."""
import json
import math
import os
import statistics
from dataclasses import asdict, dataclass, field

from . import SCHEMA
from .budgets import holds_data
from .runner import OK


@dataclass
class Ratio:
    """num / den of two configurations' statistic at each x both have (same panel)."""
    num: str
    den: str
    label: str
    panel: str = ""


@dataclass
class ExperimentResult:
    name: str
    figure: str
    title: str
    about: str
    metric: str
    unit: str
    x_label: str
    x_unit: str = ""
    x_log: bool = False
    y_log: bool = False
    kind: str = "line"  # line (numeric x) or bar (categories)
    higher_is_better: bool = True
    statistic: str = "median"  # median, or mean (with variance) for variance experiments
    params: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    ratios: list = field(default_factory=list)
    unavailable: str = ""  # why the experiment could not run at all
    interrupted: bool = False
    started: str = ""
    wall_s: float = 0.0
    runs: list = field(default_factory=list)

    def add_run(self, point, repeat, run):
        self.runs.append({
            "panel": point.panel, "config": point.config, "x": point.x, "repeat": repeat,
            "status": run.status, "value": run.value, "error": run.error, "wall_s": run.wall_s,
            "peak_bytes": run.peak_bytes, "footprint_bytes": run.footprint_bytes, "budget_bytes": point.budget,
            "data_bytes": point.data_bytes, "params": point.params,
            "extra": run.extra, "command": run.command})

    # ---- summaries ----
    def panels(self):
        return list(dict.fromkeys(r["panel"] for r in self.runs))

    def configs(self, panel=None):
        return list(dict.fromkeys(r["config"] for r in self.runs if panel is None or r["panel"] == panel))

    def xs(self, panel=None):
        return list(dict.fromkeys(r["x"] for r in self.runs if panel is None or r["panel"] == panel))

    def summary(self):
        """One dict per (panel, config, x), in the order the runs were made."""
        groups = {}
        for r in self.runs:
            groups.setdefault((r["panel"], r["config"], _key(r["x"])), []).append(r)
        out = []
        for (panel, config, _), runs in groups.items():
            values = [r["value"] for r in runs if r["status"] == OK]
            failed = [r for r in runs if r["status"] != OK]
            s = {"panel": panel, "config": config, "x": runs[0]["x"], "runs": len(runs), "ok": len(values),
                 "budget_bytes": runs[0]["budget_bytes"], "data_bytes": runs[0].get("data_bytes"),
                 "not_out_of_core": holds_data(runs[0]["budget_bytes"], runs[0].get("data_bytes")),
                 "params": runs[0]["params"],
                 "peak_bytes": max((r["peak_bytes"] or 0 for r in runs), default=0) or None,
                 "status": OK if not failed else (failed[0]["status"] if not values else "partial"),
                 "error": failed[0]["error"] if failed else ""}
            s.update(describe(values))
            s["value"] = s[self.statistic]
            out.append(s)
        return out

    def lookup(self, panel, config, x):
        for s in self.summary():
            if s["panel"] == panel and s["config"] == config and _key(s["x"]) == _key(x):
                return s
        return None

    def ratio_values(self):
        """[(Ratio, [(x, value), ...]), ...] for the points where both sides have a value."""
        return [(ratio, [(p.x, p.value) for p in points]) for ratio, points in self.ratio_points()]

    def ratio_points(self):
        """[(Ratio, [RatioPoint, ...]), ...]: each ratio's value, spread and noise verdict at the
        points where both sides have a value."""
        table = {(s["panel"], s["config"], _key(s["x"])): s for s in self.summary()}
        out = []
        for spec in self.ratios:
            ratio = spec if isinstance(spec, Ratio) else Ratio(**spec)
            points = []
            for x in self.xs(ratio.panel or None):
                a = table.get((ratio.panel, ratio.num, _key(x)))
                b = table.get((ratio.panel, ratio.den, _key(x)))
                if a and b and a["value"] is not None and b["value"]:
                    points.append(ratio_point(x, a, b))
            out.append((ratio, points))
        return out

    def failures(self):
        return [s for s in self.summary() if s["status"] != OK]

    # ---- serialisation ----
    def to_dict(self):
        d = asdict(self)
        d["ratios"] = [asdict(r) if isinstance(r, Ratio) else r for r in self.ratios]
        d["summary"] = self.summary()
        d["ratio_values"] = [{"label": r.label, "num": r.num, "den": r.den, "panel": r.panel,
                              "values": [{"x": p.x, "ratio": p.value, "low": p.low, "high": p.high,
                                          "within_noise": p.within_noise, "not_out_of_core": p.not_out_of_core}
                                         for p in points]}
                             for r, points in self.ratio_points()]
        return d

    @classmethod
    def from_dict(cls, d):
        known = {f for f in cls.__dataclass_fields__}
        result = cls(**{k: v for k, v in d.items() if k in known})
        result.ratios = [Ratio(**r) if isinstance(r, dict) else r for r in result.ratios]
        return result


@dataclass
class RatioPoint:
    """num / den at one x: the ratio of the statistics, its spread over the repeats (the
    lowest and highest ratio any pair of runs could give), and whether it is within noise."""
    x: object
    value: float
    low: float = None
    high: float = None
    within_noise: bool = None  # None: a side has a single run, so its noise is unknown
    not_out_of_core: bool = False  # a side's budget holds the whole data set


def ratio_point(x, num, den):
    """The RatioPoint of two summaries. The ratio is within noise when the runs of one side
    overlap the other side's (num's min-max range meets den's): then the repeats do not say
    which side is faster."""
    point = RatioPoint(x, num["value"] / den["value"],
                       not_out_of_core=bool(num.get("not_out_of_core") or den.get("not_out_of_core")))
    if num["ok"] > 1 and den["ok"] > 1 and den["min"] and den["max"]:
        point.low, point.high = num["min"] / den["max"], num["max"] / den["min"]
        point.within_noise = num["min"] <= den["max"] and den["min"] <= num["max"]
    return point


def describe(values):
    """Statistics of a point's successful runs (None when there are none)."""
    if not values:
        return {"median": None, "mean": None, "stdev": None, "variance": None, "min": None, "max": None}
    var = statistics.variance(values) if len(values) > 1 else 0.0
    return {"median": statistics.median(values), "mean": statistics.fmean(values), "stdev": math.sqrt(var),
            "variance": var, "min": min(values), "max": max(values)}


def _key(x):
    return repr(x)


class Document:
    """results.json: metadata plus one entry per experiment. Running some experiments into an
    existing output directory replaces theirs and keeps the others."""

    def __init__(self, meta=None, experiments=None):
        self.meta = meta or {}
        self.experiments = experiments or {}

    @classmethod
    def load(cls, path):
        """The document in path, or an empty one if there is none (or it is not ours)."""
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            return cls()
        if d.get("schema") != SCHEMA:
            return cls()
        return cls(d.get("meta", {}), {k: ExperimentResult.from_dict(v) for k, v in d.get("experiments", {}).items()})

    def put(self, result):
        self.experiments[result.name] = result

    def to_dict(self):
        return {"schema": SCHEMA, "meta": self.meta,
                "experiments": {k: v.to_dict() for k, v in self.experiments.items()}}


def write_atomic(path, write):
    """write(file object) into path.tmp, then rename: no half-written file that looks valid."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
