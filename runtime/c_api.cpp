// The C API (include/tunedreduce/tunedreduce.h) over the C++ one: every exception is caught
// here and becomes a status plus this thread's message.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <string>

#include <fmt/format.h>

#include "tunedreduce/tunedreduce.h"
#include "tunedreduce/tunedreduce.hpp"

namespace {

thread_local std::string last_error;

void set_error(const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {  // out of memory while reporting: an empty message rather than terminate()
    last_error.clear();
  }
}

template <class F>
tr_status guarded(F&& f) noexcept {
  try {
    last_error.clear();
    f();
    return TR_SUCCESS;
  } catch (const tunedreduce::ReduceError& e) {
    set_error(e.what());
    return static_cast<tr_status>(e.status());
  } catch (const std::bad_alloc&) {
    set_error("out of host memory");
    return TR_ERROR_INTERNAL;
  } catch (const std::exception& e) {
    set_error(e.what());
    return TR_ERROR_INTERNAL;
  } catch (...) {
    set_error("unknown internal error");
    return TR_ERROR_INTERNAL;
  }
}

// The C structs of argmin / argmax have the layout of IndexedValue<T>.
template <class C, class T>
constexpr bool same_layout() {
  return sizeof(C) == sizeof(tunedreduce::IndexedValue<T>) &&
         offsetof(C, value) == offsetof(tunedreduce::IndexedValue<T>, value) &&
         offsetof(C, index) == offsetof(tunedreduce::IndexedValue<T>, index);
}
static_assert(same_layout<tr_indexed_i32, std::int32_t>() &&
              same_layout<tr_indexed_u32, std::uint32_t>() &&
              same_layout<tr_indexed_i64, std::int64_t>() &&
              same_layout<tr_indexed_u64, std::uint64_t>() &&
              same_layout<tr_indexed_f32, float>() && same_layout<tr_indexed_f64, double>());
static_assert(static_cast<int>(tunedreduce::Op::argmin) == TR_ARGMIN &&
              static_cast<int>(tunedreduce::Op::argmax) == TR_ARGMAX &&
              static_cast<int>(tunedreduce::Op::absmax) == TR_ABSMAX);

tunedreduce::DType to_dtype(int d) {
  if (d < TR_I32 || d > TR_BF16)
    throw tunedreduce::ReduceError(
        tunedreduce::Status::invalid_argument,
        fmt::format("dtype {} is not a tr_dtype (0..7: TR_I32 .. TR_BF16)", d));
  return static_cast<tunedreduce::DType>(d);
}

tunedreduce::Op to_op(int o) {
  if (o < TR_SUM || o > TR_ABSMAX)
    throw tunedreduce::ReduceError(
        tunedreduce::Status::invalid_argument,
        fmt::format("op {} is not a tr_op (0..7: TR_SUM, TR_MIN, TR_MAX, TR_EXACT_SUM, "
                    "TR_WIDE_SUM, TR_ARGMIN, TR_ARGMAX, TR_ABSMAX)",
                    o));
  return static_cast<tunedreduce::Op>(o);
}
cudaStream_t to_stream(void* s) { return static_cast<cudaStream_t>(s); }

void fill(tr_config* out, const tunedreduce::Config& c) {
  out->kernel_id = c.kernel_id;
  out->family = c.family;
  out->block = c.block;
  out->unroll = c.unroll;
  out->smem = c.smem;
  out->finish = c.finish;
  out->dtype = static_cast<int>(c.dtype);
  out->op = static_cast<int>(c.op);
  out->level = static_cast<int>(c.level);
  out->n_lo = c.n_lo;
  out->n_hi = c.n_hi;
  out->source = c.source;
  out->tuned_on = c.tuned_on;
  out->tuned_median_us = c.tuned_median_us;
  out->stale = c.stale ? 1 : 0;
  out->device = c.device;
  out->cache_state = static_cast<int>(c.cache_state);
}

void require(bool ok, const char* message) {
  if (!ok) throw tunedreduce::ReduceError(tunedreduce::Status::invalid_argument, message);
}

}  // namespace

extern "C" {

tr_status tr_lookup(int dtype, int op, uint64_t n, int device, tr_config* out) {
  return guarded([&] {
    require(out != nullptr, "out is a null pointer");
    fill(out, tunedreduce::lookup(to_dtype(dtype), to_op(op), n, device));
  });
}

tr_status tr_reduce(void* d_temp, size_t* temp_bytes, const void* d_in, void* d_out, uint64_t n,
                    int dtype, int op, void* stream) {
  return guarded([&] {
    require(temp_bytes != nullptr, "temp_bytes is a null pointer");
    tunedreduce::reduce(d_temp, *temp_bytes, d_in, d_out, n, to_dtype(dtype), to_op(op),
                        to_stream(stream));
  });
}

tr_status tr_reduce_cached(const void* d_in, void* d_out, uint64_t n, int dtype, int op,
                           void* stream) {
  return guarded(
      [&] { tunedreduce::reduce(d_in, d_out, n, to_dtype(dtype), to_op(op), to_stream(stream)); });
}

tr_status tr_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_SUM, stream);
}

tr_status tr_min(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_MIN, stream);
}

tr_status tr_max(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_MAX, stream);
}

tr_status tr_exact_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_EXACT_SUM, stream);
}

tr_status tr_wide_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_WIDE_SUM, stream);
}

tr_status tr_argmin(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_ARGMIN, stream);
}

tr_status tr_argmax(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_ARGMAX, stream);
}

tr_status tr_absmax(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream) {
  return tr_reduce_cached(d_in, d_out, n, dtype, TR_ABSMAX, stream);
}

namespace {
/// The segmented call of the C API: two-phase with a temp_bytes pointer, cached without one.
tr_status segmented(void* d_temp, size_t* temp_bytes, const void* d_in, void* d_out,
                    const tunedreduce::Segments& seg, int dtype, int op, void* stream) {
  return guarded([&] {
    if (temp_bytes)
      tunedreduce::segmented_reduce(d_temp, *temp_bytes, d_in, d_out, seg, to_dtype(dtype),
                                    to_op(op), to_stream(stream));
    else {
      require(d_temp == nullptr, "d_temp is given without temp_bytes");
      tunedreduce::segmented_reduce(d_in, d_out, seg, to_dtype(dtype), to_op(op),
                                    to_stream(stream));
    }
  });
}
}  // namespace

tr_status tr_segmented_reduce_rows(void* d_temp, size_t* temp_bytes, const void* d_in, void* d_out,
                                   uint64_t count, uint64_t size, uint64_t stride, int dtype,
                                   int op, void* stream) {
  return segmented(d_temp, temp_bytes, d_in, d_out,
                   tunedreduce::Segments::rows(count, size, stride), dtype, op, stream);
}

namespace {
/// The offsets forms of the C API (tunedreduce::Segments::offsets, \p check: checked()).
tr_status segmented_offsets(void* d_temp, size_t* temp_bytes, const void* d_in, void* d_out,
                            uint64_t count, const void* begin, const void* end, int offset_bytes,
                            uint64_t mean_length, uint64_t max_length, bool check, int dtype,
                            int op, void* stream) {
  if (offset_bytes != 4 && offset_bytes != 8)
    return guarded([&] {
      require(false, ("offset_bytes = " + std::to_string(offset_bytes) +
                      " is neither 4 (int32 offsets) nor 8 (int64)")
                         .c_str());
    });
  tunedreduce::Segments seg;
  seg.layout = offset_bytes == 8 ? tunedreduce::SegmentLayout::offsets64
                                 : tunedreduce::SegmentLayout::offsets32;
  seg.count = count;
  seg.begin = begin;
  seg.end = end;
  seg.mean_length = mean_length;
  seg.max_length = max_length;
  seg.check = check;
  return segmented(d_temp, temp_bytes, d_in, d_out, seg, dtype, op, stream);
}
}  // namespace

tr_status tr_segmented_reduce_offsets_bounded(void* d_temp, size_t* temp_bytes, const void* d_in,
                                              void* d_out, uint64_t count, const void* begin,
                                              const void* end, int offset_bytes,
                                              uint64_t mean_length, uint64_t max_length, int dtype,
                                              int op, void* stream) {
  return segmented_offsets(d_temp, temp_bytes, d_in, d_out, count, begin, end, offset_bytes,
                           mean_length, max_length, false, dtype, op, stream);
}

tr_status tr_segmented_reduce_offsets_checked(void* d_temp, size_t* temp_bytes, const void* d_in,
                                              void* d_out, uint64_t count, const void* begin,
                                              const void* end, int offset_bytes,
                                              uint64_t mean_length, uint64_t max_length, int dtype,
                                              int op, void* stream) {
  return segmented_offsets(d_temp, temp_bytes, d_in, d_out, count, begin, end, offset_bytes,
                           mean_length, max_length, true, dtype, op, stream);
}

tr_status tr_segmented_reduce_offsets(void* d_temp, size_t* temp_bytes, const void* d_in,
                                      void* d_out, uint64_t count, const void* begin,
                                      const void* end, int offset_bytes, uint64_t mean_length,
                                      int dtype, int op, void* stream) {
  return tr_segmented_reduce_offsets_bounded(d_temp, temp_bytes, d_in, d_out, count, begin, end,
                                             offset_bytes, mean_length, 0, dtype, op, stream);
}

tr_status tr_release_workspace(void* stream) {
  return guarded([&] { tunedreduce::release_workspace(to_stream(stream)); });
}

tr_status tr_set_database(const char* path) {
  return guarded([&] { tunedreduce::set_database(path ? path : ""); });
}

tr_status tr_set_log_callback(tr_log_callback callback, void* user) {
  // The C callback takes the level as an int: a trampoline calls it. Each setting gets its own
  // (callback, user) pair that is never changed or freed, since a message being logged on
  // another thread may still hold the previous one.
  struct Target {
    tr_log_callback fn;
    void* user;
  };
  static std::mutex m;
  static std::deque<Target> targets;
  return guarded([&] {
    if (!callback) {
      tunedreduce::set_log_callback(nullptr, nullptr);
      return;
    }
    std::lock_guard<std::mutex> lock(m);
    Target& t = targets.emplace_back(Target{callback, user});
    tunedreduce::set_log_callback(
        [](tunedreduce::LogLevel level, const char* message, void* u) {
          const Target* target = static_cast<const Target*>(u);
          target->fn(static_cast<int>(level), message, target->user);
        },
        &t);
  });
}

tr_status tr_set_log_level(int level) {
  return guarded([&] { tunedreduce::set_log_level(static_cast<tunedreduce::LogLevel>(level)); });
}

tr_status tr_set_cache_state(int state) {
  return guarded([&] {
    if (state != TR_CACHE_COLD && state != TR_CACHE_WARM)
      throw tunedreduce::ReduceError(tunedreduce::Status::invalid_argument,
                                     fmt::format("cache state {} is not a tr_cache_state (0: "
                                                 "TR_CACHE_COLD, 1: TR_CACHE_WARM)",
                                                 state));
    tunedreduce::set_cache_state(static_cast<tunedreduce::CacheState>(state));
  });
}

int tr_get_cache_state(void) { return static_cast<int>(tunedreduce::cache_state()); }

const char* tr_last_error(void) { return last_error.c_str(); }

const char* tr_status_name(int status) {
  if (status < 0 || status > TR_ERROR_INTERNAL) return "unknown";
  return tunedreduce::status_name(static_cast<tunedreduce::Status>(status));
}

const char* tr_level_name(int level) {
  if (level < TR_LEVEL_EXACT || level > TR_LEVEL_DEFAULT) return "unknown";
  return tunedreduce::level_name(static_cast<tunedreduce::Level>(level));
}

const char* tr_cache_state_name(int state) {
  if (state != TR_CACHE_COLD && state != TR_CACHE_WARM) return "unknown";
  return tunedreduce::cache_state_name(static_cast<tunedreduce::CacheState>(state));
}

const char* tr_version(void) { return tunedreduce::version(); }

const char* tr_cuda_architectures(void) { return tunedreduce::cuda_architectures(); }

size_t tr_kernel_count(void) { return tunedreduce::kernel_count(); }

const char* tr_kernel_id(size_t index) { return tunedreduce::kernel_id(index); }

}  // extern "C"
