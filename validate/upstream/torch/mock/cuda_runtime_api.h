/* Mock CUDA runtime API for building PyTorch's c10 CUDA allocator on the CPU
 * (validate/upstream/torch/README.md). Only the names c10/cuda uses are declared; enum
 * values are the CUDA 12 headers' values, so error numbers in messages match.
 * The implementation is mock_cuda.cpp: memory comes from a host-side device model
 * (mock_cuda_host.h), events complete when the replay says so. */
#ifndef GPUSIM_MOCK_CUDA_RUNTIME_API_H
#define GPUSIM_MOCK_CUDA_RUNTIME_API_H

#include <stddef.h>

/* CUDA 12.1 unless the build says otherwise: the wheel check (wheel/) builds the
 * mock as the wheel's libcudart.so.13 (CUDA 13.0) or libcudart.so.12 (then with
 * GPUSIM_WHEEL_CUDA12 and the wheel's 12.x), with that release's struct layouts */
#ifndef CUDART_VERSION
#define CUDART_VERSION 12010
#endif
/* the names a compiled allocator asks of the runtime beyond a source build's:
 * driver entry points, the graph calls, the real cudaDeviceProp */
#if CUDART_VERSION >= 13000 || defined(GPUSIM_WHEEL_CUDA12)
#define GPUSIM_WHEEL_RUNTIME 1
#endif
#ifdef GPUSIM_WHEEL_CUDA12
/* CUDA 12's header maps the name to the _v2 symbol, which fills the 12.0 layout */
#define cudaGetDeviceProperties cudaGetDeviceProperties_v2
#endif
#define __host__
#define __device__
#define CUDART_CB

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalState = 401,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorCapturedEvent = 907,
    cudaErrorPeerAccessAlreadyEnabled = 704,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
} cudaError;
typedef enum cudaError cudaError_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;

#define CUDA_IPC_HANDLE_SIZE 64
typedef struct cudaIpcMemHandle_st {
    char reserved[CUDA_IPC_HANDLE_SIZE];
} cudaIpcMemHandle_t;
typedef struct cudaIpcEventHandle_st {
    char reserved[CUDA_IPC_HANDLE_SIZE];
} cudaIpcEventHandle_t;

#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaIpcMemLazyEnablePeerAccess 0x01
#define cudaCpuDeviceId ((int)-1)
#define cudaMemAttachGlobal 0x01

typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2
} cudaStreamCaptureStatus;

typedef enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
} cudaStreamCaptureMode;

typedef enum cudaDeviceAttr {
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76
} cudaDeviceAttr;

typedef enum cudaMemoryAdvise {
    cudaMemAdviseSetPreferredLocation = 3,
    cudaMemAdviseSetAccessedBy = 5
} cudaMemoryAdvise;

typedef enum cudaMemPoolAttr {
    cudaMemPoolReuseFollowEventDependencies = 0x1,
    cudaMemPoolReuseAllowOpportunistic = 0x2,
    cudaMemPoolReuseAllowInternalDependencies = 0x3,
    cudaMemPoolAttrReleaseThreshold = 0x4,
    cudaMemPoolAttrReservedMemCurrent = 0x5,
    cudaMemPoolAttrReservedMemHigh = 0x6,
    cudaMemPoolAttrUsedMemCurrent = 0x7,
    cudaMemPoolAttrUsedMemHigh = 0x8
} cudaMemPoolAttr;

typedef enum cudaMemLocationType {
    cudaMemLocationTypeInvalid = 0,
    cudaMemLocationTypeDevice = 1
} cudaMemLocationType;

typedef enum cudaMemAccessFlags {
    cudaMemAccessFlagsProtNone = 0,
    cudaMemAccessFlagsProtRead = 1,
    cudaMemAccessFlagsProtReadWrite = 3
} cudaMemAccessFlags;

struct cudaMemLocation {
    enum cudaMemLocationType type;
    int id;
};
struct cudaMemAccessDesc {
    struct cudaMemLocation location;
    enum cudaMemAccessFlags flags;
};
typedef struct cudaMemAccessDesc cudaMemAccessDesc;

#if CUDART_VERSION >= 13000
/* CUDA 13.0's layout up to multiProcessorCount (a compiled libc10_cuda.so reads
 * totalGlobalMem at offset 288), the rest of its 1008 bytes left opaque. */
struct cudaDeviceProp {
    char name[256];
    struct {
        char bytes[16];
    } uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int multiProcessorCount;
    char gpusim_rest[620];
};
#elif defined(GPUSIM_WHEEL_CUDA12)
/* CUDA 12's layout up to multiProcessorCount (clockRate and deviceOverlap, gone in
 * 13, move it to 388; totalGlobalMem stays at 288), the rest of its 1032 bytes
 * (12.0 to 12.9; what cudaGetDeviceProperties_v2 fills) left opaque. */
struct cudaDeviceProp {
    char name[256];
    struct {
        char bytes[16];
    } uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    char gpusim_rest[640];
};
#else
/* The fields c10 reads; the rest of the real struct is left out. */
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    int major;
    int minor;
    int multiProcessorCount;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
};
#endif
typedef struct cudaDeviceProp cudaDeviceProp;

const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaDriverGetVersion(int *driverVersion);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device);

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice, int device);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep);
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList, size_t count);

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr);
cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void *devPtr);

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus);
/* Stream capture (CUDAGraph::capture_begin/capture_end; the mock keeps each stream's
 * capture and its id, so that c10's capture queries see what the replay captures) */
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
#ifdef GPUSIM_WHEEL_RUNTIME
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUuserObject_st *cudaUserObject_t;
typedef struct cudaGraphEdgeData_st {
    unsigned char from_port, to_port, type, reserved[5];
} cudaGraphEdgeData;
typedef void (*cudaHostFn_t)(void *userData);
enum cudaUserObjectFlags { cudaUserObjectNoDestructorSync = 0x1 };
enum cudaUserObjectRetainFlags { cudaGraphUserObjectMove = 0x1 };
/* CUDA's headers give the trailing arguments C++ defaults (__dv(0)): 2.13's
 * c10/cuda/CUDAGraphsC10Utils.h calls it with three */
#ifdef __cplusplus
#define GPUSIM_DV(v) = v
#else
#define GPUSIM_DV(v)
#endif
#if CUDART_VERSION >= 13000
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out GPUSIM_DV(0), cudaGraph_t *graph_out GPUSIM_DV(0),
                                     const cudaGraphNode_t **dependencies_out GPUSIM_DV(0),
                                     const cudaGraphEdgeData **edgeData_out GPUSIM_DV(0),
                                     size_t *numDependencies_out GPUSIM_DV(0));
#else
/* CUDA 12: the name is a macro for the _v2 symbol, six arguments (no edge data) */
#define cudaStreamGetCaptureInfo cudaStreamGetCaptureInfo_v2
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                        unsigned long long *id_out GPUSIM_DV(0), cudaGraph_t *graph_out GPUSIM_DV(0),
                                        const cudaGraphNode_t **dependencies_out GPUSIM_DV(0),
                                        size_t *numDependencies_out GPUSIM_DV(0));
#endif
cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
                                 unsigned int initialRefcount, unsigned int flags);
cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count);
cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                      unsigned int flags);
#if CUDART_VERSION >= 13000
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData, size_t *pNumDependencies);
#else
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                         size_t *pNumDependencies);
#endif
typedef enum cudaGraphMemAttributeType {
    cudaGraphMemAttrUsedMemCurrent = 0x0,
    cudaGraphMemAttrUsedMemHigh = 0x1,
    cudaGraphMemAttrReservedMemCurrent = 0x2,
    cudaGraphMemAttrReservedMemHigh = 0x3
} cudaGraphMemAttributeType;
cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value);
cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value);
#define cudaEnableDefault 0x0
typedef enum cudaDriverEntryPointQueryResult {
    cudaDriverEntryPointSuccess = 0,
    cudaDriverEntryPointSymbolNotFound = 1,
    cudaDriverEntryPointVersionNotSufficent = 2
} cudaDriverEntryPointQueryResult;
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus);
#if CUDART_VERSION < 13000
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *driverStatus GPUSIM_DV(0));
#endif
#else
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out);
#endif
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

#ifdef __cplusplus
}
#endif

#endif
