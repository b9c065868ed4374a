"""gpusim from Python: replay GPU memory traces through allocator models.

    import gpusim
    r = gpusim.replay("traces/examples/mlp_train.json", strategy="growth")
    r["result"]["peak_reserved_bytes"]          # 2147483648

    snap = torch.cuda.memory._snapshot()        # a snapshot dict, no file needed
    gpusim.replay(snap, alloc_conf="expandable_segments:True", gpu="A100-40GB")

gpusim.tune(trace) searches the allocator settings and ranks them.

gpusim.sweep(spec, shard=(i, n)) runs shard i of n of a sweep spec (docs/sweep.md): a Ray
or Dask task per shard, then gpusim.sweep_merge(output, shard_files) for one run's results.

Each function runs the command of the same name in libgpusim.so (the library that
CMake builds beside the gpusim program, found as gpusim._native says) and returns
its --format=json result as a dict. Keyword options are the command's options with
"_" for "-" (alloc_conf= for --alloc-conf, from_= for --from); True gives a flag (paranoid=True),
False and None leave the option out, a list or tuple is joined with commas
(strategies=["torch", "growth"]). A failure raises UsageError, TraceError or
FileError with the message the command line prints; what it prints as a warning
or note on stderr (an import's warnings) is a GpusimWarning.
"""

import json
import warnings

from . import _native

__all__ = ["replay", "compare", "plan", "tune", "sweep", "sweep_merge", "version", "Error", "UsageError", "TraceError", "FileError",
           "GpusimWarning"]

# the name an in-memory trace has in messages and results
SNAPSHOT_NAME = "<snapshot>"


class Error(Exception):
    """A gpusim command failed; the message is what the command line prints."""

    exit_code = 2


class UsageError(Error, ValueError):
    """A bad option or option value (the command line's exit status 2)."""


class TraceError(Error, ValueError):
    """The trace is invalid or not a format gpusim reads (exit status 3)."""

    exit_code = 3


class FileError(Error, OSError):
    """A file could not be read or written (exit status 2)."""


class GpusimWarning(UserWarning):
    """A warning or note of the command (the "gpusim: warning: ..." lines of stderr)."""


_ERRORS = {"usage": UsageError, "trace": TraceError, "io": FileError, "memory": MemoryError}
# options the module sets itself: the result is always read as JSON from memory
_RESERVED = ("format", "output", "help")


def version():
    """The version of the loaded library, e.g. "0.1.0"."""
    return _native.version()


def _trace_args(trace):
    """(positional arguments, in-memory bytes or None) for one trace or a list of them."""
    traces = list(trace) if isinstance(trace, (list, tuple)) else [trace]
    if not traces:
        raise UsageError("no trace given")
    args, mem = [], None
    for t in traces:
        if isinstance(t, (dict, bytes, bytearray, memoryview)):
            if mem is not None:
                raise UsageError("at most one in-memory trace per call (the others can be paths)")
            if isinstance(t, dict):
                # a snapshot dict serialised here, in memory: gpusim reads the JSON form
                mem = json.dumps(t, separators=(",", ":")).encode("utf-8")
            else:
                mem = bytes(t)
            args.append(SNAPSHOT_NAME)
        else:
            args.append(str(t.__fspath__() if hasattr(t, "__fspath__") else t))
    return args, mem


def _option_args(options):
    args = []
    for key, value in options.items():
        name = key.rstrip("_").replace("_", "-")  # from_= for --from (a Python keyword)
        if name in _RESERVED:
            raise UsageError("--%s: gpusim's Python module sets it itself (the result is returned)" % name)
        if value is None or value is False:
            continue
        if value is True:
            args.append("--" + name)
        elif isinstance(value, (list, tuple)):
            args.append("--%s=%s" % (name, ",".join(str(v) for v in value)))
        else:
            args.append("--%s=%s" % (name, value))
    return args


def _run(command, trace, options):
    positional, mem = _trace_args(trace)
    # "--" keeps a trace named like an option a trace
    args = ["--format=json"] + _option_args(options) + ["--"] + positional
    return _call(command, args, mem)


def _call(command, args, mem=None):
    code, kind, message, output, notes = _native.run(command, args, SNAPSHOT_NAME if mem is not None else None, mem)
    for note in notes:
        warnings.warn(note, GpusimWarning, stacklevel=4)
    if kind:
        raise _ERRORS.get(kind, Error)(message)
    if code != 0:
        raise Error("gpusim %s exited with status %d" % (command, code))
    return json.loads(output)


def replay(trace, strategy="torch", **options):
    """`gpusim replay TRACE --strategy=S --format=json`, as a dict.

    trace: a path, an in-memory snapshot (the dict torch.cuda.memory._snapshot()
    returns, or a file's bytes), or a list of them (several processes on one GPU).
    """
    return _run("replay", trace, dict(options, strategy=strategy))


def compare(trace, strategies=None, **options):
    """`gpusim compare TRACE --format=json`: the trace under several strategies."""
    return _run("compare", trace, dict(options, strategies=strategies))


def plan(trace, strategies=None, **options):
    """`gpusim plan TRACE --format=json`: which GPUs of the catalog it fits on."""
    return _run("plan", trace, dict(options, strategies=strategies))


def tune(trace, framework="torch", goal="min-reserved", **options):
    """`gpusim tune TRACE --format=json`: the framework's allocator settings ranked for
    the goal ("min-reserved", "fit" with gpu= or capacity=, "no-oom"); result["best"]["env"]
    is the line to paste (PYTORCH_ALLOC_CONF=...)."""
    return _run("tune", trace, dict(options, framework=framework, goal=goal))


def _path(p):
    return str(p.__fspath__() if hasattr(p, "__fspath__") else p)


def sweep(spec, shard=None, output=None, **options):
    """`gpusim sweep SPEC --format=json` on threads of this process: the summary as a dict.

    shard=(i, n) runs only shard i of n (from 0), into the results file with
    ".shard-I-of-N" before its extension (output= or the spec's "output"), as
    `--shard=I/N` does; shard="auto" takes the index from a job array's environment.
    Give jobs=1 when every core already runs a shard (one Ray or Dask task per core).
    resume=True continues a shard or a sweep that was interrupted.
    """
    args = ["--format=json"] + _option_args(options)
    if output is not None:
        args.append("--output=" + _path(output))
    if shard is not None:
        if isinstance(shard, str):
            args.append("--shard=" + shard)
        elif (isinstance(shard, (tuple, list)) and len(shard) == 2
              and all(isinstance(v, int) and not isinstance(v, bool) for v in shard)):
            args.append("--shard=%d/%d" % tuple(shard))
        else:
            raise UsageError("shard: expected (i, n), shard i of n from 0, or \"auto\", not %r" % (shard,))
    return _call("sweep", args + ["--", _path(spec)])


def sweep_merge(output, shards, spec=None, partial=False):
    """`gpusim sweep merge OUTPUT SHARDS... --format=json`: the shards' results files (a
    list of paths, or a glob such as "out.shard-*-of-8.jsonl") into output, the same
    bytes as one run of the spec; returns the summary as a dict. partial=True merges the
    shards there are so far."""
    files = [shards] if isinstance(shards, (str, bytes)) or hasattr(shards, "__fspath__") else list(shards)
    args = ["merge", "--format=json"] + _option_args({"spec": spec and _path(spec), "partial": partial})
    return _call("sweep", args + ["--", _path(output)] + [_path(f) for f in files])
