#!/usr/bin/env python3
"""dimmap-run --files end to end on programs nobody here wrote (Debian's), each run twice in
the same memory cgroup (dimmap-budget): plainly, and with its database directory under
--files so that its mappings go through a DI-MMAP buffer smaller than the data.

usage: files_overlay_test.py DIMMAP_RUN DIMMAP_BUDGET [LMDB_LOOKUP]

Checks, for each program: its output is byte for byte the same both ways, the overlay really
took its mappings over (the preload's stats line: file_maps > 0 and DI-MMAP misses, so pages
were read through the buffer), and the files it reads are unchanged afterwards.
  LMDB:    a database several times the buffer, made by lmdb-lookup (apps/lmdb-lookup, the
           system liblmdb); mdb_stat (-a -e) and mdb_dump (lmdb-utils) and lmdb-lookup's random
           lookups. The directory is named through a symlink and a relative path; LMDB's lock
           file, mapped writable, is left to Linux with a notice.
  Kraken 2: kraken2 --memory-mapping with a small DB of three genomes (datasets/fetch-genomes
           ci: lambda, DWV, H. pylori), kept in the data cache, and simulated reads.
  Writable: a shared writable mapping under --files (Python's mmap) stays Linux's with one
           line on stderr; writes through it and pwrite() agree.
  Calls:   msync, mprotect, a partial munmap and mremap on a taken-over mapping (ctypes), and
           a fork()ed child, which reads the same bytes through Linux.
Exit 77 (skipped) if neither LMDB nor Kraken 2 can run here; each missing part is named.
"""
import errno
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("DIMMAP_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
CACHE = os.environ.get("DIMMAP_DATA_CACHE") or os.path.expanduser("~/.cache/dimmap")

passed = 0


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg):
    global passed
    passed += 1
    print(f"ok {passed} - {msg}", flush=True)


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def digests(directory):
    return {os.path.relpath(os.path.join(d, f), directory): digest(os.path.join(d, f))
            for d, _, files in os.walk(directory) for f in files}


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-800:]}")
    return p.stdout, p.stderr.decode(errors="replace")


class Sides:
    """Runs a command in a fresh cgroup of `budget`, plainly and under dimmap-run --files."""

    def __init__(self, dimmap_run, budget_tool, budget, buffer):
        self.dimmap_run, self.budget_tool, self.budget, self.buffer = dimmap_run, budget_tool, budget, buffer

    def plain(self, cmd, evict=(), cwd=None):
        ev = [f"--evict={f}" for f in evict]
        return run([self.budget_tool, f"--memory={self.budget}", "--quiet", *ev, "--", *cmd], cwd)

    def overlay(self, files, cmd, evict=(), cwd=None):
        ev = [f"--evict={f}" for f in evict]
        out, err = run([self.budget_tool, f"--memory={self.budget}", "--quiet", *ev, "--", self.dimmap_run, "--stats",
                        f"--files={files}", f"--buffer={self.buffer}", "--", *cmd], cwd)
        return out, err

    def same_both_ways(self, what, files, cmd, evict=(), cwd=None, min_read=1):
        plain, _ = self.plain(cmd, evict, cwd)
        over, err = self.overlay(files, cmd, evict, cwd)
        if not plain:
            fail(f"{what}: no output to compare")
        if plain != over:
            fail(f"{what}: output differs with --files ({len(plain)} vs {len(over)} bytes)\n{err[-600:]}")
        m = re.search(r"file_maps=(\d+) .*dimmap_misses=(\d+) .*dimmap_bytes_read=(\d+)", err)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1 or int(m.group(3)) < min_read:
            fail(f"{what}: the overlay did not serve the mappings (stats: {m.group(0) if m else err[-600:]})")
        ok(f"{what}: {len(plain)} bytes of output identical; {m.group(1)} mapping(s) through the buffer, "
           f"{m.group(2)} misses, {int(m.group(3)) >> 20} MiB read into it")
        return plain, err


def lmdb_part(sides, lookup_tool, work):
    missing = [t for t in ("mdb_stat", "mdb_dump") if not shutil.which(t)]
    if not lookup_tool or not os.access(lookup_tool, os.X_OK) or missing:
        print(f"# LMDB part skipped: {'lmdb-lookup not built (liblmdb-dev)' if not lookup_tool else ''} "
              f"{' '.join(missing) + ' missing (lmdb-utils)' if missing else ''}")
        return False
    db = os.path.join(work, "lmdb")
    run([lookup_tool, "build", db, "--records", "30000", "--value-size", "1000"])
    data = os.path.join(db, "data.mdb")
    size = os.path.getsize(data)
    if size < 4 * 8 << 20:
        fail(f"the LMDB database is {size} bytes, not several times the 8M buffer")
    os.symlink("lmdb", os.path.join(work, "db-link"))
    before = digest(data)
    # --files names the directory through a symlink and a relative path; the programs open it
    # through the other name, so only the kernel's resolved path can match.
    sides.same_both_ways("mdb_stat -a -e", "db-link", ["mdb_stat", "-a", "-e", "lmdb"], [data], cwd=work)
    _, err = sides.same_both_ways("mdb_dump", "db-link", ["mdb_dump", "lmdb"], [data], cwd=work,
                                  min_read=size // 2)
    if "lock.mdb' left to Linux: writable mapping" not in err:
        fail(f"LMDB's writable lock file mapping was not reported as left to Linux: {err[-600:]}")
    ok("LMDB's lock file (mapped writable) stayed Linux's, with a notice")
    out, _ = sides.same_both_ways("lmdb-lookup 20000 random lookups", os.path.join(work, "db-link"),
                                  [lookup_tool, "lookup", db, "--lookups", "20000", "--seed", "7"], [data])
    if b"wrong\t0\n" not in out or b"found\t20000\n" not in out:
        fail(f"lmdb-lookup found wrong values: {out.decode()}")
    if digest(data) != before:
        fail("data.mdb changed while it was only read")
    ok("data.mdb unchanged by the read-only runs")
    return True


def kraken2_db(work):
    """A Kraken 2 DB of the three smallest 'ci' genomes, cached (kraken2-build takes ~10 s)."""
    sys.path.insert(0, os.path.join(SRC, "kmer", "bench"))
    import kraken2_db  # noqa: E402 (the project's builder, shared with kmer-bench)
    data = os.path.join(CACHE, "kmer-ci")
    listing = subprocess.run([os.path.join(SRC, "datasets", "fetch-genomes"), data, "--set", "ci"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
    small = os.path.join(work, "three-genomes.tsv")
    with open(listing) as src, open(small, "w") as out:
        out.writelines(l for l in src if re.search(r"/(lambda|dwv|hpylori_g27)\.fa\t", l))
    db = os.path.join(CACHE, "kraken2-three-genomes")
    kraken2_db.build(small, os.path.join(data, "taxonomy"), db)
    return db, small


def kraken2_part(sides, work):
    missing = [t for t in ("kraken2", "kraken2-build") if not shutil.which(t)]
    if missing:
        print(f"# Kraken 2 part skipped: {' '.join(missing)} missing (Debian kraken2)")
        return False
    db, genomes = kraken2_db(work)
    reads = os.path.join(work, "reads")
    run([os.path.join(SRC, "datasets", "simulate-reads"), "--genomes", genomes, "--reads", "1500", "--out", reads])
    # The DB is read from a copy in the work directory: the cached one stays as it was.
    copy = os.path.join(work, "kraken2-db")
    os.makedirs(copy)
    for f in ("hash.k2d", "opts.k2d", "taxo.k2d"):
        shutil.copy(os.path.join(db, f), copy)
    before = digests(copy)
    reads_before = digest(reads + ".fq")
    outputs = {}
    for side in ("plain", "overlay"):
        out_dir = os.path.join(work, f"kraken2-{side}")
        os.makedirs(out_dir)
        cmd = ["kraken2", "--db", copy, "--memory-mapping", "--threads", "2", "--output",
               os.path.join(out_dir, "out.tsv"), "--report", os.path.join(out_dir, "report.txt"), reads + ".fq"]
        evict = [os.path.join(copy, "hash.k2d")]
        if side == "plain":
            sides.plain(cmd, evict)
        else:
            _, err = sides.overlay(copy, cmd, evict)
            m = re.search(r"file_maps=(\d+) .*dimmap_misses=(\d+)", err)
            if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
                fail(f"kraken2: the overlay did not serve hash.k2d: {err[-600:]}")
            maps = m.group(1)
        outputs[side] = {f: digest(os.path.join(out_dir, f)) for f in ("out.tsv", "report.txt")}
    if outputs["plain"] != outputs["overlay"]:
        fail(f"kraken2: classification or report differs with --files: {outputs}")
    with open(os.path.join(work, "kraken2-plain", "out.tsv")) as f:
        lines = sum(1 for _ in f)
    if lines != 1500:
        fail(f"kraken2 classified {lines} reads, not 1500")
    ok(f"kraken2 --memory-mapping: classification and report identical ({lines} reads, {maps} mapping(s) "
       "through the buffer)")
    if digests(copy) != before or digest(reads + ".fq") != reads_before:
        fail("kraken2's DB or reads changed")
    ok("kraken2's DB and reads unchanged")
    return True


def writable_part(dimmap_run, work):
    """A shared writable mapping of a file under --files, also changed with pwrite()."""
    d = os.path.join(work, "writable")
    os.makedirs(d)
    path = os.path.join(d, "f.bin")
    with open(path, "wb") as f:
        f.write(b"\0" * 65536)
    prog = ("import mmap,os,sys; fd=os.open(sys.argv[1],os.O_RDWR); m=mmap.mmap(fd,65536); "
            "m[0:5]=b'hello'; os.pwrite(fd,b'world',5); sys.stdout.write(m[0:10].decode()); m.close()")
    out, err = run([dimmap_run, f"--files={d}", "--buffer=1M", "--", sys.executable, "-c", prog, path])
    if out != b"helloworld":
        fail(f"writable mapping and pwrite() disagree: {out!r}")
    with open(path, "rb") as f:
        if f.read(10) != b"helloworld":
            fail("the file lacks what was written through the mapping and pwrite()")
    notices = [l for l in err.splitlines() if "left to Linux" in l]
    if len(notices) != 1 or "f.bin" not in notices[0]:
        fail(f"expected one notice naming f.bin, got: {err}")
    ok(f"writable shared mapping stays Linux's and coherent with pwrite(): {notices[0]}")


CALLS_PROBE = r"""
import ctypes, hashlib, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mremap.restype = ctypes.c_void_p
libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
for f in (libc.munmap, libc.mprotect, libc.msync):
    f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int][: 3 if f is not libc.munmap else 2]
path, size = sys.argv[1], os.path.getsize(sys.argv[1])
fd = os.open(path, os.O_RDONLY)
addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
os.close(fd)
digest = lambda a, n: hashlib.sha256(ctypes.string_at(a, n)).hexdigest()
print("read", digest(addr, size))
print("msync", libc.msync(addr, size, 4))  # MS_SYNC
print("mprotect-write", libc.mprotect(addr, size, 3), ctypes.get_errno())
print("munmap-part", libc.munmap(addr, 4096), ctypes.get_errno())
half = libc.mremap(addr, size, size // 2, 1)  # MREMAP_MAYMOVE
print("mremap", digest(half, size // 2))
pid = os.fork()
if pid == 0:  # no fault server here: the file is Linux's at the same address
    print("child", digest(half, size // 2), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("munmap", libc.munmap(half, size // 2))
"""


def calls_part(dimmap_run, work):
    """msync, mprotect, munmap and mremap on a mapping the buffer took over, and fork()."""
    d = os.path.join(work, "calls")
    os.makedirs(d)
    path = os.path.join(d, "data.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(4 << 20))
    with open(path, "rb") as f:
        whole = hashlib.sha256(f.read()).hexdigest()
        f.seek(0)
        half = hashlib.sha256(f.read(2 << 20)).hexdigest()
    out, err = run([dimmap_run, f"--files={d}", "--buffer=1M", "--stats", "--", sys.executable, "-c", CALLS_PROBE,
                    path])
    got = dict(l.split(" ", 1) for l in out.decode().splitlines())
    want = {"read": whole, "msync": "0", "mprotect-write": f"-1 {errno.EACCES}", "munmap-part": f"-1 {errno.EINVAL}",
            "mremap": half, "child": half, "munmap": "0"}
    if got != want:
        fail(f"mapping calls on an overlay mapping: got {got}, want {want}\n{err[-800:]}")
    if not re.search(r"file_maps=2 ", err):  # the first mapping and the one mremap made
        fail(f"expected two mappings through the buffer: {err[-600:]}")
    ok("msync, mprotect (EACCES for PROT_WRITE), partial munmap (EINVAL), mremap MAYMOVE and a fork()ed child "
       "all see the file's bytes")


def cli_part(dimmap_run, work):
    """--help states the choice for writable mappings; a --files that is no directory is refused."""
    out, _ = run([dimmap_run, "--help"])
    if b"Writable mappings" not in out or b"stay Linux's" not in out:
        fail(f"dimmap-run --help does not say what happens to writable mappings:\n{out.decode()}")
    ok("dimmap-run --help says writable mappings stay Linux's")
    for bad, needle in ((os.path.join(work, "missing"), "No such file"), (__file__, "is not a directory")):
        p = subprocess.run([dimmap_run, f"--files={bad}", "--", "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 2 or needle not in p.stderr or bad not in p.stderr:
            fail(f"--files={bad}: exit {p.returncode}, {p.stderr!r}")
    ok("--files naming no directory exits 2 naming it")


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    dimmap_run, budget_tool = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    lookup_tool = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else ""
    if not os.access(budget_tool, os.X_OK):
        print(f"skipped: {budget_tool} is not built (apps/budget)")
        return 77
    work = tempfile.mkdtemp(prefix="files-overlay-", dir=os.environ.get("DIMMAP_TEST_DIR", "/var/tmp"))
    try:
        sides = Sides(dimmap_run, budget_tool, "32M", "8M")
        cli_part(dimmap_run, work)
        writable_part(dimmap_run, work)
        calls_part(dimmap_run, work)
        ran = lmdb_part(sides, lookup_tool, work)
        ran = kraken2_part(Sides(dimmap_run, budget_tool, "32M", "1M"), work) or ran
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not ran:
        print("skipped: neither LMDB (lmdb-lookup, lmdb-utils) nor Kraken 2 is available")
        return 77
    print(f"{passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
