// tunedreduce: one CLI with sub-commands.

#include <boost/program_options/errors.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/interrupt.hpp"
#include "common/printable.hpp"
#include "kernels/registry.hpp"
#include "tunedreduce/version.hpp"
#include "tuner/config/suggest.hpp"
#include "tuner/worker_main.hpp"

namespace {

using tunedreduce::cli::Command;

constexpr Command commands[] = {
    {"list", "print the kernel registry (one line an entry; --json for all parameters)",
     tunedreduce::cli::cmd_list},
    {"db", "inspect, check, export, import and merge tuning databases", tunedreduce::cli::cmd_db,
     tunedreduce::cli::db_actions},
    {"tune", "search the kernel space for the fastest kernel per size interval and store it",
     tunedreduce::cli::cmd_tune},
    {"report", "tables and charts of the tuning database (best, variants, ladder, heatmap, ...)",
     tunedreduce::cli::cmd_report},
    {"bench", "time the tuned reduction against cub::DeviceReduce and thrust::reduce (GPU)",
     tunedreduce::cli::cmd_bench},
    {"deploy",
     "the kernel list of a lean library for the winners of tuning databases, or a "
     "library's check",
     tunedreduce::cli::cmd_deploy},
};

void print_usage(std::ostream& os) {
  os << "usage: tunedreduce [--version] [--help] COMMAND [ARGS...]\n\ncommands:\n";
  for (const Command& c : commands) {
    std::string name = c.name;
    name.resize(10, ' ');
    os << "  " << name << c.summary << "\n";
  }
  os << "\noptions every command takes:\n"
        "  --db PATH          the tuning database (default: $TUNEDREDUCE_DB, else\n"
        "                     $XDG_DATA_HOME/tunedreduce/tune.db, else\n"
        "                     ~/.local/share/tunedreduce/tune.db)\n"
        "  --log-level LEVEL  trace, debug, info, warn (default), error, critical or off\n"
        "\nelement counts (--sizes, --n): N, B^E or N with Ki/Mi/Gi/Ti (1000, 2^20, 16Mi), lists\n"
        "2^10,2^20 and ranges FROM..TO*FACTOR or FROM..TO+STEP (2^10..2^30*2); list options take\n"
        "comma-separated values and may be repeated (--dtypes i32,f32 --dtypes f64): docs/cli.md\n"
        "\nexit codes (docs/cli.md):\n";
  for (const auto& d : tunedreduce::cli::exit_code_docs())
    os << std::string(3 - std::min<std::size_t>(3, std::strlen(d.key)), ' ') << d.key << " "
       << d.brief << "\n";
  os << "\nenvironment:";
  for (const auto& d : tunedreduce::cli::environment_docs()) os << " " << d.key;
  os << "\n\n'tunedreduce COMMAND --help' describes a command's options; 'tunedreduce completion "
        "bash'\n"
        "and 'tunedreduce man' print the bash completion script and the man page (installed with\n"
        "the CLI).\n";
}

int run(int argc, char** argv);

}  // namespace

// Every command's standard output is checked to the end: a command whose output could not be
// written (a full disk, a closed pipe) fails with exit_code::io, never "done".
int main(int argc, char** argv) {
  const std::string command = argc >= 2 && argv[1][0] != '-' ? std::string(" ") + argv[1] : "";
  tunedreduce::install_checked_stdout();
  // SIGPIPE: a closed pipe is a failed write (exit 10 with the message below), not a silent 141;
  // SIGINT and SIGTERM: temporary files removed, exit 130 (`tune` polls them instead).
  if (argc < 2 || std::strcmp(argv[1], "_worker") != 0) tunedreduce::install_exit_signals();
  const int rc = run(argc, argv);
  if (const std::string why = tunedreduce::finish_stdout(); !why.empty()) {
    std::cerr << "tunedreduce" << command << ": error: cannot write to standard output: " << why
              << "\n";
    return tunedreduce::exit_code::io;
  }
  return rc;
}

namespace {

int run(int argc, char** argv) {
  namespace ec = tunedreduce::exit_code;
  if (argc < 2) {
    print_usage(std::cerr);
    return ec::usage;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return ec::ok;
  }
  if (first == "--version" || first == "-V") {
    std::cout << "tunedreduce " << TUNEDREDUCE_VERSION_STRING << " (registry manifest "
              << tunedreduce::kernels::manifest_hash() << ", "
              << tunedreduce::kernels::registry().size() << " kernels, CUDA architectures "
              << TUNEDREDUCE_CUDA_ARCHITECTURES << ")\n";
    return ec::ok;
  }
  // Hidden: the tuner's worker process (tuner/protocol.hpp), started by the supervisor.
  if (first == "_worker") return tunedreduce::tuner::worker_main(argc - 1, argv + 1);
  // Hidden: the bash completion script and the man page, from the commands' own descriptions.
  struct Generator {
    const char* name;
    int (*run)(int, char**, std::span<const Command>);
  };
  static constexpr Generator generators[] = {{"completion", tunedreduce::cli::cmd_completion},
                                             {"man", tunedreduce::cli::cmd_man}};
  for (const Generator& g : generators) {
    if (first != g.name) continue;
    std::string argv0 = std::string("tunedreduce ") + g.name;
    argv[1] = argv0.data();
    try {
      return g.run(argc - 1, argv + 1, std::span<const Command>(commands));
    } catch (const boost::program_options::error& e) {
      std::cerr << "tunedreduce " << g.name
                << ": error: " << tunedreduce::printable_message(e.what()) << "\n";
      return ec::usage;
    } catch (const tunedreduce::Error& e) {
      std::cerr << "tunedreduce " << g.name
                << ": error: " << tunedreduce::printable_message(e.what()) << "\n";
      return e.exit_code();
    }
  }
  for (const Command& c : commands) {
    if (first != c.name) continue;
    std::string argv0 = std::string("tunedreduce ") + c.name;
    // An error names the command, and the action it came from ("tunedreduce db import:"), as
    // the actions' own messages do.
    std::string label = argv0;
    if (c.actions && argc > 2) {
      const std::vector<std::string> actions = c.actions();
      if (std::find(actions.begin(), actions.end(), argv[2]) != actions.end())
        label += std::string(" ") + argv[2];
    }
    argv[1] = argv0.data();
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const boost::program_options::error& e) {
      std::cerr << label << ": error: " << tunedreduce::printable_message(e.what()) << "\n";
      return ec::usage;
    } catch (const tunedreduce::Error& e) {
      std::cerr << label << ": error: " << tunedreduce::printable_message(e.what()) << "\n";
      return e.exit_code();
    } catch (const std::exception& e) {
      std::cerr << label << ": error: " << tunedreduce::printable_message(e.what()) << "\n";
      return ec::failure;
    }
  }
  std::vector<std::string> names;
  for (const Command& c : commands) names.emplace_back(c.name);
  std::cerr << "tunedreduce: error: unknown command '" << tunedreduce::printable(first) << "'"
            << tunedreduce::tuner::did_you_mean(first, names) << "\n\n";
  print_usage(std::cerr);
  return ec::usage;
}

}  // namespace
