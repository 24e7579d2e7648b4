// The implementations of fmt and spdlog, compiled once for the whole build (tr_logging,
// CMakeLists.txt). Debian ships both as shared libraries only; the binaries built here must run
// where other versions (or none) are installed, so they are not linked. Header-only, every unit
// that formats or logs compiled them again at -O3: 5-6 s more a unit that includes
// <fmt/format.h> (73 units) and about 6 s more one that includes <spdlog/logger.h> (20),
// measured on the 2-core development machine (docs/ci-history.md). Every other unit is compiled
// with SPDLOG_COMPILED_LIB and without FMT_HEADER_ONLY, so its headers declare what this unit
// defines: the functions both libraries mark for their compiled builds (FMT_FUNC, SPDLOG_INLINE),
// and the instantiations of the templates they declare extern or that their -inl headers define
// for the sinks and factories this project uses.

#include <fmt/format-inl.h>

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

// fmt: the locale-dependent helpers its format.h declares extern.
FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE

// spdlog: the sinks' class templates over their mutexes, and the colour loggers' factories.
namespace spdlog {
template class sinks::base_sink<std::mutex>;
template class sinks::base_sink<details::null_mutex>;
template class sinks::ansicolor_sink<details::console_mutex>;
template class sinks::ansicolor_sink<details::console_nullmutex>;
template class sinks::ansicolor_stdout_sink<details::console_mutex>;
template class sinks::ansicolor_stdout_sink<details::console_nullmutex>;
template class sinks::ansicolor_stderr_sink<details::console_mutex>;
template class sinks::ansicolor_stderr_sink<details::console_nullmutex>;
template class sinks::stdout_sink_base<details::console_mutex>;
template class sinks::stdout_sink_base<details::console_nullmutex>;
template class sinks::stdout_sink<details::console_mutex>;
template class sinks::stdout_sink<details::console_nullmutex>;
template class sinks::stderr_sink<details::console_mutex>;
template class sinks::stderr_sink<details::console_nullmutex>;
template SPDLOG_API std::shared_ptr<logger> stdout_color_mt<synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template SPDLOG_API std::shared_ptr<logger> stdout_color_st<synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template SPDLOG_API std::shared_ptr<logger> stderr_color_mt<synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template SPDLOG_API std::shared_ptr<logger> stderr_color_st<synchronous_factory>(
    const std::string& logger_name, color_mode mode);
}  // namespace spdlog
