"""The tools' --json summaries (runtime/include/dimmap/json_summary.hpp): one JSON object per
run with "tool", "wall_seconds", "rate", "rate_unit", the tool's own numbers and, when a DI-MMAP
buffer was used, "dimmap_stats". One reader for every tool, in place of scraping each one's text.
An experiment adds `--json=PATH` to a command (with_summary) and parses the run by reading PATH
back (summary_parser of the same command)."""
import itertools
import json
import os

from .runner import InvalidOutput

_serial = itertools.count()


def with_summary(cmd, scratch_dir):
    """cmd + ["--json=PATH"], PATH a fresh file in scratch_dir."""
    return list(cmd) + [f"--json={os.path.join(scratch_dir, f'summary-{os.getpid()}-{next(_serial)}.json')}"]


def summary_file(cmd):
    """The PATH of cmd's --json=PATH."""
    for arg in reversed(cmd):
        if arg.startswith("--json="):
            return arg[len("--json="):]
    raise ValueError(f"no --json=PATH in {cmd}")


def parse_summary(text, tool, where="the summary"):
    """The summary object in text; InvalidOutput unless it is JSON from `tool` with a rate."""
    try:
        s = json.loads(text)
    except ValueError as e:
        raise InvalidOutput(f"{where} is not JSON ({e})") from None
    if not isinstance(s, dict) or s.get("tool") != tool:
        raise InvalidOutput(f"{where} is not a {tool} summary")
    if not isinstance(s.get("rate"), (int, float)):
        raise InvalidOutput(f"{where} has no rate")
    return s


def read_summary(path, tool):
    """The summary a command wrote to path, which is then removed: a later run of the same
    command that writes none must not be credited with this one's numbers."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        raise InvalidOutput(f"no summary {os.path.basename(path)} (--json) was written") from None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return parse_summary(text, tool, os.path.basename(path))


def summary_parser(cmd, tool, value=lambda s: s["rate"], extra=lambda s: {}):
    """parse(stdout, stderr, seconds) for Runner.run of cmd (from with_summary): (value(s),
    extra(s)) of its summary; value and extra may raise InvalidOutput for numbers that do not count."""
    path = summary_file(cmd)

    def parse(stdout, stderr, seconds):
        s = read_summary(path, tool)
        return float(value(s)), extra(s)
    return parse
