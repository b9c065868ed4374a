// replay.cc — replays one trace through the real BFCAllocator (bfc_allocator.cc of
// the source tree run.sh was pointed at, built against stubs/) with a fake
// sub-allocator, and prints the keys run.sh compares with gpusim's result.
//
// The fake sub-allocator hands out fresh addresses the way gpusim's device does
// (sim/device.c: each base is the previous highest end rounded up to 2 MiB, the
// first at 2 MiB), never returns adjacent ranges as one (SupportsCoalescing false:
// regions never merge) and refuses once the regions would pass the device total.
// No memory is touched: the allocator only does arithmetic on the addresses.
//
// Usage: replay LIMIT DEVICE_BYTES GROWTH GC FRAG SPATIAL ALIGNMENT STOP < trace
// (GROWTH, GC, SPATIAL, STOP: 0 or 1). The trace is one event a line: "a ID SIZE"
// or "f ID". Output: key=value lines in gpusim's result names. Exit 70 when the
// allocator CHECK-fails (stubs/gpusim_stub.h).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include BFC_HEADER

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

  private:
    uint64_t total_, held_ = 0, next_ = kAlign;
};

} // namespace

int main(int argc, char **argv)
{
    if (argc != 9) {
        std::fprintf(stderr, "usage: replay LIMIT DEVICE_BYTES GROWTH GC FRAG SPATIAL ALIGNMENT STOP < trace\n");
        return 2;
    }
    uint64_t limit = std::strtoull(argv[1], nullptr, 10);
    uint64_t device = std::strtoull(argv[2], nullptr, 10);
    bool growth = std::atoi(argv[3]) != 0, gc = std::atoi(argv[4]) != 0;
    double frag = std::strtod(argv[5], nullptr);
    bool spatial = std::atoi(argv[6]) != 0, stop = std::atoi(argv[8]) != 0;
    size_t alignment = std::strtoull(argv[7], nullptr, 10);

    auto sub = std::make_unique<FakeDevice>(device);
    FakeDevice *dev = sub.get();
    tsl::BFCAllocator::Options opts;
    opts.allow_growth = growth;
    opts.garbage_collection = gc;
    opts.fragmentation_fraction = frag;
#ifdef BFC_HAS_SPATIAL
    opts.enable_spatial_partitioning = spatial;
#else
    if (spatial) {
        std::fprintf(stderr, "this copy of bfc_allocator.cc has no spatial partitioning\n");
        return 2;
    }
#endif
    tsl::BFCAllocator bfc(std::move(sub), limit, "GPU_0_bfc", opts);

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
                ooms++;
                if (first_oom == 0)
                    first_oom = event;
                if (stop) {
                    completed = false;
                    break;
                }
                continue;
            }
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
    // the placement itself, not only its totals: (address, size, in use) of every
    // chunk of every region in address order, from the allocator's own memory map, as
    // gpusim_side.c hashes its walker's blocks
    tensorflow::MemoryDump md = bfc.RecordMemoryMap();
    uint64_t h = 1469598103934665603ull, largest_free = 0;
    for (const auto &c : md.chunk()) {
        if (!c.in_use())
            largest_free = std::max(largest_free, c.size());
        for (uint64_t x : {c.address(), c.size(), static_cast<uint64_t>(c.in_use())})
            for (int b = 0; b < 8; b++)
                h = (h ^ ((x >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
    // GetStats of 2024 leaves largest_free_block_bytes 0; the map has it in both copies
    std::printf("result.stats.largest_free_block_bytes=%" PRIu64 "\n", largest_free);
    std::printf("layout.fnv1a=%016" PRIx64 "\n", h);
    return 0;
}
