"""Every experiment, in the order `all` runs them: the DI-MMAP paper's figures, then PerMA's,
HPMMAP's and the bwa-mmap thesis', then unmodified programs under dimmap-run --files."""
from . import bfs, bwa, kmer, lriot, microbench, overlay

_ORDER = ["lriot-read", "lriot-write", "dimmap-opt", "microbench", "kmer-lookup", "kmer-classify", "bfs-semi",
          "bfs-full", "bfs-sweep", "hot-fifo", "perma-lriot", "bfs-perma", "hpmmap", "bwa-index", "bwa-mem",
          "overlay-kraken2", "overlay-lmdb"]
_CLASSES = {cls.name: cls for m in (lriot, microbench, kmer, bfs, bwa, overlay) for cls in m.EXPERIMENTS}
assert sorted(_CLASSES) == sorted(_ORDER), "every experiment is in the order, once"

ALL = [_CLASSES[name]() for name in _ORDER]
BY_NAME = {e.name: e for e in ALL}
