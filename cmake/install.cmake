# `cmake --install BUILD --prefix DIR`: the relay-vm command, the library
# librelay_vm, shared and static (api/CMakeLists.txt), the public headers, a
# CMake package (find_package(relay-vm) -> relay-vm::relay-vm and
# relay-vm::relay-vm-static) and lib/pkgconfig/relay-vm.pc and
# relay-vm-static.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(relay_vm_shared PROPERTIES EXPORT_NAME relay-vm)
install(TARGETS relay_vm_shared EXPORT relay-vm-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS relay-vm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
get_property(_relay_static_archive GLOBAL PROPERTY RELAY_STATIC_ARCHIVE)
install(FILES ${_relay_static_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR})
file(GLOB _relay_public_headers ${PROJECT_SOURCE_DIR}/include/relay/*.h)
install(FILES ${_relay_public_headers} ${PROJECT_SOURCE_DIR}/include/relay/dtypes.def
              ${CMAKE_BINARY_DIR}/generated/relay/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/relay)
install(EXPORT relay-vm-targets NAMESPACE relay-vm::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relay-vm)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/relay-vm-config.cmake.in
                              ${CMAKE_BINARY_DIR}/relay-vm-config.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relay-vm)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/relay-vm-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
# What librelay_vm.a needs besides: the runtime's system libraries (LLVM is
# inside it), and in a sanitized build the sanitizer's runtime.
set(RELAY_STATIC_SYSTEM_LIBRARIES mimalloc onnx onnx_proto protobuf dnnl zstd z rt dl m pthread stdc++)
list(TRANSFORM RELAY_STATIC_SYSTEM_LIBRARIES PREPEND -l OUTPUT_VARIABLE RELAY_STATIC_SYSTEM_FLAGS)
string(JOIN " " RELAY_STATIC_SYSTEM_FLAGS ${RELAY_STATIC_SYSTEM_FLAGS})
set(RELAY_STATIC_LINK_OPTIONS "")
if(RELAY_SANITIZE)
  # (UBSan's C++ runtime too, which clang links for a C program only when asked.)
  set(RELAY_STATIC_LINK_OPTIONS -fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(APPEND RELAY_STATIC_LINK_OPTIONS -fsanitize-link-c++-runtime)
  endif()
elseif(RELAY_TSAN)
  set(RELAY_STATIC_LINK_OPTIONS -fsanitize=thread)
endif()
string(JOIN " " RELAY_STATIC_SYSTEM_FLAGS ${RELAY_STATIC_LINK_OPTIONS} ${RELAY_STATIC_SYSTEM_FLAGS})
file(RELATIVE_PATH RELAY_CMAKE_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/cmake/relay-vm /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/relay-vm-static-targets.cmake.in
               ${CMAKE_BINARY_DIR}/relay-vm-static-targets.cmake @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/relay-vm-config.cmake
              ${CMAKE_BINARY_DIR}/relay-vm-config-version.cmake
              ${CMAKE_BINARY_DIR}/relay-vm-static-targets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relay-vm)
file(RELATIVE_PATH RELAY_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/relay-vm.pc.in ${CMAKE_BINARY_DIR}/relay-vm.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/relay-vm-static.pc.in ${CMAKE_BINARY_DIR}/relay-vm-static.pc
               @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/relay-vm.pc ${CMAKE_BINARY_DIR}/relay-vm-static.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
