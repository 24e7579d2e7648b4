// tunedreduce list: the kernel registry, one line an entry, or JSON with every parameter.

#include <iostream>
#include <string>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/names.hpp"
#include "kernels/registry.hpp"
#include "tunedreduce/version.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

struct Filter {
  std::string family, dtype, op;
  bool matches(const kernels::Entry& e) const {
    return (family.empty() || family == kernels::family_name(e.params.family)) &&
           (dtype.empty() || dtype == dtype_name(e.params.dtype)) &&
           (op.empty() || op == op_name(e.params.op));
  }
};

}  // namespace

int cmd_list(int argc, char** argv) {
  CommonOptions common;
  Filter filter;
  bool json = false;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("json", po::bool_switch(&json), "print every parameter of each entry as JSON")(
      "family", po::value<std::string>(&filter.family), "only this family")(
      "dtype", po::value<std::string>(&filter.dtype), "only this element type")(
      "op", po::value<std::string>(&filter.op), "only this operator");
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, nullptr, vm, common,
                         "tunedreduce list [--json] [--family F] [--dtype T] [--op OP]"))
    return exit_code::ok;

  if (!filter.family.empty() && !kernels::parse_family(filter.family))
    throw Error("unknown family '" + filter.family + "'", exit_code::usage);
  if (!filter.dtype.empty()) {
    auto t = parse_dtype(filter.dtype);
    if (!t) throw Error("unknown element type '" + filter.dtype + "' (expected one of " +
                            dtype_choices() + ")", exit_code::usage);
    filter.dtype = dtype_name(*t);
  }
  if (!filter.op.empty() && !parse_op(filter.op))
    throw Error("unknown operator '" + filter.op + "' (expected one of " + op_choices() + ")",
                exit_code::usage);

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
