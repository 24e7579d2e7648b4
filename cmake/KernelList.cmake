# The registry's space as CMake needs it, and a deployment build's kernel list: the registry ids
# a lean libtunedreduce compiles (docs/library.md, "A deployment library"). `tunedreduce deploy`
# writes such a list from tuning databases; the format is one registry id per line, blank lines
# and '#' comments ignored.
#
# Nothing here knows the space's names or parses C++: kernels/space_list.cpp, compiled and run as
# CMake configures, writes what kernels/ and exact/ generate from kernels/space.hpp,
# tunedreduce/types.hpp and runtime/defaults.cpp as a CMake script.
#
# Used by kernels/CMakeLists.txt, exact/CMakeLists.txt and, in script mode, by the test
# tests/deploy/virtual_arch.cmake (tr_virtual_arch_option alone).

# The generator's sources: itself and what it links (the headers they include are its input too).
set(TR_SPACE_LIST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/../kernels/space_list.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../kernels/registry_names.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../kernels/geometry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../runtime/defaults.cpp)

# _tr_space_list(ARGS OUT_VAR): the output of kernels/space_list.cpp run with ARGS (empty or a
# kernel list file), a CMake script; compiled once per configuration, run once per ARGS. A run
# that fails stops the configuration with its message.
function(_tr_space_list args out)
  string(MD5 tag "${args}")
  get_property(have GLOBAL PROPERTY TR_SPACE_LIST_${tag} SET)
  if(have)
    get_property(text GLOBAL PROPERTY TR_SPACE_LIST_${tag})
    set(${out} "${text}" PARENT_SCOPE)
    return()
  endif()
  get_filename_component(src "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/.." ABSOLUTE)
  try_run(run_rc compiled ${PROJECT_BINARY_DIR}/space_list
    SOURCES ${TR_SPACE_LIST_SOURCES}
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${src};${src}/include;${CUDAToolkit_INCLUDE_DIRS}"
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    COMPILE_OUTPUT_VARIABLE compile_log
    RUN_OUTPUT_VARIABLE text
    ARGS ${args})
  if(NOT compiled)
    message(FATAL_ERROR "kernels/space_list.cpp did not compile:\n${compile_log}")
  endif()
  if(NOT run_rc EQUAL 0)
    message(FATAL_ERROR "${text}")
  endif()
  # Configure again when the space, the rules or the list change.
  file(GLOB_RECURSE inputs ${src}/kernels/*.hpp ${src}/exact/*.hpp
       ${src}/include/tunedreduce/*.hpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${TR_SPACE_LIST_SOURCES}
               ${src}/runtime/defaults.hpp ${inputs} ${args})
  set_property(GLOBAL PROPERTY TR_SPACE_LIST_${tag} "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# tr_kernel_space(): sets TR_KERNEL_KEYS, the (dtype, op) keys of the full build's instances of
# the kernel templates ("i32:sum;...", kernels/space.hpp's keys but those of the exact families,
# whose entries exact/ compiles).
macro(tr_kernel_space)
  _tr_space_list("" _tr_space_script)
  cmake_language(EVAL CODE "${_tr_space_script}")
endmacro()

# tr_deploy_space(): a deployment build's kernels, from TUNEDREDUCE_KERNELS and the built-in
# rules (runtime/defaults.cpp: a deployment library always has them, so that every lookup has a
# kernel). A line of the list that is no id of the registry's space stops the configuration
# with the file, the line number and the line. Sets
#   TR_DEPLOY_LISTED      the list's ids, in file order, duplicates kept
#   TR_DEPLOY_SELECTED    those and the built-in rules' ids, duplicates removed
#   TR_DEPLOY_TEMPLATED   the selected instances of the kernel templates, "DTYPE_OP|ID" each
#   TR_KERNEL_PARAMS_<ID> the C++ initializer of such an ID's kernels::KernelParams
#   TR_DEPLOY_COMPILED    the registry's ids, sorted: the templated ones, and both finishes of
#                         each selected exact entry
#   TR_DEPLOY_EXACT_FIRST_PASSES  the first passes exact/ compiles for them (tr_generate_exact_sources)
macro(tr_deploy_space)
  get_filename_component(_tr_list "${TUNEDREDUCE_KERNELS}" ABSOLUTE)
  if(NOT EXISTS "${_tr_list}" OR IS_DIRECTORY "${_tr_list}")
    message(FATAL_ERROR "TUNEDREDUCE_KERNELS: '${TUNEDREDUCE_KERNELS}' is not a file")
  endif()
  _tr_space_list("${_tr_list}" _tr_space_script)
  cmake_language(EVAL CODE "${_tr_space_script}")
endmacro()

# The exact families' first passes (exact/sum_kernels.cuh's exact_sum_blocks, exact/sum.hpp's
# knobs): a key "DTYPE_bBLOCK_vVECTOR_uUNROLL_eEXPANSION_RESIDENCE" names one instance.
set(TR_EXACT_KEY_REGEX "^([a-z0-9]+)_b([0-9]+)_v([0-9]+)_u([0-9]+)_e([0-9]+)_(registers|memory)$")

# tr_exact_all_first_passes(OUT_VAR): every first pass exact_sum's knobs name: block 128, 256,
# 512 x vector (float 1, 2, 4; double 1, 2; the half types 8) x unroll 1, 2, 4 x expansion (float
# and the halves 1, 2; double 2, 3) x chunks (float and the halves registers or memory; double
# memory): 108 float, 36 double, 36 f16 and 36 bf16 keys.
function(tr_exact_all_first_passes out)
  set(keys)
  foreach(block 128 256 512)
    foreach(unroll 1 2 4)
      foreach(vector 1 2 4)
        foreach(expansion 1 2)
          foreach(residence registers memory)
            list(APPEND keys "f32_b${block}_v${vector}_u${unroll}_e${expansion}_${residence}")
          endforeach()
        endforeach()
      endforeach()
      foreach(vector 1 2)
        foreach(expansion 2 3)
          list(APPEND keys "f64_b${block}_v${vector}_u${unroll}_e${expansion}_memory")
        endforeach()
      endforeach()
      foreach(half f16 bf16)
        foreach(expansion 1 2)
          foreach(residence registers memory)
            list(APPEND keys "${half}_b${block}_v8_u${unroll}_e${expansion}_${residence}")
          endforeach()
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  set(${out} "${keys}" PARENT_SCOPE)
endfunction()

# tr_generate_exact_sources(KEYS GEN_DIR PER_FILE SOURCES_VAR INDEX_VAR): writes translation
# units of at most PER_FILE first passes each (sorted keys, one element type a unit) from
# exact/first_pass.cu.in, and GEN_DIR/first_pass_index.inc, which exact/sum_kernels.cu includes:
# the declarations of their functions and the list of them. Returns the units' paths and the
# index's.
function(tr_generate_exact_sources keys gen_dir per_file sources_var index_var)
  set(keyed)
  foreach(key IN LISTS keys)
    if(NOT key MATCHES "${TR_EXACT_KEY_REGEX}")
      message(FATAL_ERROR "'${key}' is not an exact first pass")
    endif()
    list(APPEND keyed "${CMAKE_MATCH_1}|${key}")
  endforeach()
  _tr_chunk_keyed("${keyed}" ${per_file} chunks)
  set(sources)
  set(decls "")
  set(parts "")
  foreach(chunk IN LISTS chunks)
    _tr_split_chunk("${chunk}" dtype part chunk_keys)
    set(TR_EXACT_FUNCTION "first_passes_${dtype}_${part}")
    set(TR_EXACT_ROWS "")
    foreach(key IN LISTS chunk_keys)
      _tr_exact_row("${key}" row)
      string(APPEND TR_EXACT_ROWS "      ${row},  // ${key}\n")
    endforeach()
    configure_file(${PROJECT_SOURCE_DIR}/exact/first_pass.cu.in
                   ${gen_dir}/${TR_EXACT_FUNCTION}.cu @ONLY)
    list(APPEND sources ${gen_dir}/${TR_EXACT_FUNCTION}.cu)
    string(APPEND decls "std::span<const FirstPass> ${TR_EXACT_FUNCTION}();\n")
    string(APPEND parts "    &${TR_EXACT_FUNCTION},\n")
  endforeach()
  file(CONFIGURE OUTPUT ${gen_dir}/first_pass_index.inc CONTENT
"// Generated by exact/CMakeLists.txt (cmake/KernelList.cmake): do not edit.
${decls}
inline constexpr std::span<const FirstPass> (*const first_pass_parts[])() = {
${parts}};
" @ONLY)
  set(${sources_var} "${sources}" PARENT_SCOPE)
  set(${index_var} ${gen_dir}/first_pass_index.inc PARENT_SCOPE)
endfunction()

# _tr_exact_row(KEY OUT_VAR): the C++ expression of KEY's table row (exact/first_pass.cuh); the
# element type's C++ type is tunedreduce/types.hpp's dtype_t.
function(_tr_exact_row key out)
  string(REGEX MATCH "${TR_EXACT_KEY_REGEX}" m "${key}")
  set(${out} "FirstPassInstance<dtype_t<DType::${CMAKE_MATCH_1}>, ${CMAKE_MATCH_2}, ${CMAKE_MATCH_3}, ${CMAKE_MATCH_4}, ${CMAKE_MATCH_5}, Residence::${CMAKE_MATCH_6}>::row()"
      PARENT_SCOPE)
endfunction()

# tr_generate_kernel_sources(KEYED GEN_DIR PER_FILE SOURCES_VAR INDEX_DECLS_VAR INDEX_LIST_VAR):
# writes translation units of at most PER_FILE entries each (sorted ids, one group a unit) that
# instantiate exactly the ids of KEYED ("GROUP|ID" each: GROUP names the units, e.g. the element
# type; ID's parameters in TR_KERNEL_PARAMS_<ID>), and returns their paths and the declarations
# and the list of their functions for instances_index.inc.
function(tr_generate_kernel_sources keyed gen_dir per_file sources_var decls_var list_var)
  _tr_chunk_keyed("${keyed}" ${per_file} chunks)
  set(sources)
  set(decls "")
  set(index "")
  foreach(chunk IN LISTS chunks)
    _tr_split_chunk("${chunk}" group part chunk_ids)
    _tr_write_kernel_source("${chunk_ids}" "${gen_dir}" "${group}" ${part} file fn)
    list(APPEND sources "${file}")
    string(APPEND decls "std::span<const Entry> ${fn}();\n")
    string(APPEND index "      &${fn},\n")
  endforeach()
  set(${sources_var} "${sources}" PARENT_SCOPE)
  set(${decls_var} "${decls}" PARENT_SCOPE)
  set(${list_var} "${index}" PARENT_SCOPE)
endfunction()

# _tr_chunk_keyed(KEYED PER_FILE OUT_VAR): KEYED holds "GROUP|ITEM" strings (an ITEM has neither
# '|' nor ','); sorted and without duplicates, they are cut into runs of at most PER_FILE items
# of one group, each returned as "GROUP|PART|ITEM,ITEM,...", PART counting from 0 in its group.
function(_tr_chunk_keyed keyed per_file out)
  list(REMOVE_DUPLICATES keyed)
  list(SORT keyed)
  set(chunks)
  set(group "")
  set(items "")
  set(count 0)
  set(part 0)
  foreach(k IN LISTS keyed)
    string(REGEX MATCH "^([^|]*)\\|(.*)$" m "${k}")
    set(g "${CMAKE_MATCH_1}")
    set(item "${CMAKE_MATCH_2}")
    if(count GREATER 0 AND (NOT g STREQUAL group OR count EQUAL per_file))
      list(APPEND chunks "${group}|${part}|${items}")
      if(g STREQUAL group)
        math(EXPR part "${part} + 1")
      else()
        set(part 0)
      endif()
      set(items "")
      set(count 0)
    endif()
    set(group "${g}")
    if(count GREATER 0)
      string(APPEND items ",")
    endif()
    string(APPEND items "${item}")
    math(EXPR count "${count} + 1")
  endforeach()
  if(count GREATER 0)
    list(APPEND chunks "${group}|${part}|${items}")
  endif()
  set(${out} "${chunks}" PARENT_SCOPE)
endfunction()

# _tr_split_chunk(CHUNK GROUP_VAR PART_VAR ITEMS_VAR): the parts of one of _tr_chunk_keyed's
# chunks, the items as a list.
function(_tr_split_chunk chunk group_var part_var items_var)
  string(REGEX MATCH "^([^|]*)\\|([0-9]+)\\|(.*)$" m "${chunk}")
  string(REPLACE "," ";" items "${CMAKE_MATCH_3}")
  set(${group_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(${part_var} "${CMAKE_MATCH_2}" PARENT_SCOPE)
  set(${items_var} "${items}" PARENT_SCOPE)
endfunction()

function(_tr_write_kernel_source ids gen_dir key part file_var fn_var)
  set(fn "selected_${key}_${part}")
  set(body "")
  set(asserts "")
  foreach(id IN LISTS ids)
    set(init "${TR_KERNEL_PARAMS_${id}}")
    string(APPEND body "    ${init},  // ${id}\n")
    string(APPEND asserts "static_assert(space::contains(${init}),\n              \"${id} is not in the registry's space (kernels/space.hpp)\");\n")
  endforeach()
  set(file "${gen_dir}/${fn}.cu")
  file(CONFIGURE OUTPUT "${file}" CONTENT
"// Generated by kernels/CMakeLists.txt from the deployment kernel list: do not edit.
#include \"kernels/instantiate.cuh\"

namespace tunedreduce::kernels::detail {
namespace {
constexpr KernelParams ${fn}_configs[] = {
${body}};
${asserts}}  // namespace

std::span<const Entry> ${fn}() {
  return instantiate_list<${fn}_configs>();
}
}  // namespace tunedreduce::kernels::detail
" @ONLY)
  set(${file_var} "${file}" PARENT_SCOPE)
  set(${fn_var} "${fn}" PARENT_SCOPE)
endfunction()

# A deployment build may compile its kernels once, for one virtual architecture, and give every
# real architecture machine code made from that PTX (docs/library.md, "One virtual
# architecture"): the front end (cicc, about half of a kernel's compile time for four
# architectures) then runs once per kernel instead of once per architecture; ptxas still runs once
# per architecture. The kernels use nothing architecture-specific.
set(TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH "" CACHE STRING
    "A deployment build: compile the kernels once, as compute_N (e.g. 80), and make the machine \
code of every N-real architecture of TUNEDREDUCE_CUDA_ARCHS from it; empty: each architecture \
compiled for itself")

# tr_virtual_arch_option(ARCHS VIRTUAL OUT_VAR): the nvcc option that compiles for the virtual
# architecture compute_VIRTUAL and makes machine code for every real architecture of ARCHS from it
# ("--generate-code=arch=compute_80,code=[sm_80,sm_90,compute_80]"). ARCHS are as
# CMAKE_CUDA_ARCHITECTURES takes them and must say what the option gives: each "N-real" (N at
# least VIRTUAL), "VIRTUAL-virtual" (its PTX, which the driver compiles for a GPU newer than the
# list) or "VIRTUAL" (both); anything else stops the configuration, naming the entry.
function(tr_virtual_arch_option archs virtual out)
  if(NOT virtual MATCHES "^[0-9]+$")
    message(FATAL_ERROR "TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH: '${virtual}' is not an architecture "
                        "number such as 80")
  endif()
  set(codes)
  set(ptx OFF)
  foreach(a IN LISTS archs)
    if(a MATCHES "^([0-9]+)(-real)?$")
      if(CMAKE_MATCH_1 LESS virtual)
        message(FATAL_ERROR "TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH=${virtual}: '${a}' of "
                            "TUNEDREDUCE_CUDA_ARCHS is older than compute_${virtual}, whose PTX "
                            "it cannot run")
      endif()
      if(NOT CMAKE_MATCH_2 AND NOT CMAKE_MATCH_1 EQUAL virtual)
        message(FATAL_ERROR "TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH=${virtual}: '${a}' of "
                            "TUNEDREDUCE_CUDA_ARCHS asks for PTX of compute_${CMAKE_MATCH_1}; "
                            "from one virtual architecture there is PTX of compute_${virtual} "
                            "only: write ${CMAKE_MATCH_1}-real;${virtual}-virtual")
      endif()
      list(APPEND codes "sm_${CMAKE_MATCH_1}")
      if(NOT CMAKE_MATCH_2)
        set(ptx ON)
      endif()
    elseif(a STREQUAL "${virtual}-virtual")
      set(ptx ON)
    else()
      message(FATAL_ERROR "TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH=${virtual}: '${a}' of "
                          "TUNEDREDUCE_CUDA_ARCHS is neither N-real nor ${virtual}-virtual")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES codes)
  if(ptx)
    list(APPEND codes "compute_${virtual}")
  endif()
  if(NOT codes)
    message(FATAL_ERROR "TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH=${virtual}: TUNEDREDUCE_CUDA_ARCHS is empty")
  endif()
  list(JOIN codes "," joined)
  set(${out} "--generate-code=arch=compute_${virtual},code=[${joined}]" PARENT_SCOPE)
endfunction()
