"""`gpusim record -o OUT -- python SCRIPT ARGS` runs this module in the user's Python:

    python -m gpusim.record_run --output=OUT [--steps=N] [--device=NAME]
        [--compute-capability=X.Y] [--capacity-bytes=N] [--ranks=N [--nccl-channels=C]]
        -- SCRIPT [ARGS...]

It runs SCRIPT as __main__ (sys.argv = [SCRIPT, ARGS...]) under gpusim.recording(OUT),
stops after N optimizer steps (--steps) or at gpusim.mark(name, stop=True), and writes
the trace. Exit status: 0 with the trace written; 2 when the script fails (its
traceback on stderr, no trace file) or the options are wrong.

--ranks=N (N > 1): OUT is a directory, written as `gpusim synth --ranks` writes one. Each
rank runs in a process of its own, forked from this one once it imported torch, one after
another (main with --rank=R and the same options, its trace into a temporary directory
beside OUT), on torch.distributed's fake process group (record_dist.py); OUT appears when
every rank recorded, with job.json.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from typing import List, Optional

from . import record_dist
from . import record_trace as rec_mod


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpusim record", add_help=True)
    p.add_argument("--output", "-o", required=True)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--device", default="A100-80GB")
    p.add_argument("--compute-capability", default=None)
    p.add_argument("--capacity-bytes", type=int, default=None)
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--name", default=None)
    p.add_argument("--nccl-channels", type=int, default=record_dist.NCCL_CHANNELS)
    return p


class _RankFailed(Exception):
    def __init__(self, rank: int) -> None:
        super().__init__(rank)
        self.rank = rank


def _run_forked(argv: List[str]) -> int:
    """main(argv) in a child process forked from this one; its exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 2
        try:
            code = main(argv)
        except BaseException:  # noqa: BLE001 — main reports the script's failures itself
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 2  # a signal: a failure


def _ranks(opts: argparse.Namespace, argv: List[str]) -> int:
    """Every rank in a process of its own (the same options and --rank=R), then job.json.
    The processes fork from this one after it imported torch and the distributed modules
    (record_dist.preload), so each rank starts from the same state, nothing of the ranks
    before it, without importing torch again."""
    at = argv.index("--")
    base = ["--steps=%d" % opts.steps, "--device=" + opts.device, "--ranks=%d" % opts.ranks,
            "--nccl-channels=%d" % opts.nccl_channels]
    if opts.compute_capability is not None:
        base.append("--compute-capability=" + opts.compute_capability)
    if opts.capacity_bytes is not None:
        base.append("--capacity-bytes=%d" % opts.capacity_bytes)
    dist = record_dist
    name = opts.name or os.path.basename(os.path.normpath(opts.output))
    try:
        dist.preload()
    except ImportError as e:
        print("gpusim record: %s cannot import what a distributed recording needs: %s" % (sys.executable, e),
              file=sys.stderr)
        return 2
    try:
        with dist.job_directory(opts.output) as tmp:
            for r in range(opts.ranks):
                out = os.path.join(tmp, dist.rank_file(r))
                rc = _run_forked(["--output=" + out, "--rank=%d" % r, "--name=" + name] + base + argv[at:])
                if rc != 0:
                    raise _RankFailed(r)
            summary = [dist.trace_summary(os.path.join(tmp, dist.rank_file(r))) for r in range(opts.ranks)]
            dist.write_job(tmp, name, summary)
    except _RankFailed as e:
        print("gpusim record: rank %d of %d failed: no traces written" % (e.rank, opts.ranks), file=sys.stderr)
        return 2
    except OSError as e:
        print("gpusim record: %s: %s" % (opts.output, e), file=sys.stderr)
        return 2
    for s in summary:
        print("gpusim record: %s: %d events, %d optimizer steps, peak allocated %d bytes; NCCL buffers %d bytes "
              "outside the allocator (replay adds them to the context)" % (os.path.join(opts.output, s["file"]), s["events"],
                                                             s["optimizer_steps"], s["peak_live_bytes"], s["nccl_bytes"]),
              file=sys.stderr)
    print("gpusim record: %s: %d ranks, job.json" % (opts.output, opts.ranks), file=sys.stderr)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv or argv.index("--") + 1 >= len(argv):
        print("gpusim record: expected -- SCRIPT [ARGS...] after the options", file=sys.stderr)
        return 2
    at = argv.index("--")
    opts = _parser().parse_args(argv[:at])
    script, args = argv[at + 1], argv[at + 2:]
    if opts.steps < 0:
        print("gpusim record: --steps: expected a number of optimizer steps (0: all), not %d" % opts.steps,
              file=sys.stderr)
        return 2
    if not os.path.isfile(script):
        print("gpusim record: %s: no such script" % script, file=sys.stderr)
        return 2
    if opts.ranks < 1 or opts.nccl_channels < 0 or opts.rank is not None and not 0 <= opts.rank < opts.ranks:
        print("gpusim record: --ranks=%d, --rank=%s, --nccl-channels=%d: expected 0 <= rank < ranks, channels >= 0"
              % (opts.ranks, opts.rank, opts.nccl_channels), file=sys.stderr)
        return 2
    if opts.ranks > 1 and opts.rank is None:
        return _ranks(opts, argv)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        with rec_mod.recording(opts.output, device=opts.device, compute_capability=opts.compute_capability,
                               capacity_bytes=opts.capacity_bytes, max_steps=opts.steps,
                               name=opts.name,
                               rank=opts.rank, world_size=opts.ranks, nccl_channels=opts.nccl_channels) as rec:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    raise
    except rec_mod.StopRecording:
        pass
    except SystemExit as e:
        print("gpusim record: %s exited with status %s: no trace written" % (script, e.code), file=sys.stderr)
        return 2
    except BaseException:  # noqa: BLE001 — the script's failure, whatever it was: its traceback, exit 2
        traceback.print_exc()
        print("gpusim record: %s failed: no trace written" % script, file=sys.stderr)
        return 2
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    if opts.rank is None:  # a rank's process: the job's summary says it
        print("gpusim record: %s: %d events, %d optimizer steps, peak allocated %d bytes"
              % (opts.output, rec.events, rec.steps, rec.peak_bytes), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
