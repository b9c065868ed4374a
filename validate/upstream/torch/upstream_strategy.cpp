// upstream_strategy.cpp — gpusim's strategy interface over PyTorch's real
// NativeCachingAllocator (upstream_strategy.h). Device memory is the engine's
// device (device_alloc, device_map, ...), reached through the mock CUDA runtime.
#if __has_include(<c10/core/CachingDeviceAllocator.h>)
#include <c10/core/CachingDeviceAllocator.h> // DeviceStats and Stat from 2.6 on
#define GPUSIM_C10_DEVICE_STATS 1
#endif
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#if __has_include(<c10/cuda/PeerToPeerAccess.h>)
#include <c10/cuda/PeerToPeerAccess.h> // where c10 keeps the p2p cache (2.14; 2.6 has it in ATen)
#define GPUSIM_C10_P2P_CACHE 1
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" {
#include "sim/device.h"
#include "sim/strategy.h"
#include "strategies/torch.h"
}
#include "mock/mock_cuda_host.h"
#include "mock_device.h"
#include "upstream_strategy.h"

namespace c10::cuda::_internal {
// CUDAFunctions.cpp defines it without a header declaration; ATen's CUDAHooks
// installs the real check the same way.
C10_CUDA_API void setHasPrimaryContext(bool (*func)(DeviceIndex));
} // namespace c10::cuda::_internal

namespace CCA = c10::cuda::CUDACachingAllocator;
#ifdef GPUSIM_C10_DEVICE_STATS
using c10::CachingDeviceAllocator::DeviceStats;
using c10::CachingDeviceAllocator::Stat;
#else
using CCA::DeviceStats; // 2.4: the same structs in the CUDA allocator's namespace
using CCA::Stat;
#endif

struct strategy {
    device *dev;
    uint32_t proc;
    mock_process host; // the mock CUDA runtime's device: this process of dev
    struct slot {
        c10::DataPtr ptr;
        uint64_t tag = 0;      // the deferred free's event tag, 0 when none
        uint64_t bytes = 0;    // the request
        uint32_t stream = 0;   // the trace stream it was allocated on
        bool live = false;
        bool in_scope = false; // allocated while a pool was routed
    };
    std::vector<slot> slots;
    std::vector<uint32_t> free_slots;
    uint64_t next_tag = 1;
    // a deferred free not yet recorded: free_wait names its stream right after
    // free, else the next call records it on a stream of its own (flush)
    uint32_t unrecorded = UINT32_MAX;
    std::string conf;
    bool set_fraction = false;
    double fraction = 1.0;
    // The private pools the trace made, in the order of their first pool_begin
    // (MempoolId_t {0, id}, as graph_pool_handle() and MemPool() make them)
    struct pool {
        uint64_t id = 0;
        uint32_t uses = 0;    // pool_begins not released
        bool routed = false;  // between pool_begin and pool_end
        bool capture = false; // the routing scope is a stream capture
        cudaStream_t capture_stream = nullptr;
        bool use_on_oom = false, no_split = false;
        uint64_t peak_reserved = 0, peak_allocated = 0; // read after every allocation
        bool dropped = false; // 2.4, 2.5 (no getPoolUseCount): erased by release_cached_blocks
        std::function<bool(cudaStream_t)> filter;       // its routing scope's
    };
    std::vector<pool> pools;
    std::vector<uint64_t> routes; // the routed pools in begin order (captures_underway)
    int64_t syncs = 0;            // num_sync_all_streams when the pools were last looked at
};

namespace {

bool g_initialised = false; // CCA::init ran
bool g_used = false;        // an instance allocated

// recordHistory(enabled, context_recorder, max_entries, when) in 2.6; 2.10 adds
// clearHistory, 2.14 skip_actions
template <typename F>
void record_history(F f)
{
    if constexpr (std::is_invocable_v<F, bool, CCA::CreateContextFn, size_t, CCA::RecordContext>)
        f(true, nullptr, 4, CCA::RecordContext::NEVER);
    else if constexpr (std::is_invocable_v<F, bool, CCA::CreateContextFn, size_t, CCA::RecordContext, bool>)
        f(true, nullptr, 4, CCA::RecordContext::NEVER, false);
    else
        f(true, nullptr, 4, CCA::RecordContext::NEVER, false, std::vector<std::string>{});
}

// Trace stream k is an external CUDA stream with handle 0x1000 + 16k (stream 0 is
// the default stream, handle 0): PyTorch orders free blocks by the stream
// handle, and these handles keep the trace's stream order.
c10::cuda::CUDAStream stream_of(uint32_t stream)
{
    if (stream == 0)
        return c10::cuda::getDefaultCUDAStream(0);
    return c10::cuda::getStreamFromExternal(
        reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x1000u + 16u * static_cast<uintptr_t>(stream))), 0);
}

// The stream a deferred free without a ready_stream is recorded on: one of its
// own (handle 0x40000000 + 16 tag, no trace stream's), so that it waits for
// nothing but its own event, as gpusim's model has it (design.md §3). PyTorch
// keeps one event deque per recorded stream and polls each in record order: a
// free with ready_stream S is recorded on the trace's stream S (stream_of), and
// one side stream for every deferred free makes the polling one queue.
c10::cuda::CUDAStream own_stream(uint64_t tag)
{
    return c10::cuda::getStreamFromExternal(
        reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x40000000u + 16u * static_cast<uintptr_t>(tag))), 0);
}

// c10's MempoolId_t, a pair of capture ids (c10::cuda's in 2.6, c10's from 2.10)
using mempool_id_t = std::pair<unsigned long long, unsigned long long>;

// The pool a trace's pool id names: MempoolId_t {0, id}, as graph_pool_handle() and
// MemPool() make them (a capture that names no pool would get {id, 0})
mempool_id_t mempool_of(uint64_t id)
{
    return mempool_id_t{0, static_cast<unsigned long long>(id)};
}

strategy::pool *pool_rec(strategy *s, uint64_t id)
{
    for (strategy::pool &p : s->pools)
        if (p.id == id)
            return &p;
    return nullptr;
}

// The current stream at a free (2.13 on, PyTorch asks whether it is capturing):
// the stream of the capture begun last while one runs (torch.cuda.graph makes its
// stream current for its body), else the block's own (design.md §3 "Pools")
void set_free_stream(strategy *s, uint32_t block_stream)
{
    for (auto it = s->routes.rbegin(); it != s->routes.rend(); ++it) {
        strategy::pool *p = pool_rec(s, *it);
        if (p->capture) {
            c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromExternal(p->capture_stream, 0));
            return;
        }
    }
    c10::cuda::setCurrentCUDAStream(stream_of(block_stream));
}

// record_stream on a second stream: PyTorch records an event at the free and
// reuses the block only once that event has completed (mock_cuda_complete).
// While a pool is routed, PyTorch parks the free (needs_events_deferred_until_no_capture)
// and records its events once none is; it first drops the stream uses recorded while a
// scope was open (remove_cudagraph_stream_uses). A trace does not say when the use was
// recorded: gpusim's model takes those of a block allocated while a pool was routed as
// the scope's, any other's as recorded before (design.md §3 "Pools"). So for a block
// allocated outside every scope, the use is recorded with no scope open: each routed
// pool's routing is ended and begun again in the same order around recordStream (the
// use count it adds is released again), and when the free is parked (no event
// recorded at it: 2.13 on park only in a capture), the record to come takes its tag.
void record_deferred(strategy *s, strategy_handle h, const c10::cuda::CUDAStream *st)
{
    strategy::slot &sl = s->slots[h];
    sl.tag = s->next_tag++;
    c10::cuda::CUDAStream use = st != nullptr ? *st : own_stream(sl.tag);
    bool queue = false;
    if (s->routes.empty() || sl.in_scope) {
        set_free_stream(s, sl.stream);
        CCA::recordStream(sl.ptr, use);
    } else {
        for (uint64_t id : s->routes)
            CCA::endAllocateToPool(0, mempool_of(id));
        // on a stream that is not capturing (2.13's is_capture_context asks the
        // current stream)
        c10::cuda::setCurrentCUDAStream(stream_of(0));
        CCA::recordStream(sl.ptr, use);
        for (uint64_t id : s->routes) {
            CCA::beginAllocateToPool(0, mempool_of(id), pool_rec(s, id)->filter);
            CCA::releasePool(0, mempool_of(id));
        }
        queue = use.stream() != stream_of(sl.stream).stream();
    }
    set_free_stream(s, sl.stream);
    uint64_t records = mock_cuda_get_counts().event_records;
    mock_cuda_set_record_tag(sl.tag);
    sl.ptr.clear();
    mock_cuda_set_record_tag(0);
    // parked (no event recorded at the free): its event comes later, with this tag
    if (queue && mock_cuda_get_counts().event_records == records)
        mock_cuda_queue_record_tag(use.stream(), sl.tag);
}

// Before any other call: the deferred free just made named no stream.
void flush(const strategy *cs)
{
    strategy *s = const_cast<strategy *>(cs);
    if (s->unrecorded == UINT32_MAX)
        return;
    strategy_handle h = s->unrecorded;
    s->unrecorded = UINT32_MAX;
    record_deferred(s, h, nullptr);
}

// The fraction the allocator itself holds (2.14: set_per_process_memory_fraction or the
// per_process_memory_fraction key), or -1 where CUDAAllocator has no getMemoryFraction.
template <typename A, typename = void>
struct has_memory_fraction : std::false_type {};
template <typename A>
struct has_memory_fraction<A, std::void_t<decltype(std::declval<A &>().getMemoryFraction(c10::DeviceIndex{0}))>>
    : std::true_type {};

template <typename A>
double allocator_memory_fraction(A *a)
{
    if constexpr (has_memory_fraction<A>::value)
        return a->getMemoryFraction(0);
    else
        return -1.0;
}

void free_and_largest(uint64_t *free_bytes, uint64_t *largest)
{
    *free_bytes = 0;
    *largest = 0;
    CCA::SnapshotInfo snap = CCA::snapshot();
    for (const CCA::SegmentInfo &seg : snap.segments) {
        for (const CCA::BlockInfo &b : seg.blocks) {
            if (b.allocated || b.active)
                continue;
            *free_bytes += b.size;
            if (b.size > *largest)
                *largest = b.size;
        }
    }
}

// The calls a release's allocator may lack (detected at compile time): the MemPool
// options (setUseOnOOM and setNoSplit, 2.8 and 2.10; setUseOnOOM takes the flag from
// 2.11), the capture marks (2.13), the pool use count (2.6)
template <typename A, typename = void>
struct has_use_on_oom : std::false_type {};
template <typename A>
struct has_use_on_oom<A, std::void_t<decltype(std::declval<A &>().setUseOnOOM(c10::DeviceIndex{0}, mempool_id_t{},
                                                                              true))>> : std::true_type {};
template <typename A, typename = void>
struct has_use_on_oom_2 : std::false_type {}; // 2.8-2.10: setUseOnOOM(device, id) sets it
template <typename A>
struct has_use_on_oom_2<A, std::void_t<decltype(std::declval<A &>().setUseOnOOM(c10::DeviceIndex{0}, mempool_id_t{}))>>
    : std::true_type {};
template <typename A, typename = void>
struct has_no_split : std::false_type {};
template <typename A>
struct has_no_split<A, std::void_t<decltype(std::declval<A &>().setNoSplit(c10::DeviceIndex{0}, mempool_id_t{}))>>
    : std::true_type {};
template <typename A, typename = void>
struct has_capture_marks : std::false_type {};
template <typename A>
struct has_capture_marks<A, std::void_t<decltype(std::declval<A &>().markCaptureBegin(c10::DeviceIndex{0}))>>
    : std::true_type {};
template <typename A, typename = void>
struct has_use_count : std::false_type {};
template <typename A>
struct has_use_count<A, std::void_t<decltype(std::declval<A &>().getPoolUseCount(c10::DeviceIndex{0},
                                                                                  mempool_id_t{}))>>
    : std::true_type {};
using allocator_type = std::remove_pointer_t<decltype(CCA::get())>;

// Whether PyTorch still keeps the pool (release_cached_blocks drops one whose uses
// were all released once it holds no segment): its use count answers, or throws
template <typename A>
bool pool_alive(A *a, const strategy::pool &p)
{
    if constexpr (has_use_count<A>::value) {
        try {
            (void)a->getPoolUseCount(0, mempool_of(p.id));
            return true;
        } catch (const c10::Error &) {
            return false;
        }
    } else {
        return !p.dropped; // 2.4, 2.5: note_pool_drops
    }
}

// The MemPool options of a new pool, where the release has them (the runs that
// need them are skipped on the others: upstream_torch_has_pool_options)
template <typename A>
void set_pool_options(A *a, mempool_id_t id, bool use_on_oom, bool no_split)
{
    if constexpr (has_use_on_oom<A>::value) {
        if (use_on_oom)
            a->setUseOnOOM(0, id, true);
    } else if constexpr (has_use_on_oom_2<A>::value) {
        if (use_on_oom)
            a->setUseOnOOM(0, id);
    }
    if constexpr (has_no_split<A>::value) {
        if (no_split)
            a->setNoSplit(0, id);
    }
}

// markCaptureBegin / markCaptureEnd, which CUDAGraph calls right after
// cudaStreamBeginCapture and cudaStreamEndCapture from 2.13 on
template <typename A>
void mark_capture(A *a, bool begin)
{
    if constexpr (has_capture_marks<A>::value) {
        if (begin)
            a->markCaptureBegin(0);
        else
            a->markCaptureEnd(0);
    }
}

// The pool's use count: the allocator's own (getPoolUseCount, 2.6), else the
// begins not released
template <typename A>
uint32_t pool_uses(A *a, const strategy::pool &p)
{
    if constexpr (has_use_count<A>::value)
        return static_cast<uint32_t>(a->getPoolUseCount(0, mempool_of(p.id)));
    else
        return p.uses;
}

// One pool's numbers now, from the allocator's snapshot (its segments' owner_private_pool_id)
struct pool_now {
    uint64_t reserved = 0, allocated = 0, segments = 0;
};

pool_now pool_numbers(const CCA::SnapshotInfo &snap, uint64_t id)
{
    pool_now n;
    for (const CCA::SegmentInfo &seg : snap.segments) {
        if (seg.owner_private_pool_id != mempool_of(id))
            continue;
        n.reserved += seg.total_size;
        n.allocated += seg.allocated_size;
        n.segments++;
    }
    return n;
}

// After an allocation: the pools' peaks (only an allocation raises them)
void note_pool_peaks(strategy *s)
{
    if (s->pools.empty())
        return;
    CCA::SnapshotInfo snap = CCA::snapshot();
    for (strategy::pool &p : s->pools) {
        pool_now n = pool_numbers(snap, p.id);
        p.peak_reserved = std::max(p.peak_reserved, n.reserved);
        p.peak_allocated = std::max(p.peak_allocated, n.allocated);
    }
}

sim_status up_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    // the engine first creates a scratch instance to check the options; the
    // allocator may be bound again as long as nothing was allocated through it
    if (g_used)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "upstream torch: PyTorch's allocator is one per process; one run per process");
    const char *conf = strategy_config_get(cfg, "alloc_conf");
    const char *ftext = strategy_config_get(cfg, "memory_fraction");
    strategy *s = new strategy();
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    s->conf = conf != nullptr ? conf : "";
    if (ftext != nullptr) {
        char *end = nullptr;
        s->fraction = std::strtod(ftext, &end);
        s->set_fraction = true;
        if (end == ftext || *end != '\0') {
            delete s;
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "upstream torch: memory_fraction %s is not a number",
                                 ftext);
        }
    }
    s->host.dev = s->dev;
    s->host.proc = s->proc;
    mock_process_reset(&s->host, device_get_info(cfg->dev).capacity_bytes);
    // CUDAAllocatorConfig reads PYTORCH_CUDA_ALLOC_CONF once, at its first use;
    // releases from 2.9 on read PYTORCH_ALLOC_CONF first
    if (setenv("PYTORCH_CUDA_ALLOC_CONF", s->conf.c_str(), 1) != 0 ||
        setenv("PYTORCH_ALLOC_CONF", s->conf.c_str(), 1) != 0) {
        delete s;
        return sim_error_set(err, SIM_EIO, NULL, 0, 0, "upstream torch: setenv failed");
    }
    try {
        if (!g_initialised) {
            c10::cuda::_internal::setHasPrimaryContext(mock_has_primary_context);
#ifdef GPUSIM_C10_P2P_CACHE
            // as ATen's CUDAHooks::init does; expandable segments ask it for fabric access
            c10::cuda::detail::init_p2p_access_cache(1);
#endif
            CCA::init(1);
            // the last trace entry names an OOM's rounded size (first_oom.size)
            record_history(&CCA::recordHistory);
            g_initialised = true;
        }
        if (s->set_fraction)
            CCA::setMemoryFraction(s->fraction, 0);
    } catch (const c10::Error &e) {
        std::string msg = e.what_without_backtrace();
        delete s;
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "upstream torch: %s", msg.c_str());
    }
    *out = s;
    return SIM_OK;
}

void up_destroy(strategy *s)
{
    delete s;
}

sim_status up_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    flush(s);
    uint32_t i;
    if (!s->free_slots.empty()) {
        i = s->free_slots.back();
        s->free_slots.pop_back();
    } else {
        i = static_cast<uint32_t>(s->slots.size());
        s->slots.emplace_back();
    }
    g_used = true;
    try {
        c10::cuda::setCurrentCUDAStream(stream_of(stream));
        c10::DataPtr p = CCA::get()->allocate(static_cast<size_t>(size));
        strategy::slot &sl = s->slots[i];
        sl.ptr = std::move(p);
        sl.tag = 0;
        sl.bytes = size;
        sl.stream = stream;
        sl.live = true;
        sl.in_scope = !s->routes.empty();
        *h = i;
        note_pool_peaks(s);
        return SIM_OK;
    } catch (const c10::OutOfMemoryError &e) {
        s->free_slots.push_back(i);
        DeviceStats st = CCA::getDeviceStats(0);
        // the OOM trace entry holds the rounded request (AllocParams::size); a
        // snapshot adds its own entry after it
        uint64_t rounded = size;
        CCA::SnapshotInfo snap = CCA::snapshot();
        if (!snap.device_traces.empty()) {
            const std::vector<CCA::TraceEntry> &tr = snap.device_traces[0];
            for (auto it = tr.rbegin(); it != tr.rend(); ++it) {
                if (it->action_ == CCA::TraceEntry::OOM) {
                    rounded = it->size_;
                    break;
                }
            }
        }
        uint64_t free_bytes = 0, largest = 0;
        free_and_largest(&free_bytes, &largest);
        uint64_t dev_free = device_free_bytes(s->dev);
        device_info info = device_get_info(s->dev);
        uint64_t limit = info.capacity_bytes > info.context_bytes ? info.capacity_bytes - info.context_bytes : 0;
        double fraction = s->set_fraction ? s->fraction : allocator_memory_fraction(CCA::get());
        if (s->set_fraction || (fraction > 0.0 && fraction < 1.0)) {
            // a fraction from the configuration (per_process_memory_fraction) bounds it too
            uint64_t allowed = static_cast<uint64_t>(fraction * static_cast<double>(info.capacity_bytes));
            limit = limit < allowed ? limit : allowed;
        }
        *oom = strategy_oom{};
        oom->size_bytes = rounded;
        oom->free_bytes = free_bytes;
        oom->largest_free_bytes = largest;
        oom->reserved_bytes = static_cast<uint64_t>(st.reserved_bytes[0].current);
        oom->device_free_bytes = dev_free;
        oom->usable_bytes = limit; // the engine decides the cause (design.md §3), as for gpusim's torch
        std::snprintf(oom->detail, sizeof oom->detail, "%s", e.what_without_backtrace());
        return SIM_OOM;
    }
}

void up_free(strategy *s, strategy_handle h, bool deferred)
{
    flush(s);
    strategy::slot &sl = s->slots[h];
    if (deferred && sl.ptr.get() != nullptr) {
        s->unrecorded = h; // recorded by up_free_wait or the next call
        return;            // the slot stays taken until free_ready
    }
    set_free_stream(s, sl.stream);
    sl.ptr.clear();
    if (deferred)
        return;
    sl.live = false;
    s->free_slots.push_back(h);
}

// The deferred free h names the stream its event is recorded on.
void up_free_wait(strategy *s, strategy_handle h, uint32_t stream)
{
    if (s->unrecorded != h)
        return;
    s->unrecorded = UINT32_MAX;
    c10::cuda::CUDAStream st = stream_of(stream);
    record_deferred(s, h, &st);
}

void up_free_ready(strategy *s, strategy_handle h)
{
    flush(s);
    strategy::slot &sl = s->slots[h];
    // the work is done; PyTorch notices when it next processes its events
    mock_cuda_complete(sl.tag);
    sl.tag = 0;
    sl.live = false;
    s->free_slots.push_back(h);
}

void up_empty_cache(strategy *s)
{
    flush(s);
    c10::cuda::setCurrentCUDAStream(stream_of(0)); // torch.cuda.empty_cache() outside any capture
    CCA::emptyCache();
}

// pool_begin: what CUDAGraph::capture_begin does for a capture (beginAllocateToPool
// with a filter that matches the streams of this capture, cudaStreamBeginCapture,
// markCaptureBegin where the release has it), or torch.cuda.use_mem_pool for every
// stream (beginAllocateToPool with a filter that takes every stream); at the pool's
// first begin, the MemPool options (setUseOnOOM, setNoSplit) where the release has them
void up_pool_begin(strategy *s, const strategy_pool_scope *sc)
{
    flush(s);
    strategy::pool *p = pool_rec(s, sc->pool);
    bool first = p == nullptr;
    if (first) {
        s->pools.emplace_back();
        p = &s->pools.back();
        p->id = sc->pool;
        p->use_on_oom = sc->use_on_oom;
        p->no_split = sc->no_split;
    }
    p->uses++;
    p->routed = true;
    p->capture = sc->capture;
    p->capture_stream = stream_of(sc->stream).stream();
    auto capture_id = std::make_shared<unsigned long long>(0);
    std::function<bool(cudaStream_t)> filter;
    if (sc->all_streams) {
        filter = [](cudaStream_t) { return true; };
    } else if (sc->capture) {
        // as CUDAGraph's filter: the stream is capturing, in this capture
        filter = [capture_id](cudaStream_t st) {
            cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
            unsigned long long id = 0;
            C10_CUDA_CHECK(cudaStreamGetCaptureInfo(st, &status, &id));
            return status == cudaStreamCaptureStatusActive && id == *capture_id;
        };
    } else {
        cudaStream_t mine = p->capture_stream;
        filter = [mine](cudaStream_t st) { return st == mine; };
    }
    p->filter = filter;
    CCA::beginAllocateToPool(0, mempool_of(sc->pool), std::move(filter));
    s->routes.push_back(sc->pool);
    if (first)
        set_pool_options(CCA::get(), mempool_of(sc->pool), sc->use_on_oom, sc->no_split);
    if (sc->capture) {
        C10_CUDA_CHECK(cudaStreamBeginCapture(p->capture_stream, cudaStreamCaptureModeGlobal));
        mark_capture(CCA::get(), true);
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        C10_CUDA_CHECK(cudaStreamGetCaptureInfo(p->capture_stream, &status, capture_id.get()));
    }
}

// pool_end: CUDAGraph::capture_end (cudaStreamEndCapture, markCaptureEnd,
// endAllocateToPool) or the end of a use_mem_pool scope (endAllocateToPool)
void up_pool_end(strategy *s, uint64_t id)
{
    flush(s);
    strategy::pool *p = pool_rec(s, id);
    if (p->capture) {
        cudaGraph_t graph = nullptr;
        C10_CUDA_CHECK(cudaStreamEndCapture(p->capture_stream, &graph));
        mark_capture(CCA::get(), false);
    }
    CCA::endAllocateToPool(0, mempool_of(id));
    s->routes.erase(std::find(s->routes.begin(), s->routes.end(), id));
    p->routed = false;
    p->capture = false;
}

// pool_release: one use ends (CUDAGraph::reset, a MemPool deleted): releasePool
void up_pool_release(strategy *s, uint64_t id)
{
    flush(s);
    strategy::pool *p = pool_rec(s, id);
    CCA::releasePool(0, mempool_of(id));
    p->uses--;
}

// Where the release cannot say whether it keeps a pool (2.4, 2.5: no getPoolUseCount):
// release_cached_blocks, the only caller of synchronize_and_free_events there, erases a
// pool whose uses were all released once it holds no segment. So when the count of
// synchronizations grew since the last look, such a pool is gone.
void note_pool_drops(strategy *s, const CCA::SnapshotInfo &snap)
{
    int64_t syncs = CCA::getDeviceStats(0).num_sync_all_streams;
    if (syncs == s->syncs)
        return;
    s->syncs = syncs;
    for (strategy::pool &p : s->pools)
        if (p.uses == 0 && pool_numbers(snap, p.id).segments == 0)
            p.dropped = true;
}

int up_pools(const strategy *cs, strategy_pool_visitor v, void *ctx)
{
    flush(cs);
    if (cs->pools.empty())
        return 0;
    CCA::SnapshotInfo snap = CCA::snapshot();
    note_pool_drops(const_cast<strategy *>(cs), snap);
    for (const strategy::pool &p : cs->pools) {
        pool_now n = pool_numbers(snap, p.id);
        if (!pool_alive(CCA::get(), p))
            continue;
        strategy_pool_info info{};
        info.pool = p.id;
        info.reserved_bytes = n.reserved;
        info.peak_reserved_bytes = std::max(p.peak_reserved, n.reserved);
        info.allocated_bytes = n.allocated;
        info.peak_allocated_bytes = std::max(p.peak_allocated, n.allocated);
        info.segments = n.segments;
        info.uses = pool_uses(CCA::get(), p);
        info.routed = p.routed;
        info.use_on_oom = p.use_on_oom;
        info.no_split = p.no_split;
        int rc = v(ctx, &info);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void up_sample(const strategy *s, strategy_sample *out)
{
    flush(s);
    DeviceStats st = CCA::getDeviceStats(0);
    uint64_t free_bytes = 0, largest = 0;
    free_and_largest(&free_bytes, &largest);
    *out = strategy_sample{};
    out->allocated_bytes = static_cast<uint64_t>(st.allocated_bytes[0].current);
    out->reserved_bytes = static_cast<uint64_t>(st.reserved_bytes[0].current);
    out->free_bytes = free_bytes;
    out->largest_free_bytes = largest;
    out->num_device_allocs = static_cast<uint64_t>(st.num_device_alloc);
    out->num_device_frees = static_cast<uint64_t>(st.num_device_free);
    out->peak_reserved_bytes = static_cast<uint64_t>(st.reserved_bytes[0].peak);
    out->peak_allocated_bytes = static_cast<uint64_t>(st.allocated_bytes[0].peak);
}

void emit_stat(const strategy_stat_sink *sink, const std::string &name, const Stat &x)
{
    const char *parts[4] = {"current", "peak", "allocated", "freed"};
    const int64_t v[4] = {x.current, x.peak, x.allocated, x.freed};
    for (int i = 0; i < 4; i++)
        strategy_emit_u64(sink, (name + "." + parts[i]).c_str(), v[i] < 0 ? 0 : static_cast<uint64_t>(v[i]));
}

template <typename A>
void emit_array(const strategy_stat_sink *sink, const char *name, const A &arr)
{
    const char *types[3] = {"all", "small_pool", "large_pool"};
    for (int t = 0; t < 3; t++)
        emit_stat(sink, std::string(name) + "." + types[t], arr[static_cast<size_t>(t)]);
}

void up_stats(const strategy *s, const strategy_stat_sink *sink)
{
    flush(s);
    DeviceStats st = CCA::getDeviceStats(0);
    emit_array(sink, "allocation", st.allocation);
    emit_array(sink, "segment", st.segment);
    emit_array(sink, "active", st.active);
    emit_array(sink, "inactive_split", st.inactive_split);
    emit_array(sink, "allocated_bytes", st.allocated_bytes);
    emit_array(sink, "reserved_bytes", st.reserved_bytes);
    emit_array(sink, "active_bytes", st.active_bytes);
    emit_array(sink, "inactive_split_bytes", st.inactive_split_bytes);
    emit_array(sink, "requested_bytes", st.requested_bytes);
    emit_stat(sink, "oversize_allocations", st.oversize_allocations);
    emit_stat(sink, "oversize_segments", st.oversize_segments);
    strategy_emit_u64(sink, "num_alloc_retries", static_cast<uint64_t>(st.num_alloc_retries));
    strategy_emit_u64(sink, "num_ooms", static_cast<uint64_t>(st.num_ooms));
    strategy_emit_u64(sink, "num_sync_all_streams", static_cast<uint64_t>(st.num_sync_all_streams));
    strategy_emit_u64(sink, "num_device_alloc", static_cast<uint64_t>(st.num_device_alloc));
    strategy_emit_u64(sink, "num_device_free", static_cast<uint64_t>(st.num_device_free));
    if (st.max_split_size < 0)
        strategy_emit_real(sink, "max_split_size", -1.0);
    else
        strategy_emit_u64(sink, "max_split_size", static_cast<uint64_t>(st.max_split_size));
}

void up_options(const strategy *s, const strategy_stat_sink *sink)
{
    strategy_emit_text(sink, "alloc_conf", s->conf.c_str());
    strategy_emit_text(sink, "backend", "native (upstream)");
    if (s->set_fraction) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", s->fraction);
        strategy_emit_text(sink, "memory_fraction", buf);
    }
}

void up_check(const strategy *s, sim_report *r)
{
    flush(s);
    (void)r; // PyTorch checks itself (TORCH_INTERNAL_ASSERT)
}

int up_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    flush(s);
    CCA::SnapshotInfo snap = CCA::snapshot();
    uint32_t region = 0;
    for (const CCA::SegmentInfo &seg : snap.segments) {
        uint64_t addr = seg.address;
        for (const CCA::BlockInfo &b : seg.blocks) {
            strategy_block blk{};
            blk.addr = addr;
            blk.size_bytes = b.size;
            blk.requested_bytes = b.requested_size;
            blk.region_addr = seg.address;
            blk.region = region;
            blk.stream = 0;
            blk.state = b.allocated ? BLOCK_USED : b.active ? BLOCK_PENDING : BLOCK_FREE;
            blk.pool = seg.is_large ? "large" : "small";
            blk.pool_id = static_cast<uint64_t>(seg.owner_private_pool_id.second);
            int rc = v(ctx, &blk);
            if (rc != 0)
                return rc;
            addr += b.size;
        }
        region++;
    }
    return 0;
}

strategy_ops make_ops()
{
    // The model it stands in for: its name and traits (family, framework, advice, the
    // recorded settings' key) are gpusim's torch's, so reports word it the same way
    const strategy_ops *model = torch_strategy();
    strategy_ops o{};
    o.name = model->name;
    o.family = model->family;
    o.framework = model->framework;
    o.advice = model->advice;
    o.whatif_strategies = model->whatif_strategies;
    o.takes_region_at_start = model->takes_region_at_start;
    o.recorded_conf_key = model->recorded_conf_key;
#ifdef GPUSIM_UPSTREAM_WHEEL
    o.summary = "PyTorch's own CUDA caching allocator, a shipped wheel's libc10_cuda.so over a mock CUDA runtime";
#else
    o.summary = "PyTorch's own CUDA caching allocator, built from source against a mock CUDA runtime";
#endif
    o.create = up_create;
    o.destroy = up_destroy;
    o.alloc = up_alloc;
    o.free = up_free;
    o.free_ready = up_free_ready;
    o.free_wait = up_free_wait;
    o.empty_cache = up_empty_cache;
    o.pool_begin = up_pool_begin;
    o.pool_end = up_pool_end;
    o.pool_release = up_pool_release;
    o.pools = up_pools;
    o.sample = up_sample;
    o.stats = up_stats;
    o.options = up_options;
    o.check = up_check;
    o.walk = up_walk;
    return o;
}

} // namespace

extern "C" bool upstream_torch_has_use_on_oom(void)
{
    return has_use_on_oom<allocator_type>::value || has_use_on_oom_2<allocator_type>::value;
}

extern "C" bool upstream_torch_has_no_split(void)
{
    return has_no_split<allocator_type>::value;
}

extern "C" const strategy_ops *upstream_torch_strategy(void)
{
    static const strategy_ops ops = make_ops();
    return &ops;
}
