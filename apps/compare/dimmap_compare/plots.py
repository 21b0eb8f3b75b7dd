"""One PNG per experiment (matplotlib): lines over a numeric x (threads, budget) or grouped
bars over categories, one subplot per panel. Axes carry units, the title the data size and
the budget; points without a result are marked, never silently dropped."""
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from .table import format_ratio_point, headline  # noqa: E402
from .units import format_number  # noqa: E402

# 12M and 1.5K, not 1.2 with a 1e7 offset; and 0.5, not EngFormatter's "500 m" (0.5 s is no milli-anything).
VALUE_FORMAT = FuncFormatter(lambda v, _: format_number(v))


def _error_bars(points, statistic):
    """Lower and upper error lengths: min..max over repeats, or ± stdev for means (None when no
    point has two runs: nothing to show)."""
    if not any(s["ok"] > 1 for s in points):
        return None
    lo, hi = [], []
    for s in points:
        if s["value"] is None or s["ok"] < 2:
            lo.append(0.0)
            hi.append(0.0)
        elif statistic == "mean":
            lo.append(s["stdev"])
            hi.append(s["stdev"])
        else:
            lo.append(s["value"] - s["min"])
            hi.append(s["max"] - s["value"])
    return [lo, hi]


def _colors(result):
    """One colour per configuration, the same in every panel."""
    return {c: f"C{i % 10}" for i, c in enumerate(result.configs())}


def _draw_lines(ax, result, panel, summary):
    colors = _colors(result)
    for config in result.configs(panel):
        pts = [s for s in summary if s["config"] == config and s["value"] is not None]
        bad = [s for s in summary if s["config"] == config and s["value"] is None]
        if not pts:
            ax.plot([], [], linestyle="none", marker="x", color=colors[config],
                    label=f"{config} (no result: {bad[0]['status']})")
            continue
        label = _label(config, pts) + (f" ({len(bad)} point(s) without result)" if bad else "")
        ax.errorbar([s["x"] for s in pts], [s["value"] for s in pts], yerr=_error_bars(pts, result.statistic),
                    marker="o", capsize=3, label=label, color=colors[config])
    if result.x_log:
        ax.set_xscale("log", base=2)
        xs = sorted({s["x"] for s in summary})
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])


def _draw_bars(ax, result, panel, summary):
    xs = result.xs(panel)
    configs = result.configs(panel)
    colors = _colors(result)
    width = 0.8 / max(len(configs), 1)
    for i, config in enumerate(configs):
        pos, vals, pts = [], [], []
        for j, x in enumerate(xs):
            s = next((s for s in summary if s["config"] == config and repr(s["x"]) == repr(x)), None)
            p = j - 0.4 + width * (i + 0.5)
            if s and s["value"] is not None:
                pos.append(p)
                vals.append(s["value"])
                pts.append(s)
            elif s:
                ax.annotate(s["status"], (p, 0), rotation=90, ha="center", va="bottom", fontsize=7, color="red")
        bars = ax.bar(pos, vals, width, label=_label(config, pts),
                      yerr=_error_bars(pts, result.statistic) if pts else None, capsize=2, color=colors[config])
        if not pts:
            bars.set_label(f"{config} (no result)")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(x) for x in xs])


def _label(config, rows):
    """The legend entry: the configuration, flagged where its budget held all of its data."""
    return config + (" [not out-of-core]" if any(s.get("not_out_of_core") for s in rows) else "")


def ratio_lines(result):
    """'dimmap / mmap: 0.66x [0.55-0.80] @ 4 (within noise), ...' per ratio, for the figure."""
    lines = []
    for ratio, points in result.ratio_points():
        if points:
            where = f" ({ratio.panel})" if ratio.panel else ""
            lines.append(f"{ratio.label}{where}: " + ", ".join(format_ratio_point(p) for p in points))
    return lines


def _config_rank(result, panel, label):
    """Legend entries in the order of the configurations (labels may carry a suffix)."""
    configs = result.configs(panel)
    return next((i for i, c in enumerate(configs) if label == c or label.startswith((c + " (", c + " ["))),
                len(configs))


def plot_experiment(result, out_dir):
    """Writes OUT/<name>.png; returns its path (None if nothing ran)."""
    if result.unavailable or not result.runs:
        return None
    panels = result.panels()
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), squeeze=False)
    summary = result.summary()
    for ax, panel in zip(axes[0], panels):
        rows = [s for s in summary if s["panel"] == panel]
        (_draw_bars if result.kind == "bar" else _draw_lines)(ax, result, panel, rows)
        ax.set_xlabel(result.x_label + (f" [{result.x_unit}]" if result.x_unit else ""))
        ax.set_ylabel(f"{result.metric} [{result.unit}]")
        if result.y_log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(VALUE_FORMAT)
        ax.grid(True, alpha=0.3)
        if panel:
            ax.set_title(panel)
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: _config_rank(result, panel, labels[i]))
        ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8)
    stat = "mean ± stdev" if result.statistic == "mean" else "median (bars: min-max)"
    subtitle = f"{result.figure}. {headline(result)}; {stat} of {result.params.get('repeat', 1)} run(s)"
    width = 75 * len(panels)
    fig.suptitle("\n".join(textwrap.wrap(result.title, width) + textwrap.wrap(subtitle, width)), fontsize=10)
    prov = result.provenance
    m, g = prov.get("machine", {}), prov.get("git", {})
    fig.text(0.01, 0.005, f"{m.get('hostname', '?')}: {m.get('cores', '?')} cores, kernel {m.get('kernel', '?')}, "
             f"{m.get('data_filesystem', '')}; commit {g.get('describe', '?')}; {prov.get('date', '')}. "
             "Shared machine: indicative numbers.", fontsize=6, color="gray")
    ratios = [line for text in ratio_lines(result) for line in textwrap.wrap(text, 150 * len(panels))]
    bottom = 0.03
    if ratios:  # below the axes, in a figure grown by the lines' height (0.11 in each)
        height = 4.8 + 0.11 * (len(ratios) + 1)
        fig.set_size_inches(6.4 * len(panels), height)
        bottom = (0.15 + 0.11 * (len(ratios) + 1)) / height
        fig.text(0.01, 0.15 / height, "Ratios [spread over the repeats]:\n" + "\n".join(ratios), fontsize=6,
                 va="bottom", family="monospace")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    path = os.path.join(out_dir, f"{result.name}.png")
    tmp = f"{path}.tmp.{os.getpid()}.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path
