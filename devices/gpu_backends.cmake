# GPU and accelerator backends of relay_devices: CUDA, OpenCL and Xilinx XRT.
#
# Each backend compiles against its vendor's headers (found in the top-level
# CMakeLists.txt) but loads the driver with dlopen when a device of its kind
# is first asked for. Driver libraries are never linked, so a build with every
# backend enabled still runs on a machine that has none of the drivers.
#
# Included from devices/CMakeLists.txt after relay_devices is defined. Defines
# RELAY_HAS_CUDA_DEVICE, RELAY_HAS_OPENCL_DEVICE and RELAY_HAS_XRT_DEVICE for
# the backends built, so the device registry and tools know what exists.

if(RELAY_ENABLE_CUDA OR RELAY_ENABLE_OPENCL OR RELAY_ENABLE_XRT)
  target_sources(relay_devices PRIVATE driver_library.cc)
  target_link_libraries(relay_devices PRIVATE ${CMAKE_DL_LIBS})
endif()

# SYSTEM: warnings inside vendor headers are not ours to fix under -Werror.
if(RELAY_ENABLE_CUDA)
  target_sources(relay_devices PRIVATE cuda/cuda_driver.cc cuda/cuda_device.cc cuda/nvrtc_compiler.cc)
  target_include_directories(relay_devices SYSTEM PRIVATE ${RELAY_CUDA_INCLUDE_DIR})
  target_compile_definitions(relay_devices PUBLIC RELAY_HAS_CUDA_DEVICE=1)
endif()

if(RELAY_ENABLE_OPENCL)
  target_sources(relay_devices PRIVATE opencl/opencl_library.cc opencl/opencl_device.cc)
  target_include_directories(relay_devices SYSTEM PRIVATE ${RELAY_OPENCL_INCLUDE_DIR})
  target_compile_definitions(relay_devices PUBLIC RELAY_HAS_OPENCL_DEVICE=1)
endif()

if(RELAY_ENABLE_XRT)
  target_sources(relay_devices PRIVATE xrt/xrt_library.cc xrt/xrt_device.cc xrt/xclbin_reader.cc)
  target_include_directories(relay_devices SYSTEM PRIVATE ${RELAY_XRT_INCLUDE_DIR})
  target_compile_definitions(relay_devices PUBLIC RELAY_HAS_XRT_DEVICE=1)
endif()
