// tunedreduce deploy: the kernel list of a deployment library from tuning databases, and the
// check that a built library serves a database's rows. docs/library.md, "A deployment library".

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "common/files.hpp"
#include "common/paths.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "deploy/budget.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "runtime/defaults.hpp"
#include "tunedreduce/version.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

constexpr const char* usage_text =
    "tunedreduce deploy [--db DB]... [--output FILE]\n"
    "       tunedreduce deploy [--db DB]... --tolerance PCT --deploy-db OUT [--output FILE]\n"
    "       tunedreduce deploy [--db DB]... --check LIBRARY\n\n"
    "Writes the kernel list of a deployment library: the kernel of every winner row of the\n"
    "databases (every device, both L2 modes) and of every built-in rule, one registry id a line\n"
    "(standard output by default). With --tolerance, a kernel budget: the databases are merged\n"
    "(as by `db merge`) into the deployment database OUT, in which each winner row names the\n"
    "fastest of a small set of kernels that the measurements put within PCT of the fastest at\n"
    "the row's sizes, and the list is that set and the built-in rules' kernels; ship OUT with\n"
    "the library. Build the library from the list with\n"
    "  cmake -S . -B build-deploy -DTUNEDREDUCE_KERNELS=kernels.list \\\n"
    "        -DTUNEDREDUCE_CUDA_ARCHS='80-real;90-real;100-real;120'\n"
    "With --check, writes nothing: says which winner rows of the databases the library LIBRARY\n"
    "(a libtunedreduce.so) has no kernel for, and exits 9 when there are any.\n"
    "Without --db, the default database ($TUNEDREDUCE_DB, else\n"
    "$XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db, else a\n"
    "system-wide tunedreduce/tune.db under $XDG_DATA_DIRS)";

struct Source {
  std::string path;
  std::vector<db::WinnerRecord> winners;
  std::map<std::int64_t, std::string> device_names;  // device id -> "NAME (KEY)"
};

std::vector<Source> read_sources(const std::vector<std::string>& paths) {
  std::vector<std::string> resolved = paths;
  if (resolved.empty()) resolved.push_back(resolve_db_path_for_reading(std::nullopt).path.string());
  refuse_a_file_twice(resolved, "--db");
  std::vector<Source> out;
  for (const std::string& p : resolved) {
    db::Database d = db::Database::open_reader(p);
    Source s;
    s.path = p;
    s.winners = d.winners();
    for (const db::DeviceRecord& dev : d.devices())
      s.device_names[dev.id] = dev.fingerprint.name + " (" + dev.key + ")";
    out.push_back(std::move(s));
  }
  return out;
}

std::string describe(const Source& s, const db::WinnerRecord& w) {
  const auto dev = s.device_names.find(w.device_id);
  return fmt::format("{}: {} {} [{}, {}], L2 {}, kernel {}",
                     dev != s.device_names.end() ? dev->second
                                                 : fmt::format("device {}", w.device_id),
                     dtype_name(w.dtype), op_name(w.op), w.n_lo, w.n_hi,
                     db::l2_mode_name(w.l2_mode), w.kernel_id);
}

/// \p preamble: comment lines that say how the databases were made (a kernel budget's).
int write_list(const std::vector<Source>& sources, const std::string& output,
               const std::string& preamble = "") {
  std::set<std::string> ids;
  std::ostringstream head;
  head << "# The kernels of a deployment libtunedreduce (docs/library.md), written by\n"
       << "# tunedreduce " << TUNEDREDUCE_VERSION_STRING << " deploy (registry manifest "
       << kernels::manifest_hash() << ")" << preamble << " from\n";
  std::size_t unknown = 0;
  for (const Source& s : sources) {
    std::set<std::string> mine;
    for (const db::WinnerRecord& w : s.winners) {
      if (!kernels::manifest_find(w.kernel_id)) {
        std::cerr << "tunedreduce deploy: warning: " << db::quoted(s.path) << ": the winner for "
                  << describe(s, w)
                  << " names a kernel this registry does not have: left out (a library built "
                     "from the list passes over the row)\n";
        ++unknown;
        continue;
      }
      mine.insert(w.kernel_id);
    }
    head << "#   " << s.path << ": " << s.winners.size() << " winner rows, " << mine.size()
         << " kernels";
    std::set<std::string> names;
    for (const auto& [id, name] : s.device_names) names.insert(name);
    for (const std::string& n : names) head << "; " << n;
    head << "\n";
    ids.insert(mine.begin(), mine.end());
  }
  std::set<std::string> defaults;
  for (const runtime::DefaultRule& r : runtime::builtin_default_rules())
    defaults.insert(r.kernel_id);
  const std::size_t winners_only = ids.size();
  ids.insert(defaults.begin(), defaults.end());
  head << "#   the built-in rules: " << runtime::builtin_default_rules().size() << " rules, "
       << defaults.size() << " kernels\n"
       << "# " << ids.size() << " kernels (" << winners_only << " of winners, "
       << ids.size() - winners_only << " more of the built-in rules)\n";
  std::string text = head.str();
  for (const std::string& id : ids) text += id + "\n";
  if (output.empty() || output == "-") {
    write_stdout(text);
  } else {
    write_file(output, text);
    std::cerr << "tunedreduce deploy: " << ids.size() << " kernels written to " << output
              << (unknown ? fmt::format(" ({} winner rows left out)", unknown) : "") << "\n";
  }
  return exit_code::ok;
}

}  // namespace

LibraryKernels load_library_kernels(const std::string& path) {
  // RTLD_LOCAL: the library's symbols stay out of this process's namespace (it has its own
  // registry and CUDA runtime); nothing of it runs but the three functions below.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    throw Error("cannot load the library '" + path + "': " + (why ? why : "unknown error"),
                exit_code::usage);
  }
  using Count = std::size_t (*)();
  using Id = const char* (*)(std::size_t);
  using Str = const char* (*)();
  auto count = reinterpret_cast<Count>(dlsym(h, "tr_kernel_count"));
  auto id = reinterpret_cast<Id>(dlsym(h, "tr_kernel_id"));
  auto version = reinterpret_cast<Str>(dlsym(h, "tr_version"));
  auto archs = reinterpret_cast<Str>(dlsym(h, "tr_cuda_architectures"));
  if (!count || !id || !version || !archs) {
    dlclose(h);
    throw Error("'" + path +
                    "' is not a libtunedreduce that lists its kernels (tr_kernel_count and "
                    "tr_kernel_id came in version 0.3.0)",
                exit_code::usage);
  }
  LibraryKernels k;
  k.version = version();
  k.architectures = archs();
  const std::size_t n = count();
  for (std::size_t i = 0; i < n; ++i)
    if (const char* s = id(i)) k.ids.insert(s);
  // Not closed: the library's static objects may hold CUDA state that outlives a dlclose.
  return k;
}

int check_library(const std::string& library, const std::vector<std::string>& dbs,
                  const char* command) {
  const LibraryKernels lib = load_library_kernels(library);
  const std::vector<Source> sources = read_sources(dbs);
  std::cout << "library:   " << library << " (tunedreduce " << lib.version << ", " << lib.ids.size()
            << " kernels, CUDA architectures " << lib.architectures << ")\n";
  std::size_t missing = 0;
  std::size_t defaults_missing = 0;
  for (const runtime::DefaultRule& r : runtime::builtin_default_rules())
    if (!lib.ids.count(r.kernel_id)) ++defaults_missing;
  if (defaults_missing)
    std::cout << "built-in:  " << defaults_missing
              << " of this binary's built-in rules name kernels the library lacks (a library of "
                 "another version has other rules; its own are always compiled in)\n";
  for (const Source& s : sources) {
    std::vector<const db::WinnerRecord*> lacking;
    for (const db::WinnerRecord& w : s.winners)
      if (!lib.ids.count(w.kernel_id)) lacking.push_back(&w);
    std::cout << "database:  " << s.path << ": " << s.winners.size() << " winner rows, ";
    if (lacking.empty()) {
      std::cout << "all served\n";
      continue;
    }
    std::cout << lacking.size()
              << " the library cannot serve (it passes over them, with one "
                 "warning, to the next lookup level):\n";
    for (const db::WinnerRecord* w : lacking) std::cout << "  " << describe(s, *w) << "\n";
    missing += lacking.size();
  }
  if (missing == 0) {
    std::cout << "result:    ok\n";
    return exit_code::ok;
  }
  std::cout << "result:    " << missing << " winner rows the library cannot serve\n";
  std::cerr << command << ": error: the library lacks the kernels of " << missing
            << " winner rows (see above); build it from `tunedreduce deploy` of these databases\n";
  return exit_code::db_check_failed;
}

namespace {

std::string percent(double fraction) { return fmt::format("{:.2f} %", fraction * 100); }

/// `deploy --tolerance`: the deployment database, its summary (standard error) and its list.
int write_budget(const std::vector<std::string>& dbs, double tolerance,
                 const std::string& deploy_db, const std::string& output) {
  std::vector<std::filesystem::path> inputs;
  {
    const std::vector<Source> sources = read_sources(dbs);  // resolves the default, refuses twice
    for (const Source& s : sources) inputs.emplace_back(s.path);
  }
  deploy::BudgetOptions opt;
  opt.tolerance = tolerance;
  for (const runtime::DefaultRule& r : runtime::builtin_default_rules())
    opt.free_kernels.insert(r.kernel_id);
  opt.max_elements = [](const std::string& id) -> std::optional<std::uint64_t> {
    const kernels::ManifestEntry* e = kernels::manifest_find(id);
    if (!e) return std::nullopt;
    return kernels::max_elements_of(e->params);
  };
  const deploy::Budget b = deploy::deploy_database(inputs, deploy_db, opt);

  std::set<std::string> before = b.original_kernels, after = b.kernels;
  before.insert(opt.free_kernels.begin(), opt.free_kernels.end());
  after.insert(opt.free_kernels.begin(), opt.free_kernels.end());
  std::ostringstream out;
  out << "tunedreduce deploy: a kernel budget of " << percent(tolerance)
      << ": the winner rows name " << b.kernels.size() << " kernels instead of "
      << b.original_kernels.size() << "; the library " << after.size()
      << " kernels with the built-in rules' instead of " << before.size() << "; " << b.changed
      << " of " << b.rows.size() << " winner rows changed kernel\n";
  for (const auto& [key, dev] : b.devices) {
    out << "  " << dev.name << ": " << dev.rows << " rows, " << dev.changed << " changed kernel";
    if (dev.worst_slowdown)
      out << ", worst measured slowdown versus the row's winner "
          << fmt::format("{:+.2f} %", *dev.worst_slowdown * 100)
          << (*dev.worst_slowdown <= 0 ? " (every changed row measured at least as fast)" : "")
          << ": " << dev.worst_row;
    out << "\n";
    if (dev.dropped)
      out << "    " << dev.dropped
          << " rows left out: their kernel is not in this registry and no other served them\n";
    if (dev.uncompared)
      out << "    " << dev.uncompared
          << " rows had no other kernel measured at their sizes (a database of winners only?)\n";
  }
  out << "  deployment database: " << deploy_db
      << " (ship it with the library built from the list)\n";
  std::cerr << out.str();

  std::string preamble = " with a kernel budget of " + percent(tolerance) + " over";
  for (const auto& p : inputs) preamble += "\n#   " + p.string();
  preamble += "\n# (each winner row names the fastest kernel of the budget that serves it)";
  return write_list(read_sources({deploy_db}), output, preamble);
}

}  // namespace

int cmd_deploy(int argc, char** argv) {
  std::vector<std::string> dbs;
  std::string output, check, tolerance_text, deploy_db;
  CommonOptions common;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "db", po::value<std::vector<std::string>>(&dbs)->composing()->value_name("PATH"),
      "a tuning database; repeat it for each GPU model of a fleet (a path: never split at "
      "commas)")("output,o", po::value<std::string>(&output)->value_name("FILE"),
                 "write the list to FILE (default: stdout)")(
      "tolerance", po::value<std::string>(&tolerance_text)->value_name("PCT"),
      "a kernel budget: each winner row may name a kernel measured within PCT (1%, 0.5%) of the "
      "fastest at its sizes; needs --deploy-db (default: none, every winner's own kernel)")(
      "deploy-db", po::value<std::string>(&deploy_db)->value_name("OUT"),
      "with --tolerance: write the deployment database, the databases merged with the budget's "
      "kernels in their winner rows, to OUT (a new file)")(
      "check", po::value<std::string>(&check)->value_name("LIB"),
      "LIBRARY: say which winner rows the library cannot serve instead (exit 9 when any)")(
      "log-level",
      po::value<std::string>(&common.log_level)->default_value("warn")->value_name("LEVEL"),
      "trace, debug, info, warn, error, critical or off");
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, nullptr, vm, common, usage_text)) return exit_code::ok;
  if (!check.empty() && !output.empty())
    throw Error("--check writes nothing: give --output or --check, not both", exit_code::usage);
  const bool budget = vm.count("tolerance") > 0;
  if (budget && !check.empty())
    throw Error("--check writes nothing: give --tolerance or --check, not both", exit_code::usage);
  if (budget && deploy_db.empty())
    throw Error(
        "--tolerance replaces winners' kernels: give --deploy-db OUT, the database whose "
        "rows name them (a library from the list serves only that database's rows)",
        exit_code::usage);
  if (!budget && vm.count("deploy-db"))
    throw Error("--deploy-db is the database a kernel budget writes: give --tolerance too",
                exit_code::usage);
  if (!check.empty()) return check_library(check, dbs, "tunedreduce deploy");
  if (budget) return write_budget(dbs, deploy::parse_tolerance(tolerance_text), deploy_db, output);
  return write_list(read_sources(dbs), output);
}

}  // namespace tunedreduce::cli
