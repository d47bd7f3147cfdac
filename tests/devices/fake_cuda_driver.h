/* A stand-in for libcuda that keeps "device" memory on the host, so the CUDA
 * device's logic (contexts, offsets, pooling, error conversion) runs without a
 * GPU. Its entry points are reached through fake_cuda_symbol, handed to
 * LoadCudaDriverFromResolver in place of dlsym.
 *
 * It checks what the real driver requires of callers: cuInit before any other
 * call, a current context for memory operations, and device addresses inside
 * live allocations; each violation returns the error code the real driver
 * would. Written in C so that it can match the driver's C ABI without
 * including cuda.h, which only devices/cuda may include.
 *
 * Thread-safety: the entry points may be called from many threads; the
 * context stack is per thread as in the real driver. The controls below are
 * for a test's main thread between calls. */
#ifndef RELAY_TESTS_DEVICES_FAKE_CUDA_DRIVER_H_
#define RELAY_TESTS_DEVICES_FAKE_CUDA_DRIVER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets every allocation and context and starts over with `device_count`
 * devices of `memory_bytes` each. cuInit will return `initialise_result`
 * (0 = CUDA_SUCCESS, 100 = CUDA_ERROR_NO_DEVICE, ...). */
void fake_cuda_reset(int device_count, size_t memory_bytes, int initialise_result);

/* The entry point exported as `symbol_name` ("cuMemAlloc_v2"), or NULL. */
void* fake_cuda_symbol(const char* symbol_name);

/* The next call of the entry point exported as `symbol_name` returns
 * `result` without doing anything. */
void fake_cuda_fail_next_call(const char* symbol_name, int result);

/* Blocks allocated and not yet freed, over all devices. */
size_t fake_cuda_live_allocations(void);
/* Calls of cuMemAlloc_v2 that returned CUDA_ERROR_OUT_OF_MEMORY. */
size_t fake_cuda_refused_allocations(void);
/* References held on `device`'s primary context. */
int fake_cuda_primary_context_references(int device);
/* Contexts pushed on the calling thread and not popped. */
int fake_cuda_context_stack_depth(void);
/* Modules loaded (cuModuleLoadData, PTX text only) and not unloaded. Their
 * kernels cannot run: cuLaunchKernel checks its arguments and counts. Where
 * $RELAY_FAKE_CUDA_PTXAS names ptxas, each module's PTX is assembled for
 * sm_80 first, and PTX it refuses is CUDA_ERROR_INVALID_PTX. */
size_t fake_cuda_live_modules(void);
/* Calls of cuLaunchKernel that succeeded, since the process started. */
size_t fake_cuda_launches(void);
/* The grid and block widths of the last launch. */
void fake_cuda_last_launch(unsigned* grid_x, unsigned* block_x);
/* Streams, events and page-locked host blocks created and not destroyed. */
size_t fake_cuda_live_streams(void);
size_t fake_cuda_live_events(void);
size_t fake_cuda_live_pinned_blocks(void);
/* Copies, launches and event records queued on created (not the default)
 * streams, and of those copies the ones whose host side was page-locked,
 * since the process started. Queued work runs only when the host waits
 * (cuStreamSynchronize, cuEventSynchronize) or the queue fills. */
size_t fake_cuda_stream_operations(void);
size_t fake_cuda_pinned_copies(void);

#ifdef __cplusplus
}
#endif

#endif /* RELAY_TESTS_DEVICES_FAKE_CUDA_DRIVER_H_ */
