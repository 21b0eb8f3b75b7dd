"""python3 footprint.py OUT -- CMD [ARG...]: runs CMD and writes to OUT the peak of its own
memory, its anonymous plus shared resident pages (RssAnon + RssShmem of /proc/PID/status,
sampled every few milliseconds), and then the peak of its shared pages alone, in bytes ("OWN
SHARED"); exits with CMD's status (128 + signal if killed). The shared pages tell where a
DI-MMAP buffer is: the userfaultfd engine's is a memfd (shared, so counted), the pagecache
engine's is the data file's page cache (not counted).
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


def resident_bytes(pid):
    """(RssAnon + RssShmem, RssShmem) of pid in bytes, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = {line.split()[0]: int(line.split()[1]) * 1024 for line in f if line.startswith(FIELDS)}
    except (OSError, ValueError, IndexError):
        return None
    own = sum(fields.values())
    return (own, fields.get("RssShmem:", 0)) if own else None


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
    """(own, shared) bytes of pid and its descendants."""
    both = [resident_bytes(p) or (0, 0) for p in descendants(pid)]
    return sum(b[0] for b in both), sum(b[1] for b in both)


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
    peak = shared_peak = 0
    while child.poll() is None:
        own, shared = tree_bytes(child.pid)
        peak, shared_peak = max(peak, own), max(shared_peak, shared)
        time.sleep(0.003)
    with open(out, "w") as f:
        f.write(f"{peak} {shared_peak}\n")
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
