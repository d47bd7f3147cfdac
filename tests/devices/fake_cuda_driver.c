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

typedef enum cudaError_enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialised = 3,
  kNoDevice = 100,
  kInvalidDevice = 101,
  kInvalidImage = 200,
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
struct CUstream_st;

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

static FakeResult FakeContextSynchronize(void) {
  if (!initialised) return kNotInitialised;
  const FakeResult injected = TakeInjectedFailure("cuCtxSynchronize");
  if (injected != kSuccess) return injected;
  return CurrentDevice() < 0 ? kInvalidContext : kSuccess;
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

static FakeResult FakeCopyHostToDevice(FakeDevicePointer destination, const void* source,
                                       size_t bytes) {
  const FakeResult injected = TakeInjectedFailure("cuMemcpyHtoD_v2");
  if (injected != kSuccess) return injected;
  const FakeResult checked = CheckCopy(destination, 0, bytes);
  if (checked != kSuccess) return checked;
  memcpy((void*)(uintptr_t)destination, source, bytes);
  return kSuccess;
}

static FakeResult FakeCopyDeviceToHost(void* destination, FakeDevicePointer source, size_t bytes) {
  const FakeResult injected = TakeInjectedFailure("cuMemcpyDtoH_v2");
  if (injected != kSuccess) return injected;
  const FakeResult checked = CheckCopy(source, 0, bytes);
  if (checked != kSuccess) return checked;
  memcpy(destination, (const void*)(uintptr_t)source, bytes);
  return kSuccess;
}

static FakeResult FakeCopyDeviceToDevice(FakeDevicePointer destination, FakeDevicePointer source,
                                         size_t bytes) {
  const FakeResult injected = TakeInjectedFailure("cuMemcpyDtoD_v2");
  if (injected != kSuccess) return injected;
  const FakeResult checked = CheckCopy(destination, source, bytes);
  if (checked != kSuccess) return checked;
  /* The real driver leaves overlapping ranges undefined; refuse them so a
   * caller that relies on them fails here. */
  if (source < destination + bytes && destination < source + bytes) return kInvalidValue;
  memcpy((void*)(uintptr_t)destination, (const void*)(uintptr_t)source, bytes);
  return kSuccess;
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
static FakeResult FakeModuleLoadData(struct CUmod_st** module, const void* image) {
  const FakeResult injected = TakeInjectedFailure("cuModuleLoadData");
  if (injected != kSuccess) return injected;
  if (CurrentDevice() < 0) return kInvalidContext;
  const char* text = (const char*)image;
  if (text == NULL || strstr(text, ".version") == NULL || strstr(text, ".entry") == NULL)
    return kInvalidImage;
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
  (void)stream;
  const FakeResult injected = TakeInjectedFailure("cuLaunchKernel");
  if (injected != kSuccess) return injected;
  if (CurrentDevice() < 0) return kInvalidContext;
  if (function == NULL || !function->module.live) return kInvalidHandle;
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || block_x == 0 || block_y == 0 || block_z == 0 ||
      block_x * block_y * block_z > 1024 || (parameters == NULL) == (extra == NULL))
    return kInvalidValue;
  pthread_mutex_lock(&state_mutex);
  ++launch_count;
  last_grid_x = grid_x;
  last_block_x = block_x;
  pthread_mutex_unlock(&state_mutex);
  return kSuccess;
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
    {"cuCtxSynchronize", (void*)FakeContextSynchronize},
    {"cuMemGetInfo_v2", (void*)FakeMemoryGetInfo},
    {"cuMemAlloc_v2", (void*)FakeMemoryAllocate},
    {"cuMemFree_v2", (void*)FakeMemoryFree},
    {"cuMemcpyHtoD_v2", (void*)FakeCopyHostToDevice},
    {"cuMemcpyDtoH_v2", (void*)FakeCopyDeviceToHost},
    {"cuMemcpyDtoD_v2", (void*)FakeCopyDeviceToDevice},
    {"cuDeviceGetAttribute", (void*)FakeDeviceGetAttribute},
    {"cuModuleLoadData", (void*)FakeModuleLoadData},
    {"cuModuleUnload", (void*)FakeModuleUnload},
    {"cuModuleGetFunction", (void*)FakeModuleGetFunction},
    {"cuLaunchKernel", (void*)FakeLaunchKernel},
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
