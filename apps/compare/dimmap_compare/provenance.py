"""What a result depends on: the machine, the source commit, the build, library and tool
versions. Stamped on every experiment (HDF5 attributes, JSON)."""
import datetime
import os
import platform
import re
import subprocess
import sys

from . import VERSION


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _output(cmd, cwd=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=cwd)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def load_average():
    return " ".join(_read("/proc/loadavg").split()[:3])


def machine(data_dir):
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    st = os.statvfs(data_dir)
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu.group(1) if cpu else platform.processor(),
        "cores": os.cpu_count(),
        "memory_bytes": int(mem.group(1)) * 1024 if mem else None,
        "load_average": load_average(),
        "cgroup": "v1" if os.path.exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") else "v2",
        "data_filesystem": _filesystem(data_dir),
        "data_free_bytes": st.f_bavail * st.f_frsize,
    }


def _filesystem(path):
    """'ext4 on /dev/vda' for the mount holding path."""
    best = ("", "", "")
    path = os.path.realpath(path)
    for line in _read("/proc/mounts").splitlines():
        dev, mnt, fstype = line.split()[:3]
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1]):
            best = (dev, mnt, fstype)
    return f"{best[2]} on {best[0]} ({best[1]})" if best[0] else "unknown"


def git(source_dir):
    commit = _output(["git", "rev-parse", "HEAD"], cwd=source_dir)
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        return {"commit": "unknown", "describe": "not a git checkout", "dirty": None}
    dirty = bool(_output(["git", "status", "--porcelain", "--untracked-files=no"], cwd=source_dir))
    return {"commit": commit, "describe": _output(["git", "describe", "--always", "--dirty"], cwd=source_dir),
            "dirty": dirty}


def _python_module_version(name):
    try:
        module = __import__(name)
        return getattr(module, "__version__", "?")
    except ImportError:
        return "missing"


def versions(build):
    v = {"dimmap-compare": VERSION, "dimmap": build.get("dimmap_version", "?"),
         "compiler": build.get("compiler", "?"), "build_type": build.get("build_type", "?"),
         "python": sys.version.split()[0]}
    for name in ("numpy", "matplotlib", "h5py"):
        v[name] = _python_module_version(name)
    try:
        import h5py
        v["hdf5"] = h5py.version.hdf5_version
    except ImportError:
        pass
    bwa = re.search(r"Version:\s*(\S+)", _output(["bwa"]))
    v["bwa"] = bwa.group(1) if bwa else "missing"
    stress = re.search(r"version\s+(\S+)", _output(["stress-ng", "--version"]))
    v["stress-ng"] = stress.group(1) if stress else "missing"
    return v


def collect(source_dir, data_dir, build, command):
    return {"machine": machine(data_dir), "git": git(source_dir), "versions": versions(build),
            "build_dir": build.get("build_dir", "?"), "command": command,
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
