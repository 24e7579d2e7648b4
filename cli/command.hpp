#pragma once
// The sub-command table of the tunedreduce CLI and the options every sub-command shares.

#include <boost/program_options.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tunedreduce::cli {

/// A sub-command receives its own argv: argv[0] is "tunedreduce NAME".
struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

/// Options shared by every sub-command.
struct CommonOptions {
  std::optional<std::string> db;  // --db PATH
  std::string log_level = "warn";
};

/// Adds --db, --log-level and --help to \p desc.
void add_common_options(boost::program_options::options_description& desc, CommonOptions& common);

/// Parses argv into \p vm, handles --help (prints usage + desc, returns true: the caller exits 0),
/// initialises logging. \p hidden: options parsed but not listed by --help (the names behind
/// positional arguments). Throws boost::program_options::error on bad input.
bool parse_command_line(int argc, char** argv,
                        const boost::program_options::options_description& desc,
                        const boost::program_options::positional_options_description* positional,
                        boost::program_options::variables_map& vm, const CommonOptions& common,
                        const char* usage,
                        const boost::program_options::options_description* hidden = nullptr);

// Sub-commands (each in cmd_NAME.cpp).
int cmd_list(int argc, char** argv);
int cmd_db(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_deploy(int argc, char** argv);

/// What a built libtunedreduce has (cmd_deploy.cpp): loaded with dlopen, asked through its C API.
struct LibraryKernels {
  std::string version, architectures;
  std::set<std::string> ids;
};
/// Throws Error(usage) naming \p path when it cannot be loaded or lists no kernels.
LibraryKernels load_library_kernels(const std::string& path);

/// Prints which winner rows of \p dbs (the default database when empty) \p library has no
/// kernel for; exit_code::db_check_failed when any, ok otherwise. \p command prefixes the error.
int check_library(const std::string& library, const std::vector<std::string>& dbs,
                  const char* command);

}  // namespace tunedreduce::cli
