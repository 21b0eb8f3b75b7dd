"""Memory budgets that a second run of the same command reproduces, and the check that a
budget really leaves the data out of core.

A budget measured as the memory cgroup's peak in one calibration run is not reproducible: under
a generous limit the page cache the run fills (the data files it reads, the files it writes)
stays charged as long as nothing needs the memory, so the peak of one run was 22.6M and of the
identical next one 11.7M, and the budget derived from the first held the whole data set. What
a configuration needs beside its DI-MMAP buffer is its own resident memory (heap, stacks, the
buffer's pages): that is what the calibrations measure (the peak of its anonymous and shared
resident memory, footprint.py), several times, and the median is what counts. Page cache is
reclaimable, so a budget need not hold it."""
import statistics

from .units import format_size

# Beside the process's own memory a cgroup is charged kernel memory (stacks, page tables) and page
# cache it cannot drop at once (dirty pages under writeback): with 1 MiB, one in 6 fully external
# BFS runs on 16 threads was OOM-killed in a quick run.
MARGIN_FRACTION = 0.10
MIN_MARGIN = 2 << 20


class CalibrationError(Exception):
    """The calibrations give no usable footprint."""


def margin_for(need_bytes):
    """The margin added to a measured need beside the buffer: 10% of it, at least 2 MiB."""
    return max(int(need_bytes * MARGIN_FRACTION), MIN_MARGIN)


def derive_overhead(footprints, buffer_bytes, peaks=(), source="own resident memory", shared=None):
    """The memory a configuration needs beside its buffer, from the footprints (bytes) of
    several calibration runs: the median footprint minus the buffer's part of it, plus a margin
    of 10% of it (at least 2 MiB). `shared`: the runs' peaks of shared memory, where the buffer
    is counted only as far as it is shared memory (a memfd buffer is; a buffer in the data
    file's page cache is not, so the whole footprint is beside it); without them the whole
    buffer is taken to be in the footprint. Returns (overhead_bytes, derivation): the
    derivation records every measurement and the rule, for the results files and the table."""
    values = sorted(int(v) for v in footprints if v)
    if not values:
        raise CalibrationError("no calibration run measured the process's memory")
    median = int(statistics.median(values))
    margin = margin_for(median)
    shared_values = sorted(int(v) for v in shared if v is not None) if shared is not None else []
    counted = min(int(statistics.median(shared_values)), buffer_bytes) if shared_values else buffer_bytes
    overhead = max(median - counted, 0) + margin
    derivation = {
        "rule": f"median {source} of {len(values)} calibration run(s) - the buffer's part of it + max(10%, 2 MiB)",
        "source": source, "calibrations": len(values), "footprints_bytes": values, "median_bytes": median,
        "spread": round((values[-1] - values[0]) / median, 4) if median else 0.0,
        "margin_bytes": margin, "buffer_bytes": buffer_bytes, "buffer_counted_bytes": counted,
        "shared_bytes": shared_values, "overhead_bytes": overhead,
        # The cgroup peaks, for comparison only: they include reclaimable page cache.
        "cgroup_peaks_bytes": sorted(int(p) for p in peaks if p),
    }
    return overhead, derivation


def describe_derivation(d):
    """One line for the log and the table: how the budget came about."""
    values = d["footprints_bytes"]
    spread = f"{format_size(values[0])}-{format_size(values[-1])}" if len(values) > 1 else format_size(values[0])
    counted = d.get("buffer_counted_bytes", d["buffer_bytes"])
    buffer = (f"buffer {format_size(counted)}" if counted == d["buffer_bytes"] else
              f"{format_size(counted)} of the {format_size(d['buffer_bytes'])} buffer (the rest is page cache)")
    return (f"process {d['source']} median {format_size(d['median_bytes'])} ({spread} over {d['calibrations']} "
            f"calibration(s)) - {buffer} + margin {format_size(d['margin_bytes'])} "
            f"= {format_size(d['overhead_bytes'])} beside the buffer")


def holds_data(budget_bytes, data_bytes):
    """True when the budget could hold every byte of the data: such a point is not out-of-core
    (Linux mmap can cache everything, so the comparison says nothing about paging)."""
    return bool(data_bytes) and budget_bytes is not None and budget_bytes >= data_bytes


def not_out_of_core_note(budget_bytes, data_bytes):
    if not holds_data(budget_bytes, data_bytes):
        return ""
    return (f"not out-of-core: the budget {format_size(budget_bytes)} holds all {format_size(data_bytes)} "
            f"of the data")
