/* relay_vm.h compiled as C (the test suite is C++): a C caller loads the
 * API test program, runs @main on one row and returns its first output
 * element through `first`, or the failing call's status. */
#include <stddef.h>
#include <stdint.h>

#include "relay/relay_vm.h"

int relay_api_test_run_from_c(const char* path, const char* params, float* first) {
  relay_executable* exe = NULL;
  relay_vm* vm = NULL;
  relay_value* result = NULL;
  DLManagedTensor* output = NULL;
  float x[3] = {1.0f, 2.0f, 3.0f};
  int64_t shape[2] = {1, 3};
  DLTensor input;
  int status = relay_executable_load(path, params, &exe);
  if (status != RELAY_OK) return status;
  status = relay_vm_create(exe, NULL, &vm);
  if (status == RELAY_OK) {
    input.data = x;
    input.device.device_type = kDLCPU;
    input.device.device_id = 0;
    input.ndim = 2;
    input.dtype.code = kDLFloat;
    input.dtype.bits = 32;
    input.dtype.lanes = 1;
    input.shape = shape;
    input.strides = NULL;
    input.byte_offset = 0;
    status = relay_vm_set_input(vm, "x", &input);
  }
  if (status == RELAY_OK) status = relay_vm_invoke(vm, NULL, &result);
  if (status == RELAY_OK) status = relay_value_to_dlpack(result, &output);
  if (status == RELAY_OK) {
    *first = ((const float*)output->dl_tensor.data)[0];
    output->deleter(output);
  }
  relay_value_free(result);
  relay_vm_free(vm);
  relay_executable_free(exe);
  return status;
}
