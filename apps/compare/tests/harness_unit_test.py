#!/usr/bin/python3
"""Unit tests of dimmap-compare's pure parts: sizes and numbers, summaries and ratios of runs,
the printed table, cross-checks between placements, the results files' round trip, and the
reader of the tools' --json summaries."""
import csv
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import h5py  # noqa: E402

from dimmap_compare import units  # noqa: E402
from dimmap_compare.experiment import Point, mark_disagreements  # noqa: E402
from dimmap_compare.experiments.kmer import KRAKEN2, KmerClassify, fastq_bases, kraken2_parser  # noqa: E402
from dimmap_compare.results import Document, ExperimentResult, Ratio  # noqa: E402
from dimmap_compare.runner import InvalidOutput, Run, Runner  # noqa: E402
from dimmap_compare.summary import parse_summary, summary_parser, with_summary  # noqa: E402
from dimmap_compare.tools import Tools  # noqa: E402
from dimmap_compare.table import format_experiment  # noqa: E402
from dimmap_compare.writers import CSV_COLUMNS, write_csv, write_h5, write_json  # noqa: E402


def result_with(runs, statistic="median"):
    """An experiment result holding runs given as (config, x, status, value[, extra])."""
    r = ExperimentResult(name="t", figure="Fig. 0", title="test", about="", metric="IOPS", unit="ops/s",
                         x_label="threads", statistic=statistic, params={"budget_bytes": 48 << 20, "repeat": 3,
                                                                         "data_bytes": 1 << 30})
    for i, item in enumerate(runs):
        config, x, status, value = item[:4]
        run = Run(status, value=value, error="" if status == "ok" else f"boom {config}", wall_s=1.0,
                  extra=item[4] if len(item) > 4 else {})
        r.add_run(Point(config, x, ["true"], 48 << 20, None, params={"threads": x}), i, run)
    return r


class Units(unittest.TestCase):
    def test_parse_size(self):
        self.assertEqual(units.parse_size("4096"), 4096)
        self.assertEqual(units.parse_size("256M"), 256 << 20)
        self.assertEqual(units.parse_size("4g"), 4 << 30)
        self.assertEqual(units.parse_size("1GiB"), 1 << 30)
        for bad in ("", "M", "-1M", "1.5G", "12Q", "0"):
            with self.assertRaises(ValueError, msg=bad):
                units.parse_size(bad)

    def test_format(self):
        self.assertEqual(units.format_size(256 << 20), "256M")
        self.assertEqual(units.format_size(1536 << 20), "1.5G")
        self.assertEqual(units.format_size(1000), "1000")
        self.assertEqual(units.format_number(12345.6), "12.3K")
        self.assertEqual(units.format_number(0.01234), "0.0123")
        self.assertEqual(units.format_number(None), "-")

    def test_parse_list(self):
        self.assertEqual(units.parse_list("1, 4,16"), [1, 4, 16])
        for bad in ("", "a,b", "0,4"):
            with self.assertRaises(ValueError, msg=bad):
                units.parse_list(bad)


class Summaries(unittest.TestCase):
    def test_median_partial_and_failed(self):
        r = result_with([("a", 4, "ok", 10.0), ("a", 4, "ok", 30.0), ("a", 4, "ok", 20.0),
                         ("b", 4, "ok", 5.0), ("b", 4, "oom", None), ("c", 4, "failed", None)])
        s = {x["config"]: x for x in r.summary()}
        self.assertEqual(s["a"]["value"], 20.0)
        self.assertEqual((s["a"]["min"], s["a"]["max"], s["a"]["status"]), (10.0, 30.0, "ok"))
        self.assertEqual((s["b"]["status"], s["b"]["value"], s["b"]["ok"]), ("partial", 5.0, 1))
        self.assertEqual((s["c"]["status"], s["c"]["value"]), ("failed", None))
        self.assertEqual(s["c"]["error"], "boom c")

    def test_mean_statistic_has_variance(self):
        r = result_with([("a", "alone", "ok", 1.0), ("a", "alone", "ok", 3.0)], statistic="mean")
        s = r.summary()[0]
        self.assertEqual(s["value"], 2.0)
        self.assertAlmostEqual(s["variance"], 2.0)
        self.assertAlmostEqual(s["stdev"], math.sqrt(2.0))

    def test_ratios_only_where_both_sides_ran(self):
        r = result_with([("dimmap", 4, "ok", 30.0), ("mmap", 4, "ok", 10.0),
                         ("dimmap", 16, "ok", 50.0), ("mmap", 16, "timeout", None)])
        r.ratios = [Ratio("dimmap", "mmap", "d/m")]
        [(ratio, pairs)] = r.ratio_values()
        self.assertEqual(pairs, [(4, 3.0)])


class Table(unittest.TestCase):
    def test_failures_are_shown_with_their_reason(self):
        r = result_with([("dimmap", 4, "ok", 30000.0), ("mmap", 4, "oom", None), ("mmap", 16, "oom", None),
                         ("dimmap", 16, "ok", 45000.0)])
        r.ratios = [Ratio("dimmap", "mmap", "dimmap / mmap")]
        text = format_experiment(r)
        self.assertIn("30K", text)
        self.assertIn("45K", text)
        self.assertEqual(text.count("OOM[1]"), 2)  # one footnote for the same reason
        self.assertIn("[1] oom: boom mmap", text)
        self.assertIn("ratio dimmap / mmap: n/a", text)
        self.assertIn("data 1G", text)
        self.assertIn("budget 48M", text)

    def test_unavailable_experiment(self):
        r = result_with([])
        r.unavailable = "kmer is missing"
        self.assertIn("NOT RUN: kmer is missing", format_experiment(r))


class CrossCheck(unittest.TestCase):
    def test_disagreeing_answers_are_marked_wrong(self):
        r = result_with([("memory", 4, "ok", 1.0, {"sum": "aa"}), ("mmap", 4, "ok", 2.0, {"sum": "aa"}),
                         ("dimmap", 4, "ok", 3.0, {"sum": "bb"}), ("dimmap", 16, "ok", 3.0, {"sum": "bb"})])
        mark_disagreements(r, lambda run: run["x"], lambda run: run["extra"]["sum"], "answers")
        status = [(run["config"], run["x"], run["status"]) for run in r.runs]
        self.assertEqual(status, [("memory", 4, "ok"), ("mmap", 4, "ok"), ("dimmap", 4, "wrong"), ("dimmap", 16, "ok")])
        self.assertIn("differ from memory's", r.runs[2]["error"])
        self.assertIsNone(r.runs[2]["value"])


class Files(unittest.TestCase):
    def test_round_trip_and_merge(self):
        with tempfile.TemporaryDirectory() as d:
            a = result_with([("dimmap", 4, "ok", 3.0), ("mmap", 4, "failed", None)])
            a.provenance = {"machine": {"hostname": "h", "cores": 2}, "git": {"commit": "c" * 40},
                            "versions": {"dimmap": "0.1.0"}, "command": "x"}
            doc = Document(meta={"last_command": "x"})
            doc.put(a)
            path = os.path.join(d, "results.json")
            write_json(path, doc)
            again = Document.load(path)
            self.assertEqual(list(again.experiments), ["t"])
            self.assertEqual(again.experiments["t"].summary(), a.summary())
            b = result_with([("x", 1, "ok", 1.0)])
            b.name = "u"
            again.put(b)  # a second experiment joins, the first stays
            write_json(path, again)
            write_csv(os.path.join(d, "results.csv"), list(again.experiments.values()))
            write_h5(os.path.join(d, "results.h5"), again)
            with open(os.path.join(d, "results.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(list(rows[0].keys()), CSV_COLUMNS)
            self.assertEqual([(r["experiment"], r["config"], r["status"]) for r in rows],
                             [("t", "dimmap", "ok"), ("t", "mmap", "failed"), ("u", "x", "ok")])
            with h5py.File(os.path.join(d, "results.h5")) as f:
                self.assertEqual(sorted(f.keys()), ["t", "u"])
                g = f["t"]
                self.assertEqual(g.attrs["machine.hostname"], "h")
                self.assertEqual(g.attrs["git.commit"], "c" * 40)
                self.assertEqual(g.attrs["param.budget_bytes"], 48 << 20)
                self.assertEqual(json.loads(g.attrs["params_json"])["data_bytes"], 1 << 30)
                values = g["runs/value"][:]
                self.assertEqual(values[0], 3.0)
                self.assertTrue(math.isnan(values[1]))
                self.assertEqual([s.decode() for s in g["summary/status"][:]], ["ok", "failed"])
            self.assertEqual(sorted(os.listdir(d)), ["results.csv", "results.h5", "results.json"])  # no temporaries

    def test_foreign_json_is_not_merged(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.json")
            with open(path, "w") as f:
                json.dump({"schema": "something-else", "experiments": {"t": {}}}, f)
            self.assertEqual(Document.load(path).experiments, {})


# A stand-in for dimmap-budget: writes the report (OOM if FAKE_OOM is set), then becomes CMD.
FAKE_BUDGET = """#!/bin/sh
for a in "$@"; do case "$a" in --report=*) report="${a#--report=}";; esac; done
while [ "$1" != "--" ]; do shift; done; shift
if [ -n "$FAKE_OOM" ]; then echo '{"peak_bytes": 999, "oom_killed": true}' > "$report"; exit 137; fi
echo '{"peak_bytes": 123, "oom_killed": false, "seconds": 0.25}' > "$report"
exec "$@"
"""


class Outcomes(unittest.TestCase):
    """Every way a run can end becomes a Run with a status and a reason."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        fake = os.path.join(self.dir.name, "fake-budget")
        with open(fake, "w") as f:
            f.write(FAKE_BUDGET)
        os.chmod(fake, 0o755)
        self.runner = Runner(Tools(self.dir.name, self.dir.name, {"dimmap-budget": fake}), self.dir.name, 30)

    def tearDown(self):
        self.dir.cleanup()

    def run_cmd(self, cmd, parse=lambda out, err, s: (float(out), {}), **kw):
        return self.runner.run(cmd, 64 << 20, parse, **kw)

    def test_ok(self):
        r = self.run_cmd(["sh", "-c", "echo 42"], env={"X": "1"})
        self.assertEqual((r.status, r.value, r.peak_bytes, r.wall_s), ("ok", 42.0, 123, 0.25))
        self.assertIn("X=1 ", r.command)
        self.assertIn("--memory=67108864", r.command)
        self.assertNotIn("--report", r.command)  # the private report file is not part of the shown command

    def test_failure_keeps_the_message(self):
        r = self.run_cmd(["sh", "-c", "echo boom >&2; exit 3"])
        self.assertEqual((r.status, r.value), ("failed", None))
        self.assertEqual(r.error, "exit status 3: boom")

    def test_oom(self):
        r = self.run_cmd(["true"], env={"FAKE_OOM": "1"})
        self.assertEqual(r.status, "oom")
        self.assertIn("64 MiB budget is too small", r.error)

    def test_timeout_stops_the_command(self):
        r = self.run_cmd(["sleep", "30"], timeout=0.5)
        self.assertEqual(r.status, "timeout")
        self.assertLess(r.wall_s, 10)

    def test_unusable_output(self):
        def parse(out, err, s):
            raise InvalidOutput("validation did not pass")
        self.assertEqual(self.run_cmd(["true"], parse=parse).error, "unusable output: validation did not pass")
        r = self.run_cmd(["sh", "-c", "echo not-a-number"])
        self.assertEqual(r.status, "failed")
        self.assertIn("unusable output: ValueError", r.error)

    def test_missing_budget_tool(self):
        runner = Runner(Tools(self.dir.name, self.dir.name), self.dir.name, 30)
        r = runner.run(["true"], 1 << 20, lambda *a: (1.0, {}))
        self.assertEqual(r.status, "missing")
        self.assertIn("dimmap-budget is missing", r.error)


class ToolSummaries(unittest.TestCase):
    def test_a_summary_is_read_once_and_removed(self):
        with tempfile.TemporaryDirectory() as d:
            cmd = with_summary(["bfs", "--graph=g"], d)
            self.assertEqual(cmd[:2], ["bfs", "--graph=g"])
            path = cmd[-1].split("=", 1)[1]
            self.assertEqual(os.path.dirname(path), d)
            with open(path, "w") as f:
                json.dump({"tool": "bfs", "wall_seconds": 1.5, "rate": 2.5e6, "rate_unit": "TEPS", "searches": 2}, f)
            parse = summary_parser(cmd, "bfs", extra=lambda s: {"searches": s["searches"]})
            self.assertEqual(parse("", "", 1.0), (2.5e6, {"searches": 2}))
            self.assertFalse(os.path.exists(path))  # a later run that writes none gets no numbers
            with self.assertRaisesRegex(InvalidOutput, "no summary"):
                parse("", "", 1.0)

    def test_what_is_not_a_summary_of_the_tool_is_refused(self):
        self.assertEqual(parse_summary('{"tool": "lriot", "rate": 10}', "lriot")["rate"], 10)
        for text, why in (("IOPS 5", "not JSON"), ('{"tool": "bfs", "rate": 1}', "not a lriot summary"),
                          ('{"tool": "lriot"}', "no rate"), ('{"tool": "lriot", "rate": "fast"}', "no rate")):
            with self.assertRaisesRegex(InvalidOutput, why):
                parse_summary(text, "lriot")


class Kraken2Reference(unittest.TestCase):
    """kmer-classify's kraken2 --memory-mapping configuration."""

    def test_without_kraken2_its_points_are_not_run_with_the_reason(self):
        p = {"budget_bytes": 48 << 20, "kraken2_db": None, "kraken2_skip": "kraken2-build is missing (not on PATH)",
             "kraken2_status": "missing"}
        point = KmerClassify().kraken2_point(p, 4, "simulated", "reads.fq", "out")
        self.assertEqual((point.config, point.skip, point.skip_status),
                         (KRAKEN2, "kraken2-build is missing (not on PATH)", "missing"))

    def test_bases_per_second_from_the_reads_and_kraken2s_seconds(self):
        with tempfile.TemporaryDirectory() as d:
            fq = os.path.join(d, "r.fq")
            with open(fq, "w") as f:
                f.write("@a\nACGT\n+\nIIII\n@b\nACGTACGTAC\n+\nIIIIIIIIII\n")
            self.assertEqual(fastq_bases(fq), (2, 14))
            parse = kraken2_parser(os.path.join(d, "out"), 2, 14)
            value, extra = parse("", "Loading database information... done.\n2 sequences (0.00 Mbp) processed in "
                                     "0.500s (0.2 Kseq/m, 0.00 Mbp/m).\n", 9.0)
            self.assertEqual((value, extra["reads"], extra["seconds"]), (28.0, 2, 0.5))
            with self.assertRaisesRegex(InvalidOutput, "processed 1 of 2 reads"):
                parse("", "1 sequences (0.00 Mbp) processed in 0.5s", 9.0)
            with self.assertRaisesRegex(InvalidOutput, "no 'sequences"):
                parse("", "kraken2: database not found", 9.0)


if __name__ == "__main__":
    unittest.main()
