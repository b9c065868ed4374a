// mock_cuda.cpp — the CUDA runtime and driver calls c10's caching allocator makes,
// served on the CPU (validate/upstream/torch/README.md). Device memory is the host's
// device model (mock_cuda_host.h): cudaMalloc takes a fresh address range and fails
// when the device is full, cuMemCreate checks capacity page by page. No memory is
// ever touched through the returned pointers. Streams and events are opaque heap
// objects; an event recorded under a tag stays not ready until the replay
// completes the tag or someone synchronizes on it. A stream may be capturing
// (cudaStreamBeginCapture .. cudaStreamEndCapture): the capture queries report it
// with its capture id, and an event recorded on it is a captured event, which
// cudaEventQuery and cudaEventSynchronize refuse as CUDA does.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "mock_cuda_host.h"

struct CUstream_st {
    int priority;
};
struct CUevent_st {
    uint64_t tag;
    bool recorded;
    bool captured; // recorded on a capturing stream
};
struct CUgraph_st {
    unsigned long long capture_id;
};

namespace {

struct MockState {
    mock_cuda_device dev{};
    bool have_dev = false;
    std::map<uint64_t, uint64_t> mallocs;                 // cudaMalloc: address -> bytes
    std::unordered_map<uint64_t, uint64_t> handles;       // cuMemCreate handle -> bytes
    uint64_t next_handle = 1;
    std::set<uint64_t> completed;                         // tags whose work has finished
    uint64_t record_tag = 0;
    std::map<cudaStream_t, std::deque<uint64_t>> queued_tags; // tags of records to come, per stream
    std::vector<std::unique_ptr<CUstream_st>> streams;
    std::vector<std::unique_ptr<CUevent_st>> events;      // kept until reset: c10 pools them
    std::map<cudaStream_t, CUgraph_st *> captures;        // capturing streams and their graphs
    std::vector<std::unique_ptr<CUgraph_st>> graphs;      // every capture's graph
    unsigned long long next_capture_id = 1;
    cudaError_t last_error = cudaSuccess;
    int device = 0;
    mock_cuda_counts counts{};
};

MockState &state()
{
    static MockState s;
    return s;
}

cudaError_t fail(cudaError_t e)
{
    state().last_error = e;
    return e;
}

// the capture stream is in: its status and id (0 when none), and its graph
CUgraph_st *capture_of(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id)
{
    auto it = state().captures.find(stream);
    CUgraph_st *g = it == state().captures.end() ? nullptr : it->second;
    *status = g != nullptr ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id != nullptr)
        *id = g != nullptr ? g->capture_id : 0;
    return g;
}

uint64_t total_bytes()
{
    return state().have_dev ? state().dev.total_bytes : 0;
}

} // namespace

extern "C" {

void mock_cuda_reset(const mock_cuda_device *dev)
{
    MockState &s = state();
    s.mallocs.clear();
    s.handles.clear();
    s.next_handle = 1;
    s.completed.clear();
    s.record_tag = 0;
    s.queued_tags.clear();
    s.last_error = cudaSuccess;
    s.counts = mock_cuda_counts{};
    s.captures.clear();
    s.have_dev = dev != nullptr;
    if (dev != nullptr)
        s.dev = *dev;
    // streams and events stay allocated: c10's stream pool and event pool are
    // process-wide and may still name them
}

void mock_cuda_set_record_tag(uint64_t tag)
{
    state().record_tag = tag;
}

void mock_cuda_queue_record_tag(const void *stream, uint64_t tag)
{
    state().queued_tags[static_cast<cudaStream_t>(const_cast<void *>(stream))].push_back(tag);
}

void mock_cuda_complete(uint64_t tag)
{
    if (tag != 0)
        state().completed.insert(tag);
}

bool mock_cuda_completed(uint64_t tag)
{
    return tag == 0 || state().completed.count(tag) != 0;
}

mock_cuda_counts mock_cuda_get_counts(void)
{
    return state().counts;
}

uint64_t mock_cuda_process_bytes(void)
{
    const MockState &s = state();
    return s.have_dev ? s.dev.process_bytes(s.dev.ctx) : 0;
}

/* ==== Errors and versions ==== */

const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
    }
}

const char *cudaGetErrorName(cudaError_t error)
{
    return cudaGetErrorString(error);
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = state().last_error;
    state().last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return state().last_error;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* ==== Device ==== */

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    *device = state().device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    if (device != 0)
        return fail(cudaErrorInvalidDevice);
    state().device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    (void)device;
    std::memset(prop, 0, sizeof *prop);
    std::strcpy(prop->name, "gpusim mock");
    prop->totalGlobalMem = total_bytes();
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 132;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    *value = attr == cudaDevAttrComputeCapabilityMajor ? 9 : 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    MockState &s = state();
    s.counts.device_syncs++;
    for (auto &e : s.events)
        if (e->recorded)
            mock_cuda_complete(e->tag);
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int, int)
{
    *can = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *, int)
{
    return fail(cudaErrorNotSupported);
}

/* ==== Memory ==== */

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    MockState &s = state();
    s.counts.malloc_calls++;
    uint64_t addr = 0;
    if (!s.have_dev || !s.dev.alloc(s.dev.ctx, size, &addr)) {
        s.counts.malloc_failures++;
        *ptr = nullptr;
        return fail(cudaErrorMemoryAllocation);
    }
    s.mallocs[addr] = size;
    *ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(addr));
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    MockState &s = state();
    if (ptr == nullptr)
        return cudaSuccess;
    auto it = s.mallocs.find(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr)));
    if (it == s.mallocs.end())
        return fail(cudaErrorInvalidValue);
    s.counts.free_calls++;
    s.dev.release(s.dev.ctx, it->second);
    s.mallocs.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMallocManaged(void **ptr, size_t, unsigned int)
{
    *ptr = nullptr;
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemAdvise(const void *, size_t, enum cudaMemoryAdvise, int)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    MockState &s = state();
    *total = total_bytes();
    *free = s.have_dev ? s.dev.free_bytes(s.dev.ctx) : 0;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *, const void *, size_t, enum cudaMemcpyKind)
{
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *, int, const void *, int, size_t, cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **ptr, size_t, cudaStream_t)
{
    *ptr = nullptr;
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaFreeAsync(void *, cudaStream_t)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void *)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void *)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t, const struct cudaMemAccessDesc *, size_t)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *, void *)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaIpcOpenMemHandle(void **, cudaIpcMemHandle_t, unsigned int)
{
    return fail(cudaErrorNotSupported);
}

cudaError_t cudaIpcCloseMemHandle(void *)
{
    return fail(cudaErrorNotSupported);
}

/* ==== Streams ==== */

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int, int priority)
{
    state().streams.push_back(std::make_unique<CUstream_st>(CUstream_st{priority}));
    *stream = state().streams.back().get();
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
    *priority = 0;
    for (auto &s : state().streams)
        if (s.get() == stream)
            *priority = s->priority;
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int)
{
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    capture_of(stream, status, nullptr);
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode)
{
    MockState &s = state();
    if (s.captures.count(stream) != 0)
        return fail(cudaErrorIllegalState);
    s.graphs.push_back(std::make_unique<CUgraph_st>(CUgraph_st{s.next_capture_id++}));
    s.captures[stream] = s.graphs.back().get();
    s.counts.captures++;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    MockState &s = state();
    auto it = s.captures.find(stream);
    if (it == s.captures.end()) {
        *graph = nullptr;
        return fail(cudaErrorIllegalState);
    }
    *graph = it->second;
    s.captures.erase(it);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t)
{
    return cudaSuccess; // the graph stays allocated until the process ends
}

#if CUDART_VERSION >= 13000
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                     cudaGraph_t *graph, const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                     size_t *n_deps)
{
    CUgraph_st *g = capture_of(stream, status, id);
    if (graph != nullptr)
        *graph = g;
    if (deps != nullptr)
        *deps = nullptr;
    if (edges != nullptr)
        *edges = nullptr;
    if (n_deps != nullptr)
        *n_deps = 0;
    return cudaSuccess;
}
#elif defined(GPUSIM_WHEEL_CUDA12)
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                        unsigned long long *id, cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                        size_t *n_deps)
{
    CUgraph_st *g = capture_of(stream, status, id);
    if (graph != nullptr)
        *graph = g;
    if (deps != nullptr)
        *deps = nullptr;
    if (n_deps != nullptr)
        *n_deps = 0;
    return cudaSuccess;
}
#else
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id)
{
    capture_of(stream, status, id);
    return cudaSuccess;
}
#endif

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *)
{
    return cudaSuccess;
}

/* ==== Events ==== */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int)
{
    state().events.push_back(std::make_unique<CUevent_st>(CUevent_st{0, false, false}));
    *event = state().events.back().get();
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t)
{
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    MockState &s = state();
    s.counts.event_records++;
    event->tag = s.record_tag;
    auto q = s.queued_tags.find(stream);
    if (event->tag == 0 && q != s.queued_tags.end() && !q->second.empty()) {
        event->tag = q->second.front(); // a record the replay announced for this stream
        q->second.pop_front();
    }
    event->recorded = true;
    event->captured = s.captures.count(stream) != 0;
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    if (event->captured)
        return fail(cudaErrorCapturedEvent); // an event recorded during capture is a graph node
    if (!event->recorded || mock_cuda_completed(event->tag))
        return cudaSuccess;
    return cudaErrorNotReady; // not an error: no last-error update, as the runtime
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    state().counts.event_syncs++;
    if (event->captured)
        return fail(cudaErrorCapturedEvent);
    if (event->recorded)
        mock_cuda_complete(event->tag);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t)
{
    *ms = 0.0f;
    return cudaSuccess;
}

/* ==== Driver API (reached through the mock DriverAPI) ==== */

CUresult cuGetErrorString(CUresult error, const char **str)
{
    *str = error == CUDA_SUCCESS ? "no error" : error == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "unknown error";
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute, CUdevice)
{
    *pi = 1;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t, CUdeviceptr, unsigned long long)
{
    MockState &s = state();
    if (!s.have_dev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = s.dev.reserve_va(s.dev.ctx, size);
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr, size_t)
{
    return CUDA_SUCCESS; // the fresh-address policy never reuses a range
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *,
                     unsigned long long)
{
    MockState &s = state();
    s.counts.mem_create_calls++;
    if (!s.have_dev || !s.dev.map(s.dev.ctx, size)) {
        s.counts.mem_create_failures++;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *handle = s.next_handle++;
    s.handles[*handle] = size;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    MockState &s = state();
    auto it = s.handles.find(handle);
    if (it == s.handles.end())
        return CUDA_ERROR_INVALID_VALUE;
    s.counts.mem_release_calls++;
    s.dev.release(s.dev.ctx, it->second);
    s.handles.erase(it);
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)
{
    return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr, size_t)
{
    return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t)
{
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *,
                                       CUmemAllocationGranularity_flags)
{
    *granularity = (size_t)2 << 20;
    return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                      unsigned long long)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemsetD32Async(CUdeviceptr, unsigned int, size_t, CUstream)
{
    return CUDA_SUCCESS;
}

CUresult cuStreamWriteValue32(CUstream, CUdeviceptr, unsigned int, unsigned int)
{
    return CUDA_SUCCESS;
}

} // extern "C"
