"""The bench report: figures against the raw link, and the merged JSON array."""
import json
import os
import tempfile
import unittest

from toroid_cli import benchreport

LINK = [
    {"coll": "link-pingpong", "algo": "memif", "bytes": 64, "lat_us": {"min": 1.0, "median": 2.0, "max": 3.0}},
    {"coll": "link-pingpong", "algo": "memif", "bytes": 9000, "lat_us": {"min": 5.0, "median": 6.0, "max": 7.0}},
    {"coll": "link-stream", "algo": "memif", "bytes": 1500, "busbw_gbps": 2.0, "lat_us": None},
    {"coll": "link-stream", "algo": "memif", "bytes": 9000, "busbw_gbps": 4.0, "lat_us": None},
]


def read(path):
    with open(path) as f:
        return f.read()


def sweep_rec(coll, algo, size, median, busbw, **kw):
    r = {"coll": coll, "algo": algo, "nodes": 2, "bytes": size, "max_frame": 9000,
         "lat_us": {"min": median, "median": median, "max": median}, "busbw_gbps": busbw, "dtype": "int64",
         "repro": "none"}
    r.update(kw)
    return r


SWEEP = [
    sweep_rec("allreduce", "torus-ring", 8, 10.0, 0.001),
    sweep_rec("allreduce", "torus-ring", 4194304, 2000.0, 3.0),
    sweep_rec("allreduce", "torus-tree", 8, 8.0, 0.002, dtype="double", repro="exact"),
    sweep_rec("barrier", "dissemination", 0, 4.0, None),
    {"coll": "bcast", "algo": "torus-tree", "bytes": 8, "lat_us": None, "why": "cannot run"},
]


class FractionsTest(unittest.TestCase):
    def test_small_sizes_against_one_way_time_large_against_streaming_rate(self):
        lines = benchreport.fractions(LINK, SWEEP)
        self.assertEqual(lines[:2], ["", "against the link (medians of this run):"])
        body = [" ".join(line.split()) for line in lines[2:]]
        self.assertEqual(body, [
            "allreduce torus-ring 8 B 10.00 us = 5.0 x the link's one-way time (2.00 us, 64-byte frames)",
            "allreduce torus-tree double exact 8 B 8.00 us = 4.0 x the link's one-way time (2.00 us, 64-byte frames)",
            "barrier dissemination 4.00 us = 2.0 x the link's one-way time (2.00 us, 64-byte frames)",
            "allreduce torus-ring 4194304 B 3.000 GB/s busbw = 75.0% of the link's streaming rate "
            "(4.000 GB/s, 9000-byte frames)",
        ])

    def test_streaming_rate_at_the_nearest_frame_size(self):
        sweep = [dict(r, max_frame=1518) for r in SWEEP[:2]]
        last = benchreport.fractions(LINK, sweep)[-1]
        self.assertIn("150.0% of the link's streaming rate (2.000 GB/s, 1500-byte frames)", last)

    def test_nothing_without_timed_rows_or_ping_pong(self):
        self.assertEqual(benchreport.fractions(LINK, SWEEP[-1:]), [])
        self.assertEqual(benchreport.fractions(LINK[2:], SWEEP), [])
        self.assertEqual(benchreport.fractions([], []), [])


class MergeTest(unittest.TestCase):
    def test_link_records_first_one_record_a_line(self):
        with tempfile.TemporaryDirectory() as d:
            link, sweep, empty, out = (os.path.join(d, f) for f in ("l.json", "s.json", "e.json", "all.json"))
            with open(link, "w") as f:
                json.dump(LINK, f)
            with open(sweep, "w") as f:
                json.dump(SWEEP, f)
            open(empty, "w").close()
            n = benchreport.merge([link, os.path.join(d, "absent.json"), empty, sweep], out)
            self.assertEqual(n, len(LINK) + len(SWEEP))
            text = read(out)
            self.assertEqual(json.loads(text), LINK + SWEEP)
            lines = text.splitlines()
            self.assertEqual((lines[0], lines[-1]), ("[", "]"))
            self.assertEqual(sum(1 for line in lines if line.startswith(" {")), n)

    def test_empty_array(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "all.json")
            self.assertEqual(benchreport.merge([], out), 0)
            self.assertEqual(json.loads(read(out)), [])


if __name__ == "__main__":
    unittest.main()
