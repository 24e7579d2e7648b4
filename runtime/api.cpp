// The public C++ API (include/tunedreduce/tunedreduce.hpp): the process's Runtime.

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"
#include "tunedreduce/tunedreduce.hpp"
#include "tunedreduce/version.hpp"

namespace tunedreduce {

ReduceError::ReduceError(Status status, const std::string& message)
    : std::runtime_error(message), status_(status) {}

ReduceError::~ReduceError() = default;

namespace {

constexpr auto status_names = enum_names<Status>({
    {Status::success, "success"},
    {Status::invalid_argument, "invalid_argument"},
    {Status::unsupported, "unsupported"},
    {Status::temp_too_small, "temp_too_small"},
    {Status::cuda_error, "cuda_error"},
    {Status::internal, "internal"},
});
static_assert(status_names.lists_all_through(Status::internal));
constexpr auto level_names = enum_names<Level>({
    {Level::exact, "exact"},
    {Level::nearest, "nearest"},
    {Level::same_model, "same_model"},
    {Level::builtin_default, "default"},
});
constexpr auto cache_state_names =
    enum_names<CacheState>({{CacheState::cold, "cold"}, {CacheState::warm, "warm"}});
static_assert(cache_state_names.lists_all_through(CacheState::warm));

}  // namespace

const char* status_name(Status s) noexcept { return status_names.to_name(s, "unknown"); }
const char* level_name(Level l) noexcept { return level_names.to_name(l, "unknown"); }
const char* cache_state_name(CacheState s) noexcept {
  return cache_state_names.to_name(s, "unknown");
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

void reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out, std::uint64_t n,
            DType dtype, Op op, cudaStream_t stream) {
  runtime::Runtime::global().reduce(d_temp, temp_bytes, d_in, d_out, n, dtype, op, stream);
}

void reduce(const void* d_in, void* d_out, std::uint64_t n, DType dtype, Op op,
            cudaStream_t stream) {
  runtime::Runtime::global().reduce(d_in, d_out, n, dtype, op, stream);
}

SegmentedConfig lookup_segmented(DType dtype, Op op, const Segments& seg, int device) {
  return runtime::Runtime::global().lookup_segmented(dtype, op, seg, device);
}

void segmented_reduce(const void* d_in, void* d_out, const Segments& seg, DType dtype, Op op,
                      cudaStream_t stream) {
  runtime::Runtime::global().segmented_reduce(d_in, d_out, seg, dtype, op, stream);
}

void segmented_reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
                      const Segments& seg, DType dtype, Op op, cudaStream_t stream) {
  runtime::Runtime::global().segmented_reduce(d_temp, temp_bytes, d_in, d_out, seg, dtype, op,
                                              stream);
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
                      fmt::format("log level {} is not a LogLevel (0 trace, 1 debug, 2 info, 3 "
                                  "warn, 4 error, 5 critical, 6 off)",
                                  l));
  runtime::default_logger()->set_level(static_cast<spdlog::level::level_enum>(l));
}

std::size_t kernel_count() noexcept { return kernels::registry().size(); }

const char* kernel_id(std::size_t index) noexcept {
  const auto entries = kernels::registry();
  return index < entries.size() ? entries[index].id : nullptr;
}

}  // namespace tunedreduce
