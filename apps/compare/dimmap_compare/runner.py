"""Runs one configuration: the command in a fresh memory cgroup of the experiment's budget
(dimmap-budget, apps/budget), started cold (its data files evicted from the page cache),
with a time limit. Whatever happens, the outcome is a Run: a failure is data, not an
exception, so the experiment goes on with its other configurations."""
import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from .tools import ToolMissing

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
    max_rss_bytes: int = None  # the process's own resident peak (its heap and DI-MMAP buffer, no page cache)
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

    def run(self, cmd, budget_bytes, parse, env=None, evict=(), timeout=None, cwd=None):
        """Runs cmd (a list) under a memory budget of budget_bytes. parse(stdout, stderr, seconds)
        returns (value, extra dict), or raises (InvalidOutput for a failed check)."""
        env = {k: str(v) for k, v in (env or {}).items()}
        try:
            budget_tool = self.tools.path("dimmap-budget")
        except ToolMissing as e:
            return Run(MISSING, error=str(e), command=shlex.join(cmd))
        fd, report_path = tempfile.mkstemp(prefix="budget-", suffix=".json", dir=self.scratch_dir)
        os.close(fd)
        os.unlink(report_path)  # dimmap-budget writes it; absent means it did not get that far
        wrapper = [budget_tool, f"--memory={budget_bytes}"] + [f"--evict={f}" for f in evict]
        full = wrapper + ["--name=compare", f"--report={report_path}", "-q", "--"] + list(cmd)
        # What the results show: the command to repeat the run by hand (no private report file).
        shown = " ".join([f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())] + [shlex.join(wrapper + ["--"] + list(cmd))])
        limit = timeout or self.default_timeout
        start = time.monotonic()
        try:
            stdout, stderr, code, timed_out, max_rss = self._execute(full, env, limit, cwd)
        finally:
            report = self._read_report(report_path)
        wall = report.get("seconds") or (time.monotonic() - start)
        peak = report.get("peak_bytes")
        run = Run(FAILED, wall_s=wall, peak_bytes=peak, max_rss_bytes=max_rss, command=shown)
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
        """Runs full with its output in files (not pipes), so the exit can be collected with
        wait4: its resource usage holds the biggest resident set of dimmap-budget and the
        command it waited for. Returns (stdout, stderr, exit code, timed out, max RSS bytes)."""
        with tempfile.TemporaryFile(mode="w+", dir=self.scratch_dir) as out, \
                tempfile.TemporaryFile(mode="w+", dir=self.scratch_dir) as err:
            proc = subprocess.Popen(full, stdout=out, stderr=err, text=True, env=dict(os.environ, **env), cwd=cwd,
                                    start_new_session=True)
            timed_out = False
            try:
                status, usage = self._wait(proc, time.monotonic() + limit)
                if status is None:
                    timed_out = True
                    status, usage = self._stop(proc)
            except BaseException:  # Ctrl-C: the command runs in its own session, stop it too
                self._stop(proc)
                raise
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return out.read(), err.read(), proc.returncode, timed_out, usage.ru_maxrss * 1024

    @staticmethod
    def _wait(proc, deadline):
        """(wait status, rusage) of proc, or (None, None) if it is still running at deadline."""
        pause = 0.005
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                return status, usage
            if time.monotonic() >= deadline:
                return None, None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    @classmethod
    def _stop(cls, proc):
        """SIGTERM to dimmap-budget (it forwards it and removes its cgroup), then SIGKILL."""
        try:  # os.kill, not proc.send_signal: that polls, and would collect the exit status before wait4
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        status, usage = cls._wait(proc, time.monotonic() + 20)
        if status is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status, usage = os.wait4(proc.pid, 0)
        return status, usage

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
