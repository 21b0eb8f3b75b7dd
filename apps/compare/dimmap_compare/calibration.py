"""Calibration runs: what a DI-MMAP configuration needs beside its buffer, measured, so that
its run and the Linux mmap run get the same memory budget (budgets.py says why the median of
several footprints, not one cgroup peak)."""
from .budgets import CalibrationError, derive_overhead, describe_derivation
from .experiment import Unavailable
from .runner import OK
from .units import format_size


def calibrate_overhead(ctx, name, cmd, parse, buffer, generous, evict=(), env=None, key="", cgroup_peak=False):
    """Runs cmd (the dimmap configuration with its buffer) under the generous budget a few times
    and derives the memory it needs beside the buffer. cgroup_peak: count the cgroup's peak
    rather than the process's own memory (scratch files on tmpfs are charged and cannot be
    reclaimed). Returns (overhead_bytes, one-line description, derivation); raises Unavailable
    when a calibration run fails."""
    footprints, peaks, shared = [], [], []
    for _ in range(ctx.pick(3, 3, 1)):
        run = ctx.runner.run(cmd, generous, parse, env=env, evict=evict, measure_footprint=True)
        if run.status != OK:
            raise Unavailable(f"calibration run failed ({run.status}: {run.error})")
        footprints.append(run.peak_bytes if cgroup_peak else run.footprint_bytes)
        peaks.append(run.peak_bytes)
        shared.append(run.footprint_shared_bytes)
    try:
        overhead, derivation = derive_overhead(footprints, buffer, peaks,
                                               source="cgroup peak" if cgroup_peak else "own resident memory",
                                               shared=None if cgroup_peak else shared)
    except CalibrationError as e:
        raise Unavailable(f"calibration: {e}") from None
    text = describe_derivation(derivation)
    ctx.log(f"[{name}] calibration{' (' + key + ')' if key else ''}: {text}")
    return overhead, text, derivation


def buffer_for(ctx, buffer, overhead):
    """The buffer of a run: as given, or with --budget what the budget leaves beside the
    measured overhead (Unavailable when that is under 1 MiB)."""
    if not ctx.budget_override:
        return buffer
    left = ctx.budget_override - overhead
    if left < (1 << 20):
        raise Unavailable(f"--budget leaves no buffer: the process needs {format_size(overhead)} beside it")
    return left
