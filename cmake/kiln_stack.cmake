# kiln_stack.cmake: <NAME>_STACK_BYTES from GCC's call graph of the compiled model.
#
#   cmake -DOBJECT=<file.c.obj> -DNAME=<c-prefix> -DOUT=<NAME_stack.h> [-DOBJDUMP=<objdump>]
#         -P kiln_stack.cmake
#
# kiln_add_model() compiles the generated C with -fstack-usage -fcallgraph-info=su, which
# makes GCC write next to the object a VCG call graph (<object minus its last suffix>.ci):
# one node per function of the file with the bytes of its frame as compiled ("N bytes
# (static)"), one edge per call. The stack <NAME>_run needs is the heaviest path through
# that graph from <NAME>_run (and <NAME>_run_array): the sum of the frames on it, the
# bytes below the stack pointer at the call of <NAME>_run. It is exact for the code GCC
# produced, not an estimate, as long as every frame is static (no alloca, no VLA; the
# generated C has none) and nothing recurses; otherwise this script fails.
# Functions of other files (the C library's memcpy, libm's nearbyintf) are ellipse nodes
# without a frame size: their stack is not included, and the header names them in
# <NAME>_STACK_CALLS.
cmake_minimum_required(VERSION 3.21) # file(COPY_FILE), IN_LIST
if(NOT OBJECT OR NOT NAME OR NOT OUT)
  message(FATAL_ERROR "kiln_stack.cmake: needs -DOBJECT=, -DNAME= and -DOUT=")
endif()
string(REGEX REPLACE "\\.[^./]*$" "" base "${OBJECT}")
set(ci "${base}.ci")
if(NOT EXISTS "${ci}")
  message(FATAL_ERROR "kiln_stack.cmake: ${ci} does not exist (the C compiler must be GCC 10 "
                      "or later, with -fcallgraph-info=su)")
endif()
file(STRINGS "${ci}" lines)
set(nodes)
set(externs)
foreach(line IN LISTS lines)
  if(line MATCHES "^node: { title: \"([^\"]+)\" label: \"([^\"]*)\"(.*)")
    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_1}" id)
    set(title "${CMAKE_MATCH_1}")
    set(label "${CMAKE_MATCH_2}")
    list(APPEND nodes ${id})
    set(title_${id} "${title}")
    set(calls_${id})
    if(CMAKE_MATCH_3 MATCHES "ellipse")
      set(extern_${id} 1)
      set(frame_${id} 0)
    elseif(label MATCHES "\\\\n([0-9]+) bytes \\(([a-z,]+)\\)")
      set(frame_${id} ${CMAKE_MATCH_1})
      set(kind_${id} ${CMAKE_MATCH_2})
    else()
      message(FATAL_ERROR "kiln_stack.cmake: ${ci}: no frame size for '${title}'")
    endif()
  elseif(line MATCHES "^edge: { sourcename: \"([^\"]+)\" targetname: \"([^\"]+)\"")
    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_1}" s)
    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_2}" t)
    list(APPEND calls_${s} ${t})
    if(NOT DEFINED title_${t})
      set(title_${t} "${CMAKE_MATCH_2}")
    endif()
  endif()
endforeach()

# GCC's identical code folding leaves a function as an alias of another (kws_k3 = kws_k1):
# calls name it, the graph has no node for it. The object's symbol table (OBJDUMP -t) says
# which node's code it is: the same section and address.
if(OBJDUMP)
  execute_process(COMMAND ${OBJDUMP} -t ${OBJECT} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kiln_stack.cmake: ${OBJDUMP} -t ${OBJECT} failed")
  endif()
  string(REPLACE "\n" ";" syms "${syms}")
  foreach(line IN LISTS syms)
    if(line MATCHES "^([0-9a-f]+) .* F ([^ \t]+)[ \t]+[0-9a-f]+ (.+)$")
      string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_2}_${CMAKE_MATCH_1}" key)
      string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_3}" fn)
      set(key_${fn} ${key})
      list(APPEND at_${key} ${fn})
    endif()
  endforeach()
  foreach(id IN LISTS nodes)
    string(REGEX REPLACE "^.*:" "" fn "${title_${id}}")
    string(MAKE_C_IDENTIFIER "${fn}" fn)
    set(node_of_${fn} ${id})
  endforeach()
endif()
# heaviest path from a node, depth first; `path` holds the nodes being visited (recursion)
set(path)
function(_kiln_stack_depth id out)
  if(DEFINED depth_${id})
    set(${out} ${depth_${id}} PARENT_SCOPE)
    return()
  endif()
  if(NOT DEFINED frame_${id}) # an alias left by identical code folding?
    string(REGEX REPLACE "^.*:" "" fn "${title_${id}}")
    string(MAKE_C_IDENTIFIER "${fn}" fn)
    set(alias)
    if(DEFINED key_${fn})
      foreach(other IN LISTS at_${key_${fn}})
        if(DEFINED node_of_${other})
          set(alias ${node_of_${other}})
        endif()
      endforeach()
    endif()
    if(NOT alias)
      message(FATAL_ERROR "kiln_stack.cmake: ${ci}: a call of '${title_${id}}', which has no "
                          "node and no alias of one in ${OBJECT}'s symbols")
    endif()
    _kiln_stack_depth(${alias} d)
    set(${out} ${d} PARENT_SCOPE)
    return()
  endif()
  if(id IN_LIST path)
    message(FATAL_ERROR "kiln_stack.cmake: ${ci}: '${title_${id}}' is recursive: no bound")
  endif()
  if(kind_${id} AND NOT kind_${id} STREQUAL "static")
    message(FATAL_ERROR "kiln_stack.cmake: ${ci}: '${title_${id}}' has a ${kind_${id}} frame: "
                        "no static bound")
  endif()
  if(extern_${id})
    set_property(GLOBAL APPEND PROPERTY KILN_STACK_EXTERNS "${title_${id}}")
  endif()
  list(APPEND path ${id})
  set(best 0)
  set(callees ${calls_${id}})
  list(REMOVE_DUPLICATES callees)
  foreach(c IN LISTS callees)
    _kiln_stack_depth(${c} d)
    if(d GREATER best)
      set(best ${d})
    endif()
  endforeach()
  math(EXPR total "${frame_${id}} + ${best}")
  set(depth_${id} ${total} PARENT_SCOPE) # memo for the caller's later siblings
  set(${out} ${total} PARENT_SCOPE)
endfunction()

set(bytes 0)
set(found 0)
foreach(entry ${NAME}_run ${NAME}_run_array)
  string(MAKE_C_IDENTIFIER "${entry}" id)
  if(DEFINED frame_${id})
    set(found 1)
    _kiln_stack_depth(${id} d)
    if(d GREATER bytes)
      set(bytes ${d})
    endif()
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "kiln_stack.cmake: ${ci}: no function ${NAME}_run")
endif()
get_property(externs GLOBAL PROPERTY KILN_STACK_EXTERNS)
if(externs)
  list(REMOVE_DUPLICATES externs)
  list(SORT externs)
endif()
string(REPLACE ";" " " externs "${externs}")
string(TOUPPER "${NAME}" guard)
file(WRITE "${OUT}.tmp"
"/* ${NAME}_stack.h: written by kiln_add_model() (kiln_stack.cmake) from GCC's call graph of
 * the compiled ${NAME}.c (-fstack-usage -fcallgraph-info=su). */
#ifndef ${guard}_STACK_H
#define ${guard}_STACK_H

/* Bytes of stack below the stack pointer at the call of ${NAME}_run, for the code as
 * this compiler and these options built it: the heaviest call path's frames. */
#define ${NAME}_STACK_BYTES ${bytes}
/* Library functions ${NAME}_run calls, whose stack ${NAME}_STACK_BYTES does not include. */
#define ${NAME}_STACK_CALLS \"${externs}\"

#endif
")
# rewrite only on change, so that the files including it are not rebuilt for nothing
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
