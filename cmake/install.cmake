# `cmake --install BUILD --prefix DIR`: the relay-vm command, the library
# librelay_vm (api/CMakeLists.txt), the public headers, a CMake package
# (find_package(relay-vm) -> relay-vm::relay-vm) and lib/pkgconfig/relay-vm.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(relay_vm_shared PROPERTIES EXPORT_NAME relay-vm)
install(TARGETS relay_vm_shared EXPORT relay-vm-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS relay-vm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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
install(FILES ${CMAKE_BINARY_DIR}/relay-vm-config.cmake
              ${CMAKE_BINARY_DIR}/relay-vm-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relay-vm)
file(RELATIVE_PATH RELAY_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/relay-vm.pc.in ${CMAKE_BINARY_DIR}/relay-vm.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/relay-vm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
