// tunedreduce report KIND: what the tuning database knows, as tables and charts.
// Kinds, formats, options and exit codes: docs/reports.md.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/grammar.hpp"
#include "common/names.hpp"
#include "common/exit_codes.hpp"
#include "common/paths.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

constexpr const char* usage_text =
    "tunedreduce report KIND [OPTIONS]\n\n"
    "kinds:\n"
    "  best       the winners per device, type, operator and size interval\n"
    "  variants   the best of every family at every size (chart: GB/s against n)\n"
    "  ladder     the seeds' progression at --n, each step's speed-up\n"
    "  heatmap    block size x unroll factor of a family at --n\n"
    "  compare    the same keys across the devices in the database\n"
    "  bench      the library against cub::DeviceReduce and Thrust, from tunedreduce bench\n"
    "  coverage   keys not tuned, stale winners, failed candidates\n"
    "  segmented  the segmented winners per segment size x segment count, % of the floor\n\n"
    "Lists (--devices, --dtypes, --ops, --families, --layouts) are comma-separated and may be\n"
    "repeated; --n is an element count (docs/cli.md).\n\n"
    "Exit codes: 0 (also for an empty database or selection, which the report says), 2 for an\n"
    "unknown kind, format, type, operator, family, layout, device or size, 3-8 for an unusable\n"
    "database (docs/database.md).";

/// \p parse's value; its usage error prefixed with the option ("--dtypes: unknown dtype ...").
template <class F>
auto naming(const char* option, F parse) {
  try {
    return parse();
  } catch (const Error& e) {
    if (e.exit_code() != exit_code::usage) throw;
    throw Error(std::string(option) + ": " + e.what(), exit_code::usage);
  }
}

}  // namespace

int cmd_report(int argc, char** argv) {
  CommonOptions common;
  std::string kind, format, n, l2, output, width;
  std::vector<std::string> devices, dtypes, ops, families, layouts;
  bool immutable = false;
  po::options_description desc("options");
  po::options_description hidden;  // KIND's option name and the old spellings (--dtype, ...)
  add_common_options(desc, common);
  hidden.add_options()("kind", po::value<std::string>(&kind), "report kind (positional)");
  // Lists: comma-separated, repeatable (docs/cli.md).
  add_list_option(desc, hidden, "devices", devices,
                  "device names, fingerprint keys (or 4+ of their first digits) or parts of a "
                  "name (default: every device)",
                  "LIST", {"device"});
  add_list_option(desc, hidden, "dtypes", dtypes, "element types (default: all)", "LIST",
                  {"dtype"});
  // Every operator, from the public header's names: "sum, min, ..., argmin, argmax".
  const std::string ops_help = op_choices() + " (default: all)";
  add_list_option(desc, hidden, "ops", ops, ops_help.c_str(), "LIST", {"op"});
  add_list_option(desc, hidden, "families", families,
                  "kernel families for variants and heatmap (default: all)", "LIST", {"family"});
  add_list_option(desc, hidden, "layouts", layouts,
                  "layouts of segments for segmented: fixed, offsets32, offsets64 (default: all)",
                  "LIST", {});
  desc.add_options()(
      "n", po::value<std::string>(&n)->value_name("N"),
      "size for ladder and heatmap: an element count, 16777216, 2^24, 16Mi (default 2^24)")(
      "l2", po::value<std::string>(&l2)->value_name("cold|warm"),
      "cold or warm measurements (default: cold where there are any)")(
      "format", po::value<std::string>(&format)->value_name("table|markdown|csv|json|html"),
      "table, markdown, csv, json or html (default: from --output's extension, else table)")(
      "output,o", po::value<std::string>(&output)->value_name("FILE"),
      "write to FILE instead of stdout")(
      "width", po::value<std::string>(&width)->value_name("N"),
      "the table format's width in columns, 0 for no limit; a wider table comes as groups of its "
      "columns (default: $COLUMNS, else the terminal's on stdout, else no limit)")(
      "immutable", po::bool_switch(&immutable),
      "open the database as immutable (no locks; for shipped files nobody writes)");
  po::positional_options_description pos;
  pos.add("kind", 1);
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, &pos, vm, common, usage_text, &hidden))
    return exit_code::ok;
  if (kind.empty())
    throw Error(fmt::format("report needs a KIND (choose from {})", reports::kind_choices()),
                exit_code::usage);

  // Every value is checked before the database is opened.
  reports::ReportOptions o;
  o.kind = reports::kind_from_text(kind);
  reports::Format out_format = reports::Format::table;
  if (!format.empty()) {
    out_format = naming("--format", [&] { return reports::format_from_text(format); });
  } else if (!output.empty() && output != "-") {
    // A known extension picks the format; none means a text table; any other extension is
    // refused rather than filled with a text table the reader would not expect (x.xlsx).
    const std::string ext = std::filesystem::path(output).extension().string();
    if (const auto f = reports::format_for_path(output)) out_format = *f;
    else if (!ext.empty())
      throw Error("--output '" + reports::terminal_escape(output) +
                      "': no report format has the "
                      "extension '" +
                      reports::terminal_escape(ext) +
                      "' (.txt, .md, .csv, .json, .html; or name one with --format)",
                  exit_code::usage);
  }
  for (const auto& t : dtypes)
    o.dtypes.push_back(naming("--dtypes", [&] { return reports::dtype_from_text(t); }));
  for (const auto& op : ops)
    o.ops.push_back(naming("--ops", [&] { return reports::op_from_text(op); }));
  for (const auto& f : families)
    o.families.push_back(naming("--families", [&] { return reports::family_from_text(f); }));
  for (const auto& l : layouts)
    o.layouts.push_back(naming("--layouts", [&] { return reports::layout_from_text(l); }));
  if (!n.empty()) o.n = grammar::parse_count("--n", n);
  if (!l2.empty()) o.l2 = naming("--l2", [&] { return reports::l2_from_text(l2); });
  o.devices = devices;
  // The table's width: --width (0: no limit), else what stdout's terminal or $COLUMNS says.
  std::size_t table_width = 0;
  if (!width.empty()) {
    const std::optional<std::uint64_t> w = grammar::count_value(width);
    if (!w || (*w != 0 && (*w < 20 || *w > 1000000)))
      throw Error("--width '" + reports::terminal_escape(width) +
                      "': a number of columns from 20 to 1000000, or 0 for no limit",
                  exit_code::usage);
    table_width = static_cast<std::size_t>(*w);
  } else if (output.empty() || output == "-") {
    table_width = terminal_columns();
  }

  const DbLocation loc = resolve_db_path_for_reading(common.db);
  db::ReaderOptions ro;
  ro.immutable = immutable;
  std::optional<db::Database> d;
  try {
    d.emplace(db::Database::open_reader(loc.path, ro));
  } catch (const db::DbError& e) {
    if (e.problem() != db::Problem::missing) throw;
    throw db::DbError(e.problem(), e.path(),
                      std::string(e.what()) + "; the location came from " + loc.source);
  }
  const reports::Report r = [&] {
    try {
      return reports::build_report(*d, o);
    } catch (const Error& e) {  // a --devices value that matches no device: name the option
      if (e.exit_code() != exit_code::usage ||
          !std::string_view(e.what()).starts_with("unknown device"))
        throw;
      throw Error(std::string("--devices: ") + e.what(), exit_code::usage);
    }
  }();
  const std::string text = reports::render(r, out_format, table_width);
  if (r.empty && (out_format == reports::Format::csv || out_format == reports::Format::json))
    std::cerr << "tunedreduce report: " << reports::terminal_escape(*r.empty) << "\n";
  if (output.empty() || output == "-") {
    write_stdout(text);
  } else {
    write_file(output, text);
  }
  return exit_code::ok;
}

}  // namespace tunedreduce::cli
