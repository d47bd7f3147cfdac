/* Runs an image classifier (examples/mlp.relay: 8x8 images flattened to
 * 64 values, 10 classes) through relay-vm's C API on two made-up images,
 * and prints each image's most likely class and its probability.
 *
 *   classify_c MODEL [PARAMS.npz]
 */
#include <relay/relay_vm.h>
#include <stdio.h>

static int fail(const char* what) {
  fprintf(stderr, "classify_c: %s: %s\n", what, relay_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: classify_c MODEL [PARAMS.npz]\n");
    return 2;
  }
  relay_executable* exe = NULL;
  if (relay_executable_load(argv[1], argc > 2 ? argv[2] : NULL, &exe) != RELAY_OK)
    return fail("loading the model");
  relay_vm* vm = NULL;
  if (relay_vm_create(exe, NULL, &vm) != RELAY_OK) return fail("creating a VM");

  /* Two images: a bright left half, and a bright diagonal. */
  float pixels[2][64];
  for (int pixel = 0; pixel < 64; ++pixel) {
    pixels[0][pixel] = (pixel % 8) < 4 ? 16.0f : 0.0f;
    pixels[1][pixel] = (pixel % 8) == (pixel / 8) ? 16.0f : 0.0f;
  }
  int64_t shape[2] = {2, 64};
  DLTensor input = {0};
  input.data = pixels;
  input.device.device_type = kDLCPU;
  input.ndim = 2;
  input.dtype.code = kDLFloat;
  input.dtype.bits = 32;
  input.dtype.lanes = 1;
  input.shape = shape;
  if (relay_vm_set_input(vm, "input", &input) != RELAY_OK) return fail("setting the input");

  relay_value* result = NULL;
  if (relay_vm_invoke(vm, NULL, &result) != RELAY_OK) return fail("running the model");
  DLManagedTensor* probabilities = NULL;
  if (relay_value_to_dlpack(result, &probabilities) != RELAY_OK) return fail("reading the result");
  const float* rows = (const float*)probabilities->dl_tensor.data;
  const int64_t classes = probabilities->dl_tensor.shape[1];
  for (int image = 0; image < 2; ++image) {
    int best = 0;
    for (int64_t label = 1; label < classes; ++label) {
      if (rows[image * classes + label] > rows[image * classes + best]) best = (int)label;
    }
    printf("image %d: class %d (p = %.3f)\n", image, best, rows[image * classes + best]);
  }
  probabilities->deleter(probabilities);
  relay_value_free(result);
  relay_vm_free(vm);
  relay_executable_free(exe);
  printf("relay-vm %s\n", relay_version());
  return 0;
}
