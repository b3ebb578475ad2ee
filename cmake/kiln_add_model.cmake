# kiln_add_model() and kiln_add_arena(): ONNX models compiled by `kiln compile` at build
# time, as static libraries a firmware or host target links. Used in kiln's own build
# (include()d by CMakeLists.txt) and installed with kilnConfig.cmake for
# find_package(kiln). The reference is docs/cmake.md.
#
# kiln_add_model(<target> MODEL <file.onnx>
#                [NAME <c-prefix>]              symbols <c-prefix>_run, <c-prefix>.h (default <target>)
#                [EMIT c|obj|opencl]            generated C (default), an LLVM object, OpenCL
#                [TARGET <kiln-target>]         e.g. cortex-m4; default generic for c, native for obj
#                [SHAPE <input>=<d0,d1,..>...]  fix input shapes (--shape)
#                [DIM <name>=<value>...]        fix symbolic dimensions (--dim)
#                [QUANTIZE int8 CALIBRATE <path>]  needs a kiln with quantization
#                [OPTIONS <kiln compile options>...])
#
# <target> becomes a static library of the generated code whose include directory holds
# <c-prefix>.h. The code is regenerated when the model, the calibration data, the options
# or the kiln executable change. When kiln can run at configure time (an installed or
# already built kiln), the sizes from <c-prefix>.h are also CMake variables in the
# caller's scope and properties of <target>:
#   <target>_ARENA_SIZE, <target>_ARENA_ALIGN, <target>_WEIGHTS_SIZE
#   (properties KILN_ARENA_SIZE, KILN_ARENA_ALIGN, KILN_WEIGHTS_SIZE; KILN_NAME is always set)
#   With OPTIONS --memory <region>=<size>,... also <target>_NUM_REGIONS and, per region,
#   <target>_ARENA_<region>_SIZE (properties KILN_NUM_REGIONS, KILN_ARENA_<region>_SIZE;
#   <target>_ARENA_SIZE is then their sum). kiln_add_arena() takes one-arena models only.
# With EMIT c and GCC 10 or later, the include directory also holds <c-prefix>_stack.h:
# <c-prefix>_STACK_BYTES, the stack <c-prefix>_run needs as GCC compiled it (its call
# graph, -fcallgraph-info=su; cmake/kiln_stack.cmake), and <c-prefix>_STACK_CALLS, the
# library functions it calls, whose own stack is not included; not with OPTIONS --threads.
#
# kiln_add_arena(<target> MODELS <model-target>... [NAME <symbol>] [SECTION <linker-section>])
#   One arena for models that never run at the same time: <target> is a static library
#   defining `unsigned char <symbol>[<symbol>_SIZE]` aligned for all of them, declared in
#   <symbol>.h with <symbol>_SIZE (the largest <c-prefix>_ARENA_SIZE) and <symbol>_ALIGN.
#
# kiln_target_cc_flags(<var> <kiln-target>)
#   <var> = the C compiler options that select <kiln-target> (e.g. cortex-m4: -mcpu=cortex-m4
#   -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16) as a list, from `kiln help --cc-flags`;
#   empty for a hosted target. Needs kiln at configure time (find_package(kiln)).
#
# The compiler is KILN_EXECUTABLE if set, else the imported kiln::kiln (find_package),
# else the in-tree `kiln` target. It runs on the build machine: in a cross-compiling
# project (arm-none-eabi toolchain file) only the generated code is cross-compiled.
include_guard(GLOBAL)
set(_KILN_STACK_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/kiln_stack.cmake)

# The kiln executable as a path or generator expression for commands (*cmd), and as a
# path usable at configure time, or "" when it does not exist yet (*now).
function(_kiln_executable cmd now)
  if(KILN_EXECUTABLE)
    set(c ${KILN_EXECUTABLE})
    set(path ${KILN_EXECUTABLE})
  elseif(TARGET kiln::kiln)
    set(c $<TARGET_FILE:kiln::kiln>)
    get_target_property(path kiln::kiln LOCATION)
  elseif(TARGET kiln)
    set(c $<TARGET_FILE:kiln>)
    set(path "")
  else()
    message(FATAL_ERROR "kiln_add_model: no kiln executable: use find_package(kiln) or set "
                        "KILN_EXECUTABLE to the path of kiln")
  endif()
  if(path AND NOT EXISTS "${path}")
    set(path "")
  endif()
  set(${cmd} ${c} PARENT_SCOPE)
  set(${now} "${path}" PARENT_SCOPE)
endfunction()

function(kiln_add_model target)
  cmake_parse_arguments(KAM "" "MODEL;NAME;EMIT;TARGET;QUANTIZE;CALIBRATE"
                        "SHAPE;DIM;OPTIONS" ${ARGN})
  set(where "kiln_add_model(${target})")
  if(KAM_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments '${KAM_UNPARSED_ARGUMENTS}' "
                        "(put kiln compile options after OPTIONS)")
  endif()
  if(NOT KAM_MODEL)
    message(FATAL_ERROR "${where}: MODEL <file.onnx> is required")
  endif()
  get_filename_component(model "${KAM_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "${where}: model '${model}' does not exist")
  endif()
  if(NOT KAM_NAME)
    set(KAM_NAME ${target})
  endif()
  if(NOT KAM_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME '${KAM_NAME}' is not a C identifier (it prefixes the "
                        "generated symbols); give NAME <c-prefix>")
  endif()
  if(NOT KAM_EMIT)
    set(KAM_EMIT c)
  endif()
  if(NOT KAM_EMIT MATCHES "^(c|obj|opencl)$")
    message(FATAL_ERROR "${where}: EMIT must be c, obj or opencl, not '${KAM_EMIT}'")
  endif()
  if(KAM_EMIT STREQUAL "obj" AND NOT KAM_TARGET AND CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "${where}: EMIT obj in a cross-compiling project needs TARGET "
                        "(e.g. TARGET cortex-m4): the default, native, is the build machine")
  endif()
  if(KAM_EMIT STREQUAL "opencl" AND KAM_TARGET)
    message(FATAL_ERROR "${where}: TARGET does not apply to EMIT opencl")
  endif()
  if(KAM_QUANTIZE AND NOT KAM_CALIBRATE)
    message(FATAL_ERROR "${where}: QUANTIZE ${KAM_QUANTIZE} needs CALIBRATE <path> "
                        "(sample inputs to choose the scales from)")
  endif()
  if(KAM_CALIBRATE AND NOT KAM_QUANTIZE)
    message(FATAL_ERROR "${where}: CALIBRATE is only used with QUANTIZE int8")
  endif()

  # the kiln compile arguments, apart from -o and --emit
  set(args --name ${KAM_NAME})
  if(KAM_TARGET)
    list(APPEND args --target ${KAM_TARGET})
  elseif(KAM_EMIT STREQUAL "obj")
    list(APPEND args --target native)
  endif()
  foreach(s ${KAM_SHAPE})
    list(APPEND args --shape ${s})
  endforeach()
  foreach(d ${KAM_DIM})
    list(APPEND args --dim ${d})
  endforeach()
  set(data_deps)
  if(KAM_QUANTIZE)
    get_filename_component(calib "${KAM_CALIBRATE}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${calib}")
      message(FATAL_ERROR "${where}: CALIBRATE '${calib}' does not exist")
    endif()
    list(APPEND args --quantize ${KAM_QUANTIZE} --calibrate ${calib})
    if(IS_DIRECTORY "${calib}")
      file(GLOB_RECURSE data_deps CONFIGURE_DEPENDS "${calib}/*")
    else()
      set(data_deps "${calib}")
    endif()
  endif()
  list(APPEND args ${KAM_OPTIONS})

  _kiln_executable(kiln kiln_now)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/kiln_${target})
  file(MAKE_DIRECTORY ${dir})
  # The command line as a file rewritten only when it changes: a dependency that
  # regenerates the code when the options do, with every generator.
  string(REPLACE ";" "\n" argtext "${KAM_EMIT};${model};${args}")
  file(CONFIGURE OUTPUT ${dir}/options.txt CONTENT "${argtext}\n")

  set(outputs ${dir}/${KAM_NAME}.h)
  if(KAM_EMIT STREQUAL "opencl") # NAME.c is host code on kiln's OpenCL runtime layer
    set(code ${dir}/${KAM_NAME}.c)
    list(APPEND outputs ${dir}/${KAM_NAME}.cl)
  elseif(KAM_EMIT STREQUAL "obj")
    set(code ${dir}/${KAM_NAME}.o)
  else()
    set(code ${dir}/${KAM_NAME}.c)
  endif()
  if("--weights-file" IN_LIST KAM_OPTIONS)
    list(APPEND outputs ${dir}/${KAM_NAME}.weights)
  endif()
  add_custom_command(
    OUTPUT ${code} ${outputs}
    COMMAND ${kiln} compile ${model} -o ${dir} --emit ${KAM_EMIT} ${args}
    DEPENDS ${model} ${kiln} ${dir}/options.txt ${data_deps}
    COMMENT "kiln: compiling ${KAM_MODEL} (${KAM_NAME}, ${KAM_EMIT})"
    VERBATIM)
  # GCC 12.2 with AVX-512 (-march=native on such a host) stores a wrong constant where it
  # copies a small constant array by pieces (docs/generated-c.md); -mstore-max=128 avoids
  # it and leaves kernels over run-time data as they were. Only where the compiler takes
  # the flag (GCC 12 and later for x86; not Clang, not Arm's GCC).
  if(NOT KAM_EMIT STREQUAL "obj" AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
    include(CheckCCompilerFlag)
    check_c_compiler_flag(-mstore-max=128 KILN_CC_STORE_MAX)
    if(KILN_CC_STORE_MAX)
      set_property(SOURCE ${code} APPEND PROPERTY COMPILE_OPTIONS -mstore-max=128)
    endif()
  endif()
  # Generated C built by GCC 10 or later: <c-prefix>_stack.h with <c-prefix>_STACK_BYTES,
  # the stack <c-prefix>_run needs, from GCC's call graph of the object as compiled
  # (kiln_stack.cmake). The code is an object library, so that the header, computed from
  # its object, is made before anything that links <target> is compiled. Not with
  # OPTIONS --threads (host code: the tasks run on the stacks of the caller's threads).
  if(KAM_EMIT STREQUAL "c" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 10 AND NOT "--threads" IN_LIST KAM_OPTIONS)
    add_library(${target}_code OBJECT ${code} ${outputs})
    set_target_properties(${target}_code PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
    target_include_directories(${target}_code PRIVATE ${dir})
    target_compile_options(${target}_code PRIVATE -fstack-usage -fcallgraph-info=su)
    # Not through a compiler launcher: ccache (4.7, Debian 12) caches the object but not
    # the .ci and .su files GCC writes beside it, so a cache hit left kiln_stack.cmake
    # without its call graph and failed the build (tests/stack/launcher.sh).
    set_target_properties(${target}_code PROPERTIES C_COMPILER_LAUNCHER "")
    set(stack_h ${dir}/${KAM_NAME}_stack.h)
    set(objdump)
    if(CMAKE_OBJDUMP)
      set(objdump -DOBJDUMP=${CMAKE_OBJDUMP})
    endif()
    add_custom_command(
      OUTPUT ${stack_h}
      COMMAND ${CMAKE_COMMAND} -DOBJECT=$<TARGET_OBJECTS:${target}_code> -DNAME=${KAM_NAME}
              -DOUT=${stack_h} ${objdump} -P ${_KILN_STACK_SCRIPT}
      DEPENDS ${target}_code $<TARGET_OBJECTS:${target}_code> ${_KILN_STACK_SCRIPT}
      COMMENT "kiln: ${KAM_NAME}_STACK_BYTES from GCC's call graph"
      VERBATIM)
    add_library(${target} STATIC $<TARGET_OBJECTS:${target}_code> ${stack_h})
  else()
    add_library(${target} STATIC ${code} ${outputs})
  endif()
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C C_STANDARD 99 C_EXTENSIONS OFF
                                             KILN_NAME ${KAM_NAME} KILN_DIR ${dir})
  target_include_directories(${target} PUBLIC ${dir})
  if(KAM_EMIT STREQUAL "opencl")
    if(TARGET kiln_opencl) # kiln's own build
      target_link_libraries(${target} PUBLIC kiln_opencl)
      target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
    elseif(TARGET kiln::opencl)
      target_link_libraries(${target} PUBLIC kiln::opencl)
    else()
      message(FATAL_ERROR "${where}: EMIT opencl needs kiln's OpenCL runtime (kiln built "
                          "with Halide 14 and the OpenCL headers)")
    endif()
  endif()
  target_link_libraries(${target} PUBLIC m)

  # Sizes for CMake: the same compile, header only, at configure time; rerun when the
  # model or kiln change.
  if(kiln_now AND NOT KAM_EMIT STREQUAL "opencl") # OpenCL: the arena is on the device
    set(cdir ${dir}/configure)
    file(MAKE_DIRECTORY ${cdir})
    execute_process(COMMAND ${kiln_now} compile ${model} -o ${cdir} --emit h ${args}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}" err)
      message(FATAL_ERROR "${where}: ${err}\n(kiln_add_model passes SHAPE as --shape, DIM as "
                          "--dim and OPTIONS as they are)")
    endif()
    # with OPTIONS --memory R1=..,R2=..: also ARENA_<region>_SIZE (names as given)
    file(STRINGS ${cdir}/${KAM_NAME}.h defs
         REGEX "^#define ${KAM_NAME}_(ARENA_SIZE|ARENA_ALIGN|WEIGHTS_SIZE|NUM_REGIONS|ARENA_[A-Za-z_][A-Za-z0-9_]*_SIZE) ")
    foreach(line ${defs})
      if(line MATCHES "^#define ${KAM_NAME}_([A-Za-z0-9_]+) ([0-9]+)")
        set(${target}_${CMAKE_MATCH_1} ${CMAKE_MATCH_2} PARENT_SCOPE)
        set_target_properties(${target} PROPERTIES KILN_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
      endif()
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${model} ${kiln_now}
                                                                   ${data_deps})
  endif()
endfunction()

function(kiln_target_cc_flags var target)
  _kiln_executable(kiln kiln_now)
  if(NOT kiln_now)
    message(FATAL_ERROR "kiln_target_cc_flags(${target}): kiln must exist at configure time "
                        "(find_package(kiln), or KILN_EXECUTABLE set to a built kiln)")
  endif()
  execute_process(COMMAND ${kiln_now} help --cc-flags ${target} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    message(FATAL_ERROR "kiln_target_cc_flags(${target}): ${err}")
  endif()
  separate_arguments(out UNIX_COMMAND "${out}")
  set(${var} ${out} PARENT_SCOPE)
endfunction()

function(kiln_add_arena target)
  cmake_parse_arguments(KAA "" "NAME;SECTION" "MODELS" ${ARGN})
  set(where "kiln_add_arena(${target})")
  if(NOT KAA_MODELS)
    message(FATAL_ERROR "${where}: MODELS <kiln_add_model target>... is required")
  endif()
  if(NOT KAA_NAME)
    set(KAA_NAME ${target})
  endif()
  if(NOT KAA_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME '${KAA_NAME}' is not a C identifier")
  endif()
  set(includes)
  set(size "0")
  set(align "1")
  set(known TRUE)
  set(max 0)
  set(names)
  foreach(m ${KAA_MODELS})
    if(NOT TARGET ${m})
      message(FATAL_ERROR "${where}: '${m}' is not a target of kiln_add_model()")
    endif()
    get_target_property(cname ${m} KILN_NAME)
    if(NOT cname)
      message(FATAL_ERROR "${where}: '${m}' is not a target of kiln_add_model()")
    endif()
    if(cname IN_LIST names)
      message(FATAL_ERROR "${where}: two models are named '${cname}': their symbols would clash in "
                          "one image; give each kiln_add_model() its own NAME")
    endif()
    get_target_property(nr ${m} KILN_NUM_REGIONS)
    if(nr)
      message(FATAL_ERROR "${where}: '${m}' was compiled with --memory (${nr} regions): "
                          "kiln_add_arena() shares one arena; give its regions their own")
    endif()
    list(APPEND names ${cname})
    string(APPEND includes "#include \"${cname}.h\"\n")
    set(size "KN_ARENA_MAX(${cname}_ARENA_SIZE, ${size})")
    set(align "KN_ARENA_MAX(${cname}_ARENA_ALIGN, ${align})")
    get_target_property(s ${m} KILN_ARENA_SIZE)
    if(s)
      if(s GREATER max)
        set(max ${s})
      endif()
    else()
      set(known FALSE)
    endif()
  endforeach()
  set(N ${KAA_NAME})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/kiln_${target})
  set(attr "")
  if(KAA_SECTION)
    set(attr " __attribute__((section(\"${KAA_SECTION}\")))")
  endif()
  file(CONFIGURE OUTPUT ${dir}/${N}.h CONTENT
"/* Generated by kiln_add_arena(${target}). Do not edit.
 * One arena for models that never run at the same time: pass ${N} to each one's _run. */
#ifndef ${N}_H
#define ${N}_H

${includes}
#define KN_ARENA_MAX(a, b) ((a) > (b) ? (a) : (b))
#define ${N}_SIZE ${size}
#define ${N}_ALIGN ${align}

extern unsigned char ${N}[${N}_SIZE];

#endif
")
  file(CONFIGURE OUTPUT ${dir}/${N}.c CONTENT
"/* Generated by kiln_add_arena(${target}). Do not edit. */
#include \"${N}.h\"

#if defined(__GNUC__) || defined(__clang__)
unsigned char ${N}[${N}_SIZE] __attribute__((aligned(${N}_ALIGN)))${attr};
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Alignas(${N}_ALIGN) unsigned char ${N}[${N}_SIZE];
#else
#error \"kiln_add_arena: needs GCC, Clang or C11 to align the arena\"
#endif
")
  add_library(${target} STATIC ${dir}/${N}.c ${dir}/${N}.h)
  target_include_directories(${target} PUBLIC ${dir})
  target_link_libraries(${target} PUBLIC ${KAA_MODELS})
  set_target_properties(${target} PROPERTIES KILN_NAME ${N})
  if(known)
    set(${target}_ARENA_SIZE ${max} PARENT_SCOPE)
    set_target_properties(${target} PROPERTIES KILN_ARENA_SIZE ${max})
  endif()
endfunction()
