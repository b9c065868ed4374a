"""Regenerates the XLA buffer-assignment dumps of tests/data/import/xla/.

Run with the frameworks' python (eval "$(scripts/frameworks --env | sed 's/^/export /')"):
    "$GPUSIM_FRAMEWORKS_PYTHON" tests/data/import/xla/make.py [OUTDIR [PROGRAM ...]]
Each program is compiled (never run) by JAX on the CPU with
XLA_FLAGS=--xla_dump_to=... --xla_dump_hlo_as_proto; its module's
*cpu_after_optimizations.hlo.pb is an HloProto: the optimized module (field 1)
and its buffer_assignment (field 3, heap simulator traces included). OUTDIR/NAME.hlo.pb
keeps the buffer assignment whole and of the module only its name and entry
computation's name, so that the files stay small and read as the real dumps do.
"""
import glob
import os
import subprocess
import sys
import tempfile

PROGRAMS = ["mlp_train", "transformer_block", "scan_loop", "remat", "sharded"]

CHILD = r'''
import sys
import jax, jax.numpy as jnp
from jax import lax
name = sys.argv[1]
k = jax.random.PRNGKey(0)

def mlp_train():
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        h = jnp.tanh(h @ p["w2"] + p["b2"])
        o = h @ p["w3"]
        return jnp.mean((o - y) ** 2)
    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.01 * b, p, g)
    p = {"w1": jnp.ones((256, 512)), "b1": jnp.zeros(512), "w2": jnp.ones((512, 512)),
         "b2": jnp.zeros(512), "w3": jnp.ones((512, 16))}
    return step, (p, jnp.ones((64, 256)), jnp.ones((64, 16)))

def transformer_block():
    d, h, s, b = 128, 4, 64, 8
    def ln(x):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5)
    def block(p, x):
        y = ln(x)
        q, kk, v = [(y @ p[n]).reshape(b, s, h, d // h) for n in ("wq", "wk", "wv")]
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, kk) / 8.0, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, s, d) @ p["wo"]
        x = x + o
        return x + jax.nn.gelu(ln(x) @ p["w1"]) @ p["w2"]
    def loss(p, x):
        return jnp.sum(block(p, x) ** 2)
    p = {n: jnp.ones((d, d)) * 0.01 for n in ("wq", "wk", "wv", "wo")}
    p["w1"] = jnp.ones((d, 4 * d)) * 0.01
    p["w2"] = jnp.ones((4 * d, d)) * 0.01
    return jax.value_and_grad(loss), (p, jnp.ones((b, s, d)))

def scan_loop():
    def f(w, xs):
        def body(c, x):
            c = jnp.tanh(c @ w + x)
            return c, c.sum(-1)
        return lax.scan(body, jnp.zeros((32, 256)), xs)
    return f, (jnp.ones((256, 256)), jnp.ones((20, 32, 256)))

def remat():
    def layer(w, x):
        return jnp.tanh(x @ w)
    def loss(ws, x):
        for w in ws:
            x = jax.checkpoint(layer)(w, x)
        return jnp.sum(x ** 2)
    ws = [jnp.ones((256, 256)) * 0.01 for _ in range(4)]
    return jax.grad(loss), (ws, jnp.ones((128, 256)))

def sharded():
    # data parallel on 4 CPU devices: the batch split, the weights replicated
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(jax.devices()[:4], ("d",))
    xs = NamedSharding(mesh, P("d", None))
    def loss(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return jnp.mean(x ** 2)
    def step(ws, x):
        g = jax.grad(loss)(ws, x)
        return [w - 0.01 * d for w, d in zip(ws, g)]
    ws = [jnp.ones((256, 256)) * 0.01 for _ in range(3)]
    x = jax.device_put(jnp.ones((512, 256)), xs)
    return step, (ws, x)

fn, args = globals()[name]()
jax.jit(fn).lower(*args).compile()
'''


def dump(name, outdir):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   XLA_FLAGS="--xla_dump_to=%s --xla_dump_hlo_as_proto --xla_dump_hlo_module_re=jit_.*"
                   " --xla_force_host_platform_device_count=4" % tmp)
        subprocess.run([sys.executable, "-c", CHILD, name], env=env, check=True)
        pbs = [p for p in glob.glob(os.path.join(tmp, "*cpu_after_optimizations.hlo.pb"))]
        # the program's own module: the largest one (JAX compiles small helpers too)
        pb = max(pbs, key=os.path.getsize)
        with open(pb, "rb") as f:
            data = f.read()
        with open(os.path.join(outdir, name + ".hlo.pb"), "wb") as f:
            f.write(trim(data))


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fields(b):
    """(number, raw bytes of the whole field, payload of a length-delimited one)"""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wire = key & 7
        payload = None
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(b, i)
            payload = b[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % wire)
        yield key >> 3, b[start:i], payload


def trim(hlo_proto):
    """The HloProto with its module cut to name and entry_computation_name."""
    out = bytearray()
    for num, raw, payload in fields(hlo_proto):
        if num == 1:
            module = b"".join(r for n, r, _ in fields(payload) if n in (1, 2))
            out += b"\x0a" + put_varint(len(module)) + module
        else:
            out += raw
    return bytes(out)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    names = sys.argv[2:] or PROGRAMS
    for name in names:
        dump(name, outdir)
        print(name, os.path.getsize(os.path.join(outdir, name + ".hlo.pb")))


if __name__ == "__main__":
    main()
