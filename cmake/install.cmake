# `cmake --install`: the kiln compiler, libkiln (shared and static) with include/kiln.h,
# the CMake package (kilnConfig.cmake with kiln_add_model()), kiln.pc for pkg-config,
# the man page kiln(1) and the documentation. tests/install checks the result from a
# consumer project. Included by the top-level CMakeLists.txt after the targets exist.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)

# libkiln.a: the API and every object of the compiler library in one archive, so a
# static consumer links -lkiln plus kiln's system libraries (LLVM, protobuf-c).
add_library(libkiln_static STATIC api/kiln.c $<TARGET_OBJECTS:kiln_core>
                                  $<TARGET_OBJECTS:kiln_onnx_proto>)
target_include_directories(libkiln_static
  PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_SOURCE_DIR} ${GEN} ${PROTOBUF_C_INCLUDE})
target_link_libraries(libkiln_static INTERFACE ${LLVM_LIB} ${PROTOBUF_C_LIB} m ${CMAKE_DL_LIBS}
                                               Threads::Threads)
set_target_properties(libkiln_static PROPERTIES OUTPUT_NAME kiln ARCHIVE_OUTPUT_DIRECTORY
                                                ${CMAKE_BINARY_DIR}/static)

install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS libkiln libkiln_static EXPORT kilnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(KILN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_DIR})
configure_package_config_file(cmake/kilnConfig.cmake.in ${CMAKE_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
# The compiler is a build-machine tool: a 32-bit cross build may use a 64-bit kiln.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
              cmake/kiln_add_model.cmake cmake/kiln_stack.cmake DESTINATION ${KILN_CMAKE_DIR})

# pkg-config: -lkiln is the shared library; --static adds what libkiln.a needs.
get_filename_component(llvm_dir ${LLVM_LIB} DIRECTORY)
get_filename_component(llvm_name ${LLVM_LIB} NAME_WE) # libLLVM-19
string(REGEX REPLACE "^lib" "" llvm_name ${llvm_name})
get_filename_component(pbc_dir ${PROTOBUF_C_LIB} DIRECTORY)
set(KILN_PC_PRIVATE_LIBS "-L${llvm_dir} -l${llvm_name} -L${pbc_dir} -lprotobuf-c -lm -ldl -lpthread")
configure_file(cmake/kiln.pc.in ${CMAKE_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kiln.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# kiln(1), written by kiln from the same table as --help and docs/cli.md (tools/help.c).
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/kiln.1
                   COMMAND kiln help --man > ${CMAKE_BINARY_DIR}/kiln.1
                   DEPENDS kiln COMMENT "Writing the man page kiln(1)")
add_custom_target(kiln_man ALL DEPENDS ${CMAKE_BINARY_DIR}/kiln.1)
install(FILES ${CMAKE_BINARY_DIR}/kiln.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/digits examples/jit examples/firmware DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# find_package(kiln) from the build tree, without installing (kiln_DIR=<build>/kiln-build-tree):
# the compiler just built and the CMake functions from the source tree, as a cross-compiling
# project sees the installed package (no host libraries). The firmware test builds
# examples/firmware against it.
set(KILN_BUILD_TREE_DIR ${CMAKE_BINARY_DIR}/kiln-build-tree)
file(GENERATE OUTPUT ${KILN_BUILD_TREE_DIR}/kilnConfig.cmake CONTENT
"# kiln's build tree as a package (cmake/install.cmake). Generated; do not edit.
set(KILN_VERSION ${PROJECT_VERSION})
if(NOT TARGET kiln::kiln)
  add_executable(kiln::kiln IMPORTED)
  set_target_properties(kiln::kiln PROPERTIES IMPORTED_LOCATION \"$<TARGET_FILE:kiln>\")
endif()
if(NOT KILN_EXECUTABLE)
  set(KILN_EXECUTABLE \"$<TARGET_FILE:kiln>\")
endif()
include(\"${CMAKE_SOURCE_DIR}/cmake/kiln_add_model.cmake\")
")
write_basic_package_version_file(${KILN_BUILD_TREE_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
