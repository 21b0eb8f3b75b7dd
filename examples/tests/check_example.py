#!/usr/bin/env python3
"""check_example.py EXAMPLE BINARY - runs one program of examples/ on data files made here and
checks what it prints against values computed here from the same files: the checksums, the
effect of the writes, and the buffer counters that the example is meant to show.

EXAMPLE is c-api, placement-checksum or two-instances. The files go to a temporary directory
under the working directory (the test's build directory: storage, not tmpfs) and are removed.
"""
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

PAGE = 4096
MASK = (1 << 64) - 1


def checksum(data: bytes) -> int:
    """examples/checksum.h: 64-bit FNV-1a over little-endian 64-bit words."""
    h = 0xCBF29CE484222325
    for (word,) in struct.iter_unpack("<Q", data):
        h = ((h ^ word) * 0x100000001B3) & MASK
    return h


def make_file(path: str, size: int, seed: int) -> bytes:
    data = random.Random(seed).randbytes(size)
    with open(path, "wb") as f:
        f.write(data)
    return data


def fail(message: str) -> None:
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(binary: str, *args: str, expect_status: int = 0, engine: str = "") -> str:
    """Runs the example; engine: DIMMAP_ENGINE for it ("" = the default)."""
    env = dict(os.environ, DIMMAP_ENGINE=engine) if engine else None
    # A run takes about a second alone; beside the suite's 256-thread soak the C API example
    # took 70 s for its runs. The timeout catches a hang, not a slow machine.
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=400, env=env)
    if p.returncode != expect_status:
        fail(f"{os.path.basename(binary)} {' '.join(args)}: exit {p.returncode}, expected {expect_status}\n"
             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    print(p.stdout, end="")
    return p.stdout if expect_status == 0 else p.stderr


def number(text: str, pattern: str) -> int:
    m = re.search(pattern, text)
    if not m:
        fail(f"no match for {pattern!r} in:\n{text}")
    return int(m.group(1), 16 if "checksum" in pattern else 10)


def expect(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def refuses_missing_file(binary: str, work: str, *extra: str) -> None:
    missing = os.path.join(work, "no-such-file")
    err = run(binary, missing, *extra, expect_status=1)
    expect(missing in err, f"the message for a missing file does not name it: {err!r}")


def check_c_api(binary: str, work: str) -> None:
    # The default engine writes through the page cache, which the kernel writes in folios: a
    # folio of several pages (ext4 has large folios since Linux 6.16) is written whole, and
    # again if one of its pages is written after that, while the kernel may also write a dirty
    # page itself (its flusher, a sync() elsewhere) without the engine seeing it. So its count
    # of pages written back may be above or below the pages the example wrote (1536 of 1024
    # seen beside a busy suite). The userfaultfd engine writes every written page, once.
    for engine in ("", "uffd"):
        check_c_api_writes(binary, work, engine)
    refuses_missing_file(binary, work)


def check_c_api_writes(binary: str, work: str, engine: str) -> None:
    path = os.path.join(work, "data")
    size = 4 << 20  # 4x the example's 1 MiB buffer: pages must leave it
    before = make_file(path, size, seed=1)
    out = run(binary, path, engine=engine)
    expect(number(out, r"checksum before: ([0-9a-f]{16})") == checksum(before), "checksum before the writes")
    with open(path, "rb") as f:
        after = f.read()
    for page in range(size // PAGE):
        (first,) = struct.unpack_from("<Q", after, page * PAGE)
        expect(first == page, f"page {page} of the file starts with {first}, the example wrote {page}")
        rest = slice(page * PAGE + 8, (page + 1) * PAGE)
        expect(after[rest] == before[rest], f"page {page}: bytes the example did not write changed")
    expect(number(out, r"checksum after:  ([0-9a-f]{16})") == checksum(after), "checksum after the writes")
    expect(number(out, r"buffer pages: (\d+)") == (1 << 20) // PAGE, "the buffer is not 1 MiB")
    expect(number(out, r"misses: (\d+)") > 0, "no misses")
    expect(number(out, r"evictions: (\d+)") > 0, "a file 4x the buffer evicted nothing")
    written = number(out, r"bytes written: (\d+)")
    if engine == "uffd":
        expect(written >= size, "uffd engine: not every written page was counted as written back")
    else:
        expect(written > 0 and written % PAGE == 0, f"{written} bytes counted as written back: not whole pages")


def check_placement_checksum(binary: str, work: str) -> None:
    path = os.path.join(work, "data")
    size = 3 << 20
    expected = checksum(make_file(path, size, seed=2))
    out = run(binary, path, "512K")
    for backend in ("memory", "mmap", "dimmap"):
        got = number(out, rf"(?m)^{backend} +checksum ([0-9a-f]{{16}})")
        expect(got == expected, f"{backend}: checksum {got:016x}, the file's is {expected:016x}")
    expect(number(out, r"dimmap buffer: (\d+) pages") == (512 << 10) // PAGE, "the buffer is not 512K")
    expect(number(out, r"(\d+) bytes read") >= size, "the dimmap placement did not read the whole file")
    refuses_missing_file(binary, work)
    err = run(binary, path, "12Q", expect_status=1)
    expect("12Q" in err, f"a bad BUFFER_SIZE is not named: {err!r}")


def check_two_instances(binary: str, work: str) -> None:
    stream, table = os.path.join(work, "stream"), os.path.join(work, "table")
    stream_size, table_size = 4 << 20, 2 << 20
    stream_sum = checksum(make_file(stream, stream_size, seed=3))
    table_sum = checksum(make_file(table, table_size, seed=4))
    out = run(binary, stream, table)
    expect(number(out, r"table +first read +checksum ([0-9a-f]{16})") == table_sum, "table, first read")
    expect(number(out, r"stream +only read +checksum ([0-9a-f]{16})") == stream_sum, "stream")
    expect(number(out, r"table +second read +checksum ([0-9a-f]{16})") == table_sum, "table, second read")

    def stats(name: str) -> dict:
        line = re.search(rf"(?m)^{name}: file .*$", out)
        expect(line is not None, f"no counters for {name}")
        return {key: number(line.group(0), pattern) for key, pattern in (
            ("buffer", r"buffer (\d+) pages"), ("resident", r"resident (\d+) pages"),
            ("evictions", r"evictions (\d+)"), ("bytes_read", r"bytes read (\d+)"))}

    s, t = stats("stream"), stats("table")
    expect(s["buffer"] == (1 << 20) // PAGE and t["buffer"] == (4 << 20) // PAGE, "buffer sizes")
    expect(s["evictions"] > 0, "the stream, 4x its buffer, evicted nothing")
    expect(s["resident"] <= s["buffer"], "the stream holds more pages than its buffer")
    expect(t["evictions"] == 0, f"the table lost {t['evictions']} pages to the stream's buffer")
    expect(t["bytes_read"] == table_size,
           f"the table was read {t['bytes_read']} bytes from storage, once is {table_size}")
    refuses_missing_file(binary, work, table)


CHECKS = {"c-api": check_c_api, "placement-checksum": check_placement_checksum,
          "two-instances": check_two_instances}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        print(f"usage: check_example.py {{{'|'.join(CHECKS)}}} BINARY", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="example-", dir=os.getcwd()) as work:
        CHECKS[sys.argv[1]](sys.argv[2], work)
    print(f"{sys.argv[1]}: ok")
