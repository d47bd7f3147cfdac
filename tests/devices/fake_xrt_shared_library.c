/* The stand-in XRT driver (fake_xrt_driver.c) as a shared library that
 * exports XRT's own entry points, built as libxrt_core.so.2 in a directory of
 * its own. A relay-vm run with that directory on LD_LIBRARY_PATH opens it as
 * it would open XRT, so tests drive the whole program (--xclbin, a Relay
 * function calling an FPGA kernel) without a card: one card of 256 MiB.
 *
 * Each export forwards to the fake's entry point of the same name, called
 * through a pointer of the export's own type (xrt.h's prototype), as the XRT
 * backend calls it. */
#include <xrt.h>

#include "fake_xrt_driver.h"

__attribute__((constructor)) static void StartWithOneCard(void) {
  fake_xrt_reset(1, (size_t)256 << 20);
}

unsigned int xclProbe(void) {
  /* xrt.h declares xclProbe without a prototype; the fake's has one. */
  return ((unsigned int (*)(void))fake_xrt_symbol("xclProbe"))();
}

xclDeviceHandle xclOpen(unsigned int index, const char* log, enum xclVerbosityLevel level) {
  return ((__typeof__(&xclOpen))fake_xrt_symbol("xclOpen"))(index, log, level);
}

void xclClose(xclDeviceHandle handle) {
  ((__typeof__(&xclClose))fake_xrt_symbol("xclClose"))(handle);
}

int xclGetDeviceInfo2(xclDeviceHandle handle, struct xclDeviceInfo2* info) {
  return ((__typeof__(&xclGetDeviceInfo2))fake_xrt_symbol("xclGetDeviceInfo2"))(handle, info);
}

xclBufferHandle xclAllocBO(xclDeviceHandle handle, size_t size, int unused, unsigned int flags) {
  return ((__typeof__(&xclAllocBO))fake_xrt_symbol("xclAllocBO"))(handle, size, unused, flags);
}

void xclFreeBO(xclDeviceHandle handle, xclBufferHandle buffer) {
  ((__typeof__(&xclFreeBO))fake_xrt_symbol("xclFreeBO"))(handle, buffer);
}

size_t xclWriteBO(xclDeviceHandle handle, xclBufferHandle buffer, const void* source, size_t size,
                  size_t seek) {
  return ((__typeof__(&xclWriteBO))fake_xrt_symbol("xclWriteBO"))(handle, buffer, source, size,
                                                                  seek);
}

size_t xclReadBO(xclDeviceHandle handle, xclBufferHandle buffer, void* destination, size_t size,
                 size_t skip) {
  return ((__typeof__(&xclReadBO))fake_xrt_symbol("xclReadBO"))(handle, buffer, destination, size,
                                                                skip);
}

int xclSyncBO(xclDeviceHandle handle, xclBufferHandle buffer, enum xclBOSyncDirection direction,
              size_t size, size_t offset) {
  return ((__typeof__(&xclSyncBO))fake_xrt_symbol("xclSyncBO"))(handle, buffer, direction, size,
                                                                offset);
}

int xclLoadXclBin(xclDeviceHandle handle, const struct axlf* image) {
  return ((__typeof__(&xclLoadXclBin))fake_xrt_symbol("xclLoadXclBin"))(handle, image);
}

int xclOpenContext(xclDeviceHandle handle, const xuid_t uuid, unsigned int ip, bool shared) {
  return ((__typeof__(&xclOpenContext))fake_xrt_symbol("xclOpenContext"))(handle, uuid, ip, shared);
}

int xclCloseContext(xclDeviceHandle handle, const xuid_t uuid, unsigned int ip) {
  return ((__typeof__(&xclCloseContext))fake_xrt_symbol("xclCloseContext"))(handle, uuid, ip);
}

int xclGetBOProperties(xclDeviceHandle handle, xclBufferHandle buffer,
                       struct xclBOProperties* properties) {
  return ((__typeof__(&xclGetBOProperties))fake_xrt_symbol("xclGetBOProperties"))(handle, buffer,
                                                                                  properties);
}

void* xclMapBO(xclDeviceHandle handle, xclBufferHandle buffer, bool write) {
  return ((__typeof__(&xclMapBO))fake_xrt_symbol("xclMapBO"))(handle, buffer, write);
}

int xclUnmapBO(xclDeviceHandle handle, xclBufferHandle buffer, void* address) {
  return ((__typeof__(&xclUnmapBO))fake_xrt_symbol("xclUnmapBO"))(handle, buffer, address);
}

int xclExecBuf(xclDeviceHandle handle, xclBufferHandle command) {
  return ((__typeof__(&xclExecBuf))fake_xrt_symbol("xclExecBuf"))(handle, command);
}

int xclExecWait(xclDeviceHandle handle, int timeout_milliseconds) {
  return ((__typeof__(&xclExecWait))fake_xrt_symbol("xclExecWait"))(handle, timeout_milliseconds);
}
