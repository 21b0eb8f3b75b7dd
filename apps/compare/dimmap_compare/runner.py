"""Runs one configuration: the command in a fresh memory cgroup of the experiment's budget
(dimmap-budget, apps/budget), started cold (its data files evicted from the page cache),
with a time limit; on request (calibrations) with the command's own memory measured inside the
cgroup (footprint.py). Whatever happens, the outcome is a Run: a failure is data, not an
exception, so the experiment goes on with its other configurations."""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from .tools import ToolMissing

FOOTPRINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "footprint.py")

# Outcomes of a run. Only "ok" carries a value.
OK, FAILED, OOM, TIMEOUT, MISSING, SKIPPED = "ok", "failed", "oom", "timeout", "missing", "skipped"
WRONG = "wrong"  # ran, but its answers disagree with another placement's


class InvalidOutput(Exception):
    """The command ran but its output is unusable or wrong (a failed check, no result line)."""


@dataclass
class Run:
    status: str
    value: float = None
    error: str = ""
    wall_s: float = None
    peak_bytes: int = None  # the cgroup's peak: the process plus the page cache it filled
    footprint_bytes: int = None  # the command's own resident peak (heap, DI-MMAP buffer; no page cache)
    footprint_shared_bytes: int = None  # the part of it that is shared memory (a memfd buffer)
    extra: dict = field(default_factory=dict)
    command: str = ""


def _last_lines(text, n=2):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def _describe_exit(code):
    if code == 125:
        return "dimmap-budget failed"
    if code > 128:
        try:
            return f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            pass
    return f"exit status {code}"


class Runner:
    def __init__(self, tools, scratch_dir, default_timeout):
        self.tools = tools
        self.scratch_dir = scratch_dir
        self.default_timeout = default_timeout

    def run(self, cmd, budget_bytes, parse, env=None, evict=(), timeout=None, cwd=None, measure_footprint=False):
        """Runs cmd (a list) under a memory budget of budget_bytes. parse(stdout, stderr, seconds)
        returns (value, extra dict), or raises (InvalidOutput for a failed check).
        measure_footprint: Run.footprint_bytes is the peak of the command's anonymous and shared
        resident memory, from footprint.py run between dimmap-budget and the command (a maximum
        RSS from our own wait would start at this Python's ~70 MiB: a child's maximum RSS
        includes that of the process it was forked from)."""
        env = {k: str(v) for k, v in (env or {}).items()}
        try:
            budget_tool = self.tools.path("dimmap-budget")
        except ToolMissing as e:
            return Run(MISSING, error=str(e), command=shlex.join(cmd))
        fd, report_path = tempfile.mkstemp(prefix="budget-", suffix=".json", dir=self.scratch_dir)
        os.close(fd)
        os.unlink(report_path)  # dimmap-budget writes it; absent means it did not get that far
        wrapper = [budget_tool, f"--memory={budget_bytes}"] + [f"--evict={f}" for f in evict]
        footprint_path = report_path + ".footprint"
        meter = [sys.executable, FOOTPRINT, footprint_path, "--"] if measure_footprint else []
        full = wrapper + ["--name=compare", f"--report={report_path}", "-q", "--"] + meter + list(cmd)
        # What the results show: the command to repeat the run by hand (no private report file).
        shown = " ".join([f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())] + [shlex.join(wrapper + ["--"] + list(cmd))])
        limit = timeout or self.default_timeout
        start = time.monotonic()
        try:
            stdout, stderr, code, timed_out = self._execute(full, env, limit, cwd)
        finally:
            report = self._read_report(report_path)
            footprint, shared = self.read_footprint(footprint_path) if measure_footprint else (None, None)
        wall = report.get("seconds") or (time.monotonic() - start)
        peak = report.get("peak_bytes")
        run = Run(FAILED, wall_s=wall, peak_bytes=peak, footprint_bytes=footprint, footprint_shared_bytes=shared,
                  command=shown)
        if timed_out:
            run.status, run.error = TIMEOUT, f"no result within {limit:g} s (stopped)"
        elif report.get("oom_killed"):
            run.status = OOM
            run.error = f"OOM kill: the {budget_bytes >> 20} MiB budget is too small ({_describe_exit(code)})"
        elif code != 0:
            run.error = f"{_describe_exit(code)}: {_last_lines(stderr) or '(no message)'}"
        else:
            try:
                run.value, run.extra = parse(stdout, stderr, wall)
                run.status = OK
            except InvalidOutput as e:
                run.error = f"unusable output: {e}"
            except Exception as e:  # any other parse failure: the output is not what the parser knows
                run.error = f"unusable output: {type(e).__name__}: {e}"
        if run.status != OK:
            run.extra = {"stderr_tail": stderr.strip()[-2000:]}
        return run

    def _execute(self, full, env, limit, cwd):
        proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, **env), cwd=cwd, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=limit)
            return stdout, stderr, proc.returncode, False
        except subprocess.TimeoutExpired:
            stdout, stderr = self._stop(proc)
            return stdout, stderr, proc.returncode, True
        except BaseException:  # Ctrl-C: the command runs in its own session, stop it too
            self._stop(proc)
            raise

    @staticmethod
    def _stop(proc):
        """SIGTERM to dimmap-budget (it forwards it and removes its cgroup), then SIGKILL."""
        try:
            proc.send_signal(signal.SIGTERM)
            return proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return proc.communicate()

    @staticmethod
    def read_footprint(path):
        """footprint.py's (own, shared) bytes; (None, None) if the command did not get that far."""
        try:
            with open(path) as f:
                own, shared = (int(v) for v in f.read().split())
                return (own or None, shared if own else None)
        except (OSError, ValueError):
            return None, None
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass

    @staticmethod
    def _read_report(path):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
