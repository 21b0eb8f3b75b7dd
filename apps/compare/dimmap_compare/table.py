"""The printed table: per experiment, configurations x points with the median (or mean and
standard deviation), the ratios, and a footnote for every configuration that did not run."""
from .runner import OK
from .units import format_number, format_size


def headline(result):
    """'data 512M, budget 160M per run, dimmap buffer 128M': what every plot and table states."""
    p = result.params
    parts = []
    if p.get("data_label"):
        parts.append(p["data_label"])
    elif p.get("data_bytes"):
        parts.append(f"data {format_size(p['data_bytes'])}")
    if p.get("budget_label"):
        parts.append(p["budget_label"])
    elif p.get("budget_bytes"):
        parts.append(f"budget {format_size(p['budget_bytes'])} per run")
    if p.get("buffer_bytes"):
        parts.append(f"dimmap buffer {format_size(p['buffer_bytes'])}")
    return ", ".join(parts)


def _cell(s, notes):
    if s is None:
        return ""
    if s["status"] == OK or (s["status"] == "partial" and s["value"] is not None):
        text = format_number(s["value"])
        if s.get("stdev") and s["ok"] > 1 and s.get("mean") is not None and s["value"] == s["mean"]:
            text += f"±{format_number(s['stdev'])}"
        return text + ("*" if s["status"] == "partial" else "")
    key = f"{s['status']}: {s['error']}"
    if key not in notes:
        notes.append(key)
    return f"{s['status'].upper()}[{notes.index(key) + 1}]"


def format_experiment(result):
    lines = [f"== {result.name}: {result.title} ({result.figure})"]
    if result.unavailable:
        lines.append(f"   NOT RUN: {result.unavailable}")
        return "\n".join(lines)
    stat = "mean ± stdev" if result.statistic == "mean" else "median"
    lines.append(f"   {headline(result)}; {result.metric} [{result.unit}], {stat} of {result.params.get('repeat', 1)} "
                 f"run(s){' (higher is better)' if result.higher_is_better else ' (lower is better)'}")
    notes = []
    for panel in result.panels():
        if panel:
            lines.append(f"   -- {panel}")
        xs = result.xs(panel)
        configs = result.configs(panel)
        summary = {(s["config"], repr(s["x"])): s for s in result.summary() if s["panel"] == panel}
        head = f"configuration \\ {result.x_label}"
        width = max([len(head)] + [len(c) for c in configs]) + 2
        cells = [[_cell(summary.get((c, repr(x))), notes) for x in xs] for c in configs]
        colw = [max([len(str(x))] + [len(row[i]) for row in cells]) + 2 for i, x in enumerate(xs)]
        lines.append("   " + head.ljust(width) + "".join(str(x).rjust(w) for x, w in zip(xs, colw)))
        for c, row in zip(configs, cells):
            lines.append("   " + c.ljust(width) + "".join(v.rjust(w) for v, w in zip(row, colw)))
    for ratio, pairs in result.ratio_values():
        if pairs:
            at = ", ".join(f"{v:.2f}x @ {x}" for x, v in pairs)
            lines.append(f"   ratio {ratio.label}{' (' + ratio.panel + ')' if ratio.panel else ''}: {at}")
        else:
            lines.append(f"   ratio {ratio.label}: n/a (a side has no result)")
    if any(s["status"] == "partial" for s in result.summary()):
        lines.append("   * some repeats failed: the value is over the runs that succeeded")
    for i, note in enumerate(notes, 1):
        lines.append(f"   [{i}] {note}")
    return "\n".join(lines)


def format_all(results, wall_s=None):
    blocks = [format_experiment(r) for r in results]
    failed = sum(len(r.failures()) for r in results)
    not_run = [r.name for r in results if r.unavailable]
    foot = [f"{len(results)} experiment(s)"]
    if wall_s is not None:
        foot.append(f"{wall_s:.0f} s")
    foot.append(f"{failed} point(s) without a result" if failed else "every point has a result")
    if not_run:
        foot.append(f"not run: {', '.join(not_run)}")
    blocks.append("-- " + "; ".join(foot) + ". Numbers from a shared machine are indicative; ratios are "
                  "measured side by side in one run.")
    return "\n\n".join(blocks)
