// gpusim_stub_allocator.h — the allocator interfaces bfc_allocator.h builds on
// (tsl/framework/allocator.h, allocator_retry.h, shared_counter.h,
// scoped_allocation_trace.h), reduced to their declarations and the union of what
// the 2024 and the 2026 copies use. Part of gpusim_stub.h.
#ifndef GPUSIM_BFC_UPSTREAM_STUB_ALLOCATOR_H
#define GPUSIM_BFC_UPSTREAM_STUB_ALLOCATOR_H

namespace tsl {

enum class AllocationEnd : uint8_t { kLower, kUpper };
template <typename Sink> void AbslStringify(Sink &sink, AllocationEnd end)
{
    sink.Append(end == AllocationEnd::kUpper ? "upper" : "lower");
}
inline std::ostream &operator<<(std::ostream &os, AllocationEnd end)
{
    return os << (end == AllocationEnd::kUpper ? "upper" : "lower");
}

struct AllocationAttributes {
    AllocationAttributes() = default;
    AllocationAttributes(bool retry, bool logged, std::function<uint64_t()> *freed_by,
                         AllocationEnd end = AllocationEnd::kLower)
        : retry_on_failure(retry), allocation_will_be_logged(logged), freed_by_func(freed_by), allocation_end(end)
    {
    }
    bool retry_on_failure = true;
    bool allocation_will_be_logged = false;
    std::function<uint64_t()> *freed_by_func = nullptr;
    AllocationEnd allocation_end = AllocationEnd::kLower;
    AllocationAttributes(const AllocationAttributes &) = delete;
    void operator=(const AllocationAttributes &) = delete;
};

struct AllocatorStats {
    int64_t num_allocs = 0;
    int64_t bytes_in_use = 0;
    int64_t peak_bytes_in_use = 0;
    int64_t largest_alloc_size = 0;
    std::optional<int64_t> bytes_limit;
    int64_t bytes_reserved = 0;
    int64_t peak_bytes_reserved = 0;
    int64_t peak_allocated_bytes = 0;
    std::optional<int64_t> bytes_reservable_limit;
    int64_t largest_free_block_bytes = 0;
    std::optional<int64_t> pool_bytes;
    std::optional<int64_t> peak_pool_bytes;
    std::string DebugString() const { return ""; }
};

enum class AllocatorMemoryType { kUnknown = 0, kDevice = 1, kHostPageable = 2, kHostPinned = 3 };

class Allocator {
  public:
    static constexpr size_t kAllocatorAlignment = 64;
    virtual ~Allocator() = default;
    virtual std::string Name() = 0;
    virtual void *AllocateRaw(size_t alignment, size_t num_bytes) = 0;
    virtual void *AllocateRaw(size_t alignment, size_t num_bytes, const AllocationAttributes &)
    {
        return AllocateRaw(alignment, num_bytes);
    }
    virtual void DeallocateRaw(void *ptr) = 0;
    virtual bool TracksAllocationSizes() const { return false; }
    virtual bool AllocatesOpaqueHandle() const { return false; }
    virtual size_t RequestedSize(const void *) const { return 0; }
    virtual size_t AllocatedSize(const void *ptr) const { return RequestedSize(ptr); }
    virtual int64_t AllocationId(const void *) const { return 0; }
    virtual size_t AllocatedSizeSlow(const void *ptr) const { return AllocatedSize(ptr); }
    virtual std::optional<AllocatorStats> GetStats() { return std::nullopt; }
    virtual bool ClearStats() { return false; }
    virtual void SetSafeFrontier(uint64_t) {}
    virtual void SetStreamAndPreallocateMemory(void *) {}
    virtual AllocatorMemoryType GetMemoryType() const { return AllocatorMemoryType::kUnknown; }
};

class SubAllocator {
  public:
    typedef std::function<void(void *, int, size_t)> Visitor;
    SubAllocator(const std::vector<Visitor> &, const std::vector<Visitor> &) {}
    virtual ~SubAllocator() = default;
    virtual void *Alloc(size_t alignment, size_t num_bytes, size_t *bytes_received) = 0;
    virtual void Free(void *ptr, size_t num_bytes) = 0;
    virtual bool SupportsCoalescing() const = 0;
    virtual AllocatorMemoryType GetMemoryType() const { return AllocatorMemoryType::kUnknown; }
};

// One retry, no wait: in a single-threaded replay nothing can free memory during
// AllocatorRetry's 10 s wait, so its later attempts see the state of the first.
class AllocatorRetry {
  public:
    void *AllocateRaw(std::function<void *(size_t, size_t, bool)> alloc_func, int, size_t alignment, size_t bytes)
    {
        void *p = alloc_func(alignment, bytes, false);
        return p != nullptr ? p : alloc_func(alignment, bytes, true);
    }
    void NotifyDealloc() {}
};

class SharedCounter {
  public:
    int64_t get() { return value_; }
    uint64_t next() { return static_cast<uint64_t>(++value_); }

  private:
    int64_t value_ = 0;
};

class ScopedAllocationTrace {
  public:
    struct Frame {
        std::string name;
        std::vector<std::pair<std::string, std::string>> args;
    };
    struct Snapshot {
        explicit Snapshot(std::vector<Frame> f) : frames(std::move(f)) {}
        std::vector<Frame> frames;
    };
    static Snapshot Current() { return Snapshot({}); }
};

} // namespace tsl

#endif
