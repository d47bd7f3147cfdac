/* A stand-in for XRT's libxrt_core that keeps each buffer object's host side
 * and card side in separate host memory, so the XRT device's logic (handle
 * boxing, write-then-sync and sync-then-read ordering, pooling, error
 * conversion) runs without an FPGA. Its entry points are reached through
 * fake_xrt_symbol, handed to LoadXrtLibraryFromResolver in place of dlsym.
 *
 * Data moves between the two sides only through xclSyncBO, as on a card: a
 * caller that forgets a sync reads stale bytes. Failures return negated errno
 * values and xclAllocBO sets errno, as the real layer does. Written in C so
 * that it can match XRT's C ABI without including xrt.h, which only
 * devices/xrt may include.
 *
 * Thread-safety: the entry points may be called from many threads; the
 * controls below are for a test's main thread between calls. */
#ifndef RELAY_TESTS_DEVICES_FAKE_XRT_DRIVER_H_
#define RELAY_TESTS_DEVICES_FAKE_XRT_DRIVER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets every buffer object and open card and starts over with
 * `card_count` cards of `memory_bytes` each. */
void fake_xrt_reset(unsigned int card_count, size_t memory_bytes);

/* The entry point exported as `symbol_name` ("xclAllocBO"), or NULL. */
void* fake_xrt_symbol(const char* symbol_name);

/* The next call of the entry point exported as `symbol_name` fails with
 * `error_number` (an errno value) without doing anything. */
void fake_xrt_fail_next_call(const char* symbol_name, int error_number);

/* Buffer objects allocated and not yet freed, over all cards. */
size_t fake_xrt_live_buffers(void);
/* Calls of xclAllocBO refused with ENOMEM. */
size_t fake_xrt_refused_allocations(void);
/* Cards opened and not yet closed. */
int fake_xrt_open_cards(void);

#ifdef __cplusplus
}
#endif

#endif /* RELAY_TESTS_DEVICES_FAKE_XRT_DRIVER_H_ */
