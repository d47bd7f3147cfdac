/* relay-vm's C API, for every language that can call C (Python's ctypes,
 * Rust, Go, ...). It wraps the C++ API of relay/runtime.h: load a program
 * once as a relay_executable, run it from any number of relay_vm.
 *
 *   relay_executable* exe;  relay_vm* vm;  relay_value* result;
 *   if (relay_executable_load("model.onnx", NULL, &exe) != 0) {
 *     fprintf(stderr, "%s\n", relay_last_error());  ...
 *   }
 *   relay_vm_create(exe, NULL, &vm);
 *   relay_vm_set_input(vm, "input.1", &dl_tensor);   (copied)
 *   relay_vm_invoke(vm, NULL, &result);               (NULL: @main)
 *
 * Every function returning int returns 0 (RELAY_OK) on success and a
 * nonzero relay_status on failure; relay_last_error() then gives the
 * message, until the calling thread's next failing call. Pointers passed
 * in must not be null unless a name says _or_null. Objects returned are
 * the caller's, to free with their _free function; strings and arrays an
 * object hands out live as long as that object.
 *
 * Thread-safety: a relay_executable is immutable and may be shared by any
 * number of threads and VMs; a relay_vm and the relay_values it returns are
 * one thread's at a time. */
#ifndef RELAY_RELAY_VM_H_
#define RELAY_RELAY_VM_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What failed: the kinds of relay::Error (relay/error.h). */
typedef enum relay_status {
  RELAY_OK = 0,
  RELAY_ERROR_USAGE = 1,   /* API misuse: a null pointer, an unknown name, a wrong shape */
  RELAY_ERROR_PARSE = 2,   /* malformed Relay source */
  RELAY_ERROR_TYPE = 3,    /* the program does not type-check */
  RELAY_ERROR_COMPILE = 4, /* the compiler (or ONNX importer) refused the program */
  RELAY_ERROR_LOAD = 5,    /* a file that cannot be read or is malformed */
  RELAY_ERROR_RUNTIME = 6, /* a failure while running (a shape mismatch, a failed match) */
  RELAY_ERROR_DEVICE = 7,  /* a device missing, a driver failure, out of memory */
  RELAY_ERROR_INTERNAL = 8 /* a bug in relay-vm */
} relay_status;

/* What a relay_value holds. */
typedef enum relay_value_kind {
  RELAY_VALUE_TENSOR = 0,
  RELAY_VALUE_TUPLE = 1,
  RELAY_VALUE_CONSTRUCTED = 2, /* a value of an algebraic data type */
  RELAY_VALUE_CLOSURE = 3,
  RELAY_VALUE_REFERENCE = 4
} relay_value_kind;

typedef struct relay_executable relay_executable;
typedef struct relay_vm relay_vm;
typedef struct relay_value relay_value;

/* One parameter of a function. For a tensor, its dtype, rank and shape
 * (-1 for a `?` dimension); `type` is its Relay type as text. */
typedef struct relay_parameter {
  const char* name;
  int is_tensor; /* 0: a tuple, ADT value, closure or reference */
  DLDataType dtype;
  int32_t ndim;
  const int64_t* shape;
  const char* type;
} relay_parameter;

/* The message of the calling thread's last failure ("" before any). */
const char* relay_last_error(void);
/* relay-vm's version, "0.1.0". */
const char* relay_version(void);

/* Loads, checks and compiles a .relay or .onnx program, or loads a saved
 * .rbc executable; an .npz of params binds @main's parameters of its
 * arrays' names as constants. */
int relay_executable_load(const char* path, const char* params_npz_or_null, relay_executable** out);
void relay_executable_free(relay_executable* exe);

/* The functions a caller may invoke, and their parameters. A null
 * function name means "main". */
int relay_executable_function_count(const relay_executable* exe, size_t* count);
int relay_executable_function_name(const relay_executable* exe, size_t index, const char** name);
int relay_executable_parameter_count(const relay_executable* exe, const char* function_or_null,
                                     size_t* count);
int relay_executable_parameter(const relay_executable* exe, const char* function_or_null,
                               size_t index, relay_parameter* out);
/* What a function returns, described as parameters are: one entry per
 * tensor of a tensor or a tuple of tensors, named "out0", "out1", ... (an
 * ONNX model's @main: its output names), else one entry of the whole type
 * with is_tensor 0. */
int relay_executable_result_count(const relay_executable* exe, const char* function_or_null,
                                  size_t* count);
int relay_executable_result(const relay_executable* exe, const char* function_or_null, size_t index,
                            relay_parameter* out);

/* A VM over `exe` (which must outlive it) whose tensor work runs on a
 * device: null or "cpu", "opencl[:N]", "cuda[:N]" (inputs and results stay
 * host tensors). A device that is not there is RELAY_ERROR_DEVICE. */
int relay_vm_create(const relay_executable* exe, const char* device_or_null, relay_vm** out);
void relay_vm_free(relay_vm* vm);

/* Sets input `name` (a parameter's name, or an ONNX model's input name as
 * the model writes it) to a copy of `tensor`, which must be on the CPU, of
 * the parameter's dtype and shape (any extent for `?`), compact (strides
 * null or row-major). A function invoked takes the inputs named as its
 * parameters. */
int relay_vm_set_input(relay_vm* vm, const char* name, const DLTensor* tensor); /* copies */
/* Sets a 0-d input from a number, converted to the parameter's dtype. */
int relay_vm_set_input_scalar(relay_vm* vm, const char* name, double value);
/* Runs a function (null: @main) on the inputs set for its parameters. */
int relay_vm_invoke(relay_vm* vm, const char* function_or_null, relay_value** result);

int relay_value_kind_of(const relay_value* value, relay_value_kind* kind);
int relay_value_tuple_size(const relay_value* value, size_t* size); /* error if not a tuple */
int relay_value_tuple_get(const relay_value* value, size_t index, relay_value** out);
/* A constructed value's fields (for an ADT value, as tuple_size/get). */
int relay_value_field_count(const relay_value* value, size_t* count);
int relay_value_field_get(const relay_value* value, size_t index, relay_value** out);
/* A tensor value as DLPack, sharing its memory: call its deleter when done
 * (the tensor stays alive until then, also after relay_value_free). */
int relay_value_to_dlpack(const relay_value* value,
                          DLManagedTensor** out); /* error if not a tensor */
void relay_value_free(relay_value* value);

#ifdef __cplusplus
}
#endif

#endif /* RELAY_RELAY_VM_H_ */
