"""vcommon.py - what the two Python replayers (torch_replay.py, jax_replay.py) share
around vtrace: reading the arguments and the trace with one error convention, the
--check-only plan line, and keeping the allocator's counters that a measured JSON
can carry."""
import sys

import vtrace


def load_trace(prog, path):
    """The trace's (header, events, summary); None, after "PROG: why" on stderr,
    when it cannot be read or is not a valid v1 trace (the replayer exits 3)."""
    try:
        header, events = vtrace.load(path)
    except (vtrace.TraceError, ValueError, OSError) as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return None
    return header, events, vtrace.summary(events)


def start(prog, parse_args, argv):
    """parse_args(argv, or sys.argv[1:] when None) and the trace it names:
    (args, header, events, summary), or None as load_trace."""
    a = parse_args(sys.argv[1:] if argv is None else argv)
    loaded = load_trace(prog, a.trace)
    return None if loaded is None else (a,) + loaded


def print_plan(prog, trace, s, streams, run_with, strategy, opts):
    """The --check-only line: the trace's counts (with its streams when `streams`),
    the settings the replay would run with, and the prediction gpusim would make."""
    print("%s: %s: %d events (%d allocs, %d frees, %d deferred), %speak requested %d B; would run with %s; "
          "predicts with strategy %s %s"
          % (prog, trace, s["events"], s["allocs"], s["frees"], s["deferred_frees"],
             "streams %s, " % (s["streams"],) if streams else "", s["peak_requested_bytes"], run_with, strategy, opts))


def counters(stats):
    """The non-negative integer entries of an allocator's memory_stats()."""
    return {k: v for k, v in stats.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0}
