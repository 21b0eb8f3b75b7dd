"""What the PerMA experiments share: the modelled NVRAM generations (DIMMAP_PERMA presets of
the PerMA paper's Table I) plus a run without a model, on data kept in a private tmpfs
directory that is removed afterwards."""
from ..datasets import TmpfsCopy
from ..results import Ratio

GENERATIONS = ["lcurr", "lnxt1", "lnxt2", "lnxt3", "sim-opt"]
NO_MODEL = "none (tmpfs speed)"


def configs():
    """[(label, environment)]: no model first, then each generation."""
    return [(NO_MODEL, {})] + [(g, {"DIMMAP_PERMA": g}) for g in GENERATIONS]


def ratios(newer=("lnxt1", "lnxt2", "lnxt3", "sim-opt")):
    return [Ratio(g, "lcurr", f"{g} / lcurr") for g in newer]


class OnTmpfs:
    """Mixin: self.tmpfs (a TmpfsCopy made in setup) is removed in teardown."""
    tmpfs = None

    def make_tmpfs(self, prefix):
        self.tmpfs = TmpfsCopy(prefix)
        return self.tmpfs

    def teardown(self, ctx):
        if self.tmpfs:
            self.tmpfs.cleanup()
            self.tmpfs = None
