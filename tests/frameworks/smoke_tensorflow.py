"""TensorFlow CPU (pinned in scripts/frameworks-requirements.txt) runs a tf.function: it
traces once per input signature and computes the same as eager. The TF oracles (its BFC
allocator and memory profiles) need this environment."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from _smoke import check, finish, need  # noqa: E402

tf = need("tensorflow")
check(tf.__version__ == "2.21.0", "tensorflow %s, want the pinned 2.21.0" % tf.__version__)

traces = []


@tf.function
def step(a, b):
    traces.append(1)  # runs only while tracing
    return tf.reduce_sum(tf.matmul(a, b))


a = tf.ones([128, 256])
b = tf.ones([256, 64])
# every element of a @ b is 256 (ones over 256 terms); 128 * 64 of them
check(float(step(a, b)) == 128 * 64 * 256.0, "matmul sum")
check(float(step(a * 2, b)) == 2 * 128 * 64 * 256.0, "the same signature again")
check(len(traces) == 1, "traced %d times for one signature, want 1" % len(traces))
check(step.experimental_get_tracing_count() == 1, "tracing count")
finish()
