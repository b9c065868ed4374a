// gpusim_stub.h — everything bfc_allocator.{h,cc} of google/tsl (2024) and
// openxla/xla (2026) include besides themselves, reduced to what a single-threaded
// CPU replay needs: absl containers over std ones, strings, no-op locks and
// profiler hooks, CHECK/LOG macros, the Allocator/SubAllocator interfaces and the
// MemoryDump proto's setters. Written for gpusim's validate/upstream/bfc; no
// upstream code. Every stub path header includes this one file.
#ifndef GPUSIM_BFC_UPSTREAM_STUB_H
#define GPUSIM_BFC_UPSTREAM_STUB_H

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

// ---- attributes and annotations ----
#define ABSL_PREDICT_TRUE(x) (__builtin_expect(!!(x), 1))
#define ABSL_PREDICT_FALSE(x) (__builtin_expect(!!(x), 0))
#define ABSL_EXCLUSIVE_LOCKS_REQUIRED(...)
#define ABSL_GUARDED_BY(x)
#define ABSL_NO_THREAD_SAFETY_ANALYSIS
#define ABSL_LOCKS_EXCLUDED(...)
#define TF_EXCLUSIVE_LOCKS_REQUIRED(...)
#define TF_GUARDED_BY(x)
#define TF_NO_THREAD_SAFETY_ANALYSIS
#define TF_LOCKS_EXCLUDED(...)
#define TF_DISALLOW_COPY_AND_ASSIGN(T) \
    T(const T &) = delete;             \
    void operator=(const T &) = delete
#define TF_PREDICT_TRUE(x) ABSL_PREDICT_TRUE(x)
#define TF_PREDICT_FALSE(x) ABSL_PREDICT_FALSE(x)

// ---- logging: LOG/VLOG print nothing below FATAL; CHECKs abort with a message ----
namespace gpusim_stub {
inline uint64_t current_event = 0; // set by the replay driver: which event a CHECK hit
struct null_stream {
    template <typename T> null_stream &operator<<(const T &) { return *this; }
};
struct fatal_stream {
    std::ostringstream os;
    const char *file;
    int line;
    fatal_stream(const char *f, int l, const char *what) : file(f), line(l) { os << what; }
    template <typename T> fatal_stream &operator<<(const T &v)
    {
        if constexpr (std::is_enum_v<T>)
            os << static_cast<long long>(v);
        else
            os << v;
        return *this;
    }
    [[noreturn]] ~fatal_stream()
    {
        std::fprintf(stderr, "upstream CHECK failed at event %llu, %s:%d: %s\n",
                     static_cast<unsigned long long>(current_event), file, line, os.str().c_str());
        std::fflush(stderr);
        std::_Exit(70); // the replay driver's "CHECK" exit status
    }
};
struct voidify {
    template <typename T> void operator&(T &) {}
    void operator&(null_stream &) {}
};
} // namespace gpusim_stub

#define LOG(sev) (true) ? (void)0 : ::gpusim_stub::voidify() & ::gpusim_stub::null_stream()
#define VLOG(n) LOG(INFO)
#define VLOG_IS_ON(n) false
#define CHECK(c) \
    if (c) {     \
    } else       \
        ::gpusim_stub::fatal_stream(__FILE__, __LINE__, "CHECK(" #c ") ")
#define CHECK_OP(a, b, op) CHECK((a)op(b))
#define CHECK_EQ(a, b) CHECK_OP(a, b, ==)
#define CHECK_NE(a, b) CHECK_OP(a, b, !=)
#define CHECK_GE(a, b) CHECK_OP(a, b, >=)
#define CHECK_GT(a, b) CHECK_OP(a, b, >)
#define CHECK_LE(a, b) CHECK_OP(a, b, <=)
#define CHECK_LT(a, b) CHECK_OP(a, b, <)
#define DCHECK(c) CHECK(c)
#define DCHECK_EQ(a, b) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) CHECK_NE(a, b)
#define DCHECK_GE(a, b) CHECK_GE(a, b)
#define DCHECK_GT(a, b) CHECK_GT(a, b)
#define DCHECK_LE(a, b) CHECK_LE(a, b)
#define DCHECK_LT(a, b) CHECK_LT(a, b)

// ---- absl ----
namespace absl {
using string_view = std::string_view;
template <typename T> using optional = std::optional<T>;
using std::nullopt;

template <typename To, typename From> To bit_cast(const From &f)
{
    static_assert(sizeof(To) == sizeof(From), "bit_cast sizes");
    To t;
    std::memcpy(&t, &f, sizeof t);
    return t;
}
template <typename T> constexpr bool has_single_bit(T x) { return x != 0 && (x & (x - 1)) == 0; }

template <typename K, typename C = std::less<K>> class btree_set : public std::set<K, C> {
  public:
    using std::set<K, C>::set;
    explicit btree_set(const C &c) : std::set<K, C>(c) {}
};
template <typename K> class flat_hash_set : public std::unordered_set<K> {
  public:
    using std::unordered_set<K>::unordered_set;
    bool contains(const K &k) const { return this->count(k) != 0; }
};

class Mutex {
  public:
    void Lock() {}
    void Unlock() {}
};
class MutexLock {
  public:
    explicit MutexLock(Mutex *) {}
    explicit MutexLock(Mutex &) {}
};

class Status {
  public:
    bool ok() const { return false; }
};
inline std::ostream &operator<<(std::ostream &os, const Status &) { return os << "status"; }

struct Hex {
    uint64_t v;
    template <typename T> explicit Hex(T x) : v(static_cast<uint64_t>(x)) {}
};

namespace stub_detail {
struct sink {
    std::string *out;
    void Append(std::string_view s) { out->append(s); }
};
template <typename T, typename = void> struct has_stringify : std::false_type {};
template <typename T>
struct has_stringify<T, std::void_t<decltype(AbslStringify(std::declval<sink &>(), std::declval<const T &>()))>>
    : std::true_type {};
template <typename T> void append_one(std::string *out, const T &v)
{
    if constexpr (has_stringify<T>::value) {
        sink s{out};
        AbslStringify(s, v);
    } else if constexpr (std::is_same_v<T, Hex>) {
        char b[32];
        std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v.v));
        out->append(b);
    } else if constexpr (std::is_enum_v<T>) {
        out->append(std::to_string(static_cast<long long>(v)));
    } else if constexpr (std::is_pointer_v<T> && !std::is_same_v<std::decay_t<T>, const char *> &&
                         !std::is_same_v<std::decay_t<T>, char *>) {
        char b[32];
        std::snprintf(b, sizeof b, "%p", static_cast<const void *>(v));
        out->append(b);
    } else {
        std::ostringstream os;
        os << v;
        out->append(os.str());
    }
}
} // namespace stub_detail

template <typename... A> void StrAppend(std::string *out, const A &...a) { (stub_detail::append_one(out, a), ...); }
template <typename... A> std::string StrCat(const A &...a)
{
    std::string s;
    StrAppend(&s, a...);
    return s;
}
struct PairFormatter {
    explicit PairFormatter(const char *) {}
    template <typename P> void operator()(std::string *out, const P &p) const { StrAppend(out, p.first, "=", p.second); }
};
template <typename Range, typename F> std::string StrJoin(const Range &r, std::string_view sep, F f)
{
    std::string s;
    bool first = true;
    for (const auto &x : r) {
        if (!first)
            s.append(sep);
        first = false;
        f(&s, x);
    }
    return s;
}
template <typename Range> std::string StrJoin(const Range &r, std::string_view sep)
{
    return StrJoin(r, sep, [](std::string *out, const auto &x) { StrAppend(out, x); });
}
} // namespace absl

// ---- tsl platform ----
namespace tsl {
using std::string;
using int64 = int64_t;
using int32 = int32_t;
using uint32 = uint32_t;
using uint8 = uint8_t;
using uint64 = uint64_t;
class mutex {
  public:
    void lock() {}
    void unlock() {}
};
class mutex_lock {
  public:
    explicit mutex_lock(mutex &) {}
};
namespace strings {
inline std::string HumanReadableNumBytes(int64_t n) { return std::to_string(n) + "B"; }
using absl::StrAppend;
using absl::StrCat;
using absl::Hex;
} // namespace strings
inline std::string CurrentStackTrace() { return ""; }

class WritableFile {
  public:
    absl::Status Append(std::string_view) { return {}; }
};
class Env {
  public:
    static Env *Default()
    {
        static Env e;
        return &e;
    }
    uint64_t NowMicros() { return 0; }
    absl::Status NewWritableFile(const std::string &, std::unique_ptr<WritableFile> *) { return {}; }
};

inline int Log2Floor64(uint64_t n) { return n == 0 ? -1 : 63 - __builtin_clzll(n); }
inline int Log2Floor(uint32_t n) { return n == 0 ? -1 : 31 - __builtin_clz(n); }

// ---- profiler hooks: nothing is traced ----
namespace profiler {
enum class TraceMeLevel { kCritical = 1, kInfo = 2, kVerbose = 3 };
enum class TraceMeFilter { kTraceMemory = 1 };
inline uint64_t TraceMeFiltersToMask(std::initializer_list<TraceMeFilter>) { return 1; }
struct TraceMeArg {
    template <typename T> TraceMeArg(const char *, const T &) {}
};
inline std::string TraceMeEncode(std::string_view, std::initializer_list<TraceMeArg>) { return ""; }
inline std::string TraceMeEncode(const char *, std::initializer_list<TraceMeArg>) { return ""; }
struct TraceMe {
    template <typename F> static void InstantActivity(F &&, int = 0, uint64_t = 0) {}
    template <typename F> static void InstantActivity(F &&, TraceMeLevel, uint64_t = 0) {}
};
struct MemoryDebugAnnotation {
    const char *pending_op_name = nullptr;
    int64_t pending_step_id = 0;
    const char *pending_region_type = nullptr;
    int32_t pending_data_type = 0;
    std::function<std::string()> pending_shape_func = [] { return std::string(); };
};
struct ScopedMemoryDebugAnnotation {
    static const MemoryDebugAnnotation &CurrentAnnotation()
    {
        static MemoryDebugAnnotation a;
        return a;
    }
};
} // namespace profiler
} // namespace tsl

// ---- the bfc_memory_map proto: the chunks are kept (replay.cc reads the layout
// from RecordMemoryMap), every other setter keeps nothing ----
namespace tensorflow {
// a setter whose value the replay does not need: it keeps nothing
#define GPUSIM_STUB_IGNORED(field) \
    template <typename T> void set_##field(T) {}
struct MemAllocatorStats {
    GPUSIM_STUB_IGNORED(num_allocs)
    GPUSIM_STUB_IGNORED(bytes_in_use)
    GPUSIM_STUB_IGNORED(peak_bytes_in_use)
    GPUSIM_STUB_IGNORED(largest_alloc_size)
    GPUSIM_STUB_IGNORED(fragmentation_metric)
};
struct BinSummary {
    GPUSIM_STUB_IGNORED(bin)
    GPUSIM_STUB_IGNORED(total_bytes_in_use)
    GPUSIM_STUB_IGNORED(total_bytes_in_bin)
    GPUSIM_STUB_IGNORED(total_chunks_in_use)
    GPUSIM_STUB_IGNORED(total_chunks_in_bin)
};
struct MemChunk {
    bool in_use_ = false;
    uint64_t address_ = 0, size_ = 0;
    void set_in_use(bool v) { in_use_ = v; }
    void set_address(uint64_t v) { address_ = v; }
    void set_size(uint64_t v) { size_ = v; }
    bool in_use() const { return in_use_; }
    uint64_t address() const { return address_; }
    uint64_t size() const { return size_; }
    GPUSIM_STUB_IGNORED(requested_size)
    GPUSIM_STUB_IGNORED(bin)
    GPUSIM_STUB_IGNORED(op_name)
    GPUSIM_STUB_IGNORED(freed_at_count)
    GPUSIM_STUB_IGNORED(action_count)
    GPUSIM_STUB_IGNORED(step_id)
};
struct SnapShot {
    GPUSIM_STUB_IGNORED(action_count)
    GPUSIM_STUB_IGNORED(size)
};
class MemoryDump {
  public:
    void set_allocator_name(const std::string &) {}
    MemAllocatorStats *mutable_stats() { return &stats_; }
    BinSummary *add_bin_summary() { return &bin_; }
    MemChunk *add_chunk()
    {
        chunks_.emplace_back();
        return &chunks_.back();
    }
    const std::deque<MemChunk> &chunk() const { return chunks_; }
    SnapShot *add_snap_shot() { return &snap_; }
    std::string SerializeAsString() const { return ""; }

  private:
    MemAllocatorStats stats_;
    BinSummary bin_;
    std::deque<MemChunk> chunks_;
    SnapShot snap_;
};
} // namespace tensorflow

#include "gpusim_stub_allocator.h"

#endif
