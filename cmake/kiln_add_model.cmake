# kiln_add_model(<target> MODEL <file.onnx> [NAME <c-prefix>] [EMIT c|obj|opencl] [TARGET <t>]
#                [OPTIONS <kiln compile options>...])
#
# Compiles an ONNX model at build time with `kiln compile` and makes <target> a static
# library of the result: generated C (EMIT c, the default) or an object file built by
# LLVM for TARGET (EMIT obj; default target native). The include directory is the
# generated folder, so `#include "<name>.h"` works. Rebuilt when the model or kiln
# changes.
# KILN_EXECUTABLE names the compiler (the in-tree `kiln` target by default).
function(kiln_add_model target)
  cmake_parse_arguments(KAM "" "MODEL;NAME;EMIT;TARGET" "OPTIONS" ${ARGN})
  if(NOT KAM_EMIT)
    set(KAM_EMIT c)
  endif()
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
  set(outputs)
  if(KAM_EMIT STREQUAL "opencl") # NAME.c is host code on kiln's OpenCL runtime layer
    set(code ${dir}/${KAM_NAME}.c)
    set(extra --emit opencl)
    set(outputs ${dir}/${KAM_NAME}.cl)
  elseif(KAM_EMIT STREQUAL "obj")
    set(code ${dir}/${KAM_NAME}.o)
    set(extra --emit obj)
    if(KAM_TARGET)
      list(APPEND extra --target ${KAM_TARGET})
    endif()
  else()
    set(code ${dir}/${KAM_NAME}.c)
    set(extra)
  endif()
  add_custom_command(
    OUTPUT ${code} ${dir}/${KAM_NAME}.h ${outputs}
    COMMAND ${KILN_EXECUTABLE} compile ${KAM_MODEL} -o ${dir} --name ${KAM_NAME} ${extra} ${KAM_OPTIONS}
    DEPENDS ${KAM_MODEL} ${KILN_EXECUTABLE}
    COMMENT "kiln: compiling ${KAM_MODEL} (${KAM_EMIT})"
    VERBATIM)
  add_library(${target} STATIC ${code} ${dir}/${KAM_NAME}.h)
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${target} PUBLIC ${dir})
  if(KAM_EMIT STREQUAL "opencl")
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
    target_link_libraries(${target} PUBLIC kiln_opencl)
  endif()
  set_target_properties(${target} PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
  target_link_libraries(${target} PUBLIC m)
endfunction()
