"""Regenerates the JAX device memory profiles of tests/data/import/jax/.

Run with the frameworks' python (eval "$(scripts/frameworks --env | sed 's/^/export /')"):
    "$GPUSIM_FRAMEWORKS_PYTHON" tests/data/import/jax/make.py [OUTDIR [PROGRAM ...]]
Each program runs in a fresh interpreter on JAX's CPU backend, keeps a known set of
arrays alive, and writes jax.profiler.save_device_memory_profile(OUTDIR/NAME.prof):
a gzipped pprof Profile of the live buffers. The profile is then read back here (a
small wire-format reader, no protobuf package) and checked: per device, its buffers'
bytes equal the sum of the kept arrays' shards' nbytes, and their count the number
of shards. The expected numbers are printed: tests/test_import.c asserts the same.
"""
import gzip
import json
import os
import subprocess
import sys

PROGRAMS = ["mlp_adam", "transformer_acts", "sharded4"]

CHILD = r'''
import gc, json, sys
import jax, jax.numpy as jnp
name, path = sys.argv[1], sys.argv[2]

def mlp_adam():
    # an MLP's parameters with Adam's two moments and the step count, as after a step
    sizes = [(128, 256), (256, 256), (256, 10)]
    params = []
    for i, (a, b) in enumerate(sizes):
        params += [jnp.full((a, b), 0.01 * (i + 1), jnp.float32), jnp.zeros((b,), jnp.float32)]
    mu = [jnp.zeros_like(p) for p in params]
    nu = [jnp.zeros_like(p) for p in params]
    count = jnp.zeros((), jnp.int32)
    return params + mu + nu + [count]

def transformer_acts():
    # one pre-LN transformer block's forward, its activations held for the backward
    d, h, s, b = 64, 4, 32, 4
    from jax import lax
    def ln(x):
        m = x.mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)
    @jax.jit
    def block(p, x):
        y = ln(x)
        q, k, v = [(y @ p[n]).reshape(b, s, h, d // h) for n in ("wq", "wk", "wv")]
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, s, d) @ p["wo"]
        x1 = x + o
        u = jax.nn.gelu(ln(x1) @ p["w1"])
        return x1 + u @ p["w2"], (y, q, k, v, a, x1, u)
    p = {n: jnp.full((d, d), 0.01, jnp.float32) for n in ("wq", "wk", "wv", "wo")}
    p["w1"] = jnp.full((d, 4 * d), 0.01, jnp.float32)
    p["w2"] = jnp.full((4 * d, d), 0.01, jnp.float32)
    x = jnp.ones((b, s, d), jnp.bfloat16).astype(jnp.float32)
    out, acts = block(p, x)
    return list(p.values()) + [x, out] + list(acts)

def sharded4():
    # data parallel on 4 CPU devices: the batch split 4 ways, the weights replicated
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(jax.devices()[:4], ("d",))
    batch = jax.device_put(jnp.ones((512, 128), jnp.float32), NamedSharding(mesh, P("d", None)))
    w = jax.device_put(jnp.full((128, 128), 0.5, jnp.float32), NamedSharding(mesh, P()))
    labels = jax.device_put(jnp.zeros((512,), jnp.int32), NamedSharding(mesh, P("d")))
    # and one array on device 2 alone
    extra = jax.device_put(jnp.zeros((1000,), jnp.float32), jax.devices()[2])
    return [batch, w, labels, extra]

keep = globals()[name]()
jax.block_until_ready(keep)
gc.collect()
jax.profiler.save_device_memory_profile(path)
per = {}
for a in keep:
    for sh in a.addressable_shards:
        e = per.setdefault(str(sh.device.id), [0, 0])
        e[0] += 1
        e[1] += sh.data.nbytes
print(json.dumps(per))
'''


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(number, value: an int for a varint, bytes for a length-delimited field)"""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        wire = key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % wire)
        yield key >> 3, v


def ints(v):
    """a repeated int64: packed bytes or one varint"""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def live_buffers(path):
    """{device string: [buffers, bytes]} of the profile's samples of kind buffer"""
    prof = gzip.open(path).read()
    strings, types, samples = [], [], []
    for num, v in fields(prof):
        if num == 6:
            strings.append(v.decode())
        elif num == 1:
            types.append(dict(fields(v)))
        elif num == 2:
            samples.append(v)
    names = [(strings[t.get(1, 0)], strings[t.get(2, 0)]) for t in types]
    i_count, i_bytes = names.index(("allocations", "count")), names.index(("space", "bytes"))
    per = {}
    for s in samples:
        values, labels = [], {}
        for num, v in fields(s):
            if num == 2:
                values += ints(v)
            elif num == 3:
                lab = dict(fields(v))
                labels[strings[lab[1]]] = strings[lab.get(2, 0)]
        if labels.get("kind") != "buffer":
            continue
        e = per.setdefault(labels["device"], [0, 0])
        e[0] += values[i_count]
        e[1] += values[i_bytes]
    return per


def record(name, outdir):
    path = os.path.join(outdir, name + ".prof")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    out = subprocess.run([sys.executable, "-c", CHILD, name, path], env=env, check=True, capture_output=True,
                         text=True).stdout
    want = json.loads(out.strip().splitlines()[-1])
    got = live_buffers(path)
    got = {dev.rsplit(":", 1)[-1]: v for dev, v in got.items()}
    assert got == want, "%s: the profile holds %s, the kept arrays %s" % (name, got, want)
    return path, got


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name in sys.argv[2:] or PROGRAMS:
        path, per = record(name, outdir)
        print(name, os.path.getsize(path), "bytes;", ", ".join(
            "device %s: %d buffers, %d B" % (d, n, b) for d, (n, b) in sorted(per.items())))


if __name__ == "__main__":
    main()
