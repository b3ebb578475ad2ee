# kiln_add_model(<target> MODEL <file.onnx> [NAME <c-prefix>] [OPTIONS <kiln compile options>...])
#
# Compiles an ONNX model to C at build time with `kiln compile` and makes <target> a
# static library of the generated code (include directory: the generated folder,
# so `#include "<name>.h"` works). Rebuilt when the model or kiln changes.
# KILN_EXECUTABLE names the compiler (the in-tree `kiln` target by default).
function(kiln_add_model target)
  cmake_parse_arguments(KAM "" "MODEL;NAME" "OPTIONS" ${ARGN})
  if(NOT KAM_MODEL)
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL is required")
  endif()
  if(NOT KAM_NAME)
    set(KAM_NAME ${target})
  endif()
  if(NOT KILN_EXECUTABLE)
    set(KILN_EXECUTABLE $<TARGET_FILE:kiln>)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/kiln_${target})
  add_custom_command(
    OUTPUT ${dir}/${KAM_NAME}.c ${dir}/${KAM_NAME}.h
    COMMAND ${KILN_EXECUTABLE} compile ${KAM_MODEL} -o ${dir} --name ${KAM_NAME} ${KAM_OPTIONS}
    DEPENDS ${KAM_MODEL} ${KILN_EXECUTABLE}
    COMMENT "kiln: compiling ${KAM_MODEL} to C"
    VERBATIM)
  add_library(${target} STATIC ${dir}/${KAM_NAME}.c)
  target_include_directories(${target} PUBLIC ${dir})
  set_target_properties(${target} PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
  target_link_libraries(${target} PUBLIC m)
endfunction()
