"""Helpers of run-hpmmap: finding the tools, running commands with their resource usage, and
summaries."""

import os
import selectors
import shutil
import statistics
import sys
import time
from dataclasses import dataclass

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# Sizes are read as the comparison harness reads them (apps/compare).
sys.path.insert(0, os.path.join(SOURCE_DIR, "apps", "compare"))
from dimmap_compare.units import parse_size  # noqa: E402,F401 (run-hpmmap's sizes)


def find_build_dir(given):
    """The CMake build directory: --build-dir, $DIMMAP_BUILD_DIR, or build/ci."""
    for d in (given, os.environ.get("DIMMAP_BUILD_DIR"), os.path.join(SOURCE_DIR, "build", "ci")):
        if d and os.path.isfile(os.path.join(d, "CMakeCache.txt")):
            return os.path.abspath(d)
    sys.exit("no build directory: build first (make build) or pass --build-dir")


def tool(build_dir, relpath):
    path = os.path.join(build_dir, relpath)
    if not os.access(path, os.X_OK):
        sys.exit(f"{path} is missing: build it first")
    return path


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str
    wall_s: float
    minflt: int
    majflt: int
    maxrss_kib: int


def run_measured(cmd, env=None, check=False):
    """Runs cmd; returns its output, wall time, and its (and its children's) minor/major
    faults and peak RSS from wait4. With check, a failure ends the script with its stderr."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        try:
            os.execvpe(cmd[0], cmd, full_env)
        finally:
            os._exit(127)
    os.close(out_w)
    os.close(err_w)
    chunks = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    open_fds = set(chunks)
    while open_fds:
        for key, _ in sel.select():
            data = os.read(key.fd, 65536)
            if data:
                chunks[key.fd].append(data)
            else:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds.discard(key.fd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    r = Run(code if code >= 0 else 128 - code, b"".join(chunks[out_r]).decode(),
            b"".join(chunks[err_r]).decode(), wall, ru.ru_minflt, ru.ru_majflt, ru.ru_maxrss)
    if check and r.status != 0:
        sys.exit(f"command failed ({r.status}): {' '.join(cmd)}\n{r.stderr}")
    return r


def key_values(line):
    """'a=1 b=x' -> {'a': '1', 'b': 'x'}"""
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def summary(values):
    mean = statistics.fmean(values)
    var = statistics.variance(values) if len(values) > 1 else 0.0
    return mean, var, var ** 0.5


def have(program):
    return shutil.which(program) is not None
