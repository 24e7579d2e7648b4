#pragma once
// A kernel's parameters as the tuning database stores them: names, not enums, so neither db/ nor
// kernels/ depends on the other. kernels::stored_params() (kernels/manifest.hpp) fills one from a
// kernels::KernelParams; db/records.hpp stores it with every measurement.

#include <string>

namespace tunedreduce {

struct CandidateParams {
  std::string family;  // "smem", "warp_shuffle", ...
  int block = 0;
  int unroll = 1;
  std::string smem = "none";        // "none" | "static" | "dynamic"
  std::string finish = "two_pass";  // "two_pass" | "single_pass" | "packed"
  friend bool operator==(const CandidateParams&, const CandidateParams&) = default;
};

}  // namespace tunedreduce
