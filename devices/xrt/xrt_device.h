// Xilinx FPGA cards as relay::Devices, through XRT's hardware layer loaded at
// run time (xrt_library.h).
//
// Device index N is the N-th card xclProbe reports. Memory comes from buffer
// objects (xclAllocBO, in the card's first memory bank) through a
// MemoryPool. A handle is the 32-bit buffer-object handle plus one, boxed into
// void*, so that buffer object 0 is not the null handle; byte offsets are
// passed to the read, write and sync calls. Every copy has finished when it
// returns: a copy from the host writes the buffer's host side and syncs the
// range to the card; a copy to the host syncs the range back and reads it; a
// copy within the card passes through host memory (a card-side copy needs a
// DMA engine that not every platform has). Synchronize has nothing to wait
// for.
//
// An XRT device is also an ExternalKernelHost (devices/external_kernels.h;
// reach it with ExternalKernelHostOf): LoadKernelFile reads a user's .xclbin
// (devices/xrt/xclbin_reader.h), loads it with xclLoadXclBin, opens a shared
// context (xclOpenContext) on the compute unit of each kernel (the first, for
// a kernel with several) and registers the kernels by name; the contexts are
// closed when another xclbin replaces it or the device is destroyed. Kernels
// of a replaced xclbin stay valid objects but refuse to run (kUsage). A
// kernel's Run writes an ERT start command (ERT_START_CU) into an exec buffer
// kept per kernel: the compute unit's bit in the CU mask, each buffer's
// physical address (xclGetBOProperties, plus its byte offset) and each scalar
// at its register-map offset; it submits it with xclExecBuf and returns once
// xclExecWait shows it ended, in ERT_CMD_STATE_COMPLETED or else as a kDevice
// error naming the state ("xrt:0: kernel vadd ended in state
// ERT_CMD_STATE_ERROR (5), not ERT_CMD_STATE_COMPLETED"). The compute unit's
// index in IP_LAYOUT serves both as the context's IP index and as its bit in
// the CU mask: that assumes the driver numbers compute units in IP_LAYOUT's
// order, unchecked on a card. Runs hold the card while they wait, so copies
// and other kernels on the card wait for them.
//
// On most platforms the card accepts buffer objects only once an xclbin
// describing its memory banks is loaded, so on such a card Allocate reports
// the driver's refusal until LoadKernelFile has run. Never run against a
// card: no FPGA was at hand when this was written; a stand-in driver in
// tests/devices pins the logic.
//
// This header does not include xrt.h, so callers need no XRT headers.
//
// Thread-safety: every method of an XRT device may be called from many threads
// at once; the device serialises its calls into XRT, which does not document
// them as thread-safe. The factory functions may be called concurrently.
// Errors: relay::Error of kind kDevice naming the device and the operation,
// for example "xrt:0: xclSyncBO failed: Input/output error (errno 5)"; kUsage
// for kernel files and kernel calls as external_kernels.h says.
// Exhausted card memory (ENOMEM) is reported by the pool after it has
// released its cache and retried ("out of memory on xrt:0: ..."). Freeing
// never throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "devices/driver_library.h"
#include "devices/memory_pool.h"
#include "relay/device.h"

namespace relay::devices {

class XrtLibrary;  // devices/xrt/xrt_library.h

// The number of Xilinx cards XRT finds (xclProbe). Throws kDevice "no XRT
// driver: libxrt_core.so.2 could not be loaded (...)" when XRT is not
// installed.
int32_t XrtDeviceCount();

// Opens xrt:`index`. The pool's device name is always "xrt:<index>"; the
// other options are taken as given. Throws the errors of XrtDeviceCount,
// kDevice "no XRT device: ..." when XRT finds no card, "no device xrt:3: 1
// XRT device present" for an index past the cards present, and "xrt:0:
// xclOpen failed ..." when the card cannot be opened.
std::unique_ptr<Device> CreateXrtDevice(int32_t index, MemoryPoolOptions pool_options = {});

// The same over a given table; tests pass a stand-in driver loaded with
// LoadXrtLibraryFromResolver. Devices keep the table alive.
int32_t XrtDeviceCount(const XrtLibrary& library);
std::unique_ptr<Device> CreateXrtDevice(std::shared_ptr<const XrtLibrary> library, int32_t index,
                                        MemoryPoolOptions pool_options = {});

// XrtLibrary::FromResolver for callers that do not include xrt.h.
std::shared_ptr<const XrtLibrary> LoadXrtLibraryFromResolver(const SymbolResolver& resolver,
                                                             std::string library_name);

}  // namespace relay::devices
