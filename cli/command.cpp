#include "command.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <filesystem>
#include <iostream>
#include <map>

#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "common/grammar.hpp"
#include "common/log.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

void add_common_options(po::options_description& desc, CommonOptions& common) {
  desc.add_options()("help,h", "show this help")(
      "db", po::value<std::string>()->value_name("PATH")->notifier([&common](const std::string& v) {
        common.db = v;
      }),
      "tuning database (default: $TUNEDREDUCE_DB, else "
      "$XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db)")(
      "log-level",
      po::value<std::string>(&common.log_level)->default_value("warn")->value_name("LEVEL"),
      "trace, debug, info, warn, error, critical or off");
}

namespace {

/// Thrown by parse_command_line while describe_command runs: unwinds the command before it
/// parses or does anything.
struct Described {};
thread_local CommandSpec* g_describing = nullptr;

/// The list options add_list_option declared for the next parse_command_line, which fills them
/// in the order of the command line (--dtype i32 --dtypes f32: i32, f32) and forgets them.
struct ListTarget {
  std::vector<std::string> names;  // the option and its old spellings
  std::vector<std::string>* out;
};
thread_local std::vector<ListTarget> g_lists;

void collect(const po::options_description& d, bool hidden, std::vector<OptionSpec>& out) {
  for (const auto& o : d.options()) {
    OptionSpec s;
    s.long_name = o->long_name();
    const std::string dash =
        o->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (dash.size() == 2 && dash[0] == '-') s.short_name = dash[1];
    s.takes_value = o->semantic()->max_tokens() > 0;
    if (s.takes_value) {
      // "NAME (=DEFAULT)" or "NAME"
      const std::string p = o->format_parameter();
      const std::size_t def = p.find(" (=");
      s.value_name = p.substr(0, def);
      if (def != std::string::npos && p.back() == ')')
        s.default_value = p.substr(def + 3, p.size() - def - 4);
    }
    s.help = o->description();
    s.hidden = hidden;
    out.push_back(std::move(s));
  }
}

}  // namespace

std::optional<CommandSpec> describe_command(int (*run)(int, char**),
                                            std::vector<std::string> args) {
  CommandSpec spec;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  g_describing = &spec;
  struct Reset {
    ~Reset() { g_describing = nullptr; }
  } reset;
  try {
    run(static_cast<int>(args.size()), argv.data());
  } catch (const Described&) {
    return spec;
  }
  return std::nullopt;
}

void add_list_option(po::options_description& desc, po::options_description& hidden,
                     const char* name, std::vector<std::string>& out, const char* help,
                     const char* value_name, std::initializer_list<const char*> aliases) {
  ListTarget target{{name}, &out};
  desc.add_options()(name, po::value<std::vector<std::string>>()->value_name(value_name), help);
  for (const char* alias : aliases) {
    hidden.add_options()(alias, po::value<std::vector<std::string>>()->value_name(value_name),
                         (std::string("the old spelling of --") + name).c_str());
    target.names.push_back(alias);
  }
  g_lists.push_back(std::move(target));
}

std::vector<Documented> exit_code_docs() {
  return {
      {"0", "success", ""},
      {"1", "other failure", "a failure not covered below; the message says what"},
      {"2", "bad command line or configuration",
       "the message names the option or key and the value"},
      {"3", "database unusable",
       "missing where it must exist, not SQLite, not a tunedreduce database, corrupt, unreadable"},
      {"4", "database busy", "locked by another writer past the busy timeout"},
      {"5", "database schema too new", "newer than this binary understands"},
      {"6", "no CUDA device", "the command needs one"},
      {"7", "database read-only", "a write was needed but the file or its folder is read-only"},
      {"8", "database needs `db migrate`",
       "an older schema, which commands that only read do not upgrade"},
      {"9", "db check found rows this binary cannot use",
       "kernel ids it lacks, overlapping winners, winners without ok evidence of their L2 mode; "
       "also db check --library and deploy --check finding winner rows the library cannot serve"},
      {"10", "an output could not be written completely",
       "standard output, an --output file, an export or bench --json; nothing partial is left"},
      {"130", "interrupted (work so far kept)", "Ctrl-C; finished work was committed"},
  };
}

std::vector<Documented> environment_docs() {
  return {
      {"TUNEDREDUCE_DB", "the tuning database when --db is not given", ""},
      {"XDG_DATA_HOME", "else $XDG_DATA_HOME/tunedreduce/tune.db", "default ~/.local/share"},
      {"XDG_DATA_DIRS", "where readers also look for tunedreduce/tune.db",
       "a system-wide database, read immutable; default /usr/local/share:/usr/share"},
      {"TUNEDREDUCE_LOG_LEVEL", "the library's log level (bench)",
       "trace, debug, info, warn (default), error, critical or off"},
      {"TUNEDREDUCE_CACHE_STATE", "cold or warm: the winners the library prefers (bench)",
       "default cold"},
      {"NO_COLOR", "log lines are never coloured", "when set to anything but the empty string"},
      {"COLUMNS", "the width report's tables fit (else the terminal's; --width overrides)",
       "a number from 20 up"},
  };
}

std::size_t terminal_columns() {
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    const std::optional<std::uint64_t> v = grammar::count_value(c);
    if (v && *v >= 20 && *v <= 1000000) return static_cast<std::size_t>(*v);
  }
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 20)
    return w.ws_col;
  return 0;
}

bool parse_command_line(int argc, char** argv, const po::options_description& desc,
                        const po::positional_options_description* positional, po::variables_map& vm,
                        const CommonOptions& common, const char* usage,
                        const po::options_description* hidden) {
  struct ForgetLists {
    ~ForgetLists() { g_lists.clear(); }
  } forget_lists;
  if (CommandSpec* spec = g_describing) {
    spec->name = argc > 0 ? argv[0] : "";
    if (spec->name.starts_with("tunedreduce ")) spec->name.erase(0, 12);
    spec->usage = usage;
    collect(desc, false, spec->options);
    if (hidden) collect(*hidden, true, spec->options);
    if (positional) {
      spec->positional_max = positional->max_total_count();
      const unsigned n = std::min(positional->max_total_count(), 8u);
      for (unsigned i = 0; i < n; ++i) {
        const std::string& name = positional->name_for_position(i);
        if (spec->positional.empty() || spec->positional.back() != name)
          spec->positional.push_back(name);
      }
    }
    throw Described{};
  }
  po::command_line_parser parser(argc, argv);
  po::options_description all;
  all.add(desc);
  if (hidden) all.add(*hidden);
  parser.options(all);
  if (positional) parser.positional(*positional);
  const po::parsed_options parsed = parser.run();
  po::store(parsed, vm);
  if (vm.count("help")) {
    std::cout << "usage: " << usage << "\n\n" << desc << "\n";
    return true;
  }
  po::notify(vm);
  // List options, in the order given: split at commas, every item appended.
  for (const po::option& opt : parsed.options)
    for (const ListTarget& list : g_lists)
      if (std::find(list.names.begin(), list.names.end(), opt.string_key) != list.names.end())
        for (std::string& item : grammar::split_list("--" + opt.string_key, opt.value))
          list.out->push_back(std::move(item));
  try {
    init_logging(common.log_level);
  } catch (const Error& e) {
    throw Error(std::string("--log-level: ") + e.what(), e.exit_code());
  }
  return false;
}

void refuse_a_file_twice(const std::vector<std::string>& paths, const std::string& name) {
  std::map<std::string, std::string> seen;  // the file's canonical path -> the name given first
  for (const std::string& p : paths) {
    std::error_code ec;
    std::string canonical = std::filesystem::weakly_canonical(p, ec).string();
    if (ec) canonical = p;
    if (auto [it, fresh] = seen.emplace(canonical, p); !fresh)
      throw Error(it->second == p ? name + " " + p + " is given twice"
                                  : name + " " + p + " is given twice (the same file as " + name +
                                        " " + it->second + ")",
                  exit_code::usage);
  }
}

}  // namespace tunedreduce::cli
