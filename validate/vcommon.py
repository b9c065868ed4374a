"""vcommon.py - what the two Python replayers (torch_replay.py, jax_replay.py) share
around vtrace: reading the trace with one error convention, and keeping the
allocator's counters that a measured JSON can carry."""
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


def counters(stats):
    """The non-negative integer entries of an allocator's memory_stats()."""
    return {k: v for k, v in stats.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0}
