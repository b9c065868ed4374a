#!/usr/bin/env python3
"""Writes a large PyTorch-style memory snapshot pickle, shaped like the ones
torch.cuda.memory._dump_snapshot writes, for the memory and speed figures of
gpusim's pickle reader (scripts/bench; traces/IMPORT.md, "Reading pickles").
Usage: python3 make_big_snapshot.py OUT.pickle MEGABYTES [SEED]

Each trace entry holds its own `frames` list of 30-60 references to a few hundred
shared frame dicts (as a real recording does: every entry gets a new list, the
frames in it are memo GETs of dicts made at their first use, and "??" or "" are
new strings each time); the other members are action, addr, size, stream,
time_us, compile_context and user_metadata. The workload is 64 slots of 128 MiB in
one 8 GiB segment: a free slot is allocated (512 B to 64 MiB), a live one is freed
(free_requested, then free_completed one microsecond later or at once), so every
free matches an alloc and every alloc an address not in use. Everything is freed
at the end, so "segments" holds the one segment with one inactive block.

The pickle is written opcode by opcode (protocol 4, in FRAMEs of about 64 KiB, the
memo numbered as pickle.dump numbers it), never held in memory, so a gigabyte takes
little memory and a few minutes of Python."""
import random
import struct
import sys

out = sys.argv[1]
target = int(float(sys.argv[2]) * 1e6)
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rng = random.Random(seed)

BASE = 0x7F0000000000
SLOT = 128 << 20
SLOTS = 64
SEG = SLOTS * SLOT


class Writer:
    def __init__(self, f):
        self.f = f
        self.buf = []
        self.n = 0
        self.total = 0
        self.memo = 0
        self.strings = {}

    def put(self, b):
        self.buf.append(b)
        self.n += len(b)
        if self.n >= 65536:
            self.flush()

    def flush(self):
        if self.n:
            data = b"".join(self.buf)
            self.f.write(b"\x95" + struct.pack("<Q", len(data)) + data)
            self.total += 9 + len(data)
            self.buf, self.n = [], 0

    def memoize(self):
        self.put(b"\x94")
        self.memo += 1
        return self.memo - 1

    def get(self, idx):
        self.put(b"h" + bytes([idx]) if idx < 256 else b"j" + struct.pack("<I", idx))

    def new_str(self, s):
        b = s.encode()
        self.put((b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b)
        return self.memoize()

    def key(self, s):
        """A string pickle.dump memoizes once (the same Python object each time)."""
        if s in self.strings:
            self.get(self.strings[s])
        else:
            self.strings[s] = self.new_str(s)

    def int(self, v):
        if 0 <= v < 256:
            self.put(b"K" + bytes([v]))
        elif 0 <= v < 65536:
            self.put(b"M" + struct.pack("<H", v))
        elif -(1 << 31) <= v < (1 << 31):
            self.put(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            self.put(b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True))


FUNCS = ["_call_impl", "_wrapped_call_impl", "forward", "_PyEval_EvalFrameDefault", "PyMethod_New",
         "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, "
         "CUstream_st*)", "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>)",
         "torch::unwind::unwind()", "torch::CapturedTraceback::gather(bool, bool, bool)", "train_step", "backward"]
FILES = ["/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", "??", "",
         "/home/user/project/model.py", "CUDACachingAllocator.cpp", "python_variable.cpp"]
N_FRAMES = 300
N_STACKS = 200
frames = [(rng.choice(FUNCS) + ("" if i < 8 else " #%d" % i), rng.choice(FILES), rng.randrange(0, 2000))
          for i in range(N_FRAMES)]
stacks = [[rng.randrange(N_FRAMES) for _ in range(rng.randrange(30, 61))] for _ in range(N_STACKS)]
frame_memo = [None] * N_FRAMES


def frame(w, i):
    if frame_memo[i] is not None:
        w.get(frame_memo[i])
        return
    name, filename, line = frames[i]
    w.put(b"}")
    frame_memo[i] = w.memoize()
    w.put(b"(")
    w.key("name")
    w.new_str(name)       # a new string object per frame, as torch makes them
    w.key("filename")
    w.new_str(filename)
    w.key("line")
    w.int(line)
    w.put(b"u")


def frames_list(w, stack):
    w.put(b"]")
    w.memoize()
    w.put(b"(")
    for i in stack:
        frame(w, i)
    w.put(b"e")


def entry(w, action, addr, size, t):
    w.put(b"}")
    w.memoize()
    w.put(b"(")
    w.key("action")
    w.key(action)
    w.key("addr")
    w.int(addr)
    w.key("size")
    w.int(size)
    w.key("stream")
    w.int(0)
    w.key("time_us")
    w.int(t)
    w.key("compile_context")
    w.key("N/A")
    w.key("user_metadata")
    w.key("")
    w.key("frames")
    frames_list(w, rng.choice(stacks))
    w.put(b"u")


with open(out, "wb") as f:
    f.write(b"\x80\x04")
    w = Writer(f)
    w.put(b"}")
    w.memoize()
    w.put(b"(")
    w.key("segments")
    w.put(b"]")
    w.memoize()
    w.put(b"}")
    w.memoize()
    w.put(b"(")
    for k, v in (("device", 0), ("address", BASE), ("total_size", SEG), ("allocated_size", 0), ("active_size", 0),
                 ("requested_size", 0), ("stream", 0)):
        w.key(k)
        w.int(v)
    w.key("segment_type")
    w.key("large")
    w.key("segment_pool_id")
    w.int(0)
    w.int(0)
    w.put(b"\x86")
    w.memoize()
    w.key("is_expandable")
    w.put(b"\x89")
    w.key("frames")
    w.put(b"]")
    w.memoize()
    w.key("blocks")
    w.put(b"]")
    w.memoize()
    w.put(b"}")
    w.memoize()
    w.put(b"(")
    w.key("address")
    w.int(BASE)
    w.key("size")
    w.int(SEG)
    w.key("requested_size")
    w.int(0)
    w.key("state")
    w.key("inactive")
    w.key("frames")
    w.put(b"]")
    w.memoize()
    w.put(b"u")   # the block
    w.put(b"a")   # blocks.append
    w.put(b"u")   # the segment
    w.put(b"a")   # segments.append
    w.key("device_traces")
    w.put(b"]")
    w.memoize()
    w.put(b"]")
    w.memoize()
    w.put(b"(")
    t = 1700000000000000
    entry(w, "segment_alloc", BASE, SEG, t)
    in_batch = 1
    live = [0] * SLOTS
    entries = 1
    while w.total + w.n < target:
        k = rng.randrange(SLOTS)
        t += rng.randrange(1, 50)
        if live[k]:
            todo = [("free_requested", live[k]), ("free_completed", live[k])]
            live[k] = 0
        else:
            live[k] = 512 * rng.randrange(1, (64 << 20) // 512)
            todo = [("alloc", live[k])]
        for i, (action, size) in enumerate(todo):
            entry(w, action, BASE + k * SLOT, size, t + (i if rng.random() < 0.2 else 0))
            entries += 1
            in_batch += 1
            if in_batch == 1000:
                w.put(b"e(")
                in_batch = 0
    for k in range(SLOTS):
        if live[k]:
            t += 1
            for action in ("free_requested", "free_completed"):
                entry(w, action, BASE + k * SLOT, live[k], t)
                entries += 1
    w.put(b"e")   # the last batch (pickle.dump writes APPEND for one item; APPENDS reads the same)
    w.put(b"a")   # device_traces.append
    w.key("allocator_settings")
    w.put(b"}")
    w.memoize()
    w.put(b"(")
    w.key("PYTORCH_CUDA_ALLOC_CONF")
    w.key("")
    w.key("max_split_size")
    w.int(-1)
    w.key("expandable_segments")
    w.put(b"\x89")
    w.put(b"u")
    w.key("external_annotations")
    w.put(b"]")
    w.memoize()
    w.put(b"u")   # the snapshot
    w.put(b".")
    w.flush()
    print("%s: %d entries, %.1f MB" % (out, entries, (w.total + 2) / 1e6), file=sys.stderr)
