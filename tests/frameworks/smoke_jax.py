"""JAX (pinned in scripts/frameworks-requirements.txt) compiles a jitted function on the CPU
and XLA reports its buffer assignment's sizes (memory_analysis): what the XLA-plan importer
and planned's checks against real programs read."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
from _smoke import check, finish, need  # noqa: E402

jax = need("jax")
import jax.numpy as jnp  # noqa: E402

check(jax.__version__ == "0.10.2", "jax %s, want the pinned 0.10.2" % jax.__version__)
check(jax.devices()[0].platform == "cpu", "a CPU device")


def mlp(w1, w2, x):
    return jnp.sum(jnp.tanh(x @ w1) @ w2)


w1 = jnp.ones((256, 512), jnp.float32)
w2 = jnp.ones((512, 128), jnp.float32)
x = jnp.ones((64, 256), jnp.float32)
compiled = jax.jit(mlp).lower(w1, w2, x).compile()
ma = compiled.memory_analysis()
check(ma is not None, "memory_analysis() on the CPU")
# the arguments are 256*512*4 + 512*128*4 + 64*256*4 = 524288 + 262144 + 65536 = 851968 B
check(ma.argument_size_in_bytes == 851968, "argument bytes %d, want 851968" % ma.argument_size_in_bytes)
check(ma.output_size_in_bytes == 4, "one float32 out, %d B" % ma.output_size_in_bytes)
check(ma.alias_size_in_bytes == 0, "no output aliases an argument: %d B" % ma.alias_size_in_bytes)
# tanh(x @ w1) is 64 x 512 ones-products: every element tanh(256) = 1.0, then @ w2 sums 512
# ones per element over 64 x 128 elements: 64 * 128 * 512
check(float(compiled(w1, w2, x)) == 64 * 128 * 512.0, "the compiled program's value")
finish()
