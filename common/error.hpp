#pragma once
// The error type that crosses component boundaries inside the tool; the CLI maps it to an exit
// code and prints its message.

#include <stdexcept>
#include <string>

#include "exit_codes.hpp"

namespace tunedreduce {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = exit_code::failure)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace tunedreduce
