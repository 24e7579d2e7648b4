// tunedreduce completion bash / tunedreduce man (hidden): the bash completion script and the man
// page, generated from the option descriptions each command gives parse_command_line
// (describe_command), so that neither can drift from --help. The build writes both
// (cli/CMakeLists.txt) and installs them with the CLI.

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/grammar.hpp"
#include "common/names.hpp"
#include "kernels/registry_names.hpp"
#include "reports/model.hpp"
#include "tunedreduce/version.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

/// One command line a completion or a man page section covers: a command, or one db action.
struct Described {
  std::string command;  // "tune", "db"
  std::string summary;  // the command's line of the top-level --help
  CommandSpec spec;     // spec.name: "tune", "db check"
};

std::vector<Described> describe_all(std::span<const Command> commands) {
  std::vector<Described> out;
  for (const Command& c : commands) {
    std::vector<std::vector<std::string>> calls;
    if (c.actions) {
      for (const std::string& action : c.actions())
        calls.push_back({std::string("tunedreduce ") + c.name, action});
    } else {
      calls.push_back({std::string("tunedreduce ") + c.name});
    }
    for (const auto& args : calls) {
      auto spec = describe_command(c.run, args);
      if (!spec)
        throw Error(std::string("tunedreduce ") + c.name + " did not describe its options");
      out.push_back({c.name, c.summary, std::move(*spec)});
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + sep.size();
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const std::string& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// --- what a value may be -------------------------------------------------------------------------

/// How the completion completes an option's value: words (a list option completes each item after
/// the last comma), file names, or nothing (numbers, names nobody can guess).
struct Values {
  enum Kind { nothing, words, files } kind = nothing;
  std::vector<std::string> choices;
  bool list = false;
};

Values values_of(const OptionSpec& o) {
  Values v;
  const std::string& name = o.long_name;
  const std::string& value = o.value_name;
  v.list = value.starts_with("LIST");
  auto is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
  };
  if (is({"dtypes", "dtype"})) {
    v.choices = dtype_names.names();
  } else if (is({"ops", "op"})) {
    v.choices = op_names.names();
  } else if (is({"families", "family"})) {
    v.choices = kernels::family_names.names();
  } else if (name == "log-level") {
    v.choices = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  } else if (value.find('|') != std::string::npos) {
    for (std::string& w : split(value, "|"))
      if (w != "LIST") v.choices.push_back(std::move(w));
  } else if (value == "PATH" || value == "FILE" || value == "DB" || value == "LIB" ||
             value == "OUT" ||
             is({"db", "config", "replay", "output", "json", "library", "check", "into"})) {
    v.kind = Values::files;
    return v;
  }
  v.kind = v.choices.empty() ? Values::nothing : Values::words;
  return v;
}

/// What a positional argument of \p spec completes to.
Values positional_values(const Described& d) {
  Values v;
  if (d.spec.positional.empty()) return v;
  if (d.spec.name == "report") {
    v.choices = reports::kind_names.names();
    v.kind = Values::words;
  } else {
    v.kind = Values::files;  // db import FILE, db merge A.db B.db ...
  }
  return v;
}

std::vector<std::string> flags_of(const OptionSpec& o) {
  std::vector<std::string> f{"--" + o.long_name};
  if (o.short_name) f.push_back(std::string("-") + o.short_name);
  return f;
}

// --- bash
// ------------------------------------------------------------------------------------------

/// \p s as one single-quoted bash word.
std::string sq(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string bash_script(std::span<const Command> commands) {
  const std::vector<Described> all = describe_all(commands);
  std::ostringstream o;
  o << "# bash completion for tunedreduce " TUNEDREDUCE_VERSION_STRING
       "\n"
       "# Generated by `tunedreduce completion bash` from the commands' own option descriptions\n"
       "# (the ones --help prints): do not edit. Installed as\n"
       "# share/bash-completion/completions/tunedreduce; or: source <(tunedreduce completion "
       "bash)\n"
       "\n";
  // The options each command line lists, and those that take a value (old spellings included,
  // so that their values complete too).
  o << "_tunedreduce_options() {\n  case $1 in\n";
  for (const Described& d : all) {
    std::vector<std::string> flags;
    for (const OptionSpec& opt : d.spec.options)
      if (!opt.hidden)
        for (std::string& f : flags_of(opt)) flags.push_back(std::move(f));
    o << "    " << sq(d.spec.name) << ") echo " << sq(join(flags)) << " ;;\n";
  }
  o << "  esac\n}\n\n";
  o << "_tunedreduce_takes_value() {\n  case \"$1 $2\" in\n";
  for (const Described& d : all) {
    std::vector<std::string> cases;
    for (const OptionSpec& opt : d.spec.options)
      if (opt.takes_value && std::find(d.spec.positional.begin(), d.spec.positional.end(),
                                       opt.long_name) == d.spec.positional.end())
        for (const std::string& f : flags_of(opt)) cases.push_back(sq(d.spec.name + " " + f));
    if (!cases.empty()) o << "    " << join(cases, "|") << ") return 0 ;;\n";
  }
  o << "  esac\n  return 1\n}\n\n";
  // An option's value: "words W...", "list W..." (comma-separated items), "files" or nothing.
  o << "_tunedreduce_values() {\n  case \"$1 $2\" in\n";
  for (const Described& d : all)
    for (const OptionSpec& opt : d.spec.options) {
      if (!opt.takes_value) continue;
      const Values v = values_of(opt);
      if (v.kind == Values::nothing) continue;
      std::vector<std::string> cases;
      for (const std::string& f : flags_of(opt)) cases.push_back(sq(d.spec.name + " " + f));
      o << "    " << join(cases, "|") << ") echo "
        << sq(v.kind == Values::files ? std::string("files")
                                      : std::string(v.list ? "list " : "words ") + join(v.choices))
        << " ;;\n";
    }
  o << "  esac\n}\n\n";
  o << "_tunedreduce_positional() {\n  case $1 in\n";
  for (const Described& d : all) {
    const Values v = positional_values(d);
    if (v.kind == Values::nothing) continue;
    // report takes one KIND; db import one FILE; db merge any number of databases.
    const bool many = d.spec.positional_max > 1;
    o << "    " << sq(d.spec.name) << ") echo "
      << sq(std::string(many ? "many " : "one ") +
            (v.kind == Values::files ? std::string("files") : "words " + join(v.choices)))
      << " ;;\n";
  }
  o << "  esac\n}\n\n";
  std::vector<std::string> names, db_names;
  for (const Command& c : commands) names.push_back(c.name);
  for (const std::string& a : db_actions()) db_names.push_back(a);
  o << "_tunedreduce() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=\"\" line opt=\"\" first=2 i\n"
       "  COMPREPLY=()\n"
       "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  if (( COMP_CWORD == 1 )); then\n"
       "    mapfile -t COMPREPLY < <(compgen -W "
    << sq(join(names) + " --help --version") << " -- \"$cur\")\n"
    << "    return 0\n"
       "  fi\n"
       "  line=${COMP_WORDS[1]}\n"
       "  if [[ $line == db ]]; then\n"
       "    if (( COMP_CWORD == 2 )); then\n"
       "      mapfile -t COMPREPLY < <(compgen -W "
    << sq(join(db_names) + " --help") << " -- \"$cur\")\n"
    << "      return 0\n"
       "    fi\n"
       "    line=\"db ${COMP_WORDS[2]}\"\n"
       "    first=3\n"
       "  fi\n"
       "  [[ -n $(_tunedreduce_options \"$line\") ]] || return 0\n"
       "  # --option=value: bash has split the word at '='.\n"
       "  if [[ $cur == = ]]; then\n"
       "    opt=$prev cur=\"\"\n"
       "  elif [[ $prev == = ]] && (( COMP_CWORD >= 2 )); then\n"
       "    opt=${COMP_WORDS[COMP_CWORD-2]}\n"
       "  elif (( COMP_CWORD - 1 >= first )) && _tunedreduce_takes_value \"$line\" \"$prev\"; "
       "then\n"
       "    opt=$prev\n"
       "  fi\n"
       "  if [[ -n $opt ]]; then\n"
       "    _tunedreduce_complete_value \"$(_tunedreduce_values \"$line\" \"$opt\")\"\n"
       "    return 0\n"
       "  fi\n"
       "  if [[ $cur == -* ]]; then\n"
       "    mapfile -t COMPREPLY < <(compgen -W \"$(_tunedreduce_options \"$line\")\" -- "
       "\"$cur\")\n"
       "    return 0\n"
       "  fi\n"
       "  # A positional argument: how many came before (an option's value is none).\n"
       "  local spec given=0 w\n"
       "  spec=$(_tunedreduce_positional \"$line\")\n"
       "  [[ -n $spec ]] || return 0\n"
       "  for (( i = first; i < COMP_CWORD; i++ )); do\n"
       "    w=${COMP_WORDS[i]}\n"
       "    if [[ $w == -* || $w == = ]]; then\n"
       "      continue\n"
       "    elif (( i > first )) && [[ ${COMP_WORDS[i-1]} == = ]]; then\n"
       "      continue\n"
       "    elif (( i > first )) && _tunedreduce_takes_value \"$line\" \"${COMP_WORDS[i-1]}\"; "
       "then\n"
       "      continue\n"
       "    fi\n"
       "    given=$((given + 1))\n"
       "  done\n"
       "  if [[ $spec == one\\ * ]] && (( given > 0 )); then return 0; fi\n"
       "  _tunedreduce_complete_value \"${spec#* }\"\n"
       "}\n\n"
       "# $1: \"words W...\", \"list W...\" (the item after the last comma), \"files\" or empty.\n"
       "_tunedreduce_complete_value() {\n"
       "  local kind=${1%% *} words=${1#* } prefix=\"\"\n"
       "  case $kind in\n"
       "    files)\n"
       "      compopt -o filenames 2>/dev/null\n"
       "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
       "    words)\n"
       "      mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\") ;;\n"
       "    list)\n"
       "      [[ $cur == *,* ]] && prefix=${cur%,*},\n"
       "      mapfile -t COMPREPLY < <(compgen -P \"$prefix\" -W \"$words\" -- \"${cur##*,}\") ;;\n"
       "  esac\n"
       "}\n\n"
       "complete -F _tunedreduce tunedreduce\n";
  return o.str();
}

// --- man
// -------------------------------------------------------------------------------------------

/// Text for roff: backslashes and minus signs escaped, non-ASCII as \[uXXXX], and a line that
/// would start with a control character ('.' or ') guarded with \&.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c >= 0x80) {
      // One UTF-8 sequence -> \[uXXXX].
      unsigned cp = 0;
      int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
      cp = c & (more == 3 ? 0x07 : more == 2 ? 0x0f : 0x1f);
      for (; more > 0 && i + 1 < text.size(); --more) cp = (cp << 6) | (text[++i] & 0x3f);
      char b[16];
      std::snprintf(b, sizeof b, "\\[u%04X]", cp);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// A paragraph of filled text: its lines joined (a --help text is wrapped for 80 columns).
std::string para(std::string_view text) {
  std::string s(text);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return roff(s);
}

std::string option_tag(const OptionSpec& o) {
  std::string tag;
  if (o.short_name) tag += "\\fB\\-" + std::string(1, o.short_name) + "\\fR, ";
  tag += "\\fB" + roff("--" + o.long_name) + "\\fR";
  if (o.takes_value) tag += " \\fI" + roff(o.value_name) + "\\fR";
  return tag;
}

std::string man_page(std::span<const Command> commands) {
  const std::vector<Described> all = describe_all(commands);
  std::ostringstream o;
  o << ".\\\" Generated by `tunedreduce man` from the commands' own option descriptions (the ones\n"
       ".\\\" --help prints): do not edit.\n"
       ".TH TUNEDREDUCE 1 \"\" \"tunedreduce " TUNEDREDUCE_VERSION_STRING
       "\" \"User Commands\"\n"
       ".nh\n"
       ".ad l\n"
       ".SH NAME\n"
       "tunedreduce \\- auto\\-tuned GPU reductions: tune, measure, report and deploy the fastest "
       "kernels\n"
       ".SH SYNOPSIS\n"
       ".B tunedreduce\n"
       ".RB [ \\-\\-version ]\n"
       ".RB [ \\-\\-help ]\n"
       ".I COMMAND\n"
       ".RI [ ARGS ...]\n"
       ".SH DESCRIPTION\n"
       "tunedreduce compiles a family of CUDA reduction kernels, measures them on this machine's "
       "GPUs, keeps every measurement in a SQLite tuning database and tells the library "
       "(libtunedreduce) which kernel to run for each element type, operator and size.\n"
       ".PP\n"
       "Every command takes \\fB\\-\\-help\\fR; the options of each are below. Messages go to "
       "standard error, prefixed \\fBtunedreduce\\fR \\fICOMMAND\\fR\\fB: error:\\fR, and name "
       "the option and the value at fault.\n"
       ".SH COMMANDS\n";
  for (const Command& c : commands)
    o << ".TP\n.B " << roff(c.name) << "\n" << para(c.summary) << "\n";
  o << ".SH OPTIONS\n";
  for (const Described& d : all) {
    o << ".SS \"tunedreduce " << roff(d.spec.name) << "\"\n.nf\n";
    std::string usage = d.spec.usage;
    if (usage.starts_with("usage: ")) usage.erase(0, 7);
    o << roff(usage) << "\n.fi\n";
    for (const OptionSpec& opt : d.spec.options) {
      if (opt.hidden) continue;
      std::string help = opt.help;
      if (!opt.default_value.empty()) help += " (default: " + opt.default_value + ")";
      o << ".TP\n" << option_tag(opt) << "\n" << para(help) << "\n";
    }
  }
  o << ".SH \"ELEMENT COUNTS AND LISTS\"\n"
       "One grammar serves every command (tune \\-\\-sizes, bench \\-\\-sizes, report \\-\\-n).\n"
       "An element count is\n"
       ".IR N \" (1000),\"\n"
       ".IR B ^ E \" (2^20, 10^6)\"\n"
       "or\n"
       ".I N\n"
       "followed by a binary suffix Ki, Mi, Gi or Ti (16Mi = 16777216). Where several are taken, "
       "they are comma\\-separated (2^10,2^20,16Mi), and a range is\n"
       ".IB FROM .. TO * FACTOR\n"
       "(2^10..2^30*2: every power of two from 2^10 to 2^30) or\n"
       ".IB FROM .. TO + STEP\n"
       "(1000..5000+1000); a list may mix counts and ranges. Sizes are sorted and repeats "
       "dropped. bench's \\-\\-sizes were exponents of two before (10\\-30, 12,16): a bare count "
       "below 64 and the form A\\-B are refused with the new spelling (2^12, 2^10..2^30*2).\n"
       ".PP\n"
       "Every list option (\\-\\-dtypes, \\-\\-ops, \\-\\-families, \\-\\-devices, tune's "
       "\\-\\-blocks, \\-\\-unrolls, ...) takes comma\\-separated values and may be repeated: "
       "\\-\\-dtypes i32,f32 \\-\\-dtypes f64 is \\-\\-dtypes i32,f32,f64. Options that take a "
       "path (\\-\\-db) are repeated only. The old spellings \\-\\-dtype, \\-\\-op, \\-\\-family "
       "and \\-\\-device still work.\n"
       ".SH \"SHELL COMPLETION\"\n"
       "\\fBtunedreduce completion bash\\fR prints a bash completion script and "
       "\\fBtunedreduce man\\fR this page, both made from the options each command's "
       "\\fB\\-\\-help\\fR lists (both take \\fB\\-\\-output\\fR \\fIFILE\\fR). "
       "cmake \\-\\-install puts them at share/bash\\-completion/completions/tunedreduce "
       "and share/man/man1/tunedreduce.1; without installing: source <(tunedreduce completion "
       "bash).\n"
       ".SH \"EXIT STATUS\"\n";
  for (const Documented& e : exit_code_docs()) {
    o << ".TP\n.B " << roff(e.key) << "\n" << para(e.brief);
    if (*e.more) o << ": " << para(e.more);
    o << "\n";
  }
  o << ".SH ENVIRONMENT\n";
  for (const Documented& e : environment_docs()) {
    o << ".TP\n.B " << roff(e.key) << "\n" << para(e.brief);
    if (*e.more) o << "; " << para(e.more);
    o << "\n";
  }
  o << ".SH FILES\n"
       ".TP\n.I ~/.local/share/tunedreduce/tune.db\n"
       "the default tuning database (see \\fBTUNEDREDUCE_DB\\fR and \\fBXDG_DATA_HOME\\fR)\n"
       ".TP\n.I BIN/../share/tunedreduce/tune.toml\n"
       "the tune.toml \\fBtunedreduce tune\\fR reads when there is none in the current folder and "
       "no \\fB\\-\\-config\\fR\n"
       ".SH \"SEE ALSO\"\n"
       "docs/cli.md, docs/tuning.md, docs/reports.md, docs/database.md and docs/library.md in "
       "the tunedreduce sources.\n";
  return o.str();
}

/// The generators' own command line: [SHELL] [--output FILE].
int generate(int argc, char** argv, const char* usage, bool takes_shell,
             const std::function<std::string()>& make) {
  CommonOptions common;
  std::string output, shell;
  po::options_description desc("options");
  desc.add_options()("help,h",
                     "show this help")("output,o",
                                       po::value<std::string>(&output)->value_name("FILE"),
                                       "write to FILE instead of stdout");
  po::options_description hidden;
  po::positional_options_description pos;
  if (takes_shell) {
    hidden.add_options()("shell", po::value<std::string>(&shell), "the shell");
    pos.add("shell", 1);
  }
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, &pos, vm, common, usage, &hidden)) return exit_code::ok;
  if (takes_shell && !shell.empty() && shell != "bash")
    throw Error("unknown shell '" + shell + "' (only bash)", exit_code::usage);
  const std::string text = make();
  if (output.empty() || output == "-") write_stdout(text);
  else write_file(output, text);
  return exit_code::ok;
}

}  // namespace

int cmd_completion(int argc, char** argv, std::span<const Command> commands) {
  return generate(argc, argv,
                  "tunedreduce completion [bash] [--output FILE]\n\n"
                  "The bash completion script, from the commands' own option descriptions:\n"
                  "  source <(tunedreduce completion bash)",
                  true, [&] { return bash_script(commands); });
}

int cmd_man(int argc, char** argv, std::span<const Command> commands) {
  return generate(argc, argv,
                  "tunedreduce man [--output FILE]\n\n"
                  "The man page (roff), from the commands' own option descriptions:\n"
                  "  tunedreduce man | man -l -",
                  false, [&] { return man_page(commands); });
}

}  // namespace tunedreduce::cli
