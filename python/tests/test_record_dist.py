"""python/gpusim/record_dist.py without PyTorch: NCCL's bytes per rank (checked against
`gpusim synth --ranks`, whose traces/synth/nccl.c the rule follows), the job directory a
distributed recording writes (job.json as synth writes it) and that a failed recording
leaves nothing."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpusim import record_dist as dist  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BINARY = os.environ.get("GPUSIM_BINARY", os.path.join(ROOT, "build", "gpusim"))


class NcclBytes(unittest.TestCase):
    def test_one_communicator_is_a_ring_of_24_channels_of_10_mib(self) -> None:
        # LL 524288 + LL128 4915200 + Simple 4194304 = 9633792 B -> 10 MiB granules:
        # 10485760 B a connection, x 24 channels = 251658240 B
        self.assertEqual(dist.NCCL_CONNECTION_BYTES, 10485760)
        self.assertEqual(dist.nccl_bytes(1), 251658240)
        self.assertEqual(dist.nccl_bytes(2), 2 * 251658240)
        self.assertEqual(dist.nccl_bytes(1, channels=8), 8 * 10485760)
        self.assertEqual(dist.nccl_bytes(0), 0)
        self.assertEqual(dist.nccl_bytes(3, channels=0), 0)

    @unittest.skipUnless(os.access(BINARY, os.X_OK), "no gpusim program to compare with")
    def test_the_rule_gives_what_synth_writes_for_the_same_communicators(self) -> None:
        # data parallel over 8: one communicator; 2 x 2 data x tensor parallel: two
        for opts, groups in ((["--ranks=8", "--fsdp=full"], 1), (["--ranks=4", "--tp=2"], 2)):
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "job")
                p = subprocess.run([BINARY, "synth", "transformer", "--preset=llama2-7b", "--layers=1", "--seq=128",
                                    "-o", out, "--quiet"] + opts, capture_output=True, text=True, check=False)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(os.path.join(out, "job.json")) as f:
                    job = json.load(f)
                self.assertEqual({t["nccl_bytes"] for t in job["traces"]}, {dist.nccl_bytes(groups)}, opts)


class JobDirectory(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_rank_files_are_named_as_synth_names_them(self) -> None:
        self.assertEqual(dist.rank_file(0), "rank-00000.jsonl")
        self.assertEqual(dist.rank_file(12), "rank-00012.jsonl")

    def test_the_traces_move_into_the_directory_with_job_json(self) -> None:
        out = os.path.join(self.tmp.name, "job")
        with dist.job_directory(out) as tmp:
            path = os.path.join(tmp, dist.rank_file(0))
            with open(path, "w") as f:
                # 100 + 300 live at once = 400, then 100 freed, 50 more: the peak is 400
                f.write('{"format":"gpusim-trace","version":1,"meta":{"rank":0,"nccl_bytes":7,"optimizer_steps":1}}\n'
                        '{"op":"alloc","id":1,"size":100}\n{"op":"alloc","id":2,"size":300}\n'
                        '{"op":"free","id":1}\n{"op":"alloc","id":3,"size":50}\n')
            summary = dist.trace_summary(path)
            self.assertEqual(summary, {"rank": 0, "file": "rank-00000.jsonl", "peak_live_bytes": 400, "nccl_bytes": 7,
                                       "events": 4, "optimizer_steps": 1})
            dist.write_job(tmp, "job", [summary])
            self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(out)), ["job.json", "rank-00000.jsonl"])
        with open(os.path.join(out, "job.json")) as f:
            self.assertEqual(json.load(f), {"format": "gpusim-job", "version": 1, "name": "job", "ranks": 1, "traces": [
                {"rank": 0, "file": "rank-00000.jsonl", "peak_live_bytes": 400, "nccl_bytes": 7}]})
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".gpusim-record-")], [])

    def test_a_failure_leaves_neither_the_directory_nor_the_temporary_one(self) -> None:
        out = os.path.join(self.tmp.name, "job")
        with self.assertRaises(RuntimeError):
            with dist.job_directory(out) as tmp:
                with open(os.path.join(tmp, dist.rank_file(0)), "w") as f:
                    f.write("half\n")
                raise RuntimeError("rank 1 failed")
        self.assertEqual(os.listdir(self.tmp.name), [])

    def test_a_file_where_the_directory_goes_is_an_error(self) -> None:
        out = os.path.join(self.tmp.name, "job")
        with open(out, "w") as f:
            f.write("x")
        with self.assertRaises(FileExistsError):
            with dist.job_directory(out):
                pass


if __name__ == "__main__":
    unittest.main()
