"""python3 footprint.py OUT -- CMD [ARG...]: runs CMD and writes to OUT the peak of its own
memory, its anonymous plus shared resident pages (RssAnon + RssShmem of /proc/PID/status,
sampled every few milliseconds), in bytes; exits with CMD's status (128 + signal if killed).
A CMD that runs its work in child processes (dimmap-run starts the program it launches) is
measured with them: the sum over CMD and its descendants at each sample.

Why not the maximum RSS (GNU time, wait4): that counts the file pages the process maps, its
binary and libraries and the data it reads through mmap, some 6 MiB for the BFS, which are
page cache the kernel reclaims under a budget, not memory the process needs. A DI-MMAP buffer
and the heap are anonymous memory, so this is what a budget must hold beside the page cache."""
import os
import signal
import subprocess
import sys
import time

FIELDS = ("RssAnon:", "RssShmem:")


def resident_own_bytes(pid):
    """RssAnon + RssShmem of pid in bytes, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return sum(int(line.split()[1]) * 1024 for line in f if line.startswith(FIELDS)) or None
    except (OSError, ValueError, IndexError):
        return None


def descendants(pid):
    """pid and every process below it (/proc/PID/task/TID/children)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return found


def tree_bytes(pid):
    return sum(resident_own_bytes(p) or 0 for p in descendants(pid))


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    out, cmd = argv[1], argv[3:]
    try:
        child = subprocess.Popen(cmd)
    except OSError as e:
        print(f"footprint: cannot run '{cmd[0]}': {e}", file=sys.stderr)
        return 127
    # dimmap-budget stops a run with SIGTERM: pass it on.
    signal.signal(signal.SIGTERM, lambda sig, frame: child.send_signal(sig))
    peak = 0
    while child.poll() is None:
        peak = max(peak, tree_bytes(child.pid))
        time.sleep(0.003)
    with open(out, "w") as f:
        f.write(f"{peak}\n")
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
