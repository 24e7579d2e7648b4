// The worker of the test build: the real worker plus the test-only kernels that trap or hang.

#include <span>

#include "kernels/registry.hpp"
#include "tuner/worker_main.hpp"

namespace tunedreduce::test {
std::span<const kernels::Entry> test_only_entries();
}

int main(int argc, char** argv) {
  return tunedreduce::tuner::worker_main(argc, argv, tunedreduce::test::test_only_entries());
}
