// snapshot_tool.cpp — `torch_snapshot TRACE OUT.json [--max-entries=N] [--capacity=BYTES]`:
// replays a native gpusim trace (alloc, plain free, empty_cache, and the private-pool
// events pool_begin / pool_end / pool_release) through PyTorch's own caching allocator,
// built unmodified against the mock CUDA runtime (README.md), and writes what
// torch.cuda.memory._snapshot() would return, as JSON: `segments` with each
// segment's `segment_pool_id`, `device_traces[0]` (the allocator's own trace,
// recordHistory with at most N entries: fewer than the trace makes is a snapshot
// recorded mid-run) and `allocator_settings`. The dict's layout is PyTorch's
// (torch/cuda/memory.py _snapshot's documented TypedDicts, memory_snapshot.cpp's
// keys); the allocator's own snapshot() fills it, its trace entries' times (µs
// since the epoch) included. A pool_begin is
// beginAllocateToPool with the stream filter of the trace's scope (the trace's
// stream k is the external stream 0x1000 + 16k, as upstream_strategy.cpp has it),
// pool_end endAllocateToPool, pool_release releasePool; the pool's MempoolId_t is
// traces/pool_id.h's pair of the event's id. No CUDA graph is captured: the filter
// is what routes. Exit 0, 2 for usage or I/O, 3 for a trace it cannot replay (a deferred
// free, an allocation that does not fit).
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

extern "C" {
#include "sim/device.h"
#include "sim/event.h"
#include "traces/pool_id.h"
#include "traces/trace.h"
}
#include "mock/mock_cuda_host.h"
#include "mock_device.h"

namespace c10::cuda::_internal
{
C10_CUDA_API void setHasPrimaryContext(bool (*func)(DeviceIndex));
} // namespace c10::cuda::_internal

namespace CCA = c10::cuda::CUDACachingAllocator;

namespace
{

template <typename F> void record_history(F f, size_t max_entries)
{
    if constexpr (std::is_invocable_v<F, bool, CCA::CreateContextFn, size_t, CCA::RecordContext>)
        f(true, nullptr, max_entries, CCA::RecordContext::NEVER);
    else if constexpr (std::is_invocable_v<F, bool, CCA::CreateContextFn, size_t, CCA::RecordContext, bool>)
        f(true, nullptr, max_entries, CCA::RecordContext::NEVER, false);
    else
        f(true, nullptr, max_entries, CCA::RecordContext::NEVER, false, std::vector<std::string>{});
}

uintptr_t handle_of(uint32_t stream)
{
    return stream == 0 ? 0 : 0x1000u + 16u * static_cast<uintptr_t>(stream);
}

c10::cuda::CUDAStream stream_of(uint32_t stream)
{
    if (stream == 0)
        return c10::cuda::getDefaultCUDAStream(0);
    return c10::cuda::getStreamFromExternal(reinterpret_cast<cudaStream_t>(handle_of(stream)), 0);
}

c10::cuda::MempoolId_t mempool_of(uint64_t pool)
{
    uint64_t a = 0, b = 0;
    pool_id_to_tuple(pool, &a, &b);
    return {static_cast<c10::cuda::CaptureId_t>(a), static_cast<c10::cuda::CaptureId_t>(b)};
}

const char *action_name(CCA::TraceEntry::Action a)
{
    switch (a) {
    case CCA::TraceEntry::ALLOC: return "alloc";
    case CCA::TraceEntry::FREE_REQUESTED: return "free_requested";
    case CCA::TraceEntry::FREE_COMPLETED: return "free_completed";
    case CCA::TraceEntry::SEGMENT_ALLOC: return "segment_alloc";
    case CCA::TraceEntry::SEGMENT_FREE: return "segment_free";
    case CCA::TraceEntry::SEGMENT_MAP: return "segment_map";
    case CCA::TraceEntry::SEGMENT_UNMAP: return "segment_unmap";
    case CCA::TraceEntry::SNAPSHOT: return "snapshot";
    case CCA::TraceEntry::OOM: return "oom";
    default: return "unknown";
    }
}

int fail(int code, const char *what)
{
    std::fprintf(stderr, "torch_snapshot: %s\n", what);
    return code;
}

} // namespace

int main(int argc, char **argv)
{
    const char *in_path = nullptr, *out_path = nullptr;
    size_t max_entries = 1000000;
    uint64_t capacity = (uint64_t)80 << 30;
    for (int i = 1; i < argc; i++) {
        if (std::strncmp(argv[i], "--max-entries=", 14) == 0)
            max_entries = std::strtoull(argv[i] + 14, nullptr, 10);
        else if (std::strncmp(argv[i], "--capacity=", 11) == 0)
            capacity = std::strtoull(argv[i] + 11, nullptr, 10);
        else if (in_path == nullptr)
            in_path = argv[i];
        else if (out_path == nullptr)
            out_path = argv[i];
        else
            return fail(2, "usage: torch_snapshot TRACE OUT.json [--max-entries=N] [--capacity=BYTES]");
    }
    if (in_path == nullptr || out_path == nullptr || max_entries == 0)
        return fail(2, "usage: torch_snapshot TRACE OUT.json [--max-entries=N] [--capacity=BYTES]");
    device_info info{};
    info.name = "mock";
    info.capacity_bytes = capacity;
    mock_process h;
    h.dev = device_new(&info);
    if (h.dev == nullptr)
        return fail(2, "out of memory");
    h.proc = device_proc_start(h.dev);
    mock_process_reset(&h, capacity);
    setenv("PYTORCH_CUDA_ALLOC_CONF", "", 1);
    c10::cuda::_internal::setHasPrimaryContext(mock_has_primary_context);
    CCA::init(1);
    record_history(&CCA::recordHistory, max_entries);

    trace_reader *r = nullptr;
    sim_error err;
    sim_error_clear(&err);
    if (trace_open(in_path, &r, &err) != SIM_OK)
        return fail(err.status == SIM_EIO ? 2 : 3, err.msg);
    sim_event_source src = trace_source(r);
    std::unordered_map<uint64_t, c10::DataPtr> live;
    sim_event ev;
    sim_status st;
    int rc = 0;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK) {
        try {
            switch (ev.op) {
            case SIM_OP_ALLOC: {
                c10::cuda::setCurrentCUDAStream(stream_of(ev.stream));
                live[ev.id] = CCA::get()->allocate(static_cast<size_t>(ev.size));
                break;
            }
            case SIM_OP_FREE:
                if (ev.ready_t > ev.t) {
                    std::fprintf(stderr,
                                 "torch_snapshot: %s: event %" PRIu64 ": a deferred free (ready_t): only plain "
                                 "frees are replayed\n",
                                 in_path, ev.index);
                    rc = 3;
                    goto done;
                }
                live.erase(ev.id);
                break;
            case SIM_OP_EMPTY_CACHE: CCA::emptyCache(); break;
            case SIM_OP_POOL_BEGIN: {
                uintptr_t want = handle_of(ev.stream);
                bool all = (ev.pool_flags & SIM_POOL_ALL_STREAMS) != 0;
                CCA::beginAllocateToPool(0, mempool_of(ev.pool), [want, all](cudaStream_t s) {
                    return all || reinterpret_cast<uintptr_t>(s) == want;
                });
                break;
            }
            case SIM_OP_POOL_END: CCA::endAllocateToPool(0, mempool_of(ev.pool)); break;
            case SIM_OP_POOL_RELEASE: CCA::releasePool(0, mempool_of(ev.pool)); break;
            case SIM_OP_MARK:
            case SIM_OP_GRAPH_REPLAY: break;
            }
        } catch (const c10::Error &e) {
            std::fprintf(stderr, "torch_snapshot: %s: event %" PRIu64 ": %s\n", in_path, ev.index,
                         e.what_without_backtrace());
            rc = 3;
            goto done;
        }
    }
    if (st != SIM_END) {
        std::fprintf(stderr, "torch_snapshot: %s\n", err.msg);
        rc = err.status == SIM_EIO ? 2 : 3;
    }
done:
    if (rc != 0) {
        trace_close(r);
        std::_Exit(rc); // PyTorch's allocator asserts at exit with blocks still live
    }
    {
        CCA::SnapshotInfo snap = CCA::snapshot();
        FILE *f = std::fopen(out_path, "w");
        if (f == nullptr)
            return fail(2, "cannot write the output");
        std::fprintf(f, "{\"segments\": [");
        bool first = true;
        for (const CCA::SegmentInfo &g : snap.segments) {
            std::fprintf(f,
                         "%s\n {\"device\": %d, \"address\": %zu, \"total_size\": %zu, \"allocated_size\": %zu, "
                         "\"active_size\": %zu, \"requested_size\": %zu, \"stream\": %" PRIuPTR ", "
                         "\"segment_type\": \"%s\", \"segment_pool_id\": [%llu, %llu], \"is_expandable\": %s, "
                         "\"frames\": [], \"blocks\": [",
                         first ? "" : ",", static_cast<int>(g.device), static_cast<size_t>(g.address),
                         static_cast<size_t>(g.total_size), static_cast<size_t>(g.allocated_size),
                         static_cast<size_t>(g.active_size), static_cast<size_t>(g.requested_size),
                         reinterpret_cast<uintptr_t>(g.stream), g.is_large ? "large" : "small",
                         static_cast<unsigned long long>(g.owner_private_pool_id.first),
                         static_cast<unsigned long long>(g.owner_private_pool_id.second),
                         g.is_expandable ? "true" : "false");
            first = false;
            size_t addr = g.address;
            bool bfirst = true;
            for (const CCA::BlockInfo &b : g.blocks) {
                const char *state = b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
                std::fprintf(f,
                             "%s\n  {\"address\": %zu, \"size\": %zu, \"requested_size\": %zu, \"state\": \"%s\", "
                             "\"frames\": []}",
                             bfirst ? "" : ",", addr, static_cast<size_t>(b.size),
                             static_cast<size_t>(b.requested_size), state);
                bfirst = false;
                addr += b.size;
            }
            std::fprintf(f, "]}");
        }
        std::fprintf(f, "],\n\"device_traces\": [[");
        const std::vector<CCA::TraceEntry> empty;
        const std::vector<CCA::TraceEntry> &tr = snap.device_traces.empty() ? empty : snap.device_traces[0];
        for (size_t k = 0; k < tr.size(); k++) {
            const CCA::TraceEntry &e = tr[k];
            uint64_t us = static_cast<uint64_t>(e.time_.t_); // trace() made it µs since the epoch
            if (e.action_ == CCA::TraceEntry::OOM)
                std::fprintf(f,
                             "%s\n {\"action\": \"oom\", \"device_free\": %zu, \"size\": %zu, \"stream\": %" PRIuPTR
                             ", \"time_us\": %" PRIu64 ", \"frames\": []}",
                             k ? "," : "", static_cast<size_t>(e.addr_), static_cast<size_t>(e.size_),
                             reinterpret_cast<uintptr_t>(e.stream_), us);
            else
                std::fprintf(f,
                             "%s\n {\"action\": \"%s\", \"addr\": %zu, \"size\": %zu, \"stream\": %" PRIuPTR
                             ", \"time_us\": %" PRIu64 ", \"frames\": []}",
                             k ? "," : "", action_name(e.action_), static_cast<size_t>(e.addr_),
                             static_cast<size_t>(e.size_), reinterpret_cast<uintptr_t>(e.stream_), us);
        }
        std::fprintf(f, "]],\n\"allocator_settings\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"\", \"max_split_size\": -1, "
                        "\"garbage_collection_threshold\": 0.0, \"expandable_segments\": false}}\n");
        if (std::fclose(f) != 0)
            return fail(2, "cannot write the output");
    }
    trace_close(r);
    std::_Exit(0); // live blocks at exit are what the snapshot shows; skip the allocator's teardown
}
