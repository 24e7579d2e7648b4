// What CMake needs of the registry's space (kernels/space.hpp, tunedreduce/types.hpp) and of the
// built-in rules (runtime/defaults.cpp), written as a CMake script on stdout, so that CMake reads
// the C++ data instead of restating it. cmake/KernelList.cmake compiles this program with
// kernels/registry_names.cpp, kernels/geometry.cpp and runtime/defaults.cpp and runs it as it
// configures (try_run).
//
//   space_list                the full build: TR_KERNEL_KEYS, the (dtype, op) keys whose entries
//                             are instances of the kernel templates, as "dtype:op"
//   space_list LIST_FILE      a deployment build (TUNEDREDUCE_KERNELS): the ids of LIST_FILE and
//                             of the built-in rules, checked against the space, with what
//                             kernels/ and exact/ generate from them (tr_deploy_space)
//
// Exit status 1 with a message on stdout: LIST_FILE is unreadable or has a line that is no id of
// the space.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernels/exact_geometry.hpp"
#include "kernels/registry_names.hpp"
#include "kernels/space.hpp"
#include "runtime/defaults.hpp"

namespace tr = tunedreduce;
namespace k = tunedreduce::kernels;

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ";") + s;
  return out;
}

/// The ids of the space, with their parameters.
std::map<std::string, k::KernelParams> space_ids() {
  std::map<std::string, k::KernelParams> ids;
  for (tr::DType d : tr::all_dtypes)
    for (tr::Op o : tr::all_ops)
      k::space::for_each_config(d, o, [&](const k::KernelParams& p) { ids[k::make_id(p)] = p; });
  return ids;
}

/// The C++ initializer of \p p's KernelParams, as the generated units spell it.
std::string params_initializer(const k::KernelParams& p) {
  const std::string smem = p.smem == k::SmemMode::static_ ? "static_" : k::smem_mode_name(p.smem);
  return std::string("KernelParams{Family::") + k::family_name(p.family) + ", " +
         std::to_string(p.block) + ", " + std::to_string(p.unroll) + ", SmemMode::" + smem +
         ", Finish::" + k::finish_name(p.finish) + ", DType::" + tr::dtype_name(p.dtype) +
         ", Op::" + tr::op_name(p.op) + "}";
}

/// The (dtype, op) key of \p p as the generated units' names have it: "f32_sum".
std::string unit_key(const k::KernelParams& p) {
  return std::string(tr::dtype_name(p.dtype)) + "_" + tr::op_name(p.op);
}

/// The first pass that exact entry \p p launches (exact/CMakeLists.txt's key:
/// DTYPE_bBLOCK_vVECTOR_uUNROLL_eEXPANSION_RESIDENCE): exact_geometry::launch_config's knobs,
/// its vector 0 being the widest load, 16 bytes (exact/sum.hpp, ExactLaunch::vector).
std::string exact_first_pass(const k::KernelParams& p) {
  const tunedreduce::exact::ExactLaunch c = k::exact_geometry::launch_config(p);
  const int vector = c.vector != 0 ? c.vector : static_cast<int>(16 / tr::dtype_size(p.dtype));
  return std::string(tr::dtype_name(p.dtype)) + "_b" + std::to_string(c.block_threads) + "_v" +
         std::to_string(vector) + "_u" + std::to_string(c.unroll) + "_e" +
         std::to_string(c.expansion) + "_" +
         (c.chunks == tunedreduce::exact::ExactChunks::registers ? "registers" : "memory");
}

int full_build() {
  std::vector<std::string> keys;
  for (tr::DType d : tr::all_dtypes)
    for (tr::Op o : tr::all_ops) {
      bool templated = false;
      k::space::for_each_config(d, o, [&](const k::KernelParams& p) {
        templated |= !k::is_exact_family(p.family);
      });
      if (templated) keys.push_back(std::string(tr::dtype_name(d)) + ":" + tr::op_name(o));
    }
  std::printf("set(TR_KERNEL_KEYS \"%s\")\n", join(keys).c_str());
  return 0;
}

int deployment_build(const char* file) {
  std::ifstream in(file);
  if (!in) {
    std::printf("TUNEDREDUCE_KERNELS: '%s' is not a file\n", file);
    return 1;
  }
  const auto space = space_ids();
  std::vector<std::string> listed;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    std::string id = line.substr(0, line.find('#'));
    id.erase(0, id.find_first_not_of(" \t\r\n"));
    id.erase(id.find_last_not_of(" \t\r\n") + 1);
    if (id.empty()) continue;
    if (!space.count(id)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const bool shaped = k::parse_id(id).has_value();
      std::printf(
          "TUNEDREDUCE_KERNELS: %s:%d: '%s' %s\n", file, lineno, line.c_str(),
          shaped
              ? "is not in the registry's space (kernels/space.hpp; `tunedreduce list` prints "
                "every id)"
              : "is not a registry id (FAMILY.bBLOCK[.uUNROLL][.static|.dynamic].FINISH.DTYPE.OP, "
                "as `tunedreduce list` prints)");
      return 1;
    }
    listed.push_back(id);
  }
  // The lines' ids, then the built-in rules' (a deployment library always has them, so that
  // every lookup has a kernel), without duplicates.
  std::vector<std::string> selected;
  std::set<std::string> seen;
  for (const std::string& id : listed)
    if (seen.insert(id).second) selected.push_back(id);
  for (const tunedreduce::runtime::DefaultRule& r : tunedreduce::runtime::builtin_default_rules()) {
    if (!space.count(r.kernel_id)) {
      std::printf("runtime/defaults.cpp: '%s' is not in the registry's space\n", r.kernel_id);
      return 1;
    }
    if (seen.insert(r.kernel_id).second) selected.push_back(r.kernel_id);
  }
  // What is compiled: the kernel templates' instances of the selected ids, and both finishes of
  // each selected exact entry (kernels/exact_entries.cpp: an exact entry is in the registry where
  // its first pass is compiled), whose first passes exact/ compiles.
  std::vector<std::string> templated, compiled, first_passes;
  std::set<std::string> compiled_set;
  std::string params;
  for (const std::string& id : selected) {
    const k::KernelParams& p = space.at(id);
    if (!k::is_exact_family(p.family)) {
      templated.push_back(unit_key(p) + "|" + id);
      compiled_set.insert(id);
      params += "set(\"TR_KERNEL_PARAMS_" + id + "\" \"" + params_initializer(p) + "\")\n";
      continue;
    }
    first_passes.push_back(exact_first_pass(p));
    for (k::Finish f : {k::Finish::two_pass, k::Finish::single_pass}) {
      k::KernelParams q = p;
      q.finish = f;
      compiled_set.insert(k::make_id(q));
    }
  }
  compiled.assign(compiled_set.begin(), compiled_set.end());
  std::printf("set(TR_DEPLOY_LISTED \"%s\")\n", join(listed).c_str());
  std::printf("set(TR_DEPLOY_SELECTED \"%s\")\n", join(selected).c_str());
  std::printf("set(TR_DEPLOY_TEMPLATED \"%s\")\n", join(templated).c_str());
  std::printf("set(TR_DEPLOY_COMPILED \"%s\")\n", join(compiled).c_str());
  std::printf("set(TR_DEPLOY_EXACT_FIRST_PASSES \"%s\")\n", join(first_passes).c_str());
  std::fputs(params.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return argc > 1 ? deployment_build(argv[1]) : full_build(); }
