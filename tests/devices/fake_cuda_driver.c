/* A host-memory stand-in for libcuda; see fake_cuda_driver.h.
 *
 * The entry points have exactly the types cuda.h gives the driver's, spelt
 * without including it: CUresult is enum cudaError_enum (declared here with
 * only the codes the fake returns), CUdevice is int, CUdeviceptr is unsigned
 * long long, and CUcontext points to struct CUctx_st, completed here. The
 * same types, not merely the same ABI: clang's -fsanitize=function checks
 * every call through a function pointer against the callee's type, by
 * name, and the backend calls these through pointers typed by cuda.h. */
#include "fake_cuda_driver.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum cudaError_enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialised = 3,
  kNoDevice = 100,
  kInvalidDevice = 101,
  kInvalidImage = 200,
  kInvalidPtx = 218,
  kInvalidContext = 201,
  kInvalidHandle = 400,
  kNotFound = 500,
  kIllegalAddress = 700,
  kUnknown = 999,
} FakeResult;
typedef unsigned long long FakeDevicePointer;
typedef enum CUdevice_attribute_enum {
  kMultiprocessorCount = 16,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
} FakeDeviceAttribute;

/* Streams run their work late, as a GPU does: asynchronous copies, launches
 * and event records are queued in order and carried out only when the host
 * waits (cuStreamSynchronize, cuEventSynchronize) or the queue fills. A caller that reuses a
 * staging buffer before its copy has run, or reads a copy's destination before waiting, sees the
 * wrong bytes. */
enum FakeOperationKind { kCopyOperation, kEventOperation };
struct FakeOperation {
  enum FakeOperationKind kind;
  void* destination;
  const void* source;
  size_t bytes;
  struct CUevent_st* event;
};
enum { kMaximumQueuedOperations = 256 };
struct CUstream_st {
  struct FakeOperation queue[kMaximumQueuedOperations];
  size_t queued;
  int device;
};
struct CUevent_st {
  int pending; /* recorded and not yet reached by its stream */
};

enum { kMaximumDevices = 8, kMaximumAllocations = 4096, kMaximumContextDepth = 16 };

struct CUctx_st {
  int device;
  int references;
};

/* A loaded module: a copy of its PTX text. Its one function is the module
 * itself, seen as a struct CUfunc_st (see FakeModuleGetFunction). */
struct CUmod_st {
  char* ptx;
  int live;
};
struct CUfunc_st {
  struct CUmod_st module;
};
enum { kMaximumModules = 8192 };
static struct CUfunc_st modules[kMaximumModules];
static size_t module_count;
static size_t launch_count;
static unsigned last_grid_x, last_block_x;

struct Allocation {
  FakeDevicePointer address;
  size_t bytes;
  int device;
};

static pthread_mutex_t state_mutex = PTHREAD_MUTEX_INITIALIZER;
static int device_count;
static size_t memory_bytes_per_device;
static FakeResult initialise_result;
static _Atomic int initialised;
static struct CUctx_st primary_contexts[kMaximumDevices];
static size_t bytes_in_use[kMaximumDevices];
static struct Allocation allocations[kMaximumAllocations];
static size_t allocation_count;
static size_t refused_allocations;
static char failing_symbol[64];
static FakeResult failing_result;

static size_t live_streams;
static size_t live_events;
static size_t live_pinned_blocks;
static size_t stream_operations;
static size_t pinned_copies;
enum { kMaximumPinnedBlocks = 64 };
static void* pinned_blocks[kMaximumPinnedBlocks];
enum { kMaximumStreams = 64 };
static struct CUstream_st* streams[kMaximumStreams];

static _Thread_local struct CUctx_st* context_stack[kMaximumContextDepth];
static _Thread_local int context_depth;

/* Returns the injected failure for `symbol_name` once, or kSuccess. */
static FakeResult TakeInjectedFailure(const char* symbol_name) {
  FakeResult result = kSuccess;
  pthread_mutex_lock(&state_mutex);
  if (strcmp(failing_symbol, symbol_name) == 0) {
    result = failing_result;
    failing_symbol[0] = '\0';
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

static struct CUctx_st* CurrentContext(void) {
  return context_depth == 0 ? NULL : context_stack[context_depth - 1];
}

/* The device of the current context, or -1 when none is usable. */
static int CurrentDevice(void) {
  struct CUctx_st* context = CurrentContext();
  if (context == NULL || context->references == 0) return -1;
  return context->device;
}

/* Whether [address, address + bytes) lies in one live allocation of
 * `device`. Requires state_mutex held. */
static int RangeIsAllocatedLocked(FakeDevicePointer address, size_t bytes, int device) {
  for (size_t i = 0; i < allocation_count; ++i) {
    const struct Allocation* allocation = &allocations[i];
    if (allocation->device == device && address >= allocation->address &&
        bytes <= allocation->bytes && address - allocation->address <= allocation->bytes - bytes) {
      return 1;
    }
  }
  return 0;
}

/* Checks the preconditions of a copy: initialised, a current context, and
 * the given device ranges allocated on its device (a zero pointer skips a
 * range, for the host side of a copy). */
static FakeResult CheckCopy(FakeDevicePointer first, FakeDevicePointer second, size_t bytes) {
  if (!initialised) return kNotInitialised;
  const int device = CurrentDevice();
  if (device < 0) return kInvalidContext;
  pthread_mutex_lock(&state_mutex);
  const int valid = (first == 0 || RangeIsAllocatedLocked(first, bytes, device)) &&
                    (second == 0 || RangeIsAllocatedLocked(second, bytes, device));
  pthread_mutex_unlock(&state_mutex);
  return valid ? kSuccess : kIllegalAddress;
}

static FakeResult FakeInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  const FakeResult injected = TakeInjectedFailure("cuInit");
  if (injected != kSuccess) return injected;
  if (initialise_result == kSuccess) initialised = 1;
  return initialise_result;
}

static FakeResult FakeDriverGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}

/* What cuGetErrorName and cuGetErrorString answer for each code the fake
 * knows, worded as the real driver words them. */
struct ResultText {
  FakeResult result;
  const char* name;
  const char* description;
};

static const struct ResultText kResultTexts[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kNotInitialised, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kInvalidDevice, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {kIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {kInvalidPtx, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {kUnknown, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* The entry of kResultTexts for `result`, or NULL for a code the fake does
 * not know. */
static const struct ResultText* FindResultText(FakeResult result) {
  for (size_t i = 0; i < sizeof(kResultTexts) / sizeof(kResultTexts[0]); ++i) {
    if (kResultTexts[i].result == result) return &kResultTexts[i];
  }
  return NULL;
}

static FakeResult FakeGetErrorName(FakeResult result, const char** name) {
  const struct ResultText* text = FindResultText(result);
  *name = text == NULL ? NULL : text->name;
  return text == NULL ? kInvalidValue : kSuccess;
}

static FakeResult FakeGetErrorString(FakeResult result, const char** description) {
  const struct ResultText* text = FindResultText(result);
  *description = text == NULL ? NULL : text->description;
  return text == NULL ? kInvalidValue : kSuccess;
}

static FakeResult FakeDeviceGetCount(int* count) {
  if (!initialised) return kNotInitialised;
  *count = device_count;
  return kSuccess;
}

static FakeResult FakeDeviceGet(int* device, int ordinal) {
  if (!initialised) return kNotInitialised;
  if (ordinal < 0 || ordinal >= device_count) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

static FakeResult FakeDeviceGetName(char* name, int length, int device) {
  if (!initialised) return kNotInitialised;
  if (device < 0 || device >= device_count) return kInvalidDevice;
  if (name == NULL || length <= 0) return kInvalidValue;
  strncpy(name, "Fake CUDA Device", (size_t)length);
  name[length - 1] = '\0';
  return kSuccess;
}

static FakeResult FakeDeviceTotalMemory(size_t* bytes, int device) {
  if (!initialised) return kNotInitialised;
  if (device < 0 || device >= device_count) return kInvalidDevice;
  *bytes = memory_bytes_per_device;
  return kSuccess;
}

static FakeResult FakePrimaryContextRetain(struct CUctx_st** context, int device) {
  if (!initialised) return kNotInitialised;
  if (device < 0 || device >= device_count) return kInvalidDevice;
  pthread_mutex_lock(&state_mutex);
  primary_contexts[device].device = device;
  ++primary_contexts[device].references;
  pthread_mutex_unlock(&state_mutex);
  *context = &primary_contexts[device];
  return kSuccess;
}

static FakeResult FakePrimaryContextRelease(int device) {
  if (!initialised) return kNotInitialised;
  if (device < 0 || device >= device_count) return kInvalidDevice;
  FakeResult result = kSuccess;
  pthread_mutex_lock(&state_mutex);
  if (primary_contexts[device].references == 0) {
    result = kInvalidContext;
  } else {
    --primary_contexts[device].references;
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

static FakeResult FakeContextSetCurrent(struct CUctx_st* context) {
  if (!initialised) return kNotInitialised;
  if (context == NULL) {
    if (context_depth > 0) --context_depth;
    return kSuccess;
  }
  if (context_depth == 0) context_depth = 1;
  context_stack[context_depth - 1] = context;
  return kSuccess;
}

static FakeResult FakeContextPushCurrent(struct CUctx_st* context) {
  if (!initialised) return kNotInitialised;
  if (context == NULL || context->references == 0) return kInvalidContext;
  if (context_depth == kMaximumContextDepth) return kUnknown;
  context_stack[context_depth++] = context;
  return kSuccess;
}

static FakeResult FakeContextPopCurrent(struct CUctx_st** context) {
  if (!initialised) return kNotInitialised;
  if (context_depth == 0) return kInvalidContext;
  struct CUctx_st* popped = context_stack[--context_depth];
  if (context != NULL) *context = popped;
  return kSuccess;
}

static FakeResult FakeMemoryGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (!initialised) return kNotInitialised;
  const int device = CurrentDevice();
  if (device < 0) return kInvalidContext;
  pthread_mutex_lock(&state_mutex);
  *free_bytes = memory_bytes_per_device - bytes_in_use[device];
  *total_bytes = memory_bytes_per_device;
  pthread_mutex_unlock(&state_mutex);
  return kSuccess;
}

static FakeResult FakeMemoryAllocate(FakeDevicePointer* pointer, size_t bytes) {
  if (!initialised) return kNotInitialised;
  const int device = CurrentDevice();
  if (device < 0) return kInvalidContext;
  if (bytes == 0) return kInvalidValue;
  const FakeResult injected = TakeInjectedFailure("cuMemAlloc_v2");
  if (injected != kSuccess) return injected;
  pthread_mutex_lock(&state_mutex);
  FakeResult result = kSuccess;
  if (bytes > memory_bytes_per_device - bytes_in_use[device] ||
      allocation_count == kMaximumAllocations) {
    ++refused_allocations;
    result = kOutOfMemory;
  } else {
    /* The real driver aligns allocations to at least 256 bytes. */
    void* memory = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (memory == NULL) {
      result = kOutOfMemory;
    } else {
      *pointer = (FakeDevicePointer)(uintptr_t)memory;
      allocations[allocation_count++] = (struct Allocation){*pointer, bytes, device};
      bytes_in_use[device] += bytes;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

static FakeResult FakeMemoryFree(FakeDevicePointer pointer) {
  if (!initialised) return kNotInitialised;
  const int device = CurrentDevice();
  if (device < 0) return kInvalidContext;
  FakeResult result = kInvalidValue;
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < allocation_count; ++i) {
    if (allocations[i].address == pointer && allocations[i].device == device) {
      free((void*)(uintptr_t)pointer);
      bytes_in_use[device] -= allocations[i].bytes;
      allocations[i] = allocations[--allocation_count];
      result = kSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

/* Carries out `stream`'s first `count` queued operations. Requires
 * state_mutex held. */
static void RunQueuedLocked(struct CUstream_st* stream, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    struct FakeOperation* operation = &stream->queue[i];
    if (operation->kind == kCopyOperation) {
      memcpy(operation->destination, operation->source, operation->bytes);
    } else {
      operation->event->pending = 0;
    }
  }
  memmove(stream->queue, stream->queue + count,
          (stream->queued - count) * sizeof(stream->queue[0]));
  stream->queued -= count;
}

/* Queues `operation` on `stream`, first running the queue when it is full.
 * Requires state_mutex held. */
static void EnqueueLocked(struct CUstream_st* stream, struct FakeOperation operation) {
  if (stream->queued == kMaximumQueuedOperations) RunQueuedLocked(stream, stream->queued);
  stream->queue[stream->queued++] = operation;
  ++stream_operations;
}

/* Whether `stream` is one of the live streams. Requires state_mutex held. */
static int StreamIsLiveLocked(const struct CUstream_st* stream) {
  for (size_t i = 0; i < kMaximumStreams; ++i) {
    if (streams[i] == stream && stream != NULL) return 1;
  }
  return 0;
}

/* Whether `pointer` lies in a live page-locked block (whose size is stored
 * just before it). Requires state_mutex held. */
static int IsPinnedLocked(const void* pointer) {
  for (size_t i = 0; i < kMaximumPinnedBlocks; ++i) {
    const char* block = (const char*)pinned_blocks[i];
    if (block == NULL) continue;
    const size_t size = ((const size_t*)block)[-1];
    if ((const char*)pointer >= block && (const char*)pointer < block + size) return 1;
  }
  return 0;
}

static FakeResult FakeStreamCreate(struct CUstream_st** stream, unsigned int flags) {
  (void)flags;
  if (!initialised) return kNotInitialised;
  const FakeResult injected = TakeInjectedFailure("cuStreamCreate");
  if (injected != kSuccess) return injected;
  const int device = CurrentDevice();
  if (device < 0) return kInvalidContext;
  struct CUstream_st* created = calloc(1, sizeof(*created));
  if (created == NULL) return kOutOfMemory;
  created->device = device;
  pthread_mutex_lock(&state_mutex);
  FakeResult result = kOutOfMemory;
  for (size_t i = 0; i < kMaximumStreams; ++i) {
    if (streams[i] == NULL) {
      streams[i] = created;
      ++live_streams;
      result = kSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  if (result != kSuccess) {
    free(created);
    return result;
  }
  *stream = created;
  return kSuccess;
}

/* Like the real driver, destroying a stream lets its queued work finish. */
static FakeResult FakeStreamDestroy(struct CUstream_st* stream) {
  if (!initialised) return kNotInitialised;
  pthread_mutex_lock(&state_mutex);
  FakeResult result = kInvalidHandle;
  for (size_t i = 0; i < kMaximumStreams; ++i) {
    if (streams[i] == stream && stream != NULL) {
      RunQueuedLocked(stream, stream->queued);
      streams[i] = NULL;
      --live_streams;
      free(stream);
      result = kSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

static FakeResult FakeStreamSynchronize(struct CUstream_st* stream) {
  if (!initialised) return kNotInitialised;
  const FakeResult injected = TakeInjectedFailure("cuStreamSynchronize");
  if (injected != kSuccess) return injected;
  if (CurrentDevice() < 0) return kInvalidContext;
  pthread_mutex_lock(&state_mutex);
  const int live = StreamIsLiveLocked(stream);
  if (live) RunQueuedLocked(stream, stream->queued);
  pthread_mutex_unlock(&state_mutex);
  return live ? kSuccess : kInvalidHandle;
}

static FakeResult FakeEventCreate(struct CUevent_st** event, unsigned int flags) {
  (void)flags;
  if (!initialised) return kNotInitialised;
  if (CurrentDevice() < 0) return kInvalidContext;
  struct CUevent_st* created = calloc(1, sizeof(*created));
  if (created == NULL) return kOutOfMemory;
  pthread_mutex_lock(&state_mutex);
  ++live_events;
  pthread_mutex_unlock(&state_mutex);
  *event = created;
  return kSuccess;
}

static FakeResult FakeEventDestroy(struct CUevent_st* event) {
  if (!initialised) return kNotInitialised;
  if (event == NULL) return kInvalidHandle;
  pthread_mutex_lock(&state_mutex);
  /* A pending record still in a queue would later write the freed event:
   * run every queue that could hold it first. */
  for (size_t i = 0; i < kMaximumStreams; ++i) {
    if (streams[i] != NULL) RunQueuedLocked(streams[i], streams[i]->queued);
  }
  --live_events;
  pthread_mutex_unlock(&state_mutex);
  free(event);
  return kSuccess;
}

static FakeResult FakeEventRecord(struct CUevent_st* event, struct CUstream_st* stream) {
  if (!initialised) return kNotInitialised;
  if (CurrentDevice() < 0) return kInvalidContext;
  if (event == NULL) return kInvalidHandle;
  pthread_mutex_lock(&state_mutex);
  const int live = StreamIsLiveLocked(stream);
  if (live) {
    event->pending = 1;
    EnqueueLocked(stream, (struct FakeOperation){kEventOperation, NULL, NULL, 0, event});
  }
  pthread_mutex_unlock(&state_mutex);
  return live ? kSuccess : kInvalidHandle;
}

/* Runs the queue holding `event`'s record up to it. */
static FakeResult FakeEventSynchronize(struct CUevent_st* event) {
  if (!initialised) return kNotInitialised;
  if (event == NULL) return kInvalidHandle;
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < kMaximumStreams && event->pending; ++i) {
    struct CUstream_st* stream = streams[i];
    if (stream == NULL) continue;
    for (size_t position = 0; position < stream->queued; ++position) {
      if (stream->queue[position].event == event) {
        RunQueuedLocked(stream, position + 1);
        break;
      }
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return kSuccess;
}

/* Page-locked host memory: a block from malloc with its size before it. */
static FakeResult FakeMemoryHostAllocate(void** pointer, size_t bytes, unsigned int flags) {
  (void)flags;
  if (!initialised) return kNotInitialised;
  if (CurrentDevice() < 0) return kInvalidContext;
  const FakeResult injected = TakeInjectedFailure("cuMemHostAlloc");
  if (injected != kSuccess) return injected;
  size_t* block = malloc(bytes + sizeof(size_t));
  if (block == NULL) return kOutOfMemory;
  block[0] = bytes;
  pthread_mutex_lock(&state_mutex);
  FakeResult result = kOutOfMemory;
  for (size_t i = 0; i < kMaximumPinnedBlocks; ++i) {
    if (pinned_blocks[i] == NULL) {
      pinned_blocks[i] = block + 1;
      ++live_pinned_blocks;
      result = kSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  if (result != kSuccess) {
    free(block);
    return result;
  }
  *pointer = block + 1;
  return kSuccess;
}

static FakeResult FakeMemoryFreeHost(void* pointer) {
  if (!initialised) return kNotInitialised;
  pthread_mutex_lock(&state_mutex);
  FakeResult result = kInvalidValue;
  for (size_t i = 0; i < kMaximumPinnedBlocks; ++i) {
    if (pinned_blocks[i] == pointer && pointer != NULL) {
      pinned_blocks[i] = NULL;
      --live_pinned_blocks;
      free((size_t*)pointer - 1);
      result = kSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

/* Queues a copy on `stream` after the checks of CheckCopy (`device_first`
 * and `device_second` are the device ranges, 0 for the host side). */
static FakeResult EnqueueCopy(const char* symbol, struct CUstream_st* stream, void* destination,
                              const void* source, size_t bytes, FakeDevicePointer device_first,
                              FakeDevicePointer device_second, const void* host) {
  const FakeResult injected = TakeInjectedFailure(symbol);
  if (injected != kSuccess) return injected;
  const FakeResult checked = CheckCopy(device_first, device_second, bytes);
  if (checked != kSuccess) return checked;
  pthread_mutex_lock(&state_mutex);
  const int live = StreamIsLiveLocked(stream);
  if (live) {
    if (host != NULL && IsPinnedLocked(host)) ++pinned_copies;
    EnqueueLocked(stream, (struct FakeOperation){kCopyOperation, destination, source, bytes, NULL});
  }
  pthread_mutex_unlock(&state_mutex);
  return live ? kSuccess : kInvalidHandle;
}

static FakeResult FakeCopyHostToDeviceAsync(FakeDevicePointer destination, const void* source,
                                            size_t bytes, struct CUstream_st* stream) {
  return EnqueueCopy("cuMemcpyHtoDAsync_v2", stream, (void*)(uintptr_t)destination, source, bytes,
                     destination, 0, source);
}

static FakeResult FakeCopyDeviceToHostAsync(void* destination, FakeDevicePointer source,
                                            size_t bytes, struct CUstream_st* stream) {
  return EnqueueCopy("cuMemcpyDtoHAsync_v2", stream, destination, (const void*)(uintptr_t)source,
                     bytes, source, 0, destination);
}

static FakeResult FakeCopyDeviceToDeviceAsync(FakeDevicePointer destination,
                                              FakeDevicePointer source, size_t bytes,
                                              struct CUstream_st* stream) {
  if (source < destination + bytes && destination < source + bytes) return kInvalidValue;
  return EnqueueCopy("cuMemcpyDtoDAsync_v2", stream, (void*)(uintptr_t)destination,
                     (const void*)(uintptr_t)source, bytes, destination, source, NULL);
}

static FakeResult FakeDeviceGetAttribute(int* value, FakeDeviceAttribute attribute, int device) {
  if (!initialised) return kNotInitialised;
  if (device < 0 || device >= device_count) return kInvalidDevice;
  switch (attribute) {
    case kMultiprocessorCount:
      *value = 108;
      return kSuccess;
    case kComputeCapabilityMajor:
      *value = 8;
      return kSuccess;
    case kComputeCapabilityMinor:
      *value = 0;
      return kSuccess;
  }
  return kInvalidValue;
}

/* Accepts PTX text only (what NVRTC writes): a ".version" line and at least
 * one ".entry"; the real driver would compile it for the GPU here. */
/* With $RELAY_FAKE_CUDA_PTXAS naming ptxas, every module is assembled for
 * the fake's architecture (sm_80) as the driver would compile it for a GPU:
 * PTX that ptxas refuses (a kernel needing more registers or shared memory
 * than the GPU has, a malformed instruction) is CUDA_ERROR_INVALID_PTX, with
 * ptxas's messages on stderr. */
static FakeResult AssembleWithPtxas(const char* text) {
  const char* ptxas = getenv("RELAY_FAKE_CUDA_PTXAS");
  if (ptxas == NULL || *ptxas == '\0') return kSuccess;
  char path[] = "/tmp/relay-fake-cuda-XXXXXX.ptx";
  const int file = mkstemps(path, 4);
  if (file < 0) return kUnknown;
  const size_t length = strlen(text);
  const int written = write(file, text, length) == (ssize_t)length;
  close(file);
  char command[4096];
  const int fits = snprintf(command, sizeof(command), "'%s' -arch=sm_80 -o /dev/null '%s' 1>&2",
                            ptxas, path) < (int)sizeof(command);
  const int status = written && fits ? system(command) : -1;
  unlink(path);
  return status == 0 ? kSuccess : kInvalidPtx;
}

static FakeResult FakeModuleLoadData(struct CUmod_st** module, const void* image) {
  const FakeResult injected = TakeInjectedFailure("cuModuleLoadData");
  if (injected != kSuccess) return injected;
  if (CurrentDevice() < 0) return kInvalidContext;
  const char* text = (const char*)image;
  if (text == NULL || strstr(text, ".version") == NULL || strstr(text, ".entry") == NULL)
    return kInvalidImage;
  const FakeResult assembled = AssembleWithPtxas(text);
  if (assembled != kSuccess) return assembled;
  pthread_mutex_lock(&state_mutex);
  if (module_count == kMaximumModules) {
    pthread_mutex_unlock(&state_mutex);
    return kOutOfMemory;
  }
  struct CUmod_st* loaded = &modules[module_count++].module;
  loaded->ptx = strdup(text);
  loaded->live = 1;
  pthread_mutex_unlock(&state_mutex);
  *module = loaded;
  return kSuccess;
}

static FakeResult FakeModuleUnload(struct CUmod_st* module) {
  if (module == NULL || !module->live) return kInvalidHandle;
  pthread_mutex_lock(&state_mutex);
  module->live = 0;
  free(module->ptx);
  module->ptx = NULL;
  pthread_mutex_unlock(&state_mutex);
  return kSuccess;
}

/* Finds ".entry NAME(" in the module's PTX. */
static FakeResult FakeModuleGetFunction(struct CUfunc_st** function, struct CUmod_st* module,
                                        const char* name) {
  if (module == NULL || !module->live) return kInvalidHandle;
  char pattern[256];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  if (strstr(module->ptx, pattern) == NULL) return kNotFound;
  *function = (struct CUfunc_st*)module;
  return kSuccess;
}

/* Records the launch; the kernel itself cannot run here. */
static FakeResult FakeLaunchKernel(struct CUfunc_st* function, unsigned grid_x, unsigned grid_y,
                                   unsigned grid_z, unsigned block_x, unsigned block_y,
                                   unsigned block_z, unsigned shared_bytes,
                                   struct CUstream_st* stream, void** parameters, void** extra) {
  (void)shared_bytes;
  const FakeResult injected = TakeInjectedFailure("cuLaunchKernel");
  if (injected != kSuccess) return injected;
  if (CurrentDevice() < 0) return kInvalidContext;
  if (function == NULL || !function->module.live) return kInvalidHandle;
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || block_x == 0 || block_y == 0 || block_z == 0 ||
      block_x * block_y * block_z > 1024 || (parameters == NULL) == (extra == NULL))
    return kInvalidValue;
  pthread_mutex_lock(&state_mutex);
  const int live = stream == NULL || StreamIsLiveLocked(stream);
  if (live) {
    ++launch_count;
    if (stream != NULL) ++stream_operations;
    last_grid_x = grid_x;
    last_block_x = block_x;
  }
  pthread_mutex_unlock(&state_mutex);
  return live ? kSuccess : kInvalidHandle;
}

struct EntryPoint {
  const char* name;
  void* address;
};

/* Function pointers travel as void*, as they do through dlsym (POSIX). */
static const struct EntryPoint kEntryPoints[] = {
    {"cuInit", (void*)FakeInit},
    {"cuDriverGetVersion", (void*)FakeDriverGetVersion},
    {"cuGetErrorName", (void*)FakeGetErrorName},
    {"cuGetErrorString", (void*)FakeGetErrorString},
    {"cuDeviceGetCount", (void*)FakeDeviceGetCount},
    {"cuDeviceGet", (void*)FakeDeviceGet},
    {"cuDeviceGetName", (void*)FakeDeviceGetName},
    {"cuDeviceTotalMem_v2", (void*)FakeDeviceTotalMemory},
    {"cuDevicePrimaryCtxRetain", (void*)FakePrimaryContextRetain},
    {"cuDevicePrimaryCtxRelease_v2", (void*)FakePrimaryContextRelease},
    {"cuCtxSetCurrent", (void*)FakeContextSetCurrent},
    {"cuCtxPushCurrent_v2", (void*)FakeContextPushCurrent},
    {"cuCtxPopCurrent_v2", (void*)FakeContextPopCurrent},
    {"cuMemGetInfo_v2", (void*)FakeMemoryGetInfo},
    {"cuMemAlloc_v2", (void*)FakeMemoryAllocate},
    {"cuMemFree_v2", (void*)FakeMemoryFree},
    {"cuDeviceGetAttribute", (void*)FakeDeviceGetAttribute},
    {"cuModuleLoadData", (void*)FakeModuleLoadData},
    {"cuModuleUnload", (void*)FakeModuleUnload},
    {"cuModuleGetFunction", (void*)FakeModuleGetFunction},
    {"cuLaunchKernel", (void*)FakeLaunchKernel},
    {"cuStreamCreate", (void*)FakeStreamCreate},
    {"cuStreamDestroy_v2", (void*)FakeStreamDestroy},
    {"cuStreamSynchronize", (void*)FakeStreamSynchronize},
    {"cuEventCreate", (void*)FakeEventCreate},
    {"cuEventDestroy_v2", (void*)FakeEventDestroy},
    {"cuEventRecord", (void*)FakeEventRecord},
    {"cuEventSynchronize", (void*)FakeEventSynchronize},
    {"cuMemHostAlloc", (void*)FakeMemoryHostAllocate},
    {"cuMemFreeHost", (void*)FakeMemoryFreeHost},
    {"cuMemcpyHtoDAsync_v2", (void*)FakeCopyHostToDeviceAsync},
    {"cuMemcpyDtoHAsync_v2", (void*)FakeCopyDeviceToHostAsync},
    {"cuMemcpyDtoDAsync_v2", (void*)FakeCopyDeviceToDeviceAsync},
};

void* fake_cuda_symbol(const char* symbol_name) {
  for (size_t i = 0; i < sizeof(kEntryPoints) / sizeof(kEntryPoints[0]); ++i) {
    if (strcmp(kEntryPoints[i].name, symbol_name) == 0) return kEntryPoints[i].address;
  }
  return NULL;
}

void fake_cuda_reset(int new_device_count, size_t memory_bytes, int new_initialise_result) {
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < allocation_count; ++i) free((void*)(uintptr_t)allocations[i].address);
  allocation_count = 0;
  refused_allocations = 0;
  device_count = new_device_count < kMaximumDevices ? new_device_count : kMaximumDevices;
  memory_bytes_per_device = memory_bytes;
  initialise_result = (FakeResult)new_initialise_result;
  initialised = 0;
  memset(primary_contexts, 0, sizeof(primary_contexts));
  memset(bytes_in_use, 0, sizeof(bytes_in_use));
  failing_symbol[0] = '\0';
  pthread_mutex_unlock(&state_mutex);
  context_depth = 0;
}

void fake_cuda_fail_next_call(const char* symbol_name, int result) {
  pthread_mutex_lock(&state_mutex);
  strncpy(failing_symbol, symbol_name, sizeof(failing_symbol) - 1);
  failing_symbol[sizeof(failing_symbol) - 1] = '\0';
  failing_result = (FakeResult)result;
  pthread_mutex_unlock(&state_mutex);
}

size_t fake_cuda_live_allocations(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = allocation_count;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_cuda_refused_allocations(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = refused_allocations;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

int fake_cuda_primary_context_references(int device) {
  if (device < 0 || device >= kMaximumDevices) return 0;
  pthread_mutex_lock(&state_mutex);
  const int references = primary_contexts[device].references;
  pthread_mutex_unlock(&state_mutex);
  return references;
}

int fake_cuda_context_stack_depth(void) {
  return context_depth;
}

size_t fake_cuda_live_modules(void) {
  pthread_mutex_lock(&state_mutex);
  size_t live = 0;
  for (size_t i = 0; i < module_count; ++i) live += modules[i].module.live;
  pthread_mutex_unlock(&state_mutex);
  return live;
}

size_t fake_cuda_launches(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = launch_count;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

void fake_cuda_last_launch(unsigned* grid_x, unsigned* block_x) {
  pthread_mutex_lock(&state_mutex);
  *grid_x = last_grid_x;
  *block_x = last_block_x;
  pthread_mutex_unlock(&state_mutex);
}

size_t fake_cuda_live_streams(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = live_streams;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_cuda_live_events(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = live_events;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_cuda_live_pinned_blocks(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = live_pinned_blocks;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_cuda_stream_operations(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = stream_operations;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_cuda_pinned_copies(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = pinned_copies;
  pthread_mutex_unlock(&state_mutex);
  return count;
}
