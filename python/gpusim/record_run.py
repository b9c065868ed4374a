"""`gpusim record -o OUT -- python SCRIPT ARGS` runs this module in the user's Python:

    python -m gpusim.record_run --output=OUT [--steps=N] [--device=NAME]
        [--compute-capability=X.Y] [--capacity-bytes=N] -- SCRIPT [ARGS...]

It runs SCRIPT as __main__ (sys.argv = [SCRIPT, ARGS...]) under gpusim.recording(OUT),
stops after N optimizer steps (--steps) or at gpusim.mark(name, stop=True), and writes
the trace. Exit status: 0 with the trace written; 2 when the script fails (its
traceback on stderr, no trace file) or the options are wrong.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from typing import List, Optional

from . import record_trace as rec_mod


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpusim record", add_help=True)
    p.add_argument("--output", "-o", required=True)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--device", default="A100-80GB")
    p.add_argument("--compute-capability", default=None)
    p.add_argument("--capacity-bytes", type=int, default=None)
    return p


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
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        with rec_mod.recording(opts.output, device=opts.device, compute_capability=opts.compute_capability,
                               capacity_bytes=opts.capacity_bytes, max_steps=opts.steps) as rec:
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
    print("gpusim record: %s: %d events, %d optimizer steps, peak allocated %d bytes"
          % (opts.output, rec.events, rec.steps, rec.peak_bytes), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
