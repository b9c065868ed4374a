"""Recording a PyTorch program's GPU allocations without the GPU (trace v1, .jsonl).

    import gpusim, torch
    with torch.device("meta"):
        model = MyModel()                       # shapes only: no weights, no memory
    opt = torch.optim.AdamW(model.parameters())
    def step():
        loss = model(torch.randn(8, 512, device="cuda")).sum()
        loss.backward(); opt.step(); opt.zero_grad()
    gpusim.record("step.jsonl", step, device="A100-80GB")

The program runs on PyTorch's meta device (every tensor a shape, a dtype and a storage
size, no data), with "cuda" mapped to it: factory functions, .to("cuda") and .cuda()
make meta tensors, torch.cuda answers as the chosen card would. Autograd, the optimizer
and Python's reference counting run for real, so every storage is allocated and freed
where the CUDA build would: a TorchDispatchMode sees each storage an op creates, a weak
reference on the storage sees it die. record_rules.py adds what the CUDA build
allocates that the meta device does not (cuBLAS workspaces, the attention backend's
saved tensors, the optimizer's foreach temporaries). Tensors that are live when the
recording starts (the parameters, buffers, optimizer state) are its first allocations,
then a "model loaded" mark. Tags: the module path and the op
("layers.3.mlp.down_proj:mm"; "backward:" before the module path in backward).

What cannot work without data: .item(), printing values, nonzero/masked_select and
other ops whose output size depends on values, Python control flow on tensor values,
custom CUDA extensions with no meta kernel. Each raises RecordError naming the op.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import importlib
import json
import os
import sys
import tempfile
import traceback
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, TextIO, Tuple

from . import record_dist as dist_rules
from . import record_cuda
from . import record_graphs
from . import record_rules as rules

__all__ = ["record", "recording", "mark", "RecordError", "StopRecording"]


class RecordError(RuntimeError):
    """The program did something a recording without data cannot do (the message names the op)."""


class StopRecording(BaseException):
    """Raised inside the program to end the recording there (mark(stop=True), --steps). A
    BaseException, as SystemExit is, so that the program's own `except Exception` lets it pass."""


_DATA_DEPENDENT = ("item", "_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique2",
                   "repeat_interleave", "equal", "is_nonzero")

# the recording in progress in this context (gpusim.mark finds it there); a ContextVar, not a
# global list: each thread and task sees its own
_current: "contextvars.ContextVar[Optional[Recorder]]" = contextvars.ContextVar("gpusim_recording", default=None)


def _torch() -> Any:
    return importlib.import_module("torch")


def _op_name(func: Any) -> str:
    return str(getattr(func, "__name__", func)).split(".")[0]


class HostValues:
    """The values of small host tensors copied to the device, for when they are copied back.

    A meta tensor has no values, but a value that went to the device and comes back unchanged
    is known: DDP sends its bucket order and other metadata through a collective that the fake
    process group leaves as it is (torch/csrc/distributed/c10d/reducer.cpp sync_bucket_indices),
    then reads it back on the host. Only tensors of at most LIMIT elements are kept, one entry
    per device storage, dropped when the storage dies."""

    LIMIT = 1 << 16

    def __init__(self) -> None:
        self._kept: Dict[int, Tuple[Any, Any]] = {}  # id(meta storage) -> (weakref, the host values)

    def keep(self, torch: Any, op: str, args: Tuple[Any, ...], out: Any) -> None:
        src, dst = (args[1], args[0]) if op == "copy_" else (args[0], out)
        if not (isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) and src.device.type == "cpu"
                and dst.device.type == "meta" and type(src) is torch.Tensor and src.numel() <= self.LIMIT
                and dst.storage_offset() == 0 and dst.is_contiguous() and dst.shape == src.shape):
            return
        st = dst.untyped_storage()
        key = id(st)
        self._kept[key] = (weakref.ref(st, self._forget(key)), src.detach().clone())

    def _forget(self, key: int) -> Callable[[Any], None]:
        def dead(_ref: Any) -> None:
            self._kept.pop(key, None)
        return dead

    def back(self, torch: Any, op: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        """The host tensor a device-to-host copy of a kept tensor gives, else None."""
        src = args[1] if op == "copy_" else args[0]
        if not isinstance(src, torch.Tensor) or src.device.type != "meta" or src.storage_offset() != 0:
            return None
        entry = self._kept.get(id(src.untyped_storage()))
        if entry is None or entry[0]() is not src.untyped_storage() or entry[1].shape != src.shape:
            return None
        if op == "copy_":
            dst = args[0]
            if not isinstance(dst, torch.Tensor) or dst.device.type != "cpu":
                return None
            return dst.copy_(entry[1])
        device = kwargs.get("device")
        if device is None or torch.device(device).type != "cpu":
            return None
        return entry[1].to(dtype=kwargs.get("dtype") or src.dtype, copy=True)


class Recorder:
    """One recording: the trace being written and the live storages."""

    def __init__(self, out: TextIO, device: str, capability: Tuple[int, int], env: Optional[Dict[str, str]] = None):
        self._out = out
        self.device = device
        self.capability = capability
        self._env = dict(os.environ) if env is None else env
        self._next_id = 1
        self._live: Dict[int, Tuple[Any, int, int]] = {}  # id(storage) -> (weakref, trace id, bytes)
        self._workspaces: Dict[Tuple[str, str, int], int] = {}  # (kind, thread, stream) -> trace id
        self._names: Dict[int, str] = {}  # id(module) -> qualified name
        self._stack: List[str] = []
        self.stream = 0
        self.steps = 0
        self.events = 0
        self.live_bytes = 0
        self.peak_bytes = 0
        self.stopped = False
        self.max_steps = 0
        self._last_key = 0
        self.autocast_cache: Dict[int, Tuple[Any, Any]] = {}  # id(parameter) -> (parameter, its cast)
        self.host_values = HostValues()
        self.comms: Optional[dist_rules.Communicators] = None  # a rank of a distributed job: its groups
        self.rank = 0
        self.world_size = 1
        self.nccl_channels = 0
        # pool_begin / pool_end / pool_release / graph_replay (record_graphs.py)
        self.pool_event = record_graphs.pool_event_writer(self._write)

    # -- writing -----------------------------------------------------------------------------
    def _write(self, event: Dict[str, Any]) -> None:
        self._out.write(json.dumps(event, separators=(",", ":")) + "\n")
        self.events += 1

    def alloc(self, size: int, tag: str) -> int:
        i = self._next_id
        self._next_id += 1
        ev: Dict[str, Any] = {"op": "alloc", "id": i, "size": size}
        if self.stream:
            ev["stream"] = self.stream
        if tag:
            ev["tag"] = tag
        self._write(ev)
        self.live_bytes += size
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        return i

    def free(self, i: int, size: int) -> None:
        self._write({"op": "free", "id": i})
        self.live_bytes -= size

    def mark(self, name: str) -> None:
        self._write({"op": "mark", "name": name})

    def empty_cache(self) -> None:
        self._write({"op": "empty_cache"})

    # -- storages ----------------------------------------------------------------------------
    def _on_death(self, key: int) -> Callable[[Any], None]:
        def dead(_ref: Any) -> None:
            entry = self._live.pop(key, None)
            if entry is not None and entry[2] > 0 and not self.stopped:
                self.free(entry[1], entry[2])
        return dead

    def track(self, t: Any, tag: str) -> None:
        """Records the storage of meta tensor t if it is new, or its resize (new block, then old freed)."""
        if t.device.type != "meta":
            return  # rule host_memory: CPU and pinned tensors are not device memory
        if _is_wrapper(t):
            for inner in _inner_tensors(t):
                self.track(inner, tag)
            return
        st = t.untyped_storage()
        key = id(st)
        nbytes = int(st.nbytes())
        entry = self._live.get(key)
        if entry is not None and entry[0]() is st:
            if entry[2] == nbytes:
                return
            # resize_ / set_ of the storage: CUDA allocates the new block, copies, frees the old
            new_id = self.alloc(nbytes, tag) if nbytes > 0 else 0
            if entry[2] > 0:
                self.free(entry[1], entry[2])
            self._live[key] = (entry[0], new_id, nbytes)
            return
        ref = weakref.ref(st, self._on_death(key))
        self._live[key] = (ref, self.alloc(nbytes, tag) if nbytes > 0 else 0, nbytes)
        self._last_key = key

    def is_fresh(self, t: Any) -> bool:
        """t's storage is the last one allocated (a buffer an autograd formula just made)."""
        return bool(t.device.type == "meta" and id(t.untyped_storage()) == self._last_key and self.is_tracked(t))

    def is_tracked(self, t: Any) -> bool:
        st = t.untyped_storage()
        entry = self._live.get(id(st))
        return entry is not None and entry[0]() is st

    # -- tags --------------------------------------------------------------------------------
    def name_modules(self, root: Any, prefix: str = "") -> None:
        for name, m in root.named_modules():
            self._names.setdefault(id(m), (prefix + "." + name if prefix and name else prefix or name))

    def module_path(self) -> str:
        return self._stack[-1] if self._stack else ""

    def tag(self, op: str) -> str:
        torch = _torch()
        node = torch._C._current_autograd_node()
        if node is not None:
            where = ""
            try:
                where = str(node.metadata.get("gpusim_module", ""))
            except (AttributeError, RuntimeError):
                pass
            return "backward:" + (where + ":" if where else "") + op
        path = self.module_path()
        return path + ":" + op if path else op

    # -- rule cublas_workspace / cublaslt_workspace ---------------------------------------------
    def cublas(self, op: str, args: Tuple[Any, ...], tag: str) -> None:
        """What a cuBLAS call adds after its output: copies of the operands cuBLAS cannot take
        (rule cublas_operand_copy), the workspaces of this thread's handle on this stream
        (rules cublas_workspace, cublaslt_workspace; backward runs on the autograd engine's
        device thread, whose handle is another one), then the copies freed."""
        copies = []
        for at in rules.CUBLAS_OPERANDS.get(op, ()):
            a = args[at] if at < len(args) else None
            if a is not None and rules.needs_operand_copy(tuple(a.shape), tuple(a.stride())):
                size = a.numel() * a.element_size()
                copies.append((self.alloc(size, tag + " (operand copy)"), size))
        thread = "backward" if _torch()._C._current_autograd_node() is not None else "main"
        key = ("cublas", thread, self.stream)
        if key not in self._workspaces:
            self._workspaces[key] = self.alloc(rules.cublas_workspace_bytes(self.capability, self._env),
                                               "cuBLAS workspace")
        lt = ("cublaslt", thread, self.stream)
        if rules.uses_cublaslt(op, args) and lt not in self._workspaces:
            size = rules.cublaslt_workspace_bytes(self.capability, self._env)
            self._workspaces[lt] = self.alloc(size, "cuBLASLt workspace") if size else 0
        for i, size in copies:
            self.free(i, size)


def _is_wrapper(t: Any) -> bool:
    """t is a tensor subclass wrapping others (DTensor): its own storage is a shape, no memory."""
    return bool(importlib.import_module("torch.utils._python_dispatch").is_traceable_wrapper_subclass(t))


def _inner_tensors(t: Any) -> List[Any]:
    """The tensors a wrapper subclass holds (a DTensor's local shard), recursively."""
    names, _ctx = t.__tensor_flatten__()
    out: List[Any] = []
    for n in names:
        inner = getattr(t, n)
        out.extend(_inner_tensors(inner) if _is_wrapper(inner) else [inner])
    return out


def _to_meta(device: Any) -> Any:
    """"cuda", "cuda:0", torch.device("cuda"), an int (a CUDA ordinal) -> "meta"; anything else as is."""
    torch = _torch()
    if isinstance(device, int) and not isinstance(device, bool):
        return "meta"
    if isinstance(device, str) and device.split(":")[0] == "cuda":
        return "meta"
    if isinstance(device, torch.device) and device.type == "cuda":
        return "meta"
    return device


def _formula_starts(meta: Dict[str, Any]) -> Callable[..., None]:
    def starts(*_args: Any) -> None:
        meta.pop("gpusim_done", None)
    return starts


def _formula_done(meta: Dict[str, Any]) -> Callable[..., None]:
    def done(*_args: Any) -> None:
        meta["gpusim_done"] = True
    return done


def _accumulated_in_place(torch: Any, args: Tuple[Any, ...]) -> Any:
    """The gradient the CUDA build's engine adds into in place, or None (rule grad_accumulate_in_place)."""
    if len(args) != 2 or torch.is_grad_enabled():
        return None
    node = torch._C._current_autograd_node()
    if node is None or not node.metadata.get("gpusim_done"):
        return None
    for old, new in ((args[0], args[1]), (args[1], args[0])):
        if (isinstance(old, torch.Tensor) and isinstance(new, torch.Tensor) and old.device.type == "meta"
                and old._base is None and old.is_contiguous() and old.shape == torch.broadcast_shapes(old.shape, new.shape)
                and old.dtype == torch.result_type(old, new)):
            return old
    return None


def _modes(rec: Recorder) -> Tuple[Any, Any]:
    torch = _torch()
    TorchFunctionMode: Any = importlib.import_module("torch.overrides").TorchFunctionMode
    TorchDispatchMode: Any = importlib.import_module("torch.utils._python_dispatch").TorchDispatchMode
    tree_flatten: Any = importlib.import_module("torch.utils._pytree").tree_flatten
    is_wrapper_type: Any = importlib.import_module("torch.utils._python_dispatch").is_traceable_wrapper_subclass_type

    flash = torch.ops.aten._scaled_dot_product_flash_attention.default
    efficient = torch.ops.aten._scaled_dot_product_efficient_attention.default
    sdpa = torch.nn.functional.scaled_dot_product_attention
    autocast_lower = frozenset(rules.AUTOCAST_LOWER)
    autocast_fp32 = frozenset(rules.AUTOCAST_FP32)
    implicit = torch._C.DispatchKey.CompositeImplicitAutograd
    composite_ops: Dict[Any, bool] = {}

    def composite(func: Any) -> bool:
        """func has a CompositeImplicitAutograd kernel (rule composite_in_inference)."""
        known = composite_ops.get(func)
        if known is None:
            known = composite_ops[func] = bool(torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), implicit))
        return known

    class CudaAsMeta(TorchFunctionMode):  # type: ignore[misc]
        """Maps CUDA devices to meta, picks the attention backend, labels autograd nodes."""

        def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (),
                               kwargs: Optional[Dict[str, Any]] = None) -> Any:
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = _to_meta(kwargs["device"])
            name = getattr(func, "__name__", "")
            if name == "cuda" and isinstance(args[0], torch.Tensor):
                return args[0].to("meta", non_blocking=bool(kwargs.get("non_blocking", False)))
            if name in ("pin_memory",):
                return args[0]  # rule host_memory
            if name == "record_stream":
                return None  # not modelled: the free stays where the program makes it
            if name == "to":
                args = tuple(_to_meta(a) for a in args)
            if name in autocast_lower or name in autocast_fp32:
                args, kwargs = _autocast(rec, torch, name in autocast_lower, args, kwargs)
            if func is sdpa:
                return _attention(rec, args, kwargs)
            out = func(*args, **kwargs)
            path = rec.module_path()
            # label the autograd nodes this call made (the ones inside a composite op too:
            # linear's mm under its view) with the module path, for backward's tags
            todo = [getattr(t, "grad_fn", None) for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
            while todo:
                fn = todo.pop()
                if fn is None:
                    continue
                try:
                    meta = fn.metadata
                    if "gpusim_module" in meta:
                        continue
                    meta["gpusim_module"] = path
                    # after the node's formula ran, an add in it is the engine summing two
                    # gradients of one input (rule grad_accumulate_in_place)
                    fn.register_prehook(_formula_starts(meta))
                    fn.register_hook(_formula_done(meta))
                except (AttributeError, RuntimeError):
                    continue
                todo.extend(f for f, _ in fn.next_functions)
            return out

    class Storages(TorchDispatchMode):  # type: ignore[misc]
        """Sees every aten op: the storages it creates or resizes, the cuBLAS calls."""

        def __torch_dispatch__(self, func: Any, types: Any, args: Tuple[Any, ...] = (),
                               kwargs: Optional[Dict[str, Any]] = None) -> Any:
            kwargs = kwargs or {}
            if any(t is not torch.Tensor and t is not torch.nn.Parameter and is_wrapper_type(t) for t in types):
                # a tensor subclass that wraps others (DTensor: FSDP2's and tensor parallelism's
                # parameters): its own storage holds nothing, so it runs its __torch_dispatch__ and
                # the ops on the tensors it wraps come back here, with their real sizes
                return NotImplemented
            op = _op_name(func)
            if rec.comms is not None and getattr(func, "namespace", "") in ("c10d", "_c10d_functional"):
                rec.comms.seen(torch, func, args)  # rule nccl_buffers (record_dist.py)
            if op in rules.ALIAS_ON_CUDA and args and isinstance(args[0], torch.Tensor):
                return torch.ops.aten.alias.default(args[0])  # rule collective_wrap_alias
            flat = tree_flatten((args, kwargs))[0]
            on_device = any(isinstance(a, torch.Tensor) and a.device.type == "meta" for a in flat)
            if on_device and composite(func):
                with self:  # rule composite_in_inference: its parts come back here
                    out = func.decompose(*args, **kwargs)
                if out is not NotImplemented:
                    return out
            if (op in rules.IN_PLACE_ON_CUDA and args and isinstance(args[0], torch.Tensor)
                    and torch._C._current_autograd_node() is not None and rec.is_fresh(args[0])):
                return args[0]  # rule subclass_like_branch: the CUDA build fills the buffer in place
            if op in ("copy_", "_to_copy") and args:
                back = rec.host_values.back(torch, op, args, kwargs)
                if back is not None:
                    return back
            if op == "add" and kwargs.get("alpha", 1) == 1:
                acc = _accumulated_in_place(torch, args)
                if acc is not None:
                    return acc
            try:
                out = func(*args, **kwargs)
            except (NotImplementedError, RuntimeError) as e:
                if on_device or op in _DATA_DEPENDENT:
                    raise RecordError(_explain(str(func), e)) from e
                raise
            if not on_device and not any(isinstance(t, torch.Tensor) and t.device.type == "meta"
                                         for t in tree_flatten(out)[0]):
                return out
            if op in ("copy_", "_to_copy") and args:
                rec.host_values.keep(torch, op, args, out)
            tag = rec.tag(op)
            skip: Tuple[int, ...] = ()
            if func is flash or func is efficient:
                at, host = rules.HOST_OUTPUTS[op]
                dropout = args[at] if len(args) > at else kwargs.get("dropout_p", 0.0)
                if not dropout:
                    skip = host
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for k, t in enumerate(outs):
                if k in skip:
                    continue
                for leaf in tree_flatten(t)[0]:
                    if isinstance(leaf, torch.Tensor):
                        rec.track(leaf, tag)
            for a in flat:  # in-place ops, out=, resize_, set_
                if isinstance(a, torch.Tensor) and a.device.type == "meta":
                    rec.track(a, tag)
            if op in rules.CUBLAS_OPS:
                rec.cublas(op, args, tag)
            return out

    return CudaAsMeta(), Storages()


def _autocast(rec: Recorder, torch: Any, lower: bool, args: Tuple[Any, ...],
              kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """autocast("cuda")'s casts of a call's floating-point arguments (rule autocast); the
    casts of parameters are cached until the outermost autocast region ends."""
    if not torch.is_autocast_enabled("cuda"):
        return args, kwargs
    want = torch.get_autocast_dtype("cuda") if lower else torch.float32
    cache = torch.is_autocast_cache_enabled()

    def cast(a: Any) -> Any:
        if not (isinstance(a, torch.Tensor) and a.device.type == "meta" and a.is_floating_point()
                and a.dtype not in (torch.float64, want)):
            return a
        if lower and cache and a.is_leaf and a.requires_grad:
            hit = rec.autocast_cache.get(id(a))
            if hit is None or hit[0] is not a:
                hit = (a, a.to(want))
                rec.autocast_cache[id(a)] = hit
            return hit[1]
        return a.to(want)

    def walk(a: Any) -> Any:
        if isinstance(a, (list, tuple)):
            return type(a)(walk(x) for x in a)
        return cast(a)

    return tuple(walk(a) for a in args), {k: walk(v) for k, v in kwargs.items()}


def _explain(op: str, e: BaseException) -> str:
    base = op.split(".")[1] if op.startswith("aten.") else op
    if base in _DATA_DEPENDENT:
        why = ("its result depends on the tensor's values, which a recording has not got (.item(), printing a "
               "tensor, nonzero, masked_select, Python control flow on values): take the value from the "
               "configuration instead, or record around that part")
    elif "expected device" in str(e) or "same device" in str(e):
        why = ("it met a tensor on another device: something was made on the CPU where the CUDA build has it "
               "on the GPU (a device the recorder did not map): create it with device=\"cuda\"")
    elif isinstance(e, NotImplementedError) or "meta" in str(e).lower():
        why = ("it has no meta kernel, so it cannot run without data (a custom CUDA extension?): register one "
               "with torch.library.register_fake, or leave the op out of the recorded code")
    else:
        why = "it failed on shape-only tensors"
    return "gpusim record: %s on a CUDA tensor: %s (%s)" % (op, why, str(e).splitlines()[0] if str(e) else type(e).__name__)


def _attention(rec: Recorder, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """scaled_dot_product_attention as the CUDA build runs it (rule sdpa_backend)."""
    torch = _torch()
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    a = dict(zip(names, args))
    a.update(kwargs)
    q, k, v = a["query"], a["key"], a["value"]
    mask = a.get("attn_mask")
    dropout = float(a.get("dropout_p", 0.0) or 0.0)
    causal = bool(a.get("is_causal", False))
    scale = a.get("scale")
    gqa = bool(a.get("enable_gqa", False))
    F = torch.nn.functional
    if q.device.type != "meta" or q.dim() != 4 or gqa and k.size(1) != q.size(1):
        return F.scaled_dot_product_attention(*args, **kwargs)
    backend = rules.sdpa_backend(rec.capability, str(q.dtype).replace("torch.", ""), q.size(-1), mask is not None)
    if backend == "flash":
        return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout, causal, False, scale=scale)[0]
    if backend == "efficient":
        need_lse = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, mask, need_lse, dropout, causal,
                                                                      scale=scale)[0]
    return F.scaled_dot_product_attention(*args, **kwargs)


def _live_tensors(roots: Tuple[Any, ...]) -> List[Tuple[Any, str]]:
    """The meta tensors live now, parameters and buffers first with their names."""
    torch = _torch()
    found: List[Tuple[Any, str]] = []
    modules = [r for r in roots if isinstance(r, torch.nn.Module)]
    if not modules:
        objs = [o for o in gc.get_objects() if issubclass(type(o), torch.nn.Module)]
        children = {id(c) for o in objs for c in o.children()}
        modules = [o for o in objs if id(o) not in children]
    for m in modules:
        for name, p in m.named_parameters():
            found.append((p, "parameter " + name))
        for name, b in m.named_buffers():
            found.append((b, "buffer " + name))
    for o in gc.get_objects():
        if issubclass(type(o), torch.Tensor) and not issubclass(type(o), torch.nn.Parameter):
            found.append((o, "live before the recording"))
    return [(t, tag) for t, tag in found if t.device.type == "meta"]


def _catalog_capability(device: str) -> Tuple[Tuple[int, int], int]:
    """The compute capability and capacity of a catalog card (gpusim gpus), else (8, 0) and 80 GiB."""
    try:
        from . import _call
        rows: Any = _call("gpus", ["--format=json"])
        for row in rows if isinstance(rows, list) else rows.get("gpus", []):
            names = [str(row.get("name", ""))] + str(row.get("aliases", "")).split(",")
            if device.lower() in (n.lower() for n in names if n):
                cc = row.get("compute_capability")
                return (rules.parse_capability(cc) if isinstance(cc, str) else (8, 0),
                        int(row.get("capacity_bytes", 80 << 30)))
    except Exception:  # noqa: BLE001 — no library: the defaults
        pass
    return (8, 0), 80 << 30


@contextlib.contextmanager
def recording(path: "str | os.PathLike[str]", device: str = "A100-80GB", compute_capability: Optional[str] = None,
              capacity_bytes: Optional[int] = None, name: Optional[str] = None,
              roots: Tuple[Any, ...] = (), max_steps: int = 0, rank: Optional[int] = None, world_size: int = 1,
              nccl_channels: int = dist_rules.NCCL_CHANNELS) -> Iterator[Recorder]:
    """Records the code in the with-block into path (trace v1 JSON Lines).

    device: the card (a gpusim catalog name) the trace says it was recorded on; its compute
    capability decides the cuBLAS workspace and the attention backend (compute_capability=
    "9.0" overrides it). max_steps=N ends the recording after N optimizer steps. The file appears only when the block ends without an exception
    (StopRecording ends it early and still writes it). rank=R, world_size=N: the block is rank
    R of a job of N ranks on torch.distributed's fake process group (record_dist.py); the
    header's meta then has the rank and NCCL's buffers (nccl_bytes, nccl_channels per
    communicator)."""
    torch = _torch()
    # the catalog (libgpusim.so) only for what was not given
    cat_cc, cat_cap = _catalog_capability(device) if compute_capability is None or capacity_bytes is None \
        else ((8, 0), 0)
    cc = rules.parse_capability(compute_capability) if compute_capability is not None else cat_cc
    cap = capacity_bytes if capacity_bytes is not None else cat_cap
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, body_path = tempfile.mkstemp(prefix=".gpusim-record-", dir=directory)
    ok = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as body:
            rec = Recorder(body, device, cc)
            rec.max_steps = max_steps
            ranked = rank is not None and world_size > 1
            if ranked:
                if not 0 <= int(rank or 0) < world_size:
                    raise ValueError("rank %s: the job has %d ranks" % (rank, world_size))
                comms = dist_rules.Communicators()
                rec.comms, rec.rank, rec.world_size = comms, int(rank or 0), world_size
                rec.nccl_channels = nccl_channels
            function_mode, dispatch_mode = _modes(rec)

            def pre(module: Any, _inputs: Any) -> None:
                if id(module) not in rec._names:
                    rec.name_modules(module)
                rec._stack.append(rec._names.get(id(module), ""))

            def post(_module: Any, _inputs: Any, _output: Any) -> None:
                if rec._stack:
                    rec._stack.pop()

            hooks = [torch.nn.modules.module.register_module_forward_pre_hook(pre),
                     torch.nn.modules.module.register_module_forward_hook(post)]
            token = _current.set(rec)
            try:
                for t, tag in _live_tensors(roots):
                    rec.track(t, tag)
                for r in roots:
                    if isinstance(r, torch.nn.Module):
                        rec.name_modules(r)
                rec.mark("model loaded")
                ranks: Any = dist_rules.distributed(comms, rec.rank, world_size, RecordError) if ranked \
                    else contextlib.nullcontext()
                with ranks, record_cuda.cuda_as(rec, cap, function_mode), function_mode, dispatch_mode:
                    try:
                        yield rec
                    except StopRecording:
                        pass
            finally:
                rec.stopped = True
                for h in hooks:
                    h.remove()
                _current.reset(token)
        _write_trace(path, body_path, rec, name or os.path.splitext(os.path.basename(path))[0], cap)
        ok = True
    finally:
        if not ok and os.path.exists(body_path):
            os.unlink(body_path)


def _write_trace(path: str, body_path: str, rec: Recorder, name: str, capacity: int) -> None:
    torch = _torch()
    header: Dict[str, Any] = {
        "format": "gpusim-trace", "version": 1, "name": name,
        "device": {"name": rec.device, "capacity_bytes": capacity,
                   "compute_capability": "%d.%d" % rec.capability},
        "meta": {"recorded_by": "gpusim record", "torch_version": str(torch.__version__),
                 "optimizer_steps": rec.steps, "rules": sorted(rules.RULES),
                 "non_pytorch_bytes": 0},
    }
    if rec.comms is not None:  # rule nccl_buffers: NCCL's own memory, outside the allocator
        header["name"] = "%s rank %d/%d" % (name, rec.rank, rec.world_size)
        nccl = dist_rules.nccl_bytes(len(rec.comms.sizes), rec.nccl_channels)
        meta: Dict[str, Any] = header["meta"]
        meta.update({"rank": rec.rank, "ranks": rec.world_size, "dist_rules": sorted(dist_rules.DIST_RULES),
                     "communicators": [{"name": k, "ranks": v} for k, v in sorted(rec.comms.sizes.items())],
                     "nccl_channels": rec.nccl_channels, "nccl_bytes": nccl, "non_pytorch_bytes": nccl})
    tmp = body_path + ".trace"
    try:
        with open(tmp, "w", encoding="utf-8") as out, open(body_path, encoding="utf-8") as body:
            out.write(json.dumps(header, separators=(",", ":")) + "\n")
            for line in body:
                out.write(line)
        os.replace(tmp, path)
    finally:
        for p in (tmp, body_path):
            if os.path.exists(p):
                os.unlink(p)


def record(path: "str | os.PathLike[str]", fn: Callable[..., Any], *args: Any, device: str = "A100-80GB",
           compute_capability: Optional[str] = None, ranks: int = 1,
           nccl_channels: int = dist_rules.NCCL_CHANNELS, **kwargs: Any) -> Dict[str, Any]:
    """Runs fn(*args, **kwargs) under recording(path, device) and returns the trace's counts:
    {"events", "peak_allocated_bytes", "optimizer_steps"}. Modules among args name the
    parameters (tags "parameter layers.0.weight").

    ranks=N (N > 1): path is a directory, written as `gpusim synth --ranks` writes one
    (rank-00000.jsonl ... and job.json); fn runs N times, once per rank, each in a child
    process forked from this one (so that what one rank leaves in PyTorch's caches, a device
    mesh's group names, cannot reach the next), on torch.distributed's fake process group
    of N ranks with its rank number (record_dist.py), so fn builds, shards and trains its own
    model (fully_shard, DDP, parallelize_module need the process group). The counts are then
    per rank, under "ranks"; nothing is written unless every rank records, and a rank's
    RecordError is raised here (any other exception as a RuntimeError with its traceback)."""
    if ranks <= 1:
        with recording(path, device=device, compute_capability=compute_capability, roots=args) as rec:
            fn(*args, **kwargs)
        return {"events": rec.events, "peak_allocated_bytes": rec.peak_bytes, "optimizer_steps": rec.steps}
    path = os.fspath(path)
    name = os.path.basename(os.path.normpath(path))
    per_rank: List[Dict[str, Any]] = []
    dist_rules.preload()
    with dist_rules.job_directory(path) as tmp:
        for r in range(ranks):
            out = os.path.join(tmp, dist_rules.rank_file(r))

            def one_rank(out: str = out, r: int = r) -> Dict[str, Any]:
                with recording(out, device=device, compute_capability=compute_capability, roots=args, name=name,
                               rank=r, world_size=ranks, nccl_channels=nccl_channels) as rec:
                    fn(*args, **kwargs)
                return {"rank": r, "events": rec.events, "peak_allocated_bytes": rec.peak_bytes,
                        "optimizer_steps": rec.steps}

            per_rank.append(_in_child(one_rank, r))
        dist_rules.write_job(tmp, name, [dist_rules.trace_summary(os.path.join(tmp, dist_rules.rank_file(r)))
                                         for r in range(ranks)])
    return {"ranks": per_rank, "events": sum(p["events"] for p in per_rank),
            "peak_allocated_bytes": max(p["peak_allocated_bytes"] for p in per_rank),
            "optimizer_steps": per_rank[0]["optimizer_steps"]}


def _in_child(work: Callable[[], Dict[str, Any]], rank: int) -> Dict[str, Any]:
    """work() in a child process forked from this one; its result (JSON), or its exception: a
    RecordError as such, anything else as a RuntimeError carrying the child's traceback."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        code = 0
        try:
            reply: Dict[str, Any] = {"ok": work()}
        except BaseException as e:  # noqa: BLE001 — every failure goes back to the parent
            reply = {"error": str(e), "record_error": isinstance(e, RecordError), "traceback": traceback.format_exc()}
            code = 1
        try:
            with os.fdopen(write_end, "w", encoding="utf-8") as w:
                w.write(json.dumps(reply))
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as rd:
        text = rd.read()
    _, status = os.waitpid(pid, 0)
    try:
        reply = json.loads(text)
    except ValueError:
        raise RuntimeError("gpusim record: rank %d's process ended without a result (wait status %d)"
                           % (rank, status)) from None
    if "ok" in reply:
        result: Dict[str, Any] = reply["ok"]
        return result
    if reply.get("record_error"):
        raise RecordError(reply["error"])
    raise RuntimeError("gpusim record: rank %d failed:\n%s" % (rank, reply.get("traceback", reply.get("error"))))


def mark(name: str, stop: bool = False) -> None:
    """An annotation in the trace being recorded (none: nothing); stop=True ends the recording here."""
    rec = _current.get()
    if rec is None:
        return
    rec.mark(name)
    if stop:
        raise StopRecording(name)
