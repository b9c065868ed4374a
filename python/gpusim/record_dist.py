"""Recording a distributed PyTorch program one rank at a time, without the cluster.

    gpusim record --ranks=8 -o llama-fsdp -- python train.py
    gpusim.record("llama-fsdp", step, ranks=8)     # step() builds, shards and trains

Each rank runs the program on its own (the CLI: one process per rank, one after another;
gpusim.record: one call per rank in this process) with torch.distributed's fake process
group: init_process_group, whatever backend it names, makes a "fake" group (FakeStore,
torch/testing/_internal/distributed/fake_pg.py) of the job's size with this rank's number,
so the program takes its rank-dependent shapes (FSDP2's shards, DDP's buckets, tensor
parallelism's column and row shards) while every collective is a no-op. The trace of each
rank is written into one directory laid out as `gpusim synth --ranks` writes one
(rank-00000.jsonl, ..., job.json).

What a CPU run of such a program does differently from the CUDA build, and what the
recorder does about it (DIST_RULES, so that the docs and the tests name the same ones). The
line numbers are those of PyTorch 2.13.0's files, the release the frameworks' environment
installs (scripts/frameworks):

fake_process_group  init_process_group (the name the program calls, in every torch module
                    that imported it) makes the fake group (registered as backend "fake" by
                    torch/testing/_internal/distributed/fake_pg.py:30); RANK, WORLD_SIZE, LOCAL_RANK,
                    LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT are set as torchrun sets
                    them (rank r is LOCAL_RANK r mod 8, as on nodes of 8 GPUs). The fake group
                    completes every collective at once, leaving the buffers as they are.
accelerator         torch._C._get_accelerator and torch.accelerator answer "cuda" (FSDP2's
                    default mesh, torch/distributed/fsdp/_fully_shard/_fsdp_init.py:205 in
                    _init_default_mesh, and the optimizers' graph-capture check,
                    torch/optim/optimizer.py:463, ask them),
                    and torch.distributed.device_mesh._get_device_handle gives torch.cuda
                    (its fake streams) for the meta device the tensors are on.
fsdp2_meta          FSDP2 refuses parameters on the meta device at its lazy init
                    (_fsdp_param_group.py:308, FSDPParamGroup.lazy_init ->
                    _validate_no_meta_params); every parameter here is a meta tensor with a
                    CUDA one's shape, so the check is skipped while recording. FSDP2's device
                    (_fsdp_init.py:219 _get_device_from_mesh, cuda:N on a CUDA mesh) is the meta
                    device, so that the buffers it makes in backward hooks, where the
                    recorder's function mode does not reach, are device tensors too.
fsdp2_buffers       FSDP2's collective buffers are caching-allocator blocks made by its own
                    code, recorded with their stream: _fsdp_collectives.py:351, in
                    foreach_all_gather under the all-gather copy-in stream (:336), allocates
                    the all-gather output (world size x the group's padded shards, the input a
                    view of this rank's slice), which the all-gather then fills on the
                    all-gather stream (:363); foreach_reduce allocates the reduce-scatter input
                    (the group's unsharded gradients, padded) on the current stream (:597) and
                    the reduce-scatter output (1/world of it, which the sharded gradients then
                    view) on the reduce-scatter stream (:611-612). The shards themselves are
                    _fsdp_param.py:307's new_zeros of rank 0's padded size. The streams are
                    FSDP2's own torch.cuda.Stream()s (_fsdp_param_group.py:84, 89, 92, 102:
                    copy-in, all-gather, reduce-scatter, all-reduce), numbered 1 to 4 in the
                    trace, in that order.
ddp_construction    DDP's constructor checks the parameters' shapes across ranks
                    (torch/nn/parallel/distributed.py:1064 ->
                    torch/distributed/utils.py:281 _verify_param_shape_across_processes
                    reads the gathered metadata with .item()): skipped, it allocates a few
                    bytes. Its broadcast of the module states (distributed.py:1066
                    _sync_module_states -> utils.py:326 _broadcast_coalesced: flat buffers
                    of up to 250 MiB, freed after) and the reducer's gradient buckets
                    (distributed.py:1437 dist.Reducer) are
                    recorded as the CUDA build makes them. Its bucket rebuild after the first
                    iteration sends the bucket order to the device and reads it back
                    (reducer.cpp sync_bucket_indices): the host values come back unchanged.
                    Inputs already on the device stay where they are (the meta device has no
                    index to compare: torch/distributed/utils.py:97 _recursive_to).
ddp_allreduce       the fake group's all-reduce futures carry no value, which the reducer
                    refuses (torch/csrc/distributed/c10d/comm.cpp:114, in parseHookResult);
                    the recorder registers a communication hook that returns the bucket as
                    the all-reduce would, in place (with the annotations distributed.py:2462
                    _check_comm_hook asks for). A program's own DDP communication hook
                    cannot be recorded (RecordError says so).
nccl_buffers        NCCL's own buffers are device memory outside the caching allocator: not
                    events. Each communicator (process group of more than one rank) the rank
                    ran a collective on holds a ring of NCCL_CHANNELS connections of
                    NCCL_CONNECTION_BYTES each, the rule of traces/synth/nccl.c (which says
                    where the sizes come from); the header's meta has the sum as nccl_bytes,
                    as `gpusim synth --ranks` writes it, for --context.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

__all__ = ["DIST_RULES", "nccl_bytes", "distributed", "preload", "job_directory", "trace_summary", "write_job", "rank_file",
           "Communicators"]

#: rule name -> the PyTorch source it concerns (the docstring above says how)
DIST_RULES: Dict[str, str] = {
    "fake_process_group": "torch/testing/_internal/distributed/fake_pg.py FakeStore, backend fake",
    "accelerator": "torch/distributed/fsdp/_fully_shard/_fsdp_init.py _init_default_mesh; torch/accelerator",
    "fsdp2_meta": "torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py _validate_no_meta_params",
    "fsdp2_buffers": "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_all_gather, foreach_reduce",
    "ddp_construction": "torch/distributed/utils.py _verify_param_shape_across_processes, _sync_module_states",
    "ddp_allreduce": "torch/csrc/distributed/c10d/comm.cpp parseHookResult",
    "nccl_buffers": "traces/synth/nccl.c nccl_rank_bytes (one ring per communicator)",
}

#: channels per communicator, as `gpusim synth --nccl-channels` defaults (traces/synth/nccl.h)
NCCL_CHANNELS = 24
#: one ring connection's buffers, every protocol's FIFO in 2 MiB granules: LL 524,288 B +
#: LL128 4,915,200 B + Simple 4 MiB = 9,633,792 B -> 10 MiB (traces/synth/nccl.c
#: nccl_connection_bytes; the sources of each size are there)
NCCL_CONNECTION_BYTES = 10 << 20


def nccl_bytes(communicators: int, channels: int = NCCL_CHANNELS) -> int:
    """NCCL's device memory outside the allocator on a rank that used this many communicators
    of more than one rank: a ring of `channels` connections each (rule nccl_buffers)."""
    return communicators * channels * NCCL_CONNECTION_BYTES


def rank_file(rank: int) -> str:
    """The name of rank r's trace in the directory, as synth names it."""
    return "rank-%05d.jsonl" % rank


class Communicators:
    """The process groups of more than one rank a rank ran collectives on, by name."""

    def __init__(self) -> None:
        self.sizes: Dict[str, int] = {}

    def add(self, name: str, size: int) -> None:
        if size > 1:
            self.sizes.setdefault(name, size)

    def seen(self, torch: Any, func: Any, args: Tuple[Any, ...]) -> None:
        """Notes the group of a c10d or functional-collective op (its ProcessGroup argument, or
        its group name)."""
        dist = torch.distributed
        for a in args:
            if isinstance(a, dist.ProcessGroup) or type(a).__name__ in ("ScriptObject", "ProcessGroup"):
                try:
                    pg = dist.ProcessGroup.unbox(a) if not isinstance(a, dist.ProcessGroup) else a
                    self.add(str(pg.group_name), int(pg.size()))
                except (AttributeError, RuntimeError, TypeError):
                    continue
                return
        ns = getattr(func, "namespace", "")
        if ns == "_c10d_functional" and args and isinstance(args[-1], str):
            try:
                pg = dist.distributed_c10d._resolve_process_group(args[-1])
                self.add(args[-1], int(pg.size()))
            except (RuntimeError, ValueError, KeyError):
                pass


def _rebind(orig: Any, new: Any, prefixes: Tuple[str, ...] = ("torch", "__main__")) -> List[Tuple[Any, str, Any]]:
    """Replaces orig by new under every name a loaded module (torch's own, and the program's
    __main__, which may have imported it by name) has it; the undo list."""
    done = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(prefixes):
            continue
        for attr, value in list(getattr(mod, "__dict__", {}).items()):
            if value is orig:
                setattr(mod, attr, new)
                done.append((mod, attr, orig))
    return done


#: what distributed() and the usual programs import, imported once before the ranks' processes
#: fork (each would import them again, for seconds)
_PRELOAD = ("torch.distributed", "torch.testing._internal.distributed.fake_pg", "torch.distributed.device_mesh",
            "torch.distributed.fsdp", "torch.distributed.tensor", "torch.distributed.tensor.parallel",
            "torch.nn.parallel.distributed", "torch.distributed.algorithms.ddp_comm_hooks", "torch._dynamo")


def preload() -> None:
    """Imports the modules every rank needs, in this process, before the ranks fork."""
    for name in _PRELOAD:
        importlib.import_module(name)


class _FakeAcceleratorStream:
    def is_capturing(self) -> bool:
        return False

    def wait_stream(self, _other: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass


@contextlib.contextmanager
def distributed(comms: Communicators, rank: int, world: int, error: Callable[[str], BaseException]) -> Iterator[None]:
    """Rank `rank` of `world` for the code in the block (the rules above). error(msg) makes the
    exception a program's unsupported use raises."""
    torch = importlib.import_module("torch")
    dist = importlib.import_module("torch.distributed")
    importlib.import_module("torch.testing._internal.distributed.fake_pg")  # registers the fake backend
    FakeStore: Any = importlib.import_module("torch.testing._internal.distributed.fake_pg").FakeStore
    c10d = importlib.import_module("torch.distributed.distributed_c10d")
    mesh_mod = importlib.import_module("torch.distributed.device_mesh")
    fsdp_init = importlib.import_module("torch.distributed.fsdp._fully_shard._fsdp_init")
    fsdp_group = importlib.import_module("torch.distributed.fsdp._fully_shard._fsdp_param_group")
    dist_utils = importlib.import_module("torch.distributed.utils")
    ddp_mod = importlib.import_module("torch.nn.parallel.distributed")
    DDP = ddp_mod.DistributedDataParallel

    undo: List[Tuple[Any, str, Any]] = []
    ours: List[bool] = []

    def set_attr(obj: Any, name: str, value: Any) -> None:
        undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    # rule fake_process_group
    orig_init = c10d.init_process_group

    def init_process_group(*_a: Any, **_k: Any) -> None:
        if not c10d.is_initialized():
            orig_init("fake", store=FakeStore(), rank=rank, world_size=world)
            ours.append(True)

    undo += _rebind(orig_init, init_process_group)
    # rule accelerator
    set_attr(torch._C, "_get_accelerator", lambda: torch.device("cuda"))
    acc = torch.accelerator
    set_attr(acc, "current_accelerator", lambda *_a, **_k: torch.device("cuda"))
    set_attr(acc, "is_available", lambda: True)
    set_attr(acc, "device_count", lambda: 1)
    set_attr(acc, "current_device_index", lambda: 0)
    set_attr(acc, "set_device_index", lambda *_a: None)
    set_attr(acc, "current_stream", lambda *_a: _FakeAcceleratorStream())
    set_attr(acc, "synchronize", lambda *_a: None)
    orig_handle = mesh_mod._get_device_handle
    undo += _rebind(orig_handle, lambda device_type="cuda": torch.cuda if device_type in ("meta", "cuda")
                    else orig_handle(device_type))
    # rule fsdp2_meta
    orig_device = fsdp_init._get_device_from_mesh
    undo += _rebind(orig_device, lambda mesh: torch.device("meta") if mesh.device_type == "cuda" else orig_device(mesh))
    set_attr(fsdp_group.FSDPParamGroup, "_validate_no_meta_params", lambda self: None)
    # rule ddp_construction
    undo += _rebind(dist_utils._verify_param_shape_across_processes, lambda *_a, **_k: None)
    orig_to = dist_utils._recursive_to
    set_attr(dist_utils, "_recursive_to", lambda inputs, device, side: orig_to(
        inputs, torch.device("meta") if device.type == "meta" else device, side))
    # rule ddp_allreduce
    orig_ddp_init = DDP.__init__
    orig_register = DDP.register_comm_hook

    def allreduce_in_place(_state: Any, bucket: Any) -> Any:
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    # DDP checks the hook's annotations (distributed.py _check_comm_hook)
    allreduce_in_place.__annotations__ = {"_state": object, "bucket": dist.GradBucket,
                                          "return": torch.futures.Future[torch.Tensor]}

    def ddp_init(self: Any, *a: Any, **k: Any) -> None:
        orig_ddp_init(self, *a, **k)
        comms.add(str(self.process_group.group_name), int(self.process_group.size()))
        orig_register(self, None, allreduce_in_place)

    def no_hooks(*_a: Any, **_k: Any) -> None:
        raise error("gpusim record: DistributedDataParallel communication hooks cannot run on the fake process "
                    "group (its futures carry no values): record without register_comm_hook; the recording "
                    "then has DDP's default all-reduce, which allocates nothing")

    set_attr(DDP, "__init__", ddp_init)
    set_attr(DDP, "register_comm_hook", no_hooks)
    set_attr(DDP, "_register_builtin_comm_hook", no_hooks)

    env = {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank % 8),
           "LOCAL_WORLD_SIZE": str(min(world, 8)), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        if ours and c10d.is_initialized():
            dist.destroy_process_group()
        for obj, name, value in reversed(undo):
            setattr(obj, name, value)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def job_directory(path: str) -> Iterator[str]:
    """A temporary directory beside path for the ranks' traces; when the block ends without an
    exception its files move into path (made if missing, as synth makes it), else it is removed:
    a failed rank leaves nothing."""
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError("%s: exists and is not a directory (--ranks writes a directory)" % path)
    tmp = tempfile.mkdtemp(prefix=".gpusim-record-", dir=os.path.dirname(path))
    try:
        yield tmp
        os.makedirs(path, exist_ok=True)
        for name in sorted(os.listdir(tmp)):
            os.replace(os.path.join(tmp, name), os.path.join(path, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def trace_summary(path: str) -> Dict[str, Any]:
    """rank, peak live bytes and nccl_bytes of a rank's trace, for job.json (and its events and
    optimizer steps, for the summary line)."""
    live: Dict[int, int] = {}
    now = peak = events = 0
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
        for line in f:
            e = json.loads(line)
            events += 1
            if e["op"] == "alloc":
                live[e["id"]] = e["size"]
                now += e["size"]
                peak = max(peak, now)
            elif e["op"] == "free":
                now -= live.pop(e["id"], 0)
    meta = header.get("meta", {})
    return {"rank": int(meta.get("rank", 0)), "file": os.path.basename(path), "peak_live_bytes": peak,
            "nccl_bytes": int(meta.get("nccl_bytes", 0)), "events": events,
            "optimizer_steps": int(meta.get("optimizer_steps", 0))}


def write_job(directory: str, name: str, ranks: List[Dict[str, Any]]) -> None:
    """DIR/job.json as `gpusim synth --ranks` writes it: format, version, name, ranks and one
    entry per trace (rank, file, peak_live_bytes, nccl_bytes)."""
    keep = ("rank", "file", "peak_live_bytes", "nccl_bytes")
    job = {"format": "gpusim-job", "version": 1, "name": name, "ranks": len(ranks),
           "traces": [{k: r[k] for k in keep} for r in ranks]}
    with open(os.path.join(directory, "job.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(job, separators=(",", ":")) + "\n")
