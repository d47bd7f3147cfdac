/* A stand-in for XRT's libxrt_core that keeps each buffer object's host side
 * and card side in separate host memory, so the XRT device's logic (handle
 * boxing, write-then-sync and sync-then-read ordering, pooling, error
 * conversion, xclbin loading and kernel commands) runs without an FPGA. Its
 * entry points are reached through fake_xrt_symbol, handed to
 * LoadXrtLibraryFromResolver in place of dlsym.
 *
 * xclLoadXclBin remembers the image's uuid and the kernel of each IP_LAYOUT
 * entry; contexts are counted per compute unit and must name that uuid and a
 * kernel entry; a new image is refused (EBUSY) while contexts are open.
 * xclExecBuf accepts an ERT start command (ERT_START_CU, type ERT_CU, state
 * NEW, one compute unit holding a context) and marks it RUNNING; the next
 * xclExecWait runs it and returns the number of commands it ended. The one
 * kernel it knows is "vadd" with the register map of
 * tests/devices/data/vadd.xclbin: 64-bit addresses in1 at 0x10, in2 at 0x1c,
 * out at 0x28 and the 32-bit count size at 0x34; it computes out[i] = in1[i]
 * + in2[i] over int32 on the card side of the buffer objects. An address that
 * names no buffer object of the card, a range past its end, or another kernel
 * ends the command in ERT_CMD_STATE_ERROR (5); otherwise it ends in
 * ERT_CMD_STATE_COMPLETED (4). xclGetBOProperties reports buffer object n at
 * the physical address (n + 1) << 32.
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
/* Contexts opened on compute units and not yet closed, over all cards. */
int fake_xrt_open_contexts(void);
/* Start commands ended by xclExecWait since the last reset. */
size_t fake_xrt_executed_commands(void);
/* The next start command ends in `state` (an ert_cmd_state value, such as
 * 5 for ERT_CMD_STATE_ERROR) without running its kernel. */
void fake_xrt_end_next_command_in(unsigned int state);

#ifdef __cplusplus
}
#endif

#endif /* RELAY_TESTS_DEVICES_FAKE_XRT_DRIVER_H_ */
