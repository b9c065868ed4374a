"""The Python module against the gpusim program: the same results, the same messages.

Run from the source tree after a build (ctest runs it as `python_module`):
    GPUSIM_LIBRARY=build/libgpusim.so GPUSIM_BINARY=build/gpusim \\
        PYTHONPATH=python python3 -m unittest discover -s python/tests
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings

import gpusim

ROOT = os.environ.get("GPUSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("GPUSIM_BINARY", os.path.join(ROOT, "build", "gpusim"))
MLP = os.path.join(ROOT, "traces", "examples", "mlp_train.json")
SNAPSHOT_JSON = os.path.join(ROOT, "tests", "data", "import", "snapshot_small.json")
SNAPSHOT_PICKLE = os.path.join(ROOT, "tests", "data", "import", "snapshot_small.pickle")
SWEEP_SPEC = os.path.join(ROOT, "tests", "data", "sweep", "spec.json")


def cli(*args):
    """(exit status, stdout, stderr) of the gpusim program."""
    p = subprocess.run([BINARY] + list(args), capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    code, out, err = cli(*args, "--format=json")
    assert code == 0, err
    return json.loads(out)


def without_trace_name(result):
    """A result with the trace's path and name left out (an in-memory trace has none)."""
    r = dict(result)
    r["trace"] = {k: v for k, v in r["trace"].items() if k not in ("path", "name")}
    return r


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpusim.GpusimWarning)
        return fn(*args, **kwargs)


class ReplayTest(unittest.TestCase):
    def test_replay_should_give_the_peak_of_the_done_when_line(self):
        # mlp_train under TF's growth: 6 regions that double from 64 MiB up to 1 GiB
        # come to 2 GiB reserved (traces/examples/README.md), 2147483648 B
        r = gpusim.replay(MLP, strategy="growth")
        self.assertEqual(r["result"]["peak_reserved_bytes"], 2147483648)

    def test_replay_should_return_the_programs_json_for_a_path(self):
        for strategy in ("torch", "growth", "greedy", "ideal"):
            with self.subTest(strategy=strategy):
                self.assertEqual(gpusim.replay(MLP, strategy=strategy),
                                 cli_json("replay", MLP, "--strategy=" + strategy))

    def test_replay_should_pass_keyword_options_as_the_programs_options(self):
        got = gpusim.replay(MLP, alloc_conf="expandable_segments:True", gpu="A100-40GB", paranoid=True)
        want = cli_json("replay", MLP, "--alloc-conf=expandable_segments:True", "--gpu=A100-40GB", "--paranoid")
        self.assertEqual(got, want)
        self.assertEqual(got["device"]["name"], "A100-40GB")
        self.assertEqual(got["strategy"]["options"]["expandable_segments"], "True")

    def test_replay_should_take_from_with_a_trailing_underscore(self):
        got = quiet(gpusim.replay, SNAPSHOT_JSON, from_="torch-snapshot")
        self.assertEqual(got, cli_json("replay", SNAPSHOT_JSON, "--from=torch-snapshot"))
        with self.assertRaises(gpusim.TraceError):
            gpusim.replay(MLP, from_="kineto")

    def test_replay_should_leave_out_an_option_given_as_false_or_none(self):
        self.assertEqual(gpusim.replay(MLP, paranoid=False, gpu=None), cli_json("replay", MLP))

    def test_replay_should_read_a_snapshot_dict_as_its_file(self):
        with open(SNAPSHOT_JSON) as f:
            snapshot = json.load(f)
        got = quiet(gpusim.replay, snapshot)
        self.assertEqual(got["trace"]["path"], gpusim.SNAPSHOT_NAME)
        self.assertEqual(without_trace_name(got), without_trace_name(cli_json("replay", SNAPSHOT_JSON)))

    def test_replay_should_read_a_pickled_snapshot_from_bytes(self):
        with open(SNAPSHOT_PICKLE, "rb") as f:
            data = f.read()
        got = quiet(gpusim.replay, data, gpu="A100-40GB")
        self.assertEqual(without_trace_name(got),
                         without_trace_name(cli_json("replay", SNAPSHOT_PICKLE, "--gpu=A100-40GB")))

    def test_replay_should_carry_pool_events_from_a_trace_dict_and_gtrace_bytes(self):
        # a capture into pool 3 on stream 1, its end and a replay: async has no private
        # pools, replays the capture's allocation in its default pool and says so
        trace = {"format": "gpusim-trace", "version": 1, "name": "pools", "events": [
            {"op": "alloc", "id": 1, "size": 1 << 20, "t": 0, "stream": 1},
            {"op": "pool_begin", "pool": 3, "t": 1, "stream": 1, "no_split": True},
            {"op": "alloc", "id": 2, "size": 4096, "t": 2, "stream": 1},
            {"op": "pool_end", "pool": 3, "t": 3},
            {"op": "graph_replay", "pool": 3, "t": 4, "name": "bs=8"},
            {"op": "pool_release", "pool": 3, "t": 5}]}
        got = gpusim.replay(trace, strategy="async")
        self.assertEqual(got["result"]["pool_events_ignored"], 4)
        self.assertTrue(got["result"]["pool_events_note"].startswith("async: private pools are not modelled"))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pools.json")
            with open(path, "w") as f:
                json.dump(trace, f)
            self.assertEqual(without_trace_name(got), without_trace_name(cli_json("replay", path, "--strategy=async")))
            code, _, err = cli("convert", path, "-o", os.path.join(d, "pools.gtrace"))
            self.assertEqual(code, 0, err)
            with open(os.path.join(d, "pools.gtrace"), "rb") as f:
                data = f.read()
        self.assertEqual(without_trace_name(gpusim.replay(data, strategy="async")), without_trace_name(got))
        # and the protocol's errors are the program's trace errors
        trace["events"].append({"op": "pool_end", "pool": 3, "t": 6})
        with self.assertRaises(gpusim.TraceError) as e:
            gpusim.replay(trace)
        self.assertIn("pool_end of pool 3, which is not being allocated to", str(e.exception))

    def test_replay_should_turn_the_import_warnings_into_python_warnings(self):
        with open(SNAPSHOT_JSON) as f:
            snapshot = json.load(f)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gpusim.replay(snapshot)
        _, _, err = cli("replay", SNAPSHOT_JSON)
        # the program's stderr lines, less "gpusim: " and with the file's name for the snapshot's
        want = [line[len("gpusim: "):].replace(os.path.basename(SNAPSHOT_JSON), gpusim.SNAPSHOT_NAME)
                for line in err.splitlines()]
        self.assertEqual([str(w.message) for w in caught if w.category is gpusim.GpusimWarning], want)
        self.assertTrue(want)

    def test_replay_should_take_several_traces_as_processes_on_one_gpu(self):
        a = os.path.join(ROOT, "traces", "examples", "two-jobs-a.jsonl")
        b = os.path.join(ROOT, "traces", "examples", "two-jobs-b.jsonl")
        self.assertEqual(gpusim.replay([a, b], strategy="growth"),
                         cli_json("replay", a, b, "--strategy=growth"))

    def test_replay_should_be_safe_from_several_threads(self):
        want = gpusim.replay(MLP, strategy="growth")
        got = [None] * 4

        def work(i):
            got[i] = gpusim.replay(MLP, strategy="growth")

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(got, [want] * 4)


class ErrorTest(unittest.TestCase):
    def assert_usage_message(self, exc, *args):
        """The exception's message is the program's usage error, less "gpusim CMD: " and the hint."""
        code, _, err = cli(*args)
        self.assertEqual(code, 2)
        first = err.splitlines()[0]
        self.assertEqual("gpusim %s: %s" % (args[0], exc), first)

    def test_an_unknown_strategy_should_raise_the_programs_usage_error(self):
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.replay(MLP, strategy="nope")
        self.assert_usage_message(ctx.exception, "replay", MLP, "--strategy=nope")

    def test_an_option_of_another_strategy_should_raise_a_usage_error(self):
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.replay(MLP, strategy="growth", alloc_conf="expandable_segments:True")
        self.assert_usage_message(ctx.exception, "replay", MLP, "--strategy=growth",
                                  "--alloc-conf=expandable_segments:True")

    def test_an_unknown_option_should_raise_a_usage_error(self):
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.compare(MLP, no_such_option=1)
        self.assert_usage_message(ctx.exception, "compare", MLP, "--no-such-option=1")

    def test_an_invalid_trace_should_raise_the_programs_trace_error(self):
        with self.assertRaises(gpusim.TraceError) as ctx:
            gpusim.replay(b"{\"not\": \"a trace\"}")
        self.assertIn(gpusim.SNAPSHOT_NAME + ": ", str(ctx.exception))
        bad = os.path.join(ROOT, "tests", "data", "import", "LICENSES.md")
        with self.assertRaises(gpusim.TraceError) as ctx:
            gpusim.replay(bad)
        code, _, err = cli("replay", bad)
        self.assertEqual(code, 3)
        self.assertEqual("gpusim: %s" % ctx.exception, err.strip())

    def test_a_missing_file_should_raise_a_file_error(self):
        missing = os.path.join(ROOT, "no-such-trace.json")
        with self.assertRaises(gpusim.FileError) as ctx:
            gpusim.replay(missing)
        _, _, err = cli("replay", missing)
        self.assertEqual("gpusim: %s" % ctx.exception, err.strip())
        self.assertIsInstance(ctx.exception, OSError)

    def test_an_option_the_module_sets_should_raise_a_usage_error(self):
        with self.assertRaises(gpusim.UsageError):
            gpusim.replay(MLP, format="text")
        with self.assertRaises(gpusim.UsageError):
            gpusim.replay([])


    def test_a_trace_of_another_type_should_raise_a_type_error(self):
        for trace in (42, 3.5, object(), {1, 2}, [MLP, 7]):
            with self.assertRaises(TypeError) as ctx:
                gpusim.replay(trace)
            self.assertIn("a trace is a path (str or os.PathLike), a file's bytes, a snapshot dict", str(ctx.exception))
        with self.assertRaises(TypeError):
            gpusim.replay(PathOfBytes())

    def test_a_path_like_trace_should_be_read_as_its_path(self):
        import pathlib
        self.assertEqual(gpusim.replay(pathlib.Path(MLP)), gpusim.replay(str(pathlib.Path(MLP))))


class PathOfBytes(os.PathLike):
    """A path-like object whose path is bytes: not a trace path gpusim takes."""

    def __fspath__(self):
        return os.fsencode(MLP)


class FailOnOomTest(unittest.TestCase):
    BERT = os.path.join(ROOT, "traces", "examples", "bert-large-train.jsonl")

    def test_fail_on_oom_should_raise_with_the_whole_result(self):
        with self.assertRaises(gpusim.OutOfMemoryError) as ctx:
            gpusim.replay(self.BERT, capacity="12GiB", fail_on_oom=True)
        e = ctx.exception
        want = cli_json("replay", self.BERT, "--capacity=12GiB")
        self.assertEqual(e.result, want)
        self.assertEqual(str(e), want["result"]["first_oom"]["message"])
        self.assertEqual(e.exit_code, 1)
        # the command line's verdict is the same: exit status 1
        self.assertEqual(cli("replay", self.BERT, "--capacity=12GiB", "--fail-on-oom")[0], 1)

    def test_fail_on_oom_without_an_oom_should_return_the_result(self):
        self.assertEqual(gpusim.replay(MLP, fail_on_oom=True), cli_json("replay", MLP))

    def test_without_fail_on_oom_an_oom_should_be_in_the_result(self):
        r = gpusim.replay(self.BERT, capacity="12GiB")
        self.assertEqual(r["result"]["ooms"], 1)


class HelpTest(unittest.TestCase):
    def test_help_should_render_every_functions_docstring_and_types(self):
        import pydoc
        text = pydoc.render_doc(gpusim, renderer=pydoc.plaintext)
        for name in ("replay", "compare", "plan", "tune", "version", "OutOfMemoryError", "UsageError"):
            self.assertIn(name, text)
            doc = getattr(gpusim, name).__doc__
            self.assertTrue(doc, name)
            self.assertIn(doc.strip().splitlines()[0], text)
        self.assertIn("replay(trace: 'Union[Trace, Sequence[Trace]]', strategy: 'str' = 'torch', **options: 'Any')"
                      " -> 'Result'", text)
        self.assertIn(".result is the whole result", text)

    def test_the_package_should_carry_its_typing_marker(self):
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(gpusim.__file__), "py.typed")))


def read(path):
    with open(path, "rb") as f:
        return f.read()


class SweepTest(unittest.TestCase):
    """gpusim.sweep(spec, shard=(i, n)) and gpusim.sweep_merge against `gpusim sweep`."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.ref = os.path.join(self.dir.name, "ref.jsonl")
        code, out, err = cli("sweep", SWEEP_SPEC, "--output=" + self.ref, "--jobs=2", "--format=json")
        self.assertEqual(code, 0, err)
        self.ref_summary = json.loads(out)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_shards_merged_should_be_the_programs_one_run_byte_for_byte(self):
        for n in (1, 3, 7):
            with self.subTest(shards=n):
                out = self.path("s%d.jsonl" % n)
                for i in range(n):
                    summary = gpusim.sweep(SWEEP_SPEC, shard=(i, n), output=out, jobs=1)
                    self.assertEqual(summary["jobs"], 135)
                merged = gpusim.sweep_merge(self.path("m%d.jsonl" % n),
                                            sorted(glob.glob(self.path("s%d.shard-*-of-%d.jsonl" % (n, n)))))
                self.assertEqual(merged, self.ref_summary)
                self.assertEqual(read(self.path("m%d.jsonl" % n)), read(self.ref))

    def test_shards_run_from_threads_should_merge_the_same(self):
        # Dask's default scheduler runs tasks on threads of one process
        out = self.path("t.jsonl")
        errors = []

        def one(i):
            try:
                gpusim.sweep(SWEEP_SPEC, shard=(i, 4), output=out, jobs=1)
            except gpusim.Error as e:
                errors.append(e)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        gpusim.sweep_merge(self.path("t-merged.jsonl"), self.path("t.shard-*-of-4.jsonl"))
        self.assertEqual(read(self.path("t-merged.jsonl")), read(self.ref))

    def test_a_shard_should_resume_and_a_partial_merge_count_what_is_missing(self):
        out = self.path("r.jsonl")
        gpusim.sweep(SWEEP_SPEC, shard=(0, 2), output=out)
        partial = gpusim.sweep_merge(self.path("p.jsonl"), [self.path("r.shard-0-of-2.jsonl")], partial=True)
        self.assertLess(partial["done"], 135)
        again = gpusim.sweep(SWEEP_SPEC, shard=(0, 2), output=out, resume=True)
        self.assertEqual(again["done"], partial["done"])
        gpusim.sweep(SWEEP_SPEC, shard=(1, 2), output=out)
        self.assertEqual(gpusim.sweep_merge(self.path("p.jsonl"), self.path("r.shard-*-of-2.jsonl")),
                         self.ref_summary)

    def test_a_bad_shard_should_raise_the_programs_usage_error(self):
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.sweep(SWEEP_SPEC, shard=(3, 3), output=self.path("x.jsonl"))
        code, _, err = cli("sweep", SWEEP_SPEC, "--shard=3/3", "--output=" + self.path("x.jsonl"))
        self.assertEqual(code, 2)
        self.assertEqual("gpusim sweep: %s" % ctx.exception, err.splitlines()[0])
        for shard in ((1,), (1, 2, 3), ("1", "2"), 1.5, (True, 2)):
            with self.subTest(shard=shard), self.assertRaises(gpusim.UsageError):
                gpusim.sweep(SWEEP_SPEC, shard=shard, output=self.path("x.jsonl"))
        self.assertEqual(glob.glob(self.path("x*")), [])

    def test_a_merge_with_a_shard_missing_should_raise_a_usage_error(self):
        gpusim.sweep(SWEEP_SPEC, shard=(0, 3), output=self.path("q.jsonl"))
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.sweep_merge(self.path("q-merged.jsonl"), [self.path("q.shard-0-of-3.jsonl")])
        self.assertIn("shard(s) 1, 2 of 3 missing", str(ctx.exception))
        self.assertFalse(os.path.exists(self.path("q-merged.jsonl")))


class CompareAndPlanTest(unittest.TestCase):
    def test_compare_should_return_the_programs_json(self):
        self.assertEqual(gpusim.compare(MLP, strategies=["torch", "growth"], jobs=2),
                         cli_json("compare", MLP, "--strategies=torch,growth", "--jobs=2"))

    def test_plan_should_return_the_programs_json(self):
        got = gpusim.plan(MLP, strategies=("torch", "growth"), gpus="T4,A100-40GB")
        self.assertEqual(got, cli_json("plan", MLP, "--strategies=torch,growth", "--gpus=T4,A100-40GB"))
        self.assertEqual([g["name"] for g in got["gpus"]], ["T4", "A100-40GB"])

    def test_tune_should_return_the_programs_json(self):
        pinning = os.path.join(ROOT, "traces", "examples", "pinning-l4.jsonl")
        got = gpusim.tune(pinning, jobs=2)
        self.assertEqual(got, cli_json("tune", pinning, "--framework=torch", "--goal=min-reserved", "--jobs=2"))
        # the bundled pinning example: 530/270 MiB blocks pin memory and
        # max_split_size_mb:20 stops it (traces/examples/README.md)
        self.assertEqual(got["best"]["env"], "PYTORCH_ALLOC_CONF=max_split_size_mb:20")

    def test_tune_should_raise_the_programs_usage_error(self):
        with self.assertRaises(gpusim.UsageError) as ctx:
            gpusim.tune(MLP, goal="smallest")
        code, _, err = cli("tune", MLP, "--goal=smallest")
        self.assertEqual(code, 2)
        self.assertEqual("gpusim tune: %s" % ctx.exception, err.splitlines()[0])

    def test_version_should_be_the_programs(self):
        _, out, _ = cli("--version")
        self.assertEqual("gpusim " + gpusim.version(), out.strip())


class ReadmeTest(unittest.TestCase):
    def test_the_readmes_python_example_should_print_its_pasted_output(self):
        with open(os.path.join(ROOT, "docs", "python.md")) as f:
            readme = f.read()
        section = readme[readme.index("## From Python"):]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        pasted = section.split("prints (real output):\n\n```\n", 1)[1].split("```", 1)[0]
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(gpusim.__file__))))
        p = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, pasted)


if __name__ == "__main__":
    unittest.main()
