"""Records the TensorFlow memory profiles of tests/data/import/tf (ours).

Run with the frameworks' python (scripts/frameworks --env: tensorflow-cpu 2.21, keras 3):
    $GPUSIM_FRAMEWORKS_PYTHON make.py [OUTDIR]      (default: this folder)

Each model is built and fitted once (tracing and the first allocations happen there),
then fitted for a few more steps under tf.profiler.experimental.start(logdir) ... stop().
That writes LOGDIR/plugins/profile/RUN/HOST.xplane.pb; the memory profile JSON is what
TensorBoard's profile plugin serves for the tool "memory_profile", made here by the same
converter TensorFlow ships: _pywrap_profiler_plugin.xspace_to_tools_data([xplane],
"memory_profile"). On the CPU nothing is recorded unless TensorFlow's CPU allocator is
its BFC allocator (TF_CPU_ALLOCATOR_USE_BFC=true, set below before TensorFlow loads):
the profile then holds one allocator, "bfc_cpu_allocator_for_gpu" (the host's BFC
allocator; there is no GPU one on a CPU-only build).

Writes NAME.memory_profile.json.gz for mlp_fit, conv_fit and transformer_fit, and
mlp_fit.pruned.memory_profile.json.gz: mlp_fit without its memoryProfileSnapshots and
with its sampledTimelineSnapshots cut to 100 points by XProf's own rule (the largest
heap + stack of each window, SampleMemoryProfileTimeline), to test the fallback on a
timeline with gaps. Gzip with mtime 0. Times, addresses and op order vary from run to
run; tests/cli_tf_profile.sh checks the properties, not the bytes.
"""
import glob
import gzip
import json
import os
import sys
import tempfile

os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"  # else the CPU allocator records nothing
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from tensorflow.python.profiler.internal import _pywrap_profiler_plugin as plugin  # noqa: E402


def mlp():
    m = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    x = np.random.rand(256, 32).astype("float32")
    return m, x, np.random.randint(0, 10, 256), 64


def conv():
    m = keras.Sequential([keras.Input((16, 16, 1)), keras.layers.Conv2D(8, 3, activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(10)])
    x = np.random.rand(128, 16, 16, 1).astype("float32")
    return m, x, np.random.randint(0, 10, 128), 32


def transformer():
    inp = keras.Input((16, 32))
    a = keras.layers.MultiHeadAttention(num_heads=2, key_dim=16)(inp, inp)
    h = keras.layers.LayerNormalization()(inp + a)
    f = keras.layers.Dense(32)(keras.layers.Dense(64, activation="relu")(h))
    h = keras.layers.LayerNormalization()(h + f)
    out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
    x = np.random.rand(64, 16, 32).astype("float32")
    return keras.Model(inp, out), x, np.random.randint(0, 10, 64), 16


def record(build, logdir):
    keras.utils.set_random_seed(0)
    m, x, y, batch = build()
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    m.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # warm-up: tracing, optimizer slots
    tf.profiler.experimental.start(logdir)
    m.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # 4 training steps
    tf.profiler.experimental.stop()
    xplanes = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    data, ok = plugin.xspace_to_tools_data(xplanes, "memory_profile")
    if not ok or not data:
        sys.exit("xspace_to_tools_data gave no memory profile for %s" % xplanes)
    return json.loads(data)


def sample(points, n):
    """XProf's SampleMemoryProfileTimeline: n windows, the largest heap + stack of each."""
    total = len(points)
    if total <= n:
        return list(points)
    width = total // n
    count1 = n * (width + 1) - total
    use = lambda p: int(p["aggregationStats"]["heapAllocatedBytes"]) + int(p["aggregationStats"]["stackReservedBytes"])
    out = []
    for w, count, start in ((width, count1, 0), (width + 1, n - count1, width * count1)):
        for i in range(count):
            window = points[start + w * i:start + w * (i + 1)]
            out.append(max(window, key=use))  # max() keeps the first of equals, as XProf does
    return out


def write(path, profile):
    raw = json.dumps(profile, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(raw, mtime=0))
    print("%s: %d bytes (%d uncompressed)" % (path, os.path.getsize(path), len(raw)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    print("tensorflow", tf.__version__, "keras", keras.__version__)
    profiles = {}
    for name, build in (("mlp_fit", mlp), ("conv_fit", conv), ("transformer_fit", transformer)):
        with tempfile.TemporaryDirectory() as logdir:
            profiles[name] = record(build, logdir)
        write(os.path.join(out, name + ".memory_profile.json.gz"), profiles[name])
    pruned = json.loads(json.dumps(profiles["mlp_fit"]))
    for prof in pruned["memoryProfilePerAllocator"].values():
        del prof["memoryProfileSnapshots"]
        prof["activeAllocations"] = []
        prof["sampledTimelineSnapshots"] = sample(prof["sampledTimelineSnapshots"], 100)
    write(os.path.join(out, "mlp_fit.pruned.memory_profile.json.gz"), pruned)


if __name__ == "__main__":
    main()
