"""CUDA graphs and memory pools under the recorder: ``torch.cuda.CUDAGraph``,
``torch.cuda.graph``, ``graph_pool_handle``, ``MemPool`` and ``use_mem_pool`` answer as
the CUDA build's do, and write the trace's pool events (design.md §2, §3 "Pools").

What the CUDA build's allocator sees, and so what is written (PyTorch 2.13/2.14's
``torch/cuda/graphs.py`` and ``torch/cuda/memory.py``; the allocator's rules are
``docs/allocators.md`` §2.16):

- ``CUDAGraph.capture_begin(pool)`` routes the capturing stream's allocations into the
  graph's pool (``beginAllocateToPool``): ``pool_begin`` with that stream. The pool is the
  one given (``graph_pool_handle()`` or another graph's ``pool()``), else a new one of the
  graph's own. ``capture_end`` is ``pool_end``; ``replay`` a ``graph_replay`` mark; ``reset``
  and the graph's destruction ``pool_release`` (``CUDAGraph::reset`` releases its pool).
- ``torch.cuda.graph`` is PyTorch's own context manager: it synchronizes, empties the cache
  (an ``empty_cache`` event), enters the capture stream and calls ``capture_begin``.
- ``MemPool()`` holds one use of its pool from its construction (``createOrIncrefPool``);
  ``use_mem_pool`` adds one while it routes every stream (this thread's allocations) and
  releases it at exit; the ``MemPool``'s destruction releases its own. A trace's pool is
  made by its first ``pool_begin``, which stands for the ``MemPool``'s own use: the first
  scope's exit writes no release, later scopes' do, and the ``MemPool``'s end writes the
  last. ``use_on_oom`` and ``no_split`` go into the first ``pool_begin``.

Pool ids: each graph's own pool, each ``graph_pool_handle()`` and each ``MemPool`` takes the
next number from 1, in the order the program makes them.
"""

import contextlib
import weakref
from typing import Any, Callable, Dict, Iterator, Optional, Tuple


class PoolIds:
    """The trace's pool ids, in the order the program makes pools."""

    def __init__(self) -> None:
        self._next = 1

    def new(self) -> int:
        i = self._next
        self._next += 1
        return i


def _pool_number(handle: Any) -> int:
    """The trace id of a pool handle: a (0, id) tuple as graph_pool_handle and MemPool.id give
    here, or a graph's pool()."""
    if isinstance(handle, tuple) and len(handle) == 2:
        return int(handle[1])
    raise TypeError("gpusim record: %r is not a pool handle (use torch.cuda.graph_pool_handle(), "
                    "a graph's pool() or a MemPool's id)" % (handle,))


def graph_patches(rec: Any, torch: Any) -> Dict[Tuple[Any, str], Any]:
    """The attributes of torch.cuda to replace while recording."""
    cuda = torch.cuda
    graphs = __import__("torch.cuda.graphs", fromlist=["graphs"])
    memory = __import__("torch.cuda.memory", fromlist=["memory"])
    ids = PoolIds()

    def release(pool: int) -> None:
        if not rec.stopped:
            rec.pool_event("pool_release", pool)

    class FakeCUDAGraph:
        """torch.cuda.CUDAGraph on the CPU: the capture's allocations go to its pool."""

        def __init__(self, *_a: Any, **_k: Any) -> None:
            self._pool: Optional[int] = None
            self._captured = False
            self._finalizer: Optional[Any] = None

        def capture_begin(self, pool: Any = None, capture_error_mode: str = "global", **_k: Any) -> None:
            if self._captured:
                raise RuntimeError("gpusim record: this CUDAGraph was captured already (reset() it first)")
            self._pool = ids.new() if pool is None else _pool_number(pool)
            self._captured = True
            rec.pool_event("pool_begin", self._pool, stream=rec.stream)
            self._finalizer = weakref.finalize(self, release, self._pool)

        def capture_end(self) -> None:
            if self._pool is None:
                raise RuntimeError("gpusim record: capture_end() without capture_begin()")
            rec.pool_event("pool_end", self._pool)

        def replay(self) -> None:
            if self._pool is None:
                raise RuntimeError("gpusim record: replay() of a graph that was never captured")
            rec.pool_event("graph_replay", self._pool)

        def reset(self) -> None:
            if self._finalizer is not None and self._finalizer.alive:
                self._finalizer()  # releases the pool once
            self._pool = None
            self._captured = False

        def pool(self) -> Tuple[int, int]:
            if self._pool is None:
                raise RuntimeError("gpusim record: pool() of a graph that was never captured")
            return (0, self._pool)

        def enable_debug_mode(self) -> None:
            pass

        def debug_dump(self, *_a: Any) -> None:
            pass

    class FakeMemPool:
        """torch.cuda.MemPool on the CPU: an id, its options and its uses."""

        def __init__(self, allocator: Any = None, use_on_oom: bool = False, no_split: bool = False,
                     **_k: Any) -> None:
            if allocator is not None:
                raise NotImplementedError("gpusim record: a MemPool with its own allocator (CUDAPluggableAllocator) "
                                          "allocates outside the caching allocator, which gpusim does not model")
            self._id = ids.new()
            self.use_on_oom = bool(use_on_oom)
            self.no_split = bool(no_split)
            self.scopes = 0
            self._made_box = [False]  # a pool_begin made the trace's pool
            weakref.finalize(self, FakeMemPool._end, rec, self._id, self._made_box)

        @staticmethod
        def _end(r: Any, pool: int, made: Any) -> None:
            if made[0] and not r.stopped:
                r.pool_event("pool_release", pool)

        @property
        def id(self) -> Tuple[int, int]:
            return (0, self._id)

        @property
        def allocator(self) -> None:
            return None

        def use_count(self) -> int:
            return 1 + self.scopes

        def snapshot(self) -> Any:
            return []

    @contextlib.contextmanager
    def use_mem_pool(pool: Any, device: Any = None) -> Iterator[None]:
        if not isinstance(pool, FakeMemPool):
            raise TypeError("gpusim record: use_mem_pool() needs a torch.cuda.MemPool")
        first = not pool._made_box[0]
        ev: Dict[str, Any] = {"capture": False}
        if first and pool.use_on_oom:
            ev["use_on_oom"] = True
        if first and pool.no_split:
            ev["no_split"] = True
        rec.pool_event("pool_begin", pool._id, **ev)
        pool._made_box[0] = True
        pool.scopes += 1
        try:
            yield
        finally:
            pool.scopes -= 1
            rec.pool_event("pool_end", pool._id)
            if not first:
                rec.pool_event("pool_release", pool._id)

    def graph_pool_handle() -> Tuple[int, int]:
        return (0, ids.new())

    patches: Dict[Tuple[Any, str], Any] = {}
    for mod in (cuda, graphs):
        patches[(mod, "CUDAGraph")] = FakeCUDAGraph
        patches[(mod, "graph_pool_handle")] = graph_pool_handle
    for mod in (cuda, memory):
        patches[(mod, "MemPool")] = FakeMemPool
        patches[(mod, "use_mem_pool")] = use_mem_pool
    # torch.cuda.graph's __enter__ empties the host cache too (absent from CPU builds)
    patches[(torch._C, "_host_emptyCache")] = lambda: None
    return patches


def pool_event_writer(write: Callable[[Dict[str, Any]], None]) -> Callable[..., None]:
    """The Recorder's pool_event(op, pool, stream=None, **flags)."""

    def pool_event(op: str, pool: int, stream: Optional[int] = None, **flags: Any) -> None:
        ev: Dict[str, Any] = {"op": op, "pool": pool}
        if stream is not None:
            ev["stream"] = stream
        ev.update(flags)
        write(ev)

    return pool_event
