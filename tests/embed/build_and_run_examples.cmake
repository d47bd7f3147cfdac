# ctest's embed.examples: installs the build at BUILD into BUILD/embed-install,
# builds examples/embed out of tree against it (find_package(relay-vm)),
# and runs both programs on examples/mlp.relay, checking what they print.
set(prefix ${BUILD}/embed-install)
set(examples ${BUILD}/embed-examples)
file(REMOVE_RECURSE ${prefix} ${examples})

include(${CMAKE_CURRENT_LIST_DIR}/../run_checked.cmake)

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE}/examples/embed -B ${examples} -G Ninja
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(${CMAKE_COMMAND} --build ${examples})
run(${examples}/classify_c ${SOURCE}/examples/mlp.relay ${SOURCE}/examples/mlp_params.npz)
if(NOT output MATCHES "image 0: class [0-9] \\(p = 0\\.[0-9]+\\)\nimage 1: class [0-9]")
  message(FATAL_ERROR "classify_c printed:\n${output}")
endif()
run(${examples}/classify_cpp ${SOURCE}/examples/mlp.relay ${SOURCE}/examples/mlp_params.npz)
if(NOT output MATCHES "@main parameter %input: Tensor\\[\\(\\?, 64\\), float32\\]\nbatch of 1: [0-9]\nbatch of 3: [0-9] [0-9] [0-9]")
  message(FATAL_ERROR "classify_cpp printed:\n${output}")
endif()
message(STATUS "both examples built against ${prefix} and ran")
