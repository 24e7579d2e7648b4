// `tunedreduce report` without the kernel registry: cli/cmd_report.cpp behind the same error
// handling as cli/main.cpp, so the command's tests run without compiling the 6120 kernels. The
// same tests also run against the real CLI (tr_report_cli_tests).

#include <boost/program_options/errors.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "cli/command.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  namespace ec = tunedreduce::exit_code;
  if (argc < 2 || std::string(argv[1]) != "report") {
    std::cerr << "usage: " << argv[0] << " report KIND [OPTIONS]\n";
    return ec::usage;
  }
  std::string argv0 = "tunedreduce report";
  argv[1] = argv0.data();
  try {
    return tunedreduce::cli::cmd_report(argc - 1, argv + 1);
  } catch (const boost::program_options::error& e) {
    std::cerr << "tunedreduce report: error: " << e.what() << "\n";
    return ec::usage;
  } catch (const tunedreduce::Error& e) {
    std::cerr << "tunedreduce report: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "tunedreduce report: error: " << e.what() << "\n";
    return ec::failure;
  }
}
