#include "command.hpp"

#include <iostream>

#include "common/log.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

void add_common_options(po::options_description& desc, CommonOptions& common) {
  desc.add_options()("help,h", "show this help")(
      "db", po::value<std::string>()->notifier([&common](const std::string& v) { common.db = v; }),
      "tuning database (default: $TUNEDREDUCE_DB, else "
      "$XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db)")(
      "log-level", po::value<std::string>(&common.log_level)->default_value("warn"),
      "trace, debug, info, warn, error, critical or off");
}

bool parse_command_line(int argc, char** argv, const po::options_description& desc,
                        const po::positional_options_description* positional,
                        po::variables_map& vm, const CommonOptions& common, const char* usage,
                        const po::options_description* hidden) {
  po::command_line_parser parser(argc, argv);
  po::options_description all;
  all.add(desc);
  if (hidden) all.add(*hidden);
  parser.options(all);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: " << usage << "\n\n" << desc << "\n";
    return true;
  }
  po::notify(vm);
  init_logging(common.log_level);
  return false;
}

}  // namespace tunedreduce::cli
