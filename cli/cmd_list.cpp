// tunedreduce list: the kernel registry, one line an entry, or JSON with every parameter.

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/names.hpp"
#include "kernels/registry_names.hpp"
#include "tunedreduce/version.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

struct Filter {
  std::set<std::string> families, dtypes, ops;  // empty: every one
  bool matches(const kernels::Entry& e) const {
    return (families.empty() || families.count(kernels::family_name(e.params.family))) &&
           (dtypes.empty() || dtypes.count(dtype_name(e.params.dtype))) &&
           (ops.empty() || ops.count(op_name(e.params.op)));
  }
};

}  // namespace

int cmd_list(int argc, char** argv) {
  CommonOptions common;
  std::vector<std::string> families, dtypes, ops;
  bool json = false;
  po::options_description desc("options");
  po::options_description hidden;
  add_common_options(desc, common);
  desc.add_options()("json", po::bool_switch(&json), "print every parameter of each entry as JSON");
  add_list_option(desc, hidden, "families", families, "only these families (default: all)", "LIST",
                  {"family"});
  add_list_option(desc, hidden, "dtypes", dtypes, "only these element types (default: all)", "LIST",
                  {"dtype"});
  const std::string ops_help = "only these operators: " + op_choices() + " (default: all)";
  add_list_option(desc, hidden, "ops", ops, ops_help.c_str(), "LIST", {"op"});
  po::variables_map vm;
  if (parse_command_line(
          argc, argv, desc, nullptr, vm, common,
          "tunedreduce list [--json] [--families LIST] [--dtypes LIST] [--ops LIST]\n\n"
          "Lists are comma-separated and may be repeated (--dtypes i32,f32 --dtypes "
          "f64).",
          &hidden))
    return exit_code::ok;

  Filter filter;
  for (const std::string& f : families) {
    const auto fam = kernels::parse_family(f);
    if (!fam)
      throw Error(fmt::format("--families: unknown family '{}' (choose from {})", f,
                              kernels::family_names.joined()),
                  exit_code::usage);
    filter.families.insert(kernels::family_name(*fam));
  }
  for (const std::string& d : dtypes) {
    const auto t = parse_dtype(d);
    if (!t)
      throw Error(fmt::format("--dtypes: unknown element type '{}' (choose from {})", d,
                              dtype_choices()),
                  exit_code::usage);
    filter.dtypes.insert(dtype_name(*t));
  }
  for (const std::string& o : ops) {
    const auto op = parse_op(o);
    if (!op)
      throw Error(fmt::format("--ops: unknown operator '{}' (choose from {})", o, op_choices()),
                  exit_code::usage);
    filter.ops.insert(op_name(*op));
  }

  if (json) {
    std::cout << "{\n  \"version\": \"" << TUNEDREDUCE_VERSION_STRING << "\",\n"
              << "  \"manifest_hash\": \"" << kernels::manifest_hash() << "\",\n"
              << "  \"entries\": [";
    bool first = true;
    for (const kernels::Entry& e : kernels::registry()) {
      if (!filter.matches(e)) continue;
      const auto& p = e.params;
      std::cout << (first ? "\n" : ",\n") << "    {\"id\": \"" << e.id << "\", \"family\": \""
                << kernels::family_name(p.family) << "\", \"block\": " << p.block
                << ", \"unroll\": " << p.unroll << ", \"smem\": \""
                << kernels::smem_mode_name(p.smem) << "\", \"finish\": \""
                << kernels::finish_name(p.finish) << "\", \"dtype\": \"" << dtype_name(p.dtype)
                << "\", \"op\": \"" << op_name(p.op) << "\"}";
      first = false;
    }
    std::cout << (first ? "]\n}\n" : "\n  ]\n}\n");
    return exit_code::ok;
  }
  std::size_t count = 0;
  for (const kernels::Entry& e : kernels::registry()) {
    if (!filter.matches(e)) continue;
    std::cout << e.id << "\n";
    ++count;
  }
  std::cerr << count << " entries (registry manifest " << kernels::manifest_hash() << ")\n";
  return exit_code::ok;
}

}  // namespace tunedreduce::cli
