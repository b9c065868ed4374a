// replay.cc — replays one trace through the real BFCAllocator with a fake
// sub-allocator, and prints the keys check.py compares with gpusim's result. Two
// builds of the one file: bfc_allocator.cc of the source tree run.sh was pointed at,
// compiled against stubs/ (BFC_HEADER names its header); or, with GPUSIM_TF_WHEEL,
// TensorFlow's shipped tsl::BFCAllocator in libtensorflow_framework.so.2, compiled
// against the wheel's own headers (check-tf.sh).
//
// The fake sub-allocator hands out fresh addresses the way gpusim's device does
// (sim/device.c: each base is the previous highest end rounded up to 2 MiB, the
// first at 2 MiB), never returns adjacent ranges as one (SupportsCoalescing false:
// regions never merge) and refuses once the regions would pass the device total.
// No memory is touched: the allocator only does arithmetic on the addresses.
//
// Usage: replay LIMIT DEVICE_BYTES GROWTH GC FRAG SPATIAL ALIGNMENT STOP < trace
// (GROWTH, GC, SPATIAL, STOP: 0 or 1; in the wheel build GC may also be "tf", TF's
// own default: the GPUBFCAllocator TF's GPU device builds, with garbage_collection
// left unset, or "xla": tsl::BFCAllocator::Options' default, what XLA leaves). The trace is one event a line: "a ID SIZE"
// or "f ID". Output: key=value lines in gpusim's result names, and after every
// event N a line "event.N=..." with the allocation's address and chunk size and the
// allocator's statistics then (gpusim_side.c prints the same). Exit 70 when the
// allocator CHECK-fails (stubs/gpusim_stub.h; in the wheel build, on the abort a
// failed CHECK raises).
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#ifdef GPUSIM_TF_WHEEL
#include <unistd.h>

#include "tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.h"
#include "xla/tsl/framework/bfc_allocator.h"
#include "xla/tsl/protobuf/bfc_memory_map.pb.h"

namespace gpusim_stub {
volatile uint64_t current_event = 0;
}

namespace {
// TF's CHECK logs and aborts: report it as the stub build's CHECK does (exit 70,
// naming the event), so check.py tells an abort from a crash the same way
extern "C" void on_abort(int)
{
    char buf[96];
    int n = std::snprintf(buf, sizeof buf, "CHECK failed at event %llu (abort)\n",
                          static_cast<unsigned long long>(gpusim_stub::current_event));
    if (n > 0 && write(2, buf, static_cast<size_t>(n)) < 0)
        _exit(71);
    _exit(70);
}
} // namespace
#else
#include BFC_HEADER
#endif

namespace {

constexpr uint64_t kAlign = 2u << 20;

class FakeDevice : public tsl::SubAllocator {
  public:
    explicit FakeDevice(uint64_t total) : tsl::SubAllocator({}, {}), total_(total) {}
    void *Alloc(size_t, size_t num_bytes, size_t *bytes_received) override
    {
        *bytes_received = 0;
        if (held_ + num_bytes > total_)
            return nullptr;
        uint64_t base = (next_ + kAlign - 1) / kAlign * kAlign;
        next_ = base + num_bytes;
        held_ += num_bytes;
        allocs_++;
        *bytes_received = num_bytes;
        return reinterpret_cast<void *>(static_cast<uintptr_t>(base));
    }
    void Free(void *, size_t num_bytes) override
    {
        held_ -= num_bytes;
        frees_++;
    }
    bool SupportsCoalescing() const override { return false; }
    uint64_t allocs_ = 0, frees_ = 0;
    uint64_t held() const { return held_; }

  private:
    uint64_t total_, held_ = 0, next_ = kAlign;
};

// the placement itself, not only its totals: FNV-1a over (address, size, in use) of
// every chunk of every region in address order, from the allocator's own memory map,
// as gpusim_side.c hashes its walker's blocks; and the largest free chunk
void read_map(tsl::BFCAllocator &bfc, uint64_t *hash, uint64_t *largest_free)
{
    tensorflow::MemoryDump md = bfc.RecordMemoryMap();
    uint64_t h = 1469598103934665603ull, largest = 0;
    for (const auto &c : md.chunk()) {
        uint64_t size = static_cast<uint64_t>(c.size());
        if (!c.in_use())
            largest = std::max(largest, size);
        for (uint64_t x : {static_cast<uint64_t>(c.address()), size, static_cast<uint64_t>(c.in_use())})
            for (int b = 0; b < 8; b++)
                h = (h ^ ((x >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
    *hash = h;
    *largest_free = largest;
}

// event.N: what the event did and the allocator's statistics after it, the fields
// in gpusim_side.c's order
void print_event(uint64_t event, tsl::BFCAllocator &bfc, const FakeDevice &dev, uint64_t addr, uint64_t chunk)
{
    tsl::AllocatorStats st = *bfc.GetStats();
    uint64_t h, largest_free;
    read_map(bfc, &h, &largest_free);
    std::printf("event.%" PRIu64 "=addr:%" PRIu64 ",chunk:%" PRIu64 ",bytes_in_use:%" PRId64
                ",peak_bytes_in_use:%" PRId64 ",num_allocs:%" PRId64 ",largest_alloc_size:%" PRId64
                ",pool_bytes:%" PRId64 ",peak_pool_bytes:%" PRId64 ",bytes_limit:%" PRId64 ",regions:%" PRIu64
                ",largest_free_block_bytes:%" PRIu64 ",device_bytes:%" PRIu64 ",device_allocs:%" PRIu64
                ",device_frees:%" PRIu64 "\n",
                event, addr, chunk, st.bytes_in_use, st.peak_bytes_in_use, st.num_allocs, st.largest_alloc_size,
                *st.pool_bytes, *st.peak_pool_bytes, *st.bytes_limit, dev.allocs_ - dev.frees_, largest_free,
                dev.held(), dev.allocs_, dev.frees_);
#ifdef GPUSIM_TF_WHEEL
    // the AllocatorStats fields the stub build cannot print (2024 has no
    // largest_free_block_bytes in GetStats) or gpusim keeps no counter for; check.py
    // holds them to the event line (tfstat_rule there)
    std::printf("tf.%" PRIu64 "=bytes_reserved:%" PRId64 ",peak_bytes_reserved:%" PRId64
                ",bytes_reservable_limit:%s,largest_free_block_bytes:%" PRId64 "\n",
                event, st.bytes_reserved, st.peak_bytes_reserved,
                st.bytes_reservable_limit ? std::to_string(*st.bytes_reservable_limit).c_str() : "none",
                st.largest_free_block_bytes);
#endif
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 9) {
        std::fprintf(stderr, "usage: replay LIMIT DEVICE_BYTES GROWTH GC FRAG SPATIAL ALIGNMENT STOP < trace\n");
        return 2;
    }
    uint64_t limit = std::strtoull(argv[1], nullptr, 10);
    uint64_t device = std::strtoull(argv[2], nullptr, 10);
    std::string gc_arg = argv[4];
    bool growth = std::atoi(argv[3]) != 0, gc = gc_arg == "1";
    double frag = std::strtod(argv[5], nullptr);
    bool spatial = std::atoi(argv[6]) != 0, stop = std::atoi(argv[8]) != 0;
    size_t alignment = std::strtoull(argv[7], nullptr, 10);

    auto sub = std::make_unique<FakeDevice>(device);
    FakeDevice *dev = sub.get();
    tsl::BFCAllocator::Options opts;
    opts.allow_growth = growth;
    if (gc_arg != "xla")
        opts.garbage_collection = gc;
    opts.fragmentation_fraction = frag;
#ifdef GPUSIM_TF_WHEEL
    // TF's AllocatorRetry waits up to 10 s for another thread to free memory before
    // it calls AllocateRawInternal once more on the same state; nothing can free in
    // a single-threaded replay, so a failed request fails at once (the stub build
    // retries once without waiting)
    opts.allow_retry_on_failure = false;
    std::signal(SIGABRT, on_abort);
    if (gc_arg != "0" && gc_arg != "1" && gc_arg != "tf" && gc_arg != "xla") {
#else
    if (gc_arg != "0" && gc_arg != "1") {
#endif
        std::fprintf(stderr, "replay: GC '%s' is not one of this build's values\n", gc_arg.c_str());
        return 2;
    }
#ifdef BFC_HAS_SPATIAL
    opts.enable_spatial_partitioning = spatial;
#else
    if (spatial) {
        std::fprintf(stderr, "this copy of bfc_allocator.cc has no spatial partitioning\n");
        return 2;
    }
#endif
#ifdef GPUSIM_TF_WHEEL
    std::unique_ptr<tsl::BFCAllocator> owner;
    if (gc_arg == "tf") {
        tensorflow::GPUBFCAllocator::Options gpu_opts;
        gpu_opts.allow_growth = growth;
        gpu_opts.fragmentation_fraction = frag;
        gpu_opts.allow_retry_on_failure = false;
        owner = std::make_unique<tensorflow::GPUBFCAllocator>(std::move(sub), limit, "GPU_0_bfc", gpu_opts);
    } else {
        owner = std::make_unique<tsl::BFCAllocator>(std::move(sub), limit, "GPU_0_bfc", opts);
    }
    tsl::BFCAllocator &bfc = *owner;
#else
    tsl::BFCAllocator bfc(std::move(sub), limit, "GPU_0_bfc", opts);
#endif

    std::map<uint64_t, void *> live;  // trace id → pointer (nullptr for 0 bytes)
    uint64_t event = 0, ooms = 0, first_oom = 0, peak_requested = 0, requested = 0;
    std::map<uint64_t, uint64_t> sizes;
    char op;
    uint64_t id, size;
    bool completed = true;
    while (std::scanf(" %c %" SCNu64, &op, &id) == 2) {
        event++;
        gpusim_stub::current_event = event;
        if (op == 'a') {
            if (std::scanf(" %" SCNu64, &size) != 1)
                return 2;
            void *p = bfc.AllocateRaw(alignment, size);
            if (p == nullptr && size > 0) {
                print_event(event, bfc, *dev, 0, 0);
                ooms++;
                if (first_oom == 0)
                    first_oom = event;
                if (stop) {
                    completed = false;
                    break;
                }
                continue;
            }
            print_event(event, bfc, *dev, reinterpret_cast<uintptr_t>(p), p ? bfc.AllocatedSize(p) : 0);
            live[id] = p;
            sizes[id] = size;
            requested += size;
            peak_requested = std::max(peak_requested, requested);
        } else {
            auto it = live.find(id);
            if (it == live.end())
                continue; // a skipped allocation's free
            if (it->second != nullptr)
                bfc.DeallocateRaw(it->second);
            requested -= sizes[id];
            live.erase(it);
            print_event(event, bfc, *dev, 0, 0);
        }
    }
    tsl::AllocatorStats st = *bfc.GetStats();
    std::printf("result.completed=%s\n", completed ? "true" : "false");
    std::printf("result.ooms=%" PRIu64 "\n", ooms);
    if (first_oom)
        std::printf("result.first_oom.event=%" PRIu64 "\n", first_oom);
    std::printf("result.peak_requested_bytes=%" PRIu64 "\n", peak_requested);
    std::printf("result.num_device_allocs=%" PRIu64 "\n", dev->allocs_);
    std::printf("result.num_device_frees=%" PRIu64 "\n", dev->frees_);
    std::printf("result.stats.bytes_in_use=%" PRId64 "\n", st.bytes_in_use);
    std::printf("result.stats.peak_bytes_in_use=%" PRId64 "\n", st.peak_bytes_in_use);
    std::printf("result.stats.pool_bytes=%" PRId64 "\n", *st.pool_bytes);
    std::printf("result.stats.peak_pool_bytes=%" PRId64 "\n", *st.peak_pool_bytes);
    std::printf("result.stats.largest_alloc_size=%" PRId64 "\n", st.largest_alloc_size);
    std::printf("result.stats.num_allocs=%" PRId64 "\n", st.num_allocs);
    std::printf("result.stats.regions=%" PRIu64 "\n", dev->allocs_ - dev->frees_);
    std::printf("result.stats.bytes_limit=%" PRId64 "\n", *st.bytes_limit);
    // GetStats of 2024 leaves largest_free_block_bytes 0; the map has it in both copies
    uint64_t h = 0, largest_free = 0;
    read_map(bfc, &h, &largest_free);
    std::printf("result.stats.largest_free_block_bytes=%" PRIu64 "\n", largest_free);
    std::printf("layout.fnv1a=%016" PRIx64 "\n", h);
    return 0;
}
