# ctest's tsan.api_threads: configures a ThreadSanitizer build at BUILD
# (RELAY_TSAN, tests only), builds api_tests and what it links, and runs the
# API's tests; any data race ThreadSanitizer reports fails them.
include(${CMAKE_CURRENT_LIST_DIR}/../run_checked.cmake)

run(${CMAKE_COMMAND} -S ${SOURCE} -B ${BUILD} -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DRELAY_TSAN=ON -DRELAY_TSAN_TESTS=OFF -DRELAY_BUILD_FUZZERS=OFF -DRELAY_BUILD_BENCHMARKS=OFF)
run(${CMAKE_COMMAND} --build ${BUILD} --target api_tests)
set(ENV{RELAY_CACHE_DIR} ${BUILD}/kernel-cache)
set(ENV{TSAN_OPTIONS} "halt_on_error=1 second_deadlock_stack=1")
run(${BUILD}/tests/api_tests)
message(STATUS "api_tests ran clean under ThreadSanitizer")
