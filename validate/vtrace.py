"""vtrace.py - the part of gpusim's trace format v1 and replay order that the
Python replayers (torch_replay.py, jax_replay.py) need, with no third-party
imports, so that it is tested on machines without a GPU.

Replay order is gpusim's (design.md section 3): trace events in file order; a
free with ready_t > t returns its memory at ready_t; deferred frees due at time T
come before the trace events at T, in the order they were freed. Events are
numbered like the engine numbers them: trace events and deferred frees together,
from 1 ("global event number"); OOMs are reported by the 1-based index of the
event in the trace, as gpusim reports first_oom.event.
"""
import heapq
import json
import os
import tempfile

UNITS = {"ns": 1, "us": 1000, "ms": 1000000}
MAX_SIZE = 1 << 53


class TraceError(Exception):
    pass


def fnv1a64(path):
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            for c in b:
                h ^= c
                h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def _int(ev, key, where, default=None):
    v = ev.get(key, default)
    if v is None:
        raise TraceError('%s: missing "%s"' % (where, key))
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TraceError('%s: "%s" must be a non-negative integer' % (where, key))
    return v


def load(path):
    """Returns (header, events). header: dict with name, ns_per_unit; events: list
    of dicts with op, index (1-based), t (ns), and id/size/stream/ready_t."""
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if not stripped:
        raise TraceError("%s: empty file" % path)
    try:
        doc = json.loads(text)
        lines = None
    except ValueError:
        doc = None
        lines = [ln for ln in text.splitlines()]
    if doc is not None and isinstance(doc, dict) and "events" in doc:
        header, raw = doc, doc["events"]
        where = lambda i: "%s: event %d" % (path, i)
    else:
        if lines is None:
            lines = text.splitlines()
        header = json.loads(lines[0])
        raw = []
        numbers = []
        for n, ln in enumerate(lines[1:], start=2):
            if ln.strip():
                raw.append(json.loads(ln))
                numbers.append(n)
        where = lambda i: "%s:%d" % (path, numbers[i - 1])
    if not isinstance(header, dict) or header.get("format") != "gpusim-trace":
        raise TraceError('%s: not a gpusim trace (missing "format": "gpusim-trace")' % path)
    if header.get("version") != 1:
        raise TraceError('%s: unsupported "version" (expected 1)' % path)
    unit = header.get("time_unit", "ns")
    if unit not in UNITS:
        raise TraceError('%s: unknown "time_unit" %r' % (path, unit))
    k = UNITS[unit]
    events = []
    last_t = 0
    procs = set()
    live = set()
    for i, ev in enumerate(raw, start=1):
        w = where(i)
        if not isinstance(ev, dict):
            raise TraceError("%s: an event must be a JSON object" % w)
        op = ev.get("op")
        t = _int(ev, "t", w, last_t // k) * k if "t" in ev else last_t
        if t < last_t:
            raise TraceError("%s: t goes backwards" % w)
        last_t = t
        if "proc" in ev:
            procs.add(ev["proc"])
        out = {"op": op, "index": i, "t": t}
        if op == "alloc":
            out["id"] = _int(ev, "id", w)
            out["size"] = _int(ev, "size", w)
            if out["size"] > MAX_SIZE:
                raise TraceError('%s: "size" exceeds 2^53' % w)
            out["stream"] = _int(ev, "stream", w, 0)
            if out["id"] in live:
                raise TraceError("%s: alloc of id %d that is still allocated" % (w, out["id"]))
            live.add(out["id"])
        elif op == "free":
            out["id"] = _int(ev, "id", w)
            out["ready_t"] = _int(ev, "ready_t", w) * k if "ready_t" in ev else t
            if out["ready_t"] < t:
                raise TraceError("%s: ready_t is before t" % w)
            if out["id"] not in live:
                raise TraceError("%s: free of id %d that is not allocated" % (w, out["id"]))
            live.discard(out["id"])
        elif op in ("empty_cache", "mark"):
            pass
        else:
            raise TraceError("%s: unknown op %r" % (w, op))
        events.append(out)
    if len(procs) > 1 or (procs and any("proc" not in e for e in raw if isinstance(e, dict))):
        raise TraceError("%s: the trace holds several processes; the replayers take one process per trace" % path)
    return {"name": header.get("name", ""), "ns_per_unit": k}, events


def schedule(events):
    """Yields (global_event_number, kind, event) with kind "event" or "ready" (the
    deferred return of a free's memory), in gpusim's replay order. The caller may
    stop early (an OOM ends the program)."""
    heap = []
    seq = 0
    n = 0
    for ev in events:
        while heap and heap[0][0] <= ev["t"]:
            _, _, d = heapq.heappop(heap)
            n += 1
            yield n, "ready", d
        n += 1
        yield n, "event", ev
        if ev["op"] == "free" and ev["ready_t"] > ev["t"]:
            heapq.heappush(heap, (ev["ready_t"], seq, ev))
            seq += 1
    while heap:
        _, _, d = heapq.heappop(heap)
        n += 1
        yield n, "ready", d


def summary(events):
    allocs = sum(1 for e in events if e["op"] == "alloc")
    frees = sum(1 for e in events if e["op"] == "free")
    deferred = sum(1 for e in events if e["op"] == "free" and e["ready_t"] > e["t"])
    streams = sorted({e["stream"] for e in events if e["op"] == "alloc"})
    live = peak = 0
    sizes = {}
    for _, kind, e in schedule(events):
        if kind == "event" and e["op"] == "alloc":
            sizes[e["id"]] = e["size"]
            live += e["size"]
            peak = max(peak, live)
        elif (kind == "ready") or (kind == "event" and e["op"] == "free" and e["ready_t"] == e["t"]):
            live -= sizes.pop(e["id"])
    return {"events": len(events), "allocs": allocs, "frees": frees, "deferred_frees": deferred,
            "streams": streams, "peak_requested_bytes": peak,
            "max_size": max([e["size"] for e in events if e["op"] == "alloc"] or [0])}


def write_json(path, doc):
    """Atomically (temporary name, then rename), like gpusim's own writers."""
    if path == "-":
        print(json.dumps(doc, indent=1))
        return
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def measured_skeleton(tool, allocator, path, header, events, predict_strategy, predict_options):
    s = summary(events)
    return {
        "format": "gpusim-measured", "version": 1, "tool": tool, "tool_version": "0.1.0",
        "backend": "cuda", "allocator": allocator,
        "trace": {"path": path, "name": header["name"], "events": s["events"], "allocs": s["allocs"],
                  "frees": s["frees"], "fnv1a64": fnv1a64(path)},
        "predict": {"strategy": predict_strategy, "options": predict_options},
        "settings": {}, "device": {}, "measured": {}, "how": {}, "notes": [], "stats": {}, "extra": {},
        "curve": {"columns": ["event", "t", "device_used", "reserved", "allocated"], "rows": []},
    }
