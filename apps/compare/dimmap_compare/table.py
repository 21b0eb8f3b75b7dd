"""The printed table: per experiment, configurations x points with the median and its range
over the repeats (or mean and standard deviation), the ratios with their spread and whether
they are within noise, how the budget was derived, points whose budget holds the whole data
set, and a footnote for every configuration that did not run."""
from .budgets import not_out_of_core_note
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


NOT_OUT_OF_CORE = "†"  # marks a point whose budget holds all of its data


def _cell(s, notes, statistic="median"):
    if s is None:
        return ""
    if s["status"] == OK or (s["status"] == "partial" and s["value"] is not None):
        text = format_number(s["value"])
        if s["ok"] > 1 and statistic == "mean":
            text += f"±{format_number(s['stdev'])}"
        elif s["ok"] > 1 and s.get("min") is not None:
            text += f" ({format_number(s['min'])}-{format_number(s['max'])})"
        text += "*" if s["status"] == "partial" else ""
        return text + (NOT_OUT_OF_CORE if s.get("not_out_of_core") else "")
    key = f"{s['status']}: {s['error']}"
    if key not in notes:
        notes.append(key)
    return f"{s['status'].upper()}[{notes.index(key) + 1}]"


def format_ratio_point(p):
    """'0.66x [0.55-0.80] @ 4, within noise': the ratio, its spread over the repeats, and the
    verdicts that qualify it."""
    text = f"{p.value:.2f}x"
    if p.low is not None:
        text += f" [{p.low:.2f}-{p.high:.2f}]"
    text += f" @ {p.x}"
    flags = (["within noise"] if p.within_noise else []) + (["not out-of-core"] if p.not_out_of_core else [])
    return text + (f" ({', '.join(flags)})" if flags else "")


def budget_lines(result):
    """How the budgets were derived (experiments that calibrate record it in their params)."""
    derivations = result.params.get("budget_derivation") or {}
    return [f"   budget{' (' + k + ')' if k else ''}: {v}" for k, v in derivations.items()]


def format_experiment(result):
    lines = [f"== {result.name}: {result.title} ({result.figure})"]
    if result.unavailable:
        lines.append(f"   NOT RUN: {result.unavailable}")
        return "\n".join(lines)
    stat = "mean ± stdev" if result.statistic == "mean" else "median (min-max)"
    lines.append(f"   {headline(result)}; {result.metric} [{result.unit}], {stat} of {result.params.get('repeat', 1)} "
                 f"run(s){' (higher is better)' if result.higher_is_better else ' (lower is better)'}")
    lines += budget_lines(result)
    lines += [f"   {note}" for note in result.params.get("notes", [])]  # e.g. a model's bound beside the runs
    notes = []
    for panel in result.panels():
        if panel:
            lines.append(f"   -- {panel}")
        xs = result.xs(panel)
        configs = result.configs(panel)
        summary = {(s["config"], repr(s["x"])): s for s in result.summary() if s["panel"] == panel}
        head = f"configuration \\ {result.x_label}" + (f" [{result.x_unit}]" if result.x_unit else "")
        width = max([len(head)] + [len(c) for c in configs]) + 2
        cells = [[_cell(summary.get((c, repr(x))), notes, result.statistic) for x in xs] for c in configs]
        colw = [max([len(str(x))] + [len(row[i]) for row in cells]) + 2 for i, x in enumerate(xs)]
        lines.append("   " + head.ljust(width) + "".join(str(x).rjust(w) for x, w in zip(xs, colw)))
        for c, row in zip(configs, cells):
            lines.append("   " + c.ljust(width) + "".join(v.rjust(w) for v, w in zip(row, colw)))
    for ratio, points in result.ratio_points():
        if points:
            at = ", ".join(format_ratio_point(p) for p in points)
            lines.append(f"   ratio {ratio.label}{' (' + ratio.panel + ')' if ratio.panel else ''}: {at}")
        else:
            lines.append(f"   ratio {ratio.label}: n/a (a side has no result)")
    summary = result.summary()
    if any(s["status"] == "partial" for s in summary):
        lines.append("   * some repeats failed: the value is over the runs that succeeded")
    in_core = [s for s in summary if s.get("not_out_of_core")]
    if in_core:
        note = not_out_of_core_note(in_core[0]["budget_bytes"], in_core[0]["data_bytes"])
        lines.append(f"   {NOT_OUT_OF_CORE} {note} ({len(in_core)} point(s)): Linux mmap can cache everything, the "
                     "comparison says nothing about paging")
    if any(p.within_noise for _, points in result.ratio_points() for p in points):
        lines.append("   within noise: the runs of one side overlap the other side's, so the repeats do not say "
                     "which is faster")
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
