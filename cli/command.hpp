#pragma once
// The sub-command table of the tunedreduce CLI and the options every sub-command shares.

#include <boost/program_options.hpp>

#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace tunedreduce::cli {

/// A sub-command receives its own argv: argv[0] is "tunedreduce NAME".
struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
  /// The command's actions (`db info`, `db check`, ...), null for a command without any.
  std::vector<std::string> (*actions)() = nullptr;
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
/// positional arguments, old spellings). Throws boost::program_options::error on bad input.
/// While describe_command runs, it records its arguments instead and unwinds.
bool parse_command_line(int argc, char** argv,
                        const boost::program_options::options_description& desc,
                        const boost::program_options::positional_options_description* positional,
                        boost::program_options::variables_map& vm, const CommonOptions& common,
                        const char* usage,
                        const boost::program_options::options_description* hidden = nullptr);

/// A list option of the one list syntax (docs/cli.md, "Lists"): comma-separated values, and the
/// option may be repeated (--dtypes i32,f32 --dtypes f64). Every item, trimmed, is appended to
/// \p out; an empty item is an error naming the option. \p aliases are old spellings that work
/// the same but are added to \p hidden, which --help does not list.
void add_list_option(boost::program_options::options_description& desc,
                     boost::program_options::options_description& hidden, const char* name,
                     std::vector<std::string>& out, const char* help, const char* value_name,
                     std::initializer_list<const char*> aliases = {});

/// One option as --help, the man page and the completion script know it.
struct OptionSpec {
  std::string long_name;  // "dtypes"
  char short_name = 0;    // 'o', or 0
  bool takes_value = false;
  std::string value_name;     // "LIST", "cold|warm", "FILE"; empty when it takes none
  std::string default_value;  // as --help shows it, or empty
  std::string help;
  bool hidden = false;  // an old spelling or the name behind a positional argument
};

/// A sub-command (or a db action) as its own parse_command_line call describes it.
struct CommandSpec {
  std::string name;   // "tune", "db check"
  std::string usage;  // the usage text --help prints
  std::vector<OptionSpec> options;
  std::vector<std::string> positional;  // option names behind the positional arguments
  unsigned positional_max = 0;          // how many positional arguments it takes, at most
};

/// Runs \p run on \p args (args[0] is "tunedreduce NAME") up to its parse_command_line call and
/// returns what that call was given; nullopt when \p run returned without one (nothing else of
/// the command runs either way).
std::optional<CommandSpec> describe_command(int (*run)(int, char**), std::vector<std::string> args);

/// Throws Error(usage) when two of \p paths name one file (a.db and ./a.db, or a link to it):
/// "NAME P is given twice (the same file as NAME Q)", NAME being \p name ("--db", "the input").
void refuse_a_file_twice(const std::vector<std::string>& paths, const std::string& name);

/// The columns a table for people may take on stdout: $COLUMNS where it is a number from 20 up,
/// else the terminal's width where stdout is one, else 0 (no limit: a pipe or a file).
std::size_t terminal_columns();

/// The actions of `tunedreduce db`, in the order its usage lists them.
std::vector<std::string> db_actions();

/// The exit codes and environment variables of every command: --help, docs/cli.md, the man page.
struct Documented {
  const char* key;    // "2", "TUNEDREDUCE_DB"
  const char* brief;  // one short line (--help)
  const char* more;   // what the man page adds, or ""
};
std::vector<Documented> exit_code_docs();
std::vector<Documented> environment_docs();

// Sub-commands (each in cmd_NAME.cpp).
int cmd_list(int argc, char** argv);
int cmd_db(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_deploy(int argc, char** argv);

// Hidden commands (cli/docs.cpp): the bash completion script and the man page, generated from
// \p commands' own option descriptions (describe_command). The build writes both and installs
// them with the CLI.
int cmd_completion(int argc, char** argv, std::span<const Command> commands);
int cmd_man(int argc, char** argv, std::span<const Command> commands);

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
