// The public C++ API (include/tunedreduce/tunedreduce.hpp): the process's Runtime.

#include "runtime/log.hpp"
#include "runtime/runtime.hpp"
#include "tunedreduce/tunedreduce.hpp"
#include "tunedreduce/version.hpp"

namespace tunedreduce {

ReduceError::ReduceError(Status status, const std::string& message)
    : std::runtime_error(message), status_(status) {}

ReduceError::~ReduceError() = default;

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::success: return "success";
    case Status::invalid_argument: return "invalid_argument";
    case Status::unsupported: return "unsupported";
    case Status::temp_too_small: return "temp_too_small";
    case Status::cuda_error: return "cuda_error";
    case Status::internal: return "internal";
  }
  return "unknown";
}

const char* level_name(Level l) noexcept {
  switch (l) {
    case Level::exact: return "exact";
    case Level::nearest: return "nearest";
    case Level::same_model: return "same_model";
    case Level::builtin_default: return "default";
  }
  return "unknown";
}

const char* cache_state_name(CacheState s) noexcept {
  switch (s) {
    case CacheState::cold: return "cold";
    case CacheState::warm: return "warm";
  }
  return "unknown";
}

void set_cache_state(CacheState s) { runtime::Runtime::global().set_cache_state(s); }

CacheState cache_state() noexcept { return runtime::Runtime::global().cache_state(); }

Config lookup(DType dtype, Op op, std::uint64_t n, int device) {
  return runtime::Runtime::global().lookup(dtype, op, n, device);
}

void set_database(const std::string& path) {
  runtime::Runtime::global().set_database(path.empty() ? std::nullopt
                                                       : std::optional<std::string>(path));
}

std::string database_path() { return runtime::Runtime::global().database_path(); }

void reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
            std::uint64_t n, DType dtype, Op op, cudaStream_t stream) {
  runtime::Runtime::global().reduce(d_temp, temp_bytes, d_in, d_out, n, dtype, op, stream);
}

void reduce(const void* d_in, void* d_out, std::uint64_t n, DType dtype, Op op,
            cudaStream_t stream) {
  runtime::Runtime::global().reduce(d_in, d_out, n, dtype, op, stream);
}

void release_workspace(cudaStream_t stream) {
  runtime::Runtime::global().release_workspace(stream);
}

const char* version() noexcept { return TUNEDREDUCE_VERSION_STRING; }

const char* cuda_architectures() noexcept { return TUNEDREDUCE_CUDA_ARCHITECTURES; }

void set_log_callback(LogCallback callback, void* user) noexcept {
  runtime::set_log_callback(callback, user);
}

void set_log_level(LogLevel level) {
  const int l = static_cast<int>(level);
  if (l < static_cast<int>(LogLevel::trace) || l > static_cast<int>(LogLevel::off))
    throw ReduceError(Status::invalid_argument,
                      "log level " + std::to_string(l) +
                          " is not a LogLevel (0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 "
                          "critical, 6 off)");
  runtime::default_logger()->set_level(static_cast<spdlog::level::level_enum>(l));
}

std::size_t kernel_count() noexcept { return kernels::registry().size(); }

const char* kernel_id(std::size_t index) noexcept {
  const auto entries = kernels::registry();
  return index < entries.size() ? entries[index].id : nullptr;
}

}  // namespace tunedreduce
