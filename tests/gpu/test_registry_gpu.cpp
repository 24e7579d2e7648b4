// Every registry entry against a host reference, on fresh random data (argmin and argmax also on
// inputs of ties, of only the worst value and with NaNs), at the sizes where reductions go wrong:
// empty, tiny, around one block and one chunk, a large prime, 2^24 + 7, and (for 4-byte types)
// above 2^31; with the input pointer offset by one element; the output poisoned before every run,
// with guard elements on both sides of it.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "gpu_util.hpp"
#include "kernels/device.hpp"
#include "kernels/registry.hpp"
#include "tests/gpu/gpu_main.hpp"

namespace tunedreduce::test {
namespace {

/// The operators this test checks against its own host reference; exact_sum (bit for bit the
/// exact reference) is tests/gpu/test_exact_registry_gpu's.
constexpr Op plain_ops[] = {Op::sum, Op::min, Op::max};
/// The element types of sum, min and max (the half types have wide_sum alone).
constexpr DType plain_dtypes[] = {DType::i32, DType::u32, DType::i64,
                                  DType::u64, DType::f32, DType::f64};

using kernels::Entry;

constexpr unsigned char poison_byte = 0xA5;

/// Pass/fail counts per family and element type, printed as the summary table.
struct Summary {
  struct Cell {
    std::uint64_t runs = 0, failures = 0;
  };
  std::map<std::pair<std::string, std::string>, Cell> cells;
  std::set<std::string> entries_seen, entries_failed;
  void add(const Entry& e, bool ok) {
    auto& c = cells[{kernels::family_name(e.params.family), dtype_name(e.params.dtype)}];
    ++c.runs;
    entries_seen.insert(e.id);
    if (!ok) {
      ++c.failures;
      entries_failed.insert(e.id);
    }
  }
};

Summary& summary() {
  static Summary s;
  return s;
}

std::vector<const Entry*> entries_of(DType d, Op op) {
  std::vector<const Entry*> out;
  for (const Entry& e : kernels::registry())
    if (e.params.dtype == d && e.params.op == op) out.push_back(&e);
  return out;
}

std::uint64_t chunk_elements(const Entry& e) {
  std::uint64_t c = std::uint64_t(e.params.block) * e.params.unroll;
  const kernels::Family f = e.params.family;
  if (f == kernels::Family::vectorized || f == kernels::Family::tiled ||
      f == kernels::Family::streaming || f == kernels::Family::single_tile)
    c *= 16 / dtype_size(e.params.dtype);
  return c;
}

std::vector<std::uint64_t> sizes_for(const Entry& e, bool with_large_prime) {
  std::set<std::uint64_t> s = {0, 1, 31, 32, 33};
  const std::uint64_t b = e.params.block;
  s.insert({b - 1, b, b + 1});
  const std::uint64_t bu = b * e.params.unroll;
  s.insert({bu - 1, bu + 1});
  const std::uint64_t c = chunk_elements(e);
  s.insert({c - 1, c, c + 1});  // single_tile: c is its whole tile, c + 1 is refused
  if (with_large_prime) s.insert({999983, (std::uint64_t{1} << 24) + 7});
  return {s.begin(), s.end()};
}

/// The two-phase launch (LaunchArgs::counter): an external counter, zero on entry and checked
/// to be zero again after every launch, and a workspace that holds garbage (`garbage` is
/// written over its first bytes before each launch: the counter area and every partial slot),
/// or, with garbage = -1, memory nothing ever wrote (compute-sanitizer initcheck then proves
/// the launch reads nothing it did not write).
struct External {
  unsigned long long* counter = nullptr;  // device memory, 8 bytes
  int garbage = 0xff;
};

/// Bytes of a workspace that hold the counter area and the partials of any grid.
constexpr std::size_t garbage_bytes = 256 + 65536 * 16;

/// Runs entry e on in[offset .. offset+n) into the middle of three result slots of \p out_bytes
/// at \p d_out3 (poisoned first), and copies the three back to \p host3: `ran` when the result
/// is there to compare (host3 + out_bytes), with what was already wrong (a guard slot written, the
/// external counter left non-zero) in `msg`; else `msg` says what was wrong, or is empty for a
/// size past a single_tile entry's tile that was refused as it must be. With \p ext, the launch
/// uses its external counter over a workspace of garbage. Throws on CUDA errors (a sticky error
/// ends the process's usefulness).
struct Fetched {
  bool ran = false;
  std::string msg;
};

template <class T>
Fetched launch_and_fetch(const Entry& e, const kernels::DeviceLimits& dev, const T* d_in,
                         std::uint64_t n, void* d_out3, std::size_t out_bytes, void* ws,
                         std::size_t ws_bytes, std::uint64_t& clean_grid, cudaStream_t stream,
                         const External* ext, unsigned char* host3) {
  TR_CUDA_CHECK(cudaMemsetAsync(d_out3, poison_byte, 3 * out_bytes, stream));
  kernels::LaunchArgs a;
  a.in = d_in;
  a.out = static_cast<unsigned char*>(d_out3) + out_bytes;
  a.n = n;
  a.workspace = ws;
  a.workspace_bytes = ws_bytes;
  a.stream = stream;
  // The counter and the slots of grids up to clean_grid blocks are known to be zero (the
  // library's cached workspace is zeroed whole once, so its launches are always clean).
  const std::uint64_t grid = e.grid_size(n, dev);
  a.workspace_clean = grid <= clean_grid;
  if (ext) {
    a.counter = ext->counter;
    a.workspace_clean = false;
    if (ext->garbage >= 0) {
      TR_CUDA_CHECK(cudaMemsetAsync(ws, ext->garbage, std::min(ws_bytes, garbage_bytes), stream));
      clean_grid = 0;  // the cached-path launches that follow on ws find it dirty
    }
  }
  if (n > kernels::max_elements_of(e.params)) {
    // Past a single_tile entry's tile: refused by name, and a launch enqueues nothing.
    const auto why = e.can_implement(n, 256, dev);
    if (!why) return {false, "can_implement took n = " + std::to_string(n) + ", past the tile"};
    if (why->find("single tile") == std::string::npos)
      return {false, "refused for another reason: " + *why};
    if (e.workspace_bytes(n, dev) != 0) return {false, "a workspace for n past the tile"};
    if (cudaError_t err = e.launch(a, dev); err != cudaErrorInvalidValue)
      return {false, std::string("a launch past the tile returned ") + cudaGetErrorName(err)};
    return {};
  }
  if (e.workspace_bytes(n, dev) > ws_bytes) return {false, "workspace too small for the test"};
  if (auto why =
          e.can_implement(n, reinterpret_cast<std::uintptr_t>(d_in) & 255 ? sizeof(T) : 256, dev))
    return {false, "can_implement refused: " + *why};
  cudaError_t err = e.launch(a, dev);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("launch of ") + e.id + " n=" + std::to_string(n) +
                             " failed: " + cudaGetErrorName(err));
  TR_CUDA_CHECK(cudaStreamSynchronize(stream));
  // A launch of more than one block that was not clean zeroed the counter and its own grid's
  // slots first; every launch leaves what it used zero. One block touches neither.
  if (!ext && grid > 1 && !a.workspace_clean) clean_grid = grid;
  TR_CUDA_CHECK(cudaMemcpy(host3, d_out3, 3 * out_bytes, cudaMemcpyDeviceToHost));
  std::string msg;
  if (ext) {
    unsigned long long counter = 1;
    TR_CUDA_CHECK(cudaMemcpy(&counter, ext->counter, sizeof counter, cudaMemcpyDeviceToHost));
    if (counter != 0) {
      msg += "left the external counter at " + std::to_string(counter) + "; ";
      TR_CUDA_CHECK(cudaMemset(ext->counter, 0, sizeof counter));
    }
  }
  std::vector<unsigned char> poison(out_bytes, poison_byte);
  if (std::memcmp(host3, poison.data(), out_bytes) ||
      std::memcmp(host3 + 2 * out_bytes, poison.data(), out_bytes))
    msg += "wrote outside the output element; ";
  return {true, msg};
}

/// Runs entry e on in[offset .. offset+n) and checks the result (of type R: T, or T's wide type
/// for wide_sum); returns "" or what was wrong (launch_and_fetch).
template <class T, class R = T>
std::string run_and_check(const Entry& e, const kernels::DeviceLimits& dev, const T* d_in,
                          std::uint64_t n, const Reference<R>& ref, R* d_out3, void* ws,
                          std::size_t ws_bytes, std::uint64_t& clean_grid, cudaStream_t stream,
                          const External* ext = nullptr) {
  R out[3];
  const Fetched f = launch_and_fetch<T>(e, dev, d_in, n, d_out3, sizeof(R), ws, ws_bytes,
                                        clean_grid, stream, ext,
                                        reinterpret_cast<unsigned char*>(out));
  if (!f.ran) return f.msg;
  std::ostringstream msg;
  msg << f.msg;
  R poison;
  std::memset(&poison, poison_byte, sizeof poison);
  const R got = out[1];
  const bool is_sum = e.params.op == Op::sum || e.params.op == Op::wide_sum;
  if constexpr (std::is_floating_point_v<R>) {
    if (std::isnan(ref.value) || std::isnan(got) || std::isinf(ref.value) || std::isinf(got)) {
      if (std::string(fp_class(got)) != fp_class(ref.value) ||
          (std::isinf(got) && got != ref.value))
        msg << "class " << fp_class(got) << " (" << got << "), expected " << fp_class(ref.value)
            << " (" << ref.value << ")";
    } else if (is_sum && ref.abs_sum == 0 && std::signbit(got) != std::signbit(ref.value)) {
      // Every element is a zero (or n == 0): the result is exact in any order, sign included.
      msg << "got " << got << ", expected " << ref.value << " (the sign of zero)";
    } else if (is_sum) {
      // The bound in the accumulator's epsilon (double's for wide_sum of f32).
      const long double tol =
          static_cast<long double>(n) * std::numeric_limits<R>::epsilon() * ref.abs_sum;
      const long double diff = std::fabs(static_cast<long double>(got) - ref.value);
      if (diff > tol || std::memcmp(&got, &poison, sizeof(R)) == 0)
        msg.precision(17), msg << "got " << got << ", expected " << ref.value << " (|diff| "
                               << double(diff) << " > bound " << double(tol) << ")";
    } else if (got != ref.value) {
      msg.precision(17);
      msg << "got " << got << ", expected " << ref.value;
    }
  } else if (got != ref.value) {
    msg << "got " << +got << ", expected " << +ref.value;
  }
  return msg.str();
}

struct KeyContext {
  kernels::DeviceLimits dev = kernels::query_device_limits(0);
  cudaStream_t stream = nullptr;
  DeviceBuffer counter{8};
  External ext;
  KeyContext() {
    TR_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    TR_CUDA_CHECK(cudaMemset(counter.get(), 0, 8));
    ext.counter = static_cast<unsigned long long*>(counter.get());
  }
  ~KeyContext() { cudaStreamDestroy(stream); }
};

/// The reference of wide_sum over x[0, n): the values widened to R and summed, modulo 2^64 for
/// integers, in long double with sum|x| for floats (the empty sum is +0).
template <class T, class R>
Reference<R> wide_reference(const T* x, std::uint64_t n) {
  Reference<R> r;
  if constexpr (std::is_integral_v<R>) {
    std::uint64_t acc = 0;
    for (std::uint64_t i = 0; i < n; ++i) acc += static_cast<std::uint64_t>(static_cast<R>(x[i]));
    r.value = static_cast<R>(acc);
  } else {
    long double acc = n == 0 ? 0.0L : -0.0L;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto v = static_cast<long double>(static_cast<float>(x[i]));  // exact; halves too
      acc += v;
      r.abs_sum += std::fabs(v);
    }
    r.value = static_cast<R>(acc);
  }
  return r;
}

/// Every entry of (d, op) over sizes_for() at offsets 0 and 1, both launch kinds. R is the
/// result's type: T, or T's wide type for wide_sum.
template <class T, class R = T>
void check_key(DType d, Op op) {
  KeyContext ctx;
  const auto entries = entries_of(d, op);
  ASSERT_FALSE(entries.empty());
  const std::uint64_t max_n = (std::uint64_t{1} << 24) + 7;
  const std::uint64_t stream_id = test_seed() ^ (std::uint64_t(d) << 8 | std::uint64_t(op));
  std::vector<T> host(max_n + 1);
  fill_random(host, stream_id);
  DeviceBuffer d_in(host.size() * sizeof(T));
  tunedreduce::test::upload(d_in.get(), host.data(), host.size() * sizeof(T));
  std::size_t ws_bytes = 0;
  for (const Entry* e : entries)
    for (std::uint64_t n : sizes_for(*e, true))
      ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
  DeviceBuffer ws(ws_bytes);
  DeviceBuffer out(3 * sizeof(R));
  std::map<std::pair<std::uint64_t, int>, Reference<R>> refs;
  int reported = 0;
  int garbage = 0;
  for (const Entry* e : entries) {
    std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
    for (std::uint64_t n : sizes_for(*e, true))
      for (int offset : {0, 1}) {
        auto key = std::make_pair(n, offset);
        auto it = refs.find(key);
        if (it == refs.end()) {
          if constexpr (std::is_same_v<T, R>)
            it = refs.emplace(key, host_reference<T>(op, host.data() + offset, n)).first;
          else it = refs.emplace(key, wide_reference<T, R>(host.data() + offset, n)).first;
        }
        const T* in = static_cast<const T*>(d_in.get()) + offset;
        // Each size and offset twice: as the library's cached call runs it (the workspace the
        // previous launch left), and as the two-phase call does (an external counter over a
        // workspace of garbage: 0xff, 0x01, 0xa5, 0x00 bytes in turn).
        for (bool two_phase : {false, true}) {
          ctx.ext.garbage = std::array{0xff, 0x01, 0xa5, 0x00}[garbage++ % 4];
          std::string why = run_and_check<T, R>(*e, ctx.dev, in, n, it->second,
                                                static_cast<R*>(out.get()), ws.get(), ws.bytes(),
                                                clean, ctx.stream, two_phase ? &ctx.ext : nullptr);
          summary().add(*e, why.empty());
          if (!why.empty() && reported++ < 40)
            ADD_FAILURE() << e->id << " n=" << n << " offset=" << offset
                          << (two_phase ? " (two-phase)" : "") << ": " << why;
        }
      }
  }
}

template <class T>
void check_specials(DType d, Op op) {
  KeyContext ctx;
  const auto entries = entries_of(d, op);
  const std::uint64_t n = 100003;
  const std::uint64_t stream_id = test_seed() ^ 0x5eed ^
                                  (std::uint64_t(d) << 8 | std::uint64_t(op));
  std::vector<T> base(n + 1);
  fill_random(base, stream_id);
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  struct Case {
    const char* name;
    std::vector<std::pair<std::uint64_t, T>> put;
  };
  const std::uint64_t p = 1 + splitmix64(stream_id) % (n - 2),
                      q = 1 + splitmix64(stream_id + 1) % (n - 2);
  const std::vector<Case> cases = {
      {"nan", {{p, nan}}},
      {"+inf", {{p, inf}}},
      {"-inf", {{q, -inf}}},
      {"+inf,-inf", {{p, inf}, {q == p ? p + 1 : q, -inf}}},
      {"nan,+inf", {{p, inf}, {q == p ? p + 1 : q, nan}}},
      {"first-nan", {{1, nan}}},  // element 0 of the offset input
      {"last-nan", {{n, nan}}},   // element n-1 of the offset input
  };
  DeviceBuffer d_in((n + 1) * sizeof(T));
  DeviceBuffer out(3 * sizeof(T));
  std::size_t ws_bytes = 0;
  for (const Entry* e : entries) ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
  DeviceBuffer ws(ws_bytes);
  int reported = 0;
  for (const Case& c : cases) {
    std::vector<T> h = base;
    for (auto [i, v] : c.put) h[i] = v;
    tunedreduce::test::upload(d_in.get(), h.data(), h.size() * sizeof(T));
    const Reference<T> ref = host_reference<T>(op, h.data() + 1, n);
    for (const Entry* e : entries) {
      std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
      std::string why = run_and_check<T>(*e, ctx.dev, static_cast<const T*>(d_in.get()) + 1, n, ref,
                                         static_cast<T*>(out.get()), ws.get(), ws.bytes(), clean,
                                         ctx.stream);
      summary().add(*e, why.empty());
      if (!why.empty() && reported++ < 40)
        ADD_FAILURE() << e->id << " case " << c.name << ": " << why;
    }
  }
}

/// One n above 2^31 for each 4-byte type, every entry; even entries read from an aligned
/// pointer, odd ones from a pointer offset by one element.
template <class T>
void check_large(DType d) {
  static_assert(sizeof(T) == 4);
  KeyContext ctx;
  const std::uint64_t n = (std::uint64_t{1} << 31) + 17;
  std::vector<T> host(n + 1);
  fill_random(host, test_seed() ^ 0x1a46e ^ std::uint64_t(d));
  DeviceBuffer d_in(host.size() * sizeof(T));
  tunedreduce::test::upload(d_in.get(), host.data(), host.size() * sizeof(T));
  for (Op op : {Op::argmin, Op::argmax}) {
    // The extreme value past 2^31 (its index needs 64 bits), unless the random data has it
    // earlier (the reference says which).
    const std::uint64_t far = (std::uint64_t{1} << 31) + 5;
    const T saved = host[far];
    // The best value of op is the worst of the other operator (lowest / -inf for argmin).
    host[far] = arg_worst<T>(op == Op::argmin ? Op::argmax : Op::argmin);
    TR_CUDA_CHECK(cudaMemcpy(static_cast<T*>(d_in.get()) + far, &host[far], sizeof(T),
                             cudaMemcpyHostToDevice));
    const auto entries = entries_of(d, op);
    const IndexedValue<T> refs[2] = {arg_reference<T>(op, host.data(), n),
                                     arg_reference<T>(op, host.data() + 1, n)};
    std::size_t ws_bytes = 0;
    for (const Entry* e : entries) ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
    DeviceBuffer ws(ws_bytes);
    DeviceBuffer out(3 * sizeof(IndexedValue<T>));
    int reported = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries[i]->params.family == kernels::Family::single_tile) continue;  // n past its tile
      const int offset = static_cast<int>(i % 2);
      std::uint64_t clean = 0;
      std::string why = run_and_check_arg<T>(*entries[i], ctx.dev,
                                             static_cast<const T*>(d_in.get()) + offset, n,
                                             refs[offset], out.get(), ws.get(), ws.bytes(), clean,
                                             ctx.stream, i % 3 == 2 ? &ctx.ext : nullptr);
      summary().add(*entries[i], why.empty());
      if (!why.empty() && reported++ < 20)
        ADD_FAILURE() << entries[i]->id << " n=" << n << " offset=" << offset << ": " << why;
    }
    host[far] = saved;
    TR_CUDA_CHECK(
        cudaMemcpy(static_cast<T*>(d_in.get()) + far, &saved, sizeof(T), cudaMemcpyHostToDevice));
  }
  for (Op op : plain_ops) {
    const auto entries = entries_of(d, op);
    Reference<T> refs[2] = {host_reference<T>(op, host.data(), n),
                            host_reference<T>(op, host.data() + 1, n)};
    std::size_t ws_bytes = 0;
    for (const Entry* e : entries) ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
    DeviceBuffer ws(ws_bytes);
    DeviceBuffer out(3 * sizeof(T));
    int reported = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const int offset = static_cast<int>(i % 2);
      std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
      // Every third entry as the two-phase call runs it (external counter, garbage workspace).
      std::string why =
          run_and_check<T>(*entries[i], ctx.dev, static_cast<const T*>(d_in.get()) + offset, n,
                           refs[offset], static_cast<T*>(out.get()), ws.get(), ws.bytes(), clean,
                           ctx.stream, i % 3 == 2 ? &ctx.ext : nullptr);
      summary().add(*entries[i], why.empty());
      if (!why.empty() && reported++ < 20)
        ADD_FAILURE() << entries[i]->id << " n=" << n << " offset=" << offset << ": " << why;
    }
  }
}

template <class F>
void for_dtype(DType d, F&& f) {
  switch (d) {
    case DType::i32:
      f(std::int32_t{});
      break;
    case DType::u32:
      f(std::uint32_t{});
      break;
    case DType::i64:
      f(std::int64_t{});
      break;
    case DType::u64:
      f(std::uint64_t{});
      break;
    case DType::f32:
      f(float{});
      break;
    case DType::f64:
      f(double{});
      break;
    case DType::f16:
    case DType::bf16:
      ADD_FAILURE() << "the half types have wide_sum alone (WideSumKey)";
      break;
  }
}

class RegistryKey : public ::testing::TestWithParam<std::tuple<DType, Op>> {};

TEST_P(RegistryKey, EveryEntryEverySize) {
  auto [d, op] = GetParam();
  for_dtype(d, [&](auto t) { check_key<decltype(t)>(d, op); });
}

INSTANTIATE_TEST_SUITE_P(All, RegistryKey,
                         ::testing::Combine(::testing::ValuesIn(plain_dtypes),
                                            ::testing::ValuesIn(plain_ops)),
                         [](const auto& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                  op_name(std::get<1>(info.param));
                         });

/// The wide sums (i32 -> i64, u32 -> u64, f32 -> f64, f16 and bf16 -> f32): every entry, as
/// RegistryKey checks the others; whole-range random integers, so every 32-bit sum of more than a
/// few elements wraps and the wide one must not; halves in [-1000, 1000), summed in float within
/// n·ε(float)·Σ|x|.
class WideSumKey : public ::testing::TestWithParam<DType> {};

TEST_P(WideSumKey, EveryEntryEverySize) {
  const DType d = GetParam();
  if (d == DType::i32) check_key<std::int32_t, std::int64_t>(d, Op::wide_sum);
  else if (d == DType::u32) check_key<std::uint32_t, std::uint64_t>(d, Op::wide_sum);
  else if (d == DType::f16) check_key<__half, float>(d, Op::wide_sum);
  else if (d == DType::bf16) check_key<__nv_bfloat16, float>(d, Op::wide_sum);
  else check_key<float, double>(d, Op::wide_sum);
}

INSTANTIATE_TEST_SUITE_P(Wide, WideSumKey,
                         ::testing::Values(DType::i32, DType::u32, DType::f32, DType::f16,
                                           DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

/// absmax (f32, f64, f16, bf16): every entry over sizes_for() at offsets 0 and 1, both launch
/// kinds, as RegistryKey checks the others, its result's bits against the largest magnitude's
/// computed here on the bits (the bits less the sign bit as unsigned integers); the data are
/// finite values of both signs over every exponent, then the same with a NaN (sign bit and payload
/// set) and a -inf put at random places, whose result is that NaN without its sign.
template <class Bits>
void check_absmax_key(DType d) {
  KeyContext ctx;
  const auto entries = entries_of(d, Op::absmax);
  ASSERT_FALSE(entries.empty());
  constexpr Bits sign = static_cast<Bits>(Bits{1} << (8 * sizeof(Bits) - 1));
  constexpr Bits magnitude = static_cast<Bits>(~sign);
  // The infinity's bits: the exponent all ones, the significand zero.
  const Bits inf = d == DType::f16    ? Bits(0x7C00)
                   : d == DType::bf16 ? Bits(0x7F80)
                   : d == DType::f32  ? Bits(0x7F800000u)
                                      : Bits(0x7FF0000000000000ull);
  const std::uint64_t max_n = (std::uint64_t{1} << 24) + 7;
  const std::uint64_t stream_id = test_seed() ^ (std::uint64_t(d) << 8 | 0xab5);
  std::vector<Bits> host(max_n + 1);
  for (std::uint64_t i = 0; i < host.size(); ++i) {
    const std::uint64_t r = splitmix64(stream_id + i);
    host[i] = static_cast<Bits>((r >> 1) % inf) | (r & 1 ? sign : Bits{0});  // finite, either sign
  }
  std::size_t ws_bytes = 0;
  for (const Entry* e : entries)
    for (std::uint64_t n : sizes_for(*e, true))
      ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
  DeviceBuffer d_in(host.size() * sizeof(Bits)), ws(ws_bytes), out(3 * sizeof(Bits));
  int reported = 0, garbage = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // a NaN with its sign and a payload bit, and a -inf
      host[1 + splitmix64(stream_id) % 1000] = static_cast<Bits>(inf | sign | 1 | (inf >> 1));
      host[1 + splitmix64(stream_id + 1) % 5000] = static_cast<Bits>(inf | sign);
    }
    tunedreduce::test::upload(d_in.get(), host.data(), host.size() * sizeof(Bits));
    std::map<std::pair<std::uint64_t, int>, Bits> refs;
    for (const Entry* e : entries) {
      std::uint64_t clean = 0;
      for (std::uint64_t n : sizes_for(*e, true))
        for (int offset : {0, 1}) {
          auto [it, fresh] = refs.try_emplace({n, offset}, Bits{0});
          if (fresh)
            for (std::uint64_t i = 0; i < n; ++i)
              it->second = std::max<Bits>(it->second, host[offset + i] & magnitude);
          const Bits* in = static_cast<const Bits*>(d_in.get()) + offset;
          for (bool two_phase : {false, true}) {
            ctx.ext.garbage = std::array{0xff, 0x01, 0xa5, 0x00}[garbage++ % 4];
            Bits got[3];
            const Fetched f = launch_and_fetch<Bits>(*e, ctx.dev, in, n, out.get(), sizeof(Bits),
                                                     ws.get(), ws.bytes(), clean, ctx.stream,
                                                     two_phase ? &ctx.ext : nullptr,
                                                     reinterpret_cast<unsigned char*>(got));
            std::ostringstream why;
            why << f.msg;
            if (f.ran && got[1] != it->second)
              why << std::hex << "bits 0x" << +got[1] << ", expected 0x" << +it->second;
            summary().add(*e, why.str().empty());
            if (!why.str().empty() && reported++ < 40)
              ADD_FAILURE() << e->id << " n=" << n << " offset=" << offset << " pass " << pass
                            << (two_phase ? " (two-phase)" : "") << ": " << why.str();
          }
        }
    }
  }
}

class AbsmaxKey : public ::testing::TestWithParam<DType> {};

TEST_P(AbsmaxKey, EveryEntryEverySizeBitForBit) {
  const DType d = GetParam();
  if (d == DType::f64) check_absmax_key<std::uint64_t>(d);
  else if (d == DType::f32) check_absmax_key<std::uint32_t>(d);
  else check_absmax_key<std::uint16_t>(d);
}

INSTANTIATE_TEST_SUITE_P(Floats, AbsmaxKey,
                         ::testing::Values(DType::f32, DType::f64, DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

class SpecialValues : public ::testing::TestWithParam<std::tuple<DType, Op>> {};

TEST_P(SpecialValues, NanAndInfGiveTheSameClassEverywhere) {
  auto [d, op] = GetParam();
  if (d == DType::f32) check_specials<float>(d, op);
  else check_specials<double>(d, op);
}

INSTANTIATE_TEST_SUITE_P(Floats, SpecialValues,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64),
                                            ::testing::ValuesIn(plain_ops)),
                         [](const auto& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                  op_name(std::get<1>(info.param));
                         });

class LargeN : public ::testing::TestWithParam<DType> {};

TEST_P(LargeN, AboveTwoToThe31) {
  const DType d = GetParam();
  if (d == DType::i32) check_large<std::int32_t>(d);
  else if (d == DType::u32) check_large<std::uint32_t>(d);
  else check_large<float>(d);
}

INSTANTIATE_TEST_SUITE_P(FourByte, LargeN, ::testing::Values(DType::i32, DType::u32, DType::f32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

/// Sums whose elements are all zeros, every f32/f64 sum entry, cached and two-phase: only -0.0
/// sums to -0.0 (the identity of IEEE 754 addition, so also in the padding of partial blocks and
/// the finish); one +0.0 anywhere, or n == 0, gives +0.0.
template <class T>
void check_signed_zero(DType d) {
  KeyContext ctx;
  const auto entries = entries_of(d, Op::sum);
  const std::uint64_t max_n = 100003;
  std::vector<T> minus(max_n + 1, -T(0));
  const std::uint64_t stream_id = test_seed() ^ 0x2e60 ^ std::uint64_t(d);
  const std::uint64_t plus_at = 1 + splitmix64(stream_id) % max_n;  // inside [1, max_n]
  std::vector<T> one_plus = minus;
  one_plus[plus_at] = T(0);
  DeviceBuffer d_minus(minus.size() * sizeof(T)), d_one_plus(one_plus.size() * sizeof(T));
  tunedreduce::test::upload(d_minus.get(), minus.data(), minus.size() * sizeof(T));
  tunedreduce::test::upload(d_one_plus.get(), one_plus.data(), one_plus.size() * sizeof(T));
  std::size_t ws_bytes = 0;
  for (const Entry* e : entries) ws_bytes = std::max(ws_bytes, e->workspace_bytes(max_n, ctx.dev));
  DeviceBuffer ws(ws_bytes);
  DeviceBuffer out(3 * sizeof(T));
  int reported = 0, checked_minus = 0;
  for (const Entry* e : entries) {
    std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
    std::set<std::uint64_t> sizes = {0, 1, 33, max_n};
    for (std::uint64_t n : sizes_for(*e, false)) sizes.insert(n);
    for (std::uint64_t n : sizes)
      for (bool with_plus : {false, true}) {
        // The +0.0 sits at element plus_at of the offset-1 input; sizes that do not reach it
        // sum only -0.0.
        const std::vector<T>& h = with_plus ? one_plus : minus;
        const Reference<T> ref = host_reference<T>(Op::sum, h.data() + 1, n);
        if (n > 0 && !with_plus && !std::signbit(ref.value))
          ADD_FAILURE() << "reference lost the sign";
        checked_minus += std::signbit(ref.value) ? 1 : 0;
        const T* in = static_cast<const T*>(with_plus ? d_one_plus.get() : d_minus.get()) + 1;
        for (bool two_phase : {false, true}) {
          std::string why = run_and_check<T>(*e, ctx.dev, in, n, ref, static_cast<T*>(out.get()),
                                             ws.get(), ws.bytes(), clean, ctx.stream,
                                             two_phase ? &ctx.ext : nullptr);
          summary().add(*e, why.empty());
          if (!why.empty() && reported++ < 40)
            ADD_FAILURE() << e->id << " n=" << n << (with_plus ? " (one +0.0)" : " (all -0.0)")
                          << (two_phase ? " (two-phase)" : "") << ": " << why;
        }
      }
  }
  EXPECT_GT(checked_minus, 0);
}

TEST(SignedZero, OnlyMinusZeroSumsToMinusZero) {
  check_signed_zero<float>(DType::f32);
  check_signed_zero<double>(DType::f64);
}

/// A small subset, one entry per family and finishing strategy (and shared-memory mode), for
/// running under compute-sanitizer memcheck and racecheck.
TEST(SanitizerSubset, OneEntryPerFamily) {
  KeyContext ctx;
  for (DType d : {DType::i32, DType::f64}) {
    for_dtype(d, [&](auto t) {
      using T = decltype(t);
      const std::uint64_t max_n = 100003;
      std::vector<T> host(max_n + 1);
      fill_random(host, test_seed() ^ 0xa11 ^ std::uint64_t(d));
      DeviceBuffer d_in(host.size() * sizeof(T));
      tunedreduce::test::upload(d_in.get(), host.data(), host.size() * sizeof(T));
      DeviceBuffer out(3 * sizeof(T));
      for (const Entry& e : kernels::registry()) {
        const auto& p = e.params;
        if (p.dtype != d || p.op != Op::sum || p.block != 128) continue;
        const int first_unroll =
            p.family == kernels::Family::neighbored ||
                    p.family == kernels::Family::neighbored_less ||
                    p.family == kernels::Family::interleaved || p.family == kernels::Family::smem ||
                    p.family == kernels::Family::warp_shuffle ||
                    p.family == kernels::Family::vectorized || p.family == kernels::Family::tiled ||
                    p.family == kernels::Family::streaming ||
                    p.family == kernels::Family::single_tile
                ? 1
                : 2;
        if (p.unroll != first_unroll && p.unroll != 4) continue;
        // A single_tile entry's largest workspace is its tile's (past it every size is refused).
        const std::uint64_t ws_n = std::min(max_n, kernels::max_elements_of(p));
        DeviceBuffer ws(e.workspace_bytes(ws_n, ctx.dev));
        // The two-phase call's: memory nothing wrote (initcheck sees any read before a write).
        DeviceBuffer never_written(e.workspace_bytes(ws_n, ctx.dev));
        External fresh = ctx.ext;
        fresh.garbage = -1;
        std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
        for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{33}, std::uint64_t{1000}, max_n})
          for (int offset : {0, 1})
            for (bool two_phase : {false, true}) {
              const Reference<T> ref = host_reference<T>(Op::sum, host.data() + offset, n);
              std::string why =
                  run_and_check<T>(e, ctx.dev, static_cast<const T*>(d_in.get()) + offset, n, ref,
                                   static_cast<T*>(out.get()),
                                   two_phase ? never_written.get() : ws.get(), ws.bytes(), clean,
                                   ctx.stream, two_phase ? &fresh : nullptr);
              summary().add(e, why.empty());
              EXPECT_EQ(why, "") << e.id << " n=" << n << " offset=" << offset
                                 << (two_phase ? " (two-phase)" : "");
            }
      }
    });
  }
}

// --- argmin / argmax --------------------------------------------------------------------------

/// Runs entry e (argmin or argmax) and checks its IndexedValue against \p want bit for bit: the
/// value's bits (the element itself, -0.0 and NaN payloads included) and the index.
template <class T>
std::string run_and_check_arg(const Entry& e, const kernels::DeviceLimits& dev, const T* d_in,
                              std::uint64_t n, const IndexedValue<T>& want, void* d_out3, void* ws,
                              std::size_t ws_bytes, std::uint64_t& clean_grid, cudaStream_t stream,
                              const External* ext = nullptr) {
  unsigned char host[3 * sizeof(IndexedValue<T>)];
  const Fetched f = launch_and_fetch<T>(e, dev, d_in, n, d_out3, sizeof(IndexedValue<T>), ws,
                                        ws_bytes, clean_grid, stream, ext, host);
  if (!f.ran) return f.msg;
  IndexedValue<T> got;
  std::memcpy(&got, host + sizeof(IndexedValue<T>), sizeof got);
  std::ostringstream msg;
  msg << f.msg;
  if (std::memcmp(&got.value, &want.value, sizeof(T)) != 0 || got.index != want.index) {
    msg.precision(17);
    msg << "got {" << +got.value << ", index " << got.index << "}, expected {" << +want.value
        << ", index " << want.index << "}";
  }
  return msg.str();
}

/// The inputs argmin and argmax are checked on (host elements 0-2 are the offset inputs' padding):
/// random (whole-range integers, floats in [-1000, 1000)); ties (values 1, 2, 3 everywhere, the
/// extreme value at three random places, for floats +0.0 and -0.0 at two more: argmin's
/// extreme); all the worst value (the padding's value too: the first index must still win);
/// NaN at two random places (floats), the extreme at the very last element (integers: the last
/// of the largest offset-3 input); dense ties (every element the extreme or the value after it,
/// half each, for floats +0.0 and -0.0 both as argmin's extreme: ties inside every thread's
/// vectors and between its neighbours); sparse (values 1, 2, 3, and one element in 2048 a NaN
/// of random sign and payload for floats, the extreme for integers: the first of them lies
/// inside a single tile, and a NaN's bits must come back as they were).
enum class ArgShape { random, ties, all_worst, nan_or_last, dense_ties, sparse };
constexpr ArgShape arg_shapes[] = {ArgShape::random,      ArgShape::ties,       ArgShape::all_worst,
                                   ArgShape::nan_or_last, ArgShape::dense_ties, ArgShape::sparse};

template <class T>
std::vector<T> arg_input(ArgShape shape, Op op, std::uint64_t size, std::uint64_t stream_id) {
  std::vector<T> h(size);
  const std::uint64_t last = size - 1;
  auto place = [&](std::uint64_t k) { return 1 + splitmix64(stream_id + 17 * k) % last; };
  const T extreme = op == Op::argmin ? T(0) : T(4);
  switch (shape) {
    case ArgShape::random:
      fill_random(h, stream_id);
      break;
    case ArgShape::ties:
      for (std::uint64_t i = 0; i < size; ++i)
        h[i] = static_cast<T>(1 + splitmix64(stream_id ^ i) % 3);
      for (std::uint64_t k = 0; k < 3; ++k) h[place(k)] = extreme;
      if constexpr (std::is_floating_point_v<T>)
        if (op == Op::argmin) h[place(3)] = T(0), h[place(4)] = -T(0);
      break;
    case ArgShape::all_worst:
      std::fill(h.begin(), h.end(), arg_worst<T>(op));
      break;
    case ArgShape::nan_or_last:
      for (std::uint64_t i = 0; i < size; ++i)
        h[i] = static_cast<T>(1 + splitmix64(stream_id ^ i) % 3);
      if constexpr (std::is_floating_point_v<T>) {
        h[place(5)] = std::numeric_limits<T>::quiet_NaN();
        h[place(6)] = -std::numeric_limits<T>::quiet_NaN();
      } else {
        h[last] = extreme;
      }
      break;
    case ArgShape::dense_ties: {
      const T next = op == Op::argmin ? T(1) : T(3);
      for (std::uint64_t i = 0; i < size; ++i) {
        const std::uint64_t r = splitmix64(stream_id ^ i);
        h[i] = r % 2 ? extreme : next;
        if constexpr (std::is_floating_point_v<T>)
          if (op == Op::argmin && r % 2 && (r >> 8) % 2) h[i] = -T(0);
      }
      break;
    }
    case ArgShape::sparse:
      for (std::uint64_t i = 0; i < size; ++i) {
        const std::uint64_t r = splitmix64(stream_id ^ i);
        h[i] = static_cast<T>(1 + r % 3);
        if ((r >> 8) % 2048 == 0) {
          if constexpr (std::is_floating_point_v<T>) {
            // Exponent all ones, a quiet bit and random payload bits, a random sign.
            using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
            Bits b;
            const T qnan = std::numeric_limits<T>::quiet_NaN();
            std::memcpy(&b, &qnan, sizeof b);
            b |= static_cast<Bits>(r >> 20) & (Bits(~Bits{0}) >> (sizeof(T) == 4 ? 11 : 14));
            if ((r >> 19) % 2) b |= Bits{1} << (8 * sizeof(T) - 1);
            std::memcpy(&h[i], &b, sizeof b);
          } else {
            h[i] = extreme;
          }
        }
      }
      break;
  }
  return h;
}

/// Every entry of argmin or argmax over sizes_for() at offsets 0 and 1, both launch kinds, every
/// input shape (arg_input).
template <class T>
void check_arg_key(DType d, Op op) {
  KeyContext ctx;
  const auto entries = entries_of(d, op);
  ASSERT_FALSE(entries.empty());
  const std::uint64_t max_n = (std::uint64_t{1} << 24) + 7;
  std::size_t ws_bytes = 0;
  for (const Entry* e : entries)
    for (std::uint64_t n : sizes_for(*e, true))
      ws_bytes = std::max(ws_bytes, e->workspace_bytes(n, ctx.dev));
  DeviceBuffer ws(ws_bytes);
  DeviceBuffer out(3 * sizeof(IndexedValue<T>));
  DeviceBuffer d_in((max_n + 3) * sizeof(T));
  int reported = 0;
  int garbage = 0;
  for (ArgShape shape : arg_shapes) {
    const std::uint64_t stream_id = test_seed() ^ 0xa59 ^
                                    (std::uint64_t(d) << 8 | std::uint64_t(op)) ^
                                    (std::uint64_t(shape) << 16);
    const std::vector<T> host = arg_input<T>(shape, op, max_n + 3, stream_id);
    tunedreduce::test::upload(d_in.get(), host.data(), host.size() * sizeof(T));
    std::map<std::pair<std::uint64_t, int>, IndexedValue<T>> refs;
    for (const Entry* e : entries) {
      std::uint64_t clean = 0;  // nothing known zero: the first launch zeroes
      for (std::uint64_t n : sizes_for(*e, true))
        for (int offset : {0, 1, 3}) {  // heads of 0, 3 and 1 f32 (0, 1 and 1 eight-byte) elements
          const auto key = std::make_pair(n, offset);
          auto it = refs.find(key);
          if (it == refs.end())
            it = refs.emplace(key, arg_reference<T>(op, host.data() + offset, n)).first;
          const T* in = static_cast<const T*>(d_in.get()) + offset;
          for (bool two_phase : {false, true}) {
            ctx.ext.garbage = std::array{0xff, 0x01, 0xa5, 0x00}[garbage++ % 4];
            std::string why = run_and_check_arg<T>(*e, ctx.dev, in, n, it->second, out.get(),
                                                   ws.get(), ws.bytes(), clean, ctx.stream,
                                                   two_phase ? &ctx.ext : nullptr);
            summary().add(*e, why.empty());
            if (!why.empty() && reported++ < 40)
              ADD_FAILURE() << e->id << " shape " << static_cast<int>(shape) << " n=" << n
                            << " offset=" << offset << (two_phase ? " (two-phase)" : "") << ": "
                            << why;
          }
        }
    }
  }
}

class ArgKey : public ::testing::TestWithParam<std::tuple<DType, Op>> {};

TEST_P(ArgKey, EveryEntryEverySizeAndShape) {
  auto [d, op] = GetParam();
  for_dtype(d, [&](auto t) { check_arg_key<decltype(t)>(d, op); });
}

INSTANTIATE_TEST_SUITE_P(Arg, ArgKey,
                         ::testing::Combine(::testing::ValuesIn(plain_dtypes),
                                            ::testing::Values(Op::argmin, Op::argmax)),
                         [](const auto& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) + "_" +
                                  op_name(std::get<1>(info.param));
                         });

void print_summary() {
  const Summary& s = summary();
  if (s.cells.empty()) return;
  std::set<std::string> families, types;
  for (auto& [k, v] : s.cells) {
    families.insert(k.first);
    types.insert(k.second);
  }
  std::printf("\nGPU registry suite (seed 0x%016" PRIx64 "): runs / failures per family and type\n",
              test_seed());
  std::printf("%-16s", "family");
  for (auto& t : types) std::printf(" %14s", t.c_str());
  std::printf("\n");
  for (auto& f : families) {
    std::printf("%-16s", f.c_str());
    for (auto& t : types) {
      auto it = s.cells.find({f, t});
      if (it == s.cells.end()) std::printf(" %14s", "-");
      else {
        char cell[32];
        std::snprintf(cell, sizeof cell, "%" PRIu64 "/%" PRIu64, it->second.runs,
                      it->second.failures);
        std::printf(" %14s", cell);
      }
    }
    std::printf("\n");
  }
  std::printf("entries exercised: %zu of %zu; entries with a failure: %zu\n", s.entries_seen.size(),
              kernels::registry().size(), s.entries_failed.size());
}

}  // namespace
}  // namespace tunedreduce::test

int main(int argc, char** argv) {
  return tunedreduce::test::gpu_test_main(argc, argv, tunedreduce::test::print_summary);
}
