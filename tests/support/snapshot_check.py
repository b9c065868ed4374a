#!/usr/bin/env python3
"""Checks a snapshot that `gpusim replay --export-snapshot` wrote, as the tests of
tests/cli_export.sh use it: usage snapshot_check.py FILE.pickle.

1. It is read with a restricted unpickler whose find_class refuses everything (so
   it can name no class or function), and its opcodes are only the plain-data ones
   (no GLOBAL, REDUCE, memo, ...), with every integer at most 8 bytes (LONG1 <= 8:
   the viewer at pytorch.org/memory_viz reads no longer ones).
2. It has the keys and value spellings the viewer reads (MemoryViz.js:
   annotate_snapshot, MemoryView, process_alloc_data): segments with device,
   address, total_size, stream, segment_type and blocks that cover the segment
   (address, size, requested_size, state, frames); device_traces[0] entries with
   action, addr (device_free for oom), size, stream, time_us (non-decreasing).
3. The viewer's own reconstruction works at every entry: undoing the trace from the
   end state as its simulate_memory does, each free_requested finds its block, each
   segment_map/alloc undo finds the segment it cuts, and every live block lies in
   a segment.
Prints one line: the number of entries of each action, as "action=N" sorted by name.
Exits 1 with a message on the first thing wrong."""
import bisect
import io
import pickle
import pickletools
import sys

PLAIN = {"PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "BININT", "BININT1", "BININT2",
         "LONG1", "BINUNICODE", "SHORT_BINUNICODE", "NONE", "NEWTRUE", "NEWFALSE", "BINFLOAT", "STOP"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "oom"}
STATES = {"active_allocated", "active_pending_free", "inactive"}


class NoClasses(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("the snapshot names a class: %s.%s" % (module, name))


def fail(msg):
    print("snapshot_check: " + msg, file=sys.stderr)
    sys.exit(1)


def need(obj, key, types, where):
    if key not in obj:
        fail("%s: missing %r" % (where, key))
    if not isinstance(obj[key], types) or (types is int and isinstance(obj[key], bool)):
        fail("%s: %r is %r" % (where, key, obj[key]))
    return obj[key]


def check_opcodes(data):
    for op, arg, pos in pickletools.genops(data):
        if op.name not in PLAIN:
            fail("byte %d: opcode %s is not plain data" % (pos, op.name))
        if op.name == "PROTO" and arg not in (2, 3, 4):
            fail("protocol %d: the viewer reads 2 to 4" % arg)
        if op.name == "LONG1" and not -(1 << 63) <= arg < (1 << 63):
            fail("byte %d: integer %d needs more than 8 bytes" % (pos, arg))


def check_layout(snap):
    if not isinstance(snap, dict):
        fail("the top level is not a dict")
    segs = need(snap, "segments", list, "top")
    traces = need(snap, "device_traces", list, "top")
    need(snap, "allocator_settings", dict, "top")
    if len(traces) != 1 or not isinstance(traces[0], list):
        fail("device_traces is not one device's list")
    for i, s in enumerate(segs):
        w = "segments[%d]" % i
        if need(s, "device", int, w) != 0:
            fail(w + ": device is not 0")
        addr = need(s, "address", int, w)
        total = need(s, "total_size", int, w)
        need(s, "stream", int, w)
        if need(s, "segment_type", str, w) not in ("small", "large"):
            fail(w + ": segment_type " + s["segment_type"])
        need(s, "is_expandable", bool, w)
        at = addr
        for k, b in enumerate(need(s, "blocks", list, w)):
            bw = "%s.blocks[%d]" % (w, k)
            if need(b, "address", int, bw) != at:
                fail(bw + ": not where the previous block ends")
            at += need(b, "size", int, bw)
            need(b, "requested_size", int, bw)
            if need(b, "state", str, bw) not in STATES:
                fail(bw + ": state " + b["state"])
            need(b, "frames", list, bw)
        if at != addr + total:
            fail(w + ": the blocks do not cover total_size")
    last = 0
    for i, e in enumerate(traces[0]):
        w = "device_traces[0][%d]" % i
        a = need(e, "action", str, w)
        if a not in ACTIONS:
            fail(w + ": action " + a)
        need(e, "device_free" if a == "oom" else "addr", int, w)
        need(e, "size", int, w)
        need(e, "stream", int, w)
        t = need(e, "time_us", int, w)
        if t < last:
            fail(w + ": time_us goes back")
        last = t


def inside(segments, addr):
    i = bisect.bisect_right(segments, [addr, float("inf")]) - 1
    return i >= 0 and segments[i][0] <= addr < segments[i][0] + segments[i][1]


def check_viewer(snap):
    """MemoryViz's simulate_memory, undoing the whole trace once from the end: at
    every step each live block lies in a segment (kept incrementally: a block that
    comes back must be inside one, a segment that goes away must hold none)."""
    segments = sorted([s["address"], s["total_size"], s["stream"]] for s in snap["segments"])
    blocks = {}
    for s in snap["segments"]:
        for b in s["blocks"]:
            if b["state"] != "inactive":
                blocks[b["address"]] = b["state"] == "active_pending_free"
    live = sorted(blocks)
    for addr in live:
        if not inside(segments, addr):
            fail("at the end: block 0x%x lies in no segment" % addr)
    trace = snap["device_traces"][0]
    for i in range(len(trace) - 1, -1, -1):
        e = trace[i]
        a, w = e["action"], "device_traces[0][%d]" % i
        if a == "free_completed":
            if e["addr"] not in blocks:
                if not inside(segments, e["addr"]):
                    fail("before %s: block 0x%x lies in no segment" % (w, e["addr"]))
                bisect.insort(live, e["addr"])
            blocks[e["addr"]] = True
        elif a == "free_requested":
            if e["addr"] not in blocks:
                fail(w + ": the viewer finds no block to un-free")
            blocks[e["addr"]] = False
        elif a == "alloc":
            if e["addr"] in blocks:
                del blocks[e["addr"]]
                live.pop(bisect.bisect_left(live, e["addr"]))
        elif a in ("segment_free", "segment_unmap"):
            bisect.insort(segments, [e["addr"], e["size"], e["stream"]])
            if a == "segment_unmap":  # the viewer merges neighbours on one stream
                merged = []
                for s in segments:
                    if merged and merged[-1][0] + merged[-1][1] == s[0] and merged[-1][2] == s[2]:
                        merged[-1][1] += s[1]
                    else:
                        merged.append(s)
                segments = merged
        elif a in ("segment_alloc", "segment_map"):
            end = e["addr"] + e["size"]
            k = bisect.bisect_right(segments, [e["addr"], float("inf")]) - 1
            s = segments[k] if k >= 0 else None
            if s is None or not (s[0] <= e["addr"] and end <= s[0] + s[1]) or \
                    (a == "segment_alloc" and (s[0], s[1]) != (e["addr"], e["size"])):
                fail(w + ": the viewer finds no segment to undo")
            j = bisect.bisect_left(live, e["addr"])
            if j < len(live) and live[j] < end:
                fail("before %s: block 0x%x lies in no segment" % (w, live[j]))
            segments.pop(k)
            if a == "segment_map":
                if s[0] < e["addr"]:
                    bisect.insort(segments, [s[0], e["addr"] - s[0], s[2]])
                if end < s[0] + s[1]:
                    bisect.insort(segments, [end, s[0] + s[1] - end, s[2]])


def main():
    data = open(sys.argv[1], "rb").read()
    check_opcodes(data)
    snap = NoClasses(io.BytesIO(data)).load()
    check_layout(snap)
    check_viewer(snap)
    counts = {}
    for e in snap["device_traces"][0]:
        counts[e["action"]] = counts.get(e["action"], 0) + 1
    print(" ".join("%s=%d" % (k, counts[k]) for k in sorted(counts)))


main()
