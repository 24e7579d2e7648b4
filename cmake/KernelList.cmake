# A deployment build's kernel list: the registry ids a lean libtunedreduce compiles
# (docs/library.md, "A deployment library"). `tunedreduce deploy` writes such a list from tuning
# databases; the format is one registry id per line, blank lines and '#' comments ignored.
#
# Used by kernels/CMakeLists.txt and, in script mode, by the test tests/deploy/virtual_arch.cmake.

set(TR_ID_REGEX
  "^(neighbored_less|neighbored|interleaved|unroll_warps|unroll|complete_unroll|smem|warp_shuffle|vectorized|tiled|streaming|single_tile|exact_registers|exact_wide|exact)\\.b([0-9]+)(\\.u([0-9]+))?(\\.(static|dynamic))?\\.(two_pass|single_pass|packed)\\.(i32|u32|i64|u64|f32|f64|f16|bf16)\\.(sum|min|max|exact_sum|wide_sum|argmin|argmax)$")

# tr_read_kernel_list(FILE OUT_VAR): the ids of FILE, in file order, duplicates kept. A line that
# is not shaped like a registry id stops the configuration with the file, the line number and the
# line. (Whether a well-shaped id is in the registry's space is checked when the generated code
# compiles: kernels::space::contains.)
function(tr_read_kernel_list file out)
  if(NOT EXISTS "${file}" OR IS_DIRECTORY "${file}")
    message(FATAL_ERROR "TUNEDREDUCE_KERNELS: '${file}' is not a file")
  endif()
  file(READ "${file}" text)
  # ';' would split a CMake list: make it an ordinary character that no id contains.
  string(REPLACE ";" "<semicolon>" text "${text}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(ids)
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    string(REGEX REPLACE "#.*$" "" id "${line}")
    string(STRIP "${id}" id)
    if(id STREQUAL "")
      continue()
    endif()
    if(NOT id MATCHES "${TR_ID_REGEX}")
      string(REPLACE "<semicolon>" ";" shown "${line}")
      message(FATAL_ERROR
        "TUNEDREDUCE_KERNELS: ${file}:${lineno}: '${shown}' is not a registry id "
        "(FAMILY.bBLOCK[.uUNROLL][.static|.dynamic].FINISH.DTYPE.OP, as `tunedreduce list` prints)")
    endif()
    list(APPEND ids "${id}")
  endforeach()
  set(${out} "${ids}" PARENT_SCOPE)
endfunction()

# tr_default_kernel_ids(DEFAULTS_CPP OUT_VAR): the registry ids the built-in rules name
# (runtime/defaults.cpp): a deployment library always has them, so that every lookup has a kernel.
function(tr_default_kernel_ids defaults_cpp out)
  file(STRINGS "${defaults_cpp}" lines REGEX "\"[a-z_]+\\.b[0-9]+[^\"]*\"")
  set(ids)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "\"([a-z_]+\\.b[0-9]+[^\"]*)\"" m "${line}")
    list(APPEND ids "${CMAKE_MATCH_1}")
  endforeach()
  if(NOT ids)
    message(FATAL_ERROR "no kernel ids found in ${defaults_cpp}")
  endif()
  set(${out} "${ids}" PARENT_SCOPE)
endfunction()

# tr_deploy_kernel_ids(LISTED_VAR SELECTED_VAR): a deployment build's ids: the lines of
# TUNEDREDUCE_KERNELS (LISTED_VAR, in file order) and those with the built-in rules' kernels
# (SELECTED_VAR, duplicates removed). kernels/ and exact/ compile what SELECTED_VAR names.
function(tr_deploy_kernel_ids listed_var selected_var)
  tr_read_kernel_list("${TUNEDREDUCE_KERNELS}" listed)
  tr_default_kernel_ids(${PROJECT_SOURCE_DIR}/runtime/defaults.cpp defaults)
  set(selected ${listed} ${defaults})
  list(REMOVE_DUPLICATES selected)
  set(${listed_var} "${listed}" PARENT_SCOPE)
  set(${selected_var} "${selected}" PARENT_SCOPE)
endfunction()

# The exact families' first passes (exact/sum_kernels.cuh's exact_sum_blocks, exact/sum.hpp's
# knobs): a key "DTYPE_bBLOCK_vVECTOR_uUNROLL_eEXPANSION_RESIDENCE" names one instance.
set(TR_EXACT_KEY_REGEX "^(f32|f64|f16|bf16)_b([0-9]+)_v([0-9]+)_u([0-9]+)_e([0-9]+)_(registers|memory)$")

# tr_exact_first_pass(ID OUT_VAR): the key of the first pass that exact entry ID launches
# (kernels/geometry.cpp's exact_geometry::launch_config: the widest loads, expansion 1 (float and
# the half types) or 2 (double), one more for exact_wide, the chunks in registers for
# exact_registers). An exact id
# outside the registry's space stops the configuration, naming it.
function(tr_exact_first_pass id out)
  set(family "")
  if(id MATCHES "^(exact_registers|exact_wide|exact)\\.b([0-9]+)\\.u([0-9]+)\\.(two_pass|single_pass)\\.(f32|f64|f16|bf16)\\.exact_sum$")
    set(family "${CMAKE_MATCH_1}")
    set(block "${CMAKE_MATCH_2}")
    set(unroll "${CMAKE_MATCH_3}")
    set(dtype "${CMAKE_MATCH_5}")
  endif()
  if(family STREQUAL "" OR NOT block MATCHES "^(128|256|512)$" OR NOT unroll MATCHES "^[124]$"
     OR (family STREQUAL "exact_registers" AND dtype STREQUAL "f64"))
    message(FATAL_ERROR "TUNEDREDUCE_KERNELS: '${id}' is not in the registry's space (the exact "
                        "families: exact, exact_wide, exact_registers (not f64); blocks 128, 256, "
                        "512; unroll 1, 2, 4; two_pass or single_pass; f32, f64, f16 or bf16; "
                        "exact_sum)")
  endif()
  if(dtype STREQUAL "f32")
    set(vector 4)
    set(expansion 1)
  elseif(dtype MATCHES "^(f16|bf16)$")
    set(vector 8)
    set(expansion 1)
  else()
    set(vector 2)
    set(expansion 2)
  endif()
  if(family STREQUAL "exact_wide")
    math(EXPR expansion "${expansion} + 1")
  endif()
  set(residence memory)
  if(family STREQUAL "exact_registers")
    set(residence registers)
  endif()
  set(${out} "${dtype}_b${block}_v${vector}_u${unroll}_e${expansion}_${residence}" PARENT_SCOPE)
endfunction()

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

# _tr_exact_row(KEY OUT_VAR): the C++ expression of KEY's table row (exact/first_pass.cuh).
function(_tr_exact_row key out)
  string(REGEX MATCH "${TR_EXACT_KEY_REGEX}" m "${key}")
  set(type float)
  if(CMAKE_MATCH_1 STREQUAL "f64")
    set(type double)
  elseif(CMAKE_MATCH_1 STREQUAL "f16")
    set(type __half)
  elseif(CMAKE_MATCH_1 STREQUAL "bf16")
    set(type __nv_bfloat16)
  endif()
  set(${out} "FirstPassInstance<${type}, ${CMAKE_MATCH_2}, ${CMAKE_MATCH_3}, ${CMAKE_MATCH_4}, ${CMAKE_MATCH_5}, Residence::${CMAKE_MATCH_6}>::row()"
      PARENT_SCOPE)
endfunction()

# tr_kernel_params(ID OUT_VAR): the C++ initializer of ID's kernels::KernelParams.
function(tr_kernel_params id out)
  if(NOT id MATCHES "${TR_ID_REGEX}")
    message(FATAL_ERROR "'${id}' is not a registry id")
  endif()
  set(family "${CMAKE_MATCH_1}")
  set(block "${CMAKE_MATCH_2}")
  set(unroll "${CMAKE_MATCH_4}")
  set(smem "${CMAKE_MATCH_6}")
  set(finish "${CMAKE_MATCH_7}")
  set(dtype "${CMAKE_MATCH_8}")
  set(op "${CMAKE_MATCH_9}")
  if(unroll STREQUAL "")
    set(unroll 1)
  endif()
  if(smem STREQUAL "")
    set(smem none)
  elseif(smem STREQUAL "static")
    set(smem static_)
  endif()
  set(${out}
    "KernelParams{Family::${family}, ${block}, ${unroll}, SmemMode::${smem}, Finish::${finish}, DType::${dtype}, Op::${op}}"
    PARENT_SCOPE)
endfunction()

# tr_generate_kernel_sources(IDS GEN_DIR PER_FILE SOURCES_VAR INDEX_DECLS_VAR INDEX_LIST_VAR):
# writes translation units of at most PER_FILE entries each (sorted ids, grouped by element type
# and operator) that instantiate exactly IDS, and returns their paths and the declarations and
# the list of their functions for instances_index.inc.
function(tr_generate_kernel_sources ids gen_dir per_file sources_var decls_var list_var)
  # Grouped by (dtype, op), sorted by id: "f32_sum|streaming.b256...".
  set(keyed)
  foreach(id IN LISTS ids)
    string(REGEX MATCH "\\.([a-z0-9]+)\\.([a-z_]+)$" key "${id}")
    list(APPEND keyed "${CMAKE_MATCH_1}_${CMAKE_MATCH_2}|${id}")
  endforeach()
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
    tr_kernel_params("${id}" init)
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
