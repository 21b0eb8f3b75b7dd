"""Where the programs an experiment runs live: the project's tools in the CMake build tree (or
the bin/ of an install prefix), system tools on PATH. A missing tool is not fatal: the configurations that need it are
reported as missing and the others run."""
import os
import shutil

# name -> path inside the build tree
BUILD_TOOLS = {
    "dimmap-budget": "apps/budget/dimmap-budget",
    "lriot": "apps/lriot/lriot",
    "microbench": "apps/microbench/microbench",
    "dimmap-run": "runtime/preload/dimmap-run",
    "dimmapctl": "runtime/tools/dimmapctl",
    "rmat-gen": "graph/rmat-gen",
    "graph-ingest": "graph/graph-ingest",
    "bfs": "graph/bfs",
    "kmer": "kmer/kmer",
    "bwa-mmap": "bwa-mmap/bwa-mmap",
    "lmdb-lookup": "apps/lmdb-lookup/lmdb-lookup",
}


class ToolMissing(Exception):
    """A program an experiment needs is not built or not installed."""

    def __init__(self, name, where):
        super().__init__(f"{name} is missing ({where})")
        self.name = name


class Tools:
    def __init__(self, build_dir, source_dir, overrides=None):
        self.build_dir = build_dir
        self.source_dir = source_dir
        self.overrides = dict(overrides or {})

    def path(self, name):
        """Absolute path of an executable tool; raises ToolMissing."""
        if name in self.overrides:
            path = self.overrides[name]
            if not os.access(path, os.X_OK):
                raise ToolMissing(name, f"--tool {name}={path} is not executable")
            return os.path.abspath(path)
        if name in BUILD_TOOLS:
            path = os.path.join(self.build_dir, BUILD_TOOLS[name])
            if os.access(path, os.X_OK):
                return path
            installed = os.path.join(self.build_dir, "bin", name)  # build_dir is an install prefix
            if os.access(installed, os.X_OK):
                return installed
            raise ToolMissing(name, f"not built: {path}")
        found = shutil.which(name)
        if not found:
            raise ToolMissing(name, "not on PATH; scripts/setup installs it")
        return found

    def dataset_script(self, name):
        """A script in datasets/ of the source tree."""
        path = os.path.join(self.source_dir, "datasets", name)
        if not os.access(path, os.X_OK):
            raise ToolMissing(name, f"{path} is missing")
        return path

    def available(self, name):
        try:
            self.path(name)
            return True
        except ToolMissing:
            return False
