# ctest's embed.examples: installs the build at BUILD into BUILD/embed-install,
# builds examples/embed out of tree against it (find_package(relay-vm)),
# once with the shared library and once with the static one, and runs both
# programs of each on examples/mlp.relay, checking what they print.
set(prefix ${BUILD}/embed-install)
file(REMOVE_RECURSE ${prefix})

include(${CMAKE_CURRENT_LIST_DIR}/../run_checked.cmake)

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(static OFF ON)
  set(examples ${BUILD}/embed-examples-static-${static})
  file(REMOVE_RECURSE ${examples})
  run(${CMAKE_COMMAND} -S ${SOURCE}/examples/embed -B ${examples} -G Ninja
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DRELAY_VM_STATIC=${static})
  run(${CMAKE_COMMAND} --build ${examples})
  run(${examples}/classify_c ${SOURCE}/examples/mlp.relay ${SOURCE}/examples/mlp_params.npz)
  if(NOT output MATCHES "image 0: class [0-9] \\(p = 0\\.[0-9]+\\)\nimage 1: class [0-9]")
    message(FATAL_ERROR "classify_c (static ${static}) printed:\n${output}")
  endif()
  run(${examples}/classify_cpp ${SOURCE}/examples/mlp.relay ${SOURCE}/examples/mlp_params.npz)
  if(NOT output MATCHES "@main parameter %input: Tensor\\[\\(\\?, 64\\), float32\\]\nbatch of 1: [0-9]\nbatch of 3: [0-9] [0-9] [0-9]")
    message(FATAL_ERROR "classify_cpp (static ${static}) printed:\n${output}")
  endif()
endforeach()
# relay-vm-static.pc: the C example compiled and linked by its flags alone.
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/lib/pkgconfig
    pkg-config --cflags --libs relay-vm-static)
separate_arguments(pkg_config_flags UNIX_COMMAND "${output}")
run(${C_COMPILER} ${SOURCE}/examples/embed/classify.c -o ${BUILD}/embed-examples-static-ON/classify_pc
    ${pkg_config_flags})
run(${BUILD}/embed-examples-static-ON/classify_pc ${SOURCE}/examples/mlp.relay
    ${SOURCE}/examples/mlp_params.npz)
if(NOT output MATCHES "image 0: class [0-9]")
  message(FATAL_ERROR "classify.c built with pkg-config printed:\n${output}")
endif()
# The static programs hold relay-vm and LLVM themselves.
run(ldd ${BUILD}/embed-examples-static-ON/classify_c)
if(output MATCHES "librelay_vm|libLLVM")
  message(FATAL_ERROR "classify_c linked statically still needs:\n${output}")
endif()
message(STATUS "both examples built against ${prefix}, shared and static, and ran")
