"""torch.cuda on the CPU under gpusim's recorder (record_trace.py): the card's name,
capability and memory; streams as numbers (an allocation under ``torch.cuda.stream(s)``
carries ``s``'s); events that complete at once; the optimizers' CUDA defaults;
activation checkpointing recomputing under the recorder's function mode; a mark where
``_record_memory_history`` turns a snapshot's history on or off; and CUDA graphs and
memory pools (record_graphs.py)."""

import contextlib
import importlib
from typing import Any, Callable, Dict, Iterator, Tuple

from . import record_graphs


class _FakeProperties:
    def __init__(self, name: str, total: int, cc: Tuple[int, int]):
        self.name = name
        self.total_memory = total
        self.major, self.minor = cc
        self.multi_processor_count = 108
        self.is_integrated = False
        self.is_multi_gpu_board = False


class _FakeStream:
    """torch.cuda.Stream on the CPU: a number; allocations made under torch.cuda.stream(s)
    carry it as their trace stream."""

    def __init__(self, rec: Any, sid: int) -> None:
        self.rec = rec
        self.stream_id = sid
        self.device = "cuda:0"

    def wait_stream(self, _other: Any) -> None:
        pass

    def wait_event(self, _event: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        return event if event is not None else _FakeEvent()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def __enter__(self) -> "_FakeStream":
        self._saved = self.rec.stream
        self.rec.stream = self.stream_id
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.rec.stream = self._saved


class _FakeEvent:
    """torch.cuda.Event on the CPU: no time passes."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def record(self, _stream: Any = None) -> None:
        pass

    def wait(self, _stream: Any = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, _other: Any) -> float:
        return 0.0


def _history_mark(rec: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    """torch.cuda.memory._record_memory_history: a mark where a snapshot's trace would begin
    (enabled "all" or "state", or True in older releases) or end (None, False)."""
    enabled = args[0] if args else kwargs.get("enabled", "all")
    rec.mark("memory history %s" % ("off" if enabled is None or enabled is False else "on"))


@contextlib.contextmanager
def cuda_as(rec: Any, capacity: int, function_mode: Any) -> Iterator[None]:
    """torch.cuda answers as the chosen card; the optimizers take their CUDA defaults; activation
    checkpointing recomputes under the recorder's function mode (the autograd engine does not
    carry Python function modes into backward)."""
    torch = importlib.import_module("torch")
    cuda = torch.cuda
    props = _FakeProperties(rec.device, capacity, rec.capability)

    def step_hook(_opt: Any, _args: Any, _kwargs: Any) -> None:
        rec.steps += 1
        rec.mark("optimizer step %d" % rec.steps)
        if rec.max_steps and rec.steps >= rec.max_steps:
            from .record_trace import StopRecording  # noqa: PLC0415 (the module imports this one)
            raise StopRecording("optimizer step %d" % rec.steps)

    patches: Dict[Tuple[Any, str], Any] = {
        (cuda, "is_available"): lambda: True,
        (cuda, "device_count"): lambda: 1,
        (cuda, "current_device"): lambda: 0,
        (cuda, "set_device"): lambda *_a, **_k: None,
        (cuda, "synchronize"): lambda *_a, **_k: None,
        (cuda, "get_device_name"): lambda *_a, **_k: rec.device,
        (cuda, "get_device_capability"): lambda *_a, **_k: rec.capability,
        (cuda, "get_device_properties"): lambda *_a, **_k: props,
        (cuda, "is_bf16_supported"): lambda *_a, **_k: rec.capability >= (8, 0),
        (cuda, "empty_cache"): rec.empty_cache,
        (cuda, "memory_allocated"): lambda *_a, **_k: rec.live_bytes,
        (cuda, "max_memory_allocated"): lambda *_a, **_k: rec.peak_bytes,
        (cuda, "reset_peak_memory_stats"): lambda *_a, **_k: None,
        (cuda, "manual_seed"): lambda *_a, **_k: None,
        (cuda, "manual_seed_all"): lambda *_a, **_k: None,
        (cuda, "mem_get_info"): lambda *_a, **_k: (capacity - rec.live_bytes, capacity),
    }
    # streams: the default one is 0, each new one the next number
    default = _FakeStream(rec, 0)
    made = [0]

    def new_stream(*_a: Any, **_k: Any) -> _FakeStream:
        made[0] += 1
        return _FakeStream(rec, made[0])

    def use_stream(stream: Any) -> Any:
        return stream if isinstance(stream, _FakeStream) else contextlib.nullcontext()

    patches.update({
        (cuda, "Stream"): new_stream,
        (cuda, "Event"): _FakeEvent,
        (cuda, "stream"): use_stream,
        (cuda, "current_stream"): lambda *_a, **_k: default if rec.stream == 0 else _FakeStream(rec, rec.stream),
        (cuda, "default_stream"): lambda *_a, **_k: default,
        (cuda, "memory_reserved"): lambda *_a, **_k: rec.live_bytes,
        (cuda, "max_memory_reserved"): lambda *_a, **_k: rec.peak_bytes,
        (cuda.memory, "_record_memory_history"): lambda *a, **k: _history_mark(rec, a, k),
        (cuda.memory, "_snapshot"): lambda *_a, **_k: {"segments": [], "device_traces": [[]]},
        (cuda.memory, "_dump_snapshot"): lambda *_a, **_k: None,
    })
    # rule autocast: the outermost autocast region's end empties the weight-cast cache
    clear = torch.clear_autocast_cache

    def clear_autocast_cache() -> None:
        rec.autocast_cache.clear()
        clear()

    patches[(torch, "clear_autocast_cache")] = clear_autocast_cache
    # activation checkpointing restores the autocast state of the inputs' device type for its
    # recomputation: the inputs' "meta" is CUDA here
    ckpt = importlib.import_module("torch.utils.checkpoint")
    infer = ckpt._infer_device_type
    patches[(ckpt, "_infer_device_type")] = lambda *a: "cuda" if infer(*a) == "meta" else infer(*a)
    overrides = importlib.import_module("torch.overrides")

    def under_mode(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            if any(m is function_mode for m in overrides._get_current_function_mode_stack()):
                return fn(*a, **k)
            with function_mode:
                return fn(*a, **k)
        return run

    generator = ckpt._checkpoint_without_reentrant_generator
    patches[(ckpt, "_checkpoint_without_reentrant_generator")] = \
        lambda fn, *a, **k: generator(under_mode(fn), *a, **k)
    reentrant = ckpt.CheckpointFunction.forward
    patches[(ckpt.CheckpointFunction, "forward")] = \
        staticmethod(lambda ctx, fn, *a: reentrant(ctx, under_mode(fn), *a))
    # rule optimizer_foreach: the optimizers see meta tensors as CUDA ones
    opt_mod = importlib.import_module("torch.optim.optimizer")
    for name in ("_get_foreach_kernels_supported_devices", "_get_fused_kernels_supported_devices"):
        if hasattr(opt_mod, name):
            patches[(opt_mod, name)] = (lambda f: (lambda: list(f()) + ["meta"]))(getattr(opt_mod, name))
    # CUDA graphs and memory pools (record_graphs.py)
    patches.update(record_graphs.graph_patches(rec, torch))
    absent = [k for k in patches if not hasattr(k[0], k[1])]
    saved = {k: getattr(k[0], k[1], None) for k in patches}
    for (obj, name), value in patches.items():
        setattr(obj, name, value)
    handle = opt_mod.register_optimizer_step_post_hook(step_hook)
    try:
        yield
    finally:
        handle.remove()
        for (obj, name), value in saved.items():
            if (obj, name) in absent:
                delattr(obj, name)
            else:
                setattr(obj, name, value)
