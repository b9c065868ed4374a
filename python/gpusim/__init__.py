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
its --format=json result as a plain dict (the keys of docs/design.md; the module adds
no view of its own, so that the JSON, the SQLite tables and Python read alike).
Keyword options are the command's options with "_" for "-" (alloc_conf= for
--alloc-conf, from_= for --from); True gives a flag (paranoid=True), False and None
leave the option out, a list or tuple is joined with commas (strategies=["torch",
"growth"]). A trace that is not a path, bytes, a snapshot dict or a list of those
raises TypeError. A failure raises UsageError, TraceError or FileError with the
message the command line prints; with fail_on_oom=True an out-of-memory raises
OutOfMemoryError, whose .result is the whole result. What the command prints as a
warning or note on stderr (an import's warnings) is a GpusimWarning.
"""

from __future__ import annotations

import collections.abc
import json
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["replay", "compare", "plan", "tune", "sweep", "sweep_merge", "version", "Error", "UsageError", "TraceError", "FileError",
           "OutOfMemoryError", "GpusimWarning", "Result", "Trace"]

#: A command's result: its --format=json output, parsed (docs/design.md names the keys).
Result = Dict[str, Any]
#: One trace: a path, a file's bytes, or the snapshot dict torch.cuda.memory._snapshot() returns.
Trace = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Mapping[str, Any]]

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


class OutOfMemoryError(Error):
    """An out-of-memory happened and fail_on_oom=True asked for an exception (the command
    line's --fail-on-oom, exit status 1). The message is the first OOM's; .result is the
    whole result, as the call would have returned it."""

    exit_code = 1

    def __init__(self, message: str, result: Result) -> None:
        super().__init__(message)
        self.result: Result = result


class GpusimWarning(UserWarning):
    """A warning or note of the command (the "gpusim: warning: ..." lines of stderr)."""


_ERRORS = {"usage": UsageError, "trace": TraceError, "io": FileError, "memory": MemoryError}
# options the module sets itself: the result is always read as JSON from memory
_RESERVED = ("format", "output", "help")


def version() -> str:
    """The version of the loaded library, e.g. "0.1.0"."""
    return _native.version()


def _trace_args(trace: Union[Trace, Sequence[Trace]]) -> Tuple[List[str], Optional[bytes]]:
    """(positional arguments, in-memory bytes or None) for one trace or a list of them."""
    traces = list(trace) if isinstance(trace, (list, tuple)) else [trace]
    if not traces:
        raise UsageError("no trace given")
    args: List[str] = []
    mem: Optional[bytes] = None
    for t in traces:
        if isinstance(t, (collections.abc.Mapping, bytes, bytearray, memoryview)):
            if mem is not None:
                raise UsageError("at most one in-memory trace per call (the others can be paths)")
            if isinstance(t, collections.abc.Mapping):
                # a snapshot dict serialised here, in memory: gpusim reads the JSON form
                mem = json.dumps(dict(t), separators=(",", ":")).encode("utf-8")
            else:
                mem = bytes(t)
            args.append(SNAPSHOT_NAME)
        elif isinstance(t, (str, os.PathLike)):
            path = os.fspath(t)
            if not isinstance(path, str):
                raise TypeError("a trace path must be text, not %s" % type(path).__name__)
            args.append(path)
        else:
            raise TypeError("a trace is a path (str or os.PathLike), a file's bytes, a snapshot dict or a list "
                            "of those, not %s" % type(t).__name__)
    return args, mem


def _option_args(options: Mapping[str, Any]) -> List[str]:
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


def _oom_message(result: Result) -> str:
    first = result.get("result", {}).get("first_oom") if isinstance(result.get("result"), dict) else None
    if isinstance(first, dict) and isinstance(first.get("message"), str):
        return str(first["message"])
    return "an out-of-memory happened (fail_on_oom=True)"


def _run(command: str, trace: Union[Trace, Sequence[Trace]], options: Mapping[str, Any]) -> Result:
    positional, mem = _trace_args(trace)
    # "--" keeps a trace named like an option a trace
    args = ["--format=json"] + _option_args(options) + ["--"] + positional
    return _call(command, args, mem)


def _call(command: str, args: List[str], mem: Optional[bytes] = None) -> Result:
    code, kind, message, output, notes = _native.run(command, args, SNAPSHOT_NAME if mem is not None else None, mem)
    for note in notes:
        warnings.warn(note, GpusimWarning, stacklevel=4)
    if kind:
        raise _ERRORS.get(kind, Error)(message)
    if code == 1 and output:
        # the command's verdict (--fail-on-oom), its result complete
        result: Result = json.loads(output)
        raise OutOfMemoryError(_oom_message(result), result)
    if code != 0:
        raise Error("gpusim %s exited with status %d" % (command, code))
    parsed: Result = json.loads(output)
    return parsed


def replay(trace: Union[Trace, Sequence[Trace]], strategy: str = "torch", **options: Any) -> Result:
    """`gpusim replay TRACE --strategy=S --format=json`, as a dict.

    trace: a path, an in-memory snapshot (the dict torch.cuda.memory._snapshot()
    returns, or a file's bytes), or a list of them (several processes on one GPU).
    options: the command's options, "_" for "-" (capacity="24GiB",
    alloc_conf="expandable_segments:True", fail_on_oom=True).
    Returns the result: result["result"]["peak_reserved_bytes"] and the other keys of
    docs/design.md. Raises UsageError, TraceError, FileError; OutOfMemoryError (with
    .result) when fail_on_oom=True and an allocation failed; TypeError for a trace of
    another type.
    """
    return _run("replay", trace, dict(options, strategy=strategy))


def compare(trace: Union[Trace, Sequence[Trace]], strategies: Optional[Sequence[str]] = None,
            **options: Any) -> Result:
    """`gpusim compare TRACE --format=json`: the trace under several strategies.

    strategies: the models to run (default: the command's); the result's "rows" hold
    one entry per strategy. Raises as replay() does.
    """
    return _run("compare", trace, dict(options, strategies=strategies))


def plan(trace: Union[Trace, Sequence[Trace]], strategies: Optional[Sequence[str]] = None,
         **options: Any) -> Result:
    """`gpusim plan TRACE --format=json`: which GPUs of the catalog it fits on.

    result["minimum_capacity"]["rows"] gives the smallest capacity per strategy.
    Raises as replay() does.
    """
    return _run("plan", trace, dict(options, strategies=strategies))


def tune(trace: Union[Trace, Sequence[Trace]], framework: str = "torch", goal: str = "min-reserved",
         **options: Any) -> Result:
    """`gpusim tune TRACE --format=json`: the framework's allocator settings ranked.

    goal: "min-reserved", "fit" (with gpu= or capacity=) or "no-oom";
    result["best"]["env"] is the line to paste (PYTORCH_ALLOC_CONF=...).
    Raises as replay() does.
    """
    return _run("tune", trace, dict(options, framework=framework, goal=goal))


def _path(p: Union[str, "os.PathLike[str]"]) -> str:
    return os.fspath(p)


def sweep(spec: Union[str, "os.PathLike[str]"], shard: Union[None, str, Tuple[int, int], List[int]] = None,
          output: Union[None, str, "os.PathLike[str]"] = None, **options: Any) -> Result:
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


def sweep_merge(output: Union[str, "os.PathLike[str]"],
                shards: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
                spec: Union[None, str, "os.PathLike[str]"] = None, partial: bool = False) -> Result:
    """`gpusim sweep merge OUTPUT SHARDS... --format=json`: the shards' results files (a
    list of paths, or a glob such as "out.shard-*-of-8.jsonl") into output, the same
    bytes as one run of the spec; returns the summary as a dict. partial=True merges the
    shards there are so far."""
    files: List[Union[str, "os.PathLike[str]"]]
    if isinstance(shards, (str, os.PathLike)):
        files = [shards]
    else:
        files = list(shards)
    args = ["merge", "--format=json"] + _option_args({"spec": None if spec is None else _path(spec),
                                                      "partial": partial})
    return _call("sweep", args + ["--", _path(output)] + [_path(f) for f in files])
