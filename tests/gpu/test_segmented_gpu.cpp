// Segmented reductions on the GPU: every segmented registry entry over every shape class
// (rows of 1 to 2^20 elements, strided rows, offsets with empty and straddling segments, input
// offsets 0, 1 and 3 elements), then the library's calls (cached and two-phase, typed helpers,
// graph capture, bad arguments). Random data, poisoned outputs with a guard past the last result,
// host references: integers and min/max/argmin/argmax exactly, float sums within n eps sum|x|.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/counters.hpp"
#include "kernels/device.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tests/gpu/gpu_main.hpp"
#include "tests/gpu/gpu_util.hpp"
#include "tunedreduce/tunedreduce.h"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::test {
namespace {

namespace seg = kernels::segmented;

/// One problem: the input's bytes (with `offset` elements before the first), its segments.
struct Shape {
  std::string name;
  bool fixed = true;
  std::uint64_t count = 0, size = 0, stride = 0;  // fixed
  std::vector<std::int64_t> begin, end;           // offsets
  bool csr = false;  // offsets as CSR: one array, end = begin + 1 (end[i] == begin[i + 1])
  std::uint64_t elements = 0;  // input length after the offset
  std::uint64_t offset = 0;    // elements before the input's first
};

Shape rows(std::uint64_t count, std::uint64_t size, std::uint64_t stride, std::uint64_t offset) {
  Shape s;
  s.name = "rows " + std::to_string(count) + "x" + std::to_string(size) + " stride " +
           std::to_string(stride) + " offset " + std::to_string(offset);
  s.count = count;
  s.size = size;
  s.stride = stride;
  s.elements = count ? (count - 1) * stride + size : 0;
  s.offset = offset;
  return s;
}

/// \p count segments of random lengths up to 2 * mean (a tenth empty, some with begin > end),
/// gaps of 0..3 elements between them, one of `huge` elements in the middle when huge > 0.
/// With \p alpha > 0 the lengths follow a power law of that index and mean \p mean instead
/// (at most 2^20 each): a few segments thousands of times longer than most.
Shape offsets(std::uint64_t count, std::uint64_t mean, std::uint64_t huge, std::uint64_t offset,
              std::mt19937_64& rng, double alpha = 0) {
  Shape s;
  s.fixed = false;
  s.name = "offsets " + std::to_string(count) + " mean " + std::to_string(mean) + " huge " +
           std::to_string(huge) + " offset " + std::to_string(offset) +
           (alpha > 0 ? " power law " + std::to_string(alpha) : std::string());
  s.count = count;
  s.offset = offset;
  std::int64_t pos = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::int64_t len = std::int64_t(rng() % (2 * mean + 1));
    if (alpha > 0) {
      const double u = double(rng() % (std::uint64_t{1} << 53)) / double(std::uint64_t{1} << 53);
      const double x = double(mean) * (alpha - 1) / alpha * std::pow(1.0 - u, -1.0 / alpha);
      len = std::int64_t(std::min(x, double(1 << 20)));
    }
    if (rng() % 10 == 0) len = 0;
    if (huge && i == count / 2) len = std::int64_t(huge);
    pos += std::int64_t(rng() % 4);
    s.begin.push_back(pos);
    s.end.push_back(len == 0 && rng() % 2 ? pos - 1 : pos + len);  // begin > end: empty
    pos += len;
  }
  s.elements = std::uint64_t(pos) + 5;
  return s;
}

/// CSR offsets of \p count segments (one array of count + 1, segment i = [off[i], off[i + 1])),
/// lengths as offsets() draws them, the first at \p start. With \p decreasing, every 97th
/// offset steps back by up to 3 elements: the segment before it is empty (end < begin) and the
/// one after it overlaps its predecessor (CUB's rule; the balanced family's merge path cannot
/// take it and must still give every result).
Shape csr(std::uint64_t count, std::uint64_t mean, std::uint64_t huge, std::int64_t start,
          std::uint64_t offset, std::mt19937_64& rng, double alpha = 0, bool decreasing = false) {
  Shape s = offsets(count, mean, huge, offset, rng, alpha);
  s.name = "csr " + std::to_string(count) + " mean " + std::to_string(mean) + " huge " +
           std::to_string(huge) + " start " + std::to_string(start) + " offset " +
           std::to_string(offset) + (alpha > 0 ? " power law " + std::to_string(alpha) : "") +
           (decreasing ? " decreasing" : "");
  s.csr = true;
  std::vector<std::int64_t> off(count + 1, start);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int64_t len = s.end[i] > s.begin[i] ? s.end[i] - s.begin[i] : 0;
    off[i + 1] = off[i] + len;
    if (decreasing && i % 97 == 50) off[i + 1] = off[i] - std::int64_t(1 + rng() % 3);
    if (off[i + 1] < 0) off[i + 1] = 0;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    s.begin[i] = off[i];
    s.end[i] = off[i + 1];
  }
  s.begin.push_back(off[count]);  // the array's last offset (begin.size() == count + 1)
  s.elements = std::uint64_t(*std::max_element(off.begin(), off.end())) + 5;
  return s;
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T>;

/// Random elements of T: small integers (ties for argmin/argmax; sums that wrap for the 32-bit
/// types only through many elements), floats in [-1, 1) rounded to 1/64 (ties too).
template <class T>
std::vector<T> random_elements(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (auto& x : v) {
    const double u = double(rng() % 4096) / 2048.0 - 1.0;  // [-1, 1), multiples of 1/2048
    if constexpr (std::is_same_v<T, __half>) x = __float2half(float(std::round(u * 64) / 64));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
      x = __float2bfloat16(float(std::round(u * 64) / 64));
    else if constexpr (is_float_v<T>) x = T(std::round(u * 64) / 64);
    else if constexpr (std::is_signed_v<T>) x = T(std::int64_t(rng() % 2001) - 1000);
    else x = T(rng() % 2001);
  }
  return v;
}

template <class T>
double as_double(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return double(x);
}

/// The checker of one (dtype, op): compares device results against the reference of a shape.
struct KeyCheck {
  DType dtype;
  Op op;
  std::size_t result_bytes;
  /// Builds the input (with the offset) and returns the reference results' bytes.
  std::function<std::vector<unsigned char>(const Shape&, std::vector<unsigned char>& input,
                                           std::vector<double>& tolerance)>
      reference;
  /// Whether result i of `got` matches `want` within tolerance.
  std::function<bool(const unsigned char* got, const unsigned char* want, double tol,
                     std::string& why)>
      equal;
};

template <class In, class R, Op O>
KeyCheck make_check(DType d) {
  KeyCheck k;
  k.dtype = d;
  k.op = O;
  k.result_bytes = is_arg_op(O) ? 16 : sizeof(R);
  k.reference = [](const Shape& s, std::vector<unsigned char>& input, std::vector<double>& tol) {
    std::mt19937_64 rng(test_seed() ^ (s.elements * 0x9e3779b97f4a7c15ull) ^ std::uint64_t(O));
    std::vector<In> all = random_elements<In>(s.offset + s.elements, rng);
    input.resize(all.size() * sizeof(In));
    std::memcpy(input.data(), all.data(), input.size());
    const In* x = all.data() + s.offset;
    std::vector<unsigned char> out(s.count * (is_arg_op(O) ? 16 : sizeof(R)));
    tol.assign(s.count, 0.0);
    for (std::uint64_t i = 0; i < s.count; ++i) {
      std::uint64_t lo, hi;
      if (s.fixed) {
        lo = i * s.stride;
        hi = lo + s.size;
      } else {
        lo = std::uint64_t(s.begin[i]);
        hi = s.end[i] > s.begin[i] ? std::uint64_t(s.end[i]) : lo;
      }
      unsigned char* o = out.data() + i * (is_arg_op(O) ? 16 : sizeof(R));
      if constexpr (O == Op::sum || O == Op::wide_sum) {
        if constexpr (std::is_integral_v<R>) {
          std::make_unsigned_t<R> acc = 0;
          for (std::uint64_t j = lo; j < hi; ++j) acc += std::make_unsigned_t<R>(R(x[j]));
          const R r = R(acc);
          std::memcpy(o, &r, sizeof r);
        } else {
          long double acc = 0, mag = 0;
          for (std::uint64_t j = lo; j < hi; ++j) {
            acc += as_double(x[j]);
            mag += std::fabs(as_double(x[j]));
          }
          const R r = R(acc);
          std::memcpy(o, &r, sizeof r);
          tol[i] = double(hi - lo + 2) * double(std::numeric_limits<R>::epsilon()) * double(mag);
        }
      } else {
        // min, max, argmin, argmax: the first extreme element (no NaN in this data).
        const bool want_max = O == Op::max || O == Op::argmax;
        std::int64_t best = -1;
        for (std::uint64_t j = lo; j < hi; ++j)
          if (best < 0 || (want_max ? x[j] > x[lo + best] : x[j] < x[lo + best]))
            best = std::int64_t(j - lo);
        In v;
        if (best >= 0) v = x[lo + best];
        else if constexpr (is_float_v<In>)
          v = want_max ? -std::numeric_limits<In>::infinity() : std::numeric_limits<In>::infinity();
        else v = want_max ? std::numeric_limits<In>::lowest() : std::numeric_limits<In>::max();
        if constexpr (is_arg_op(O)) {
          const IndexedValue<In> r{v, best};
          std::memcpy(o, &r, 16);
        } else {
          std::memcpy(o, &v, sizeof v);
        }
      }
    }
    return out;
  };
  k.equal = [](const unsigned char* got, const unsigned char* want, double tol, std::string& why) {
    if constexpr (is_arg_op(O)) {
      IndexedValue<In> g, w;
      std::memcpy(&g, got, 16);
      std::memcpy(&w, want, 16);
      if (std::memcmp(&g.value, &w.value, sizeof(In)) == 0 && g.index == w.index) return true;
      why = "got {" + std::to_string(as_double(g.value)) + ", " + std::to_string(g.index) +
            "}, want {" + std::to_string(as_double(w.value)) + ", " + std::to_string(w.index) + "}";
      return false;
    } else {
      R g, w;
      std::memcpy(&g, got, sizeof g);
      std::memcpy(&w, want, sizeof w);
      bool ok;
      if constexpr (std::is_floating_point_v<R> && (O == Op::sum || O == Op::wide_sum))
        ok = std::fabs(double(g) - double(w)) <= tol + 1e-30;
      else if constexpr (std::is_floating_point_v<R>)
        ok = g == w || (g != g && w != w);  // min and max: -0 equals +0, as the kernels have it
      else ok = std::memcmp(&g, &w, sizeof g) == 0;
      if (!ok) why = "got " + std::to_string(double(g)) + ", want " + std::to_string(double(w));
      return ok;
    }
  };
  return k;
}

template <class In, Op O>
void add_key(std::vector<KeyCheck>& out, DType d) {
  if constexpr (O == Op::wide_sum) {
    if constexpr (std::is_same_v<In, std::int32_t>)
      out.push_back(make_check<In, std::int64_t, O>(d));
    else if constexpr (std::is_same_v<In, std::uint32_t>)
      out.push_back(make_check<In, std::uint64_t, O>(d));
    else if constexpr (std::is_same_v<In, float>) out.push_back(make_check<In, double, O>(d));
    else out.push_back(make_check<In, float, O>(d));
  } else {
    out.push_back(make_check<In, In, O>(d));
  }
}

template <class In>
void add_plain_keys(std::vector<KeyCheck>& out, DType d) {
  add_key<In, Op::sum>(out, d);
  add_key<In, Op::min>(out, d);
  add_key<In, Op::max>(out, d);
  add_key<In, Op::argmin>(out, d);
  add_key<In, Op::argmax>(out, d);
}

const std::vector<KeyCheck>& all_keys() {
  static const std::vector<KeyCheck> keys = [] {
    std::vector<KeyCheck> k;
    add_plain_keys<std::int32_t>(k, DType::i32);
    add_plain_keys<std::uint32_t>(k, DType::u32);
    add_plain_keys<std::int64_t>(k, DType::i64);
    add_plain_keys<std::uint64_t>(k, DType::u64);
    add_plain_keys<float>(k, DType::f32);
    add_plain_keys<double>(k, DType::f64);
    add_key<std::int32_t, Op::wide_sum>(k, DType::i32);
    add_key<std::uint32_t, Op::wide_sum>(k, DType::u32);
    add_key<float, Op::wide_sum>(k, DType::f32);
    add_key<__half, Op::wide_sum>(k, DType::f16);
    add_key<__nv_bfloat16, Op::wide_sum>(k, DType::bf16);
    return k;
  }();
  return keys;
}

std::vector<Shape> fixed_shapes() {
  return {rows(1, 1, 1, 0),           rows(4096, 1, 1, 1),          rows(1000, 2, 2, 0),
          rows(777, 3, 5, 3),         rows(2048, 4, 4, 0),          rows(513, 7, 7, 1),
          rows(300, 8, 8, 0),         rows(200, 33, 40, 3),         rows(257, 64, 64, 0),
          rows(100, 129, 129, 1),     rows(64, 1000, 1003, 0),      rows(40, 4099, 4099, 3),
          rows(3, 100003, 100003, 1), rows(2, 1 << 20, 1 << 20, 0), rows(5000, 0, 0, 0),
          rows(1, 300000, 300000, 3)};
}

std::vector<Shape> offset_shapes() {
  std::mt19937_64 rng(test_seed() + 7);
  // (The last four for the balanced family: lengths spread over many tiles and over the scan's
  // chunks of 2048 segments, one segment across most tiles, every segment empty.)
  return {offsets(1, 5, 0, 0, rng), offsets(3000, 1, 0, 1, rng), offsets(1000, 16, 0, 3, rng),
          offsets(500, 300, 0, 0, rng), offsets(200, 40, 200000, 1, rng),
          offsets(9, 30000, 0, 3, rng), offsets(20000, 40, 0, 1, rng, 1.3),
          offsets(5000, 3, 1 << 20, 3, rng), offsets(300, 2000, 0, 0, rng, 1.1),
          offsets(3000, 0, 0, 0, rng),
          // CSR (end = begin + 1): the balanced family's tiles over the merge path of the
          // offsets, including offsets that step back somewhere.
          csr(1, 5, 0, 0, 0, rng), csr(3000, 16, 0, 0, 1, rng), csr(9, 30000, 0, 2, 3, rng),
          csr(20000, 40, 0, 7, 3, rng, 1.3), csr(5000, 3, 1 << 20, 0, 1, rng),
          csr(300, 2000, 0, 2, 0, rng, 1.1), csr(3000, 0, 0, 4, 0, rng),
          csr(20000, 40, 0, 0, 1, rng, 0, true), csr(700, 300, 0, 5, 0, rng, 0, true),
          // A huge segment right after a step back (the tiles that cross it see the decrease;
          // every segment is folded again), and 200,000 short segments (hundreds a tile).
          csr(2042, 20, 1 << 18, 3, 1, rng, 0, true), csr(200000, 2, 0, 1, 0, rng)};
}

struct Device {
  kernels::DeviceLimits limits;
  Device() { limits = kernels::query_device_limits(0); }
};

/// Runs \p launch on a poisoned output with a guard after it and checks every result.
void check_results(const KeyCheck& k, const Shape& s, const std::vector<unsigned char>& want,
                   const std::vector<double>& tol, const std::string& what,
                   const std::function<void(const void* in, void* out, const void* begin,
                                            const void* end)>& launch,
                   const DeviceBuffer& in, const void* offsets_b, const void* offsets_e,
                   std::size_t in_elem) {
  // The results start one result into the buffer for odd counts (d_out aligned to a result
  // only), at its start for even ones; a guard before and after them.
  const std::size_t guard = 64;
  const std::size_t lead = guard + (s.count % 2) * k.result_bytes;
  const std::size_t out_bytes = s.count * k.result_bytes;
  DeviceBuffer out(lead + out_bytes + guard);
  TR_CUDA_CHECK(cudaMemset(out.get(), 0xCD, out.bytes()));
  launch(static_cast<const unsigned char*>(in.get()) + s.offset * in_elem,
         static_cast<unsigned char*>(out.get()) + lead, offsets_b, offsets_e);
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> all(out.bytes());
  TR_CUDA_CHECK(cudaMemcpy(all.data(), out.get(), all.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < lead; ++i)
    ASSERT_EQ(all[i], 0xCD) << what << ", " << s.name << ": wrote before d_out";
  for (std::size_t i = 0; i < guard; ++i)
    ASSERT_EQ(all[lead + out_bytes + i], 0xCD) << what << ", " << s.name << ": wrote past d_out";
  const std::vector<unsigned char> got(all.begin() + lead, all.begin() + lead + out_bytes);
  int failures = 0;
  for (std::uint64_t i = 0; i < s.count && failures < 3; ++i) {
    std::string why;
    if (!k.equal(got.data() + i * k.result_bytes, want.data() + i * k.result_bytes, tol[i], why)) {
      ADD_FAILURE() << what << ", " << s.name << ": segment " << i << ": " << why;
      ++failures;
    }
  }
}

/// Uploads a shape's input and offsets (int32 or int64 by layout).
struct Uploaded {
  DeviceBuffer in, begin, end;
  const void* b = nullptr;  // the offsets as a launch takes them: begin, and end (for a CSR
  const void* e = nullptr;  // shape one element into begin's array)
};

Uploaded upload_shape(const Shape& s, const std::vector<unsigned char>& input, seg::SegLayout l) {
  Uploaded u;
  u.in = DeviceBuffer(std::max<std::size_t>(input.size(), 16));
  if (!input.empty()) upload(u.in.get(), input.data(), input.size());
  if (!s.fixed) {
    const std::size_t w = l == seg::SegLayout::offsets32 ? 4 : 8;
    const std::size_t nb = s.csr ? s.count + 1 : s.count;
    std::vector<unsigned char> b(nb * w), e(s.count * w);
    for (std::uint64_t i = 0; i < nb; ++i) {
      if (i == s.count) {  // a CSR shape's last offset
        const std::int64_t x = s.begin[i];
        const std::int32_t y = std::int32_t(x);
        if (w == 4) std::memcpy(&b[i * 4], &y, 4);
        else std::memcpy(&b[i * 8], &x, 8);
        continue;
      }
      if (w == 4) {
        const std::int32_t x = std::int32_t(s.begin[i]), y = std::int32_t(s.end[i]);
        std::memcpy(&b[i * 4], &x, 4);
        std::memcpy(&e[i * 4], &y, 4);
      } else {
        std::memcpy(&b[i * 8], &s.begin[i], 8);
        std::memcpy(&e[i * 8], &s.end[i], 8);
      }
    }
    u.begin = DeviceBuffer(b.size());
    u.end = DeviceBuffer(e.size());
    upload(u.begin.get(), b.data(), b.size());
    upload(u.end.get(), e.data(), e.size());
    u.b = u.begin.get();
    u.e = s.csr ? static_cast<const void*>(static_cast<const unsigned char*>(u.b) + w)
                : u.end.get();
  }
  return u;
}

TEST(SegmentedRegistry, EveryEntryEveryShape) {
  const Device dev;
  ASSERT_GT(seg::seg_registry().size(), 0u);
  std::size_t launches = 0;
  // TR_SEG_FAMILY=balanced: only that family's entries (a run under compute-sanitizer, whose
  // tools make all 945 entries too slow).
  const char* only = std::getenv("TR_SEG_FAMILY");
  // TR_SEG_SHAPE=csr: only the shapes whose name holds that text; TR_SEG_KEY=f32.sum: only that
  // type and operator (the same reason).
  const char* only_shape = std::getenv("TR_SEG_SHAPE");
  const char* only_key = std::getenv("TR_SEG_KEY");
  for (const KeyCheck& k : all_keys()) {
    if (only_key && std::string(dtype_name(k.dtype)) + "." + op_name(k.op) != only_key) continue;
    for (bool fixed : {true, false}) {
      for (const Shape& s : fixed ? fixed_shapes() : offset_shapes()) {
        if (only_shape && s.name.find(only_shape) == std::string::npos) continue;
        std::vector<unsigned char> input;
        std::vector<double> tol;
        const std::vector<unsigned char> want = k.reference(s, input, tol);
        for (seg::SegLayout l : fixed ? std::vector<seg::SegLayout>{seg::SegLayout::fixed}
                                      : std::vector<seg::SegLayout>{seg::SegLayout::offsets32,
                                                                    seg::SegLayout::offsets64}) {
          const Uploaded u = upload_shape(s, input, l);
          for (const seg::SegEntry& e : seg::seg_registry()) {
            if (e.params.dtype != k.dtype || e.params.op != k.op || e.params.layout != l) continue;
            if (only && seg::seg_family_name(e.params.family) != std::string_view(only)) continue;
            seg::SegProblem p;
            p.num_segments = s.count;
            p.segment_size = s.size;
            p.stride = s.stride;
            p.begin = u.b;
            p.end = u.e;
            p.mean_length = s.fixed ? 0 : s.elements / std::max<std::uint64_t>(s.count, 1);
            // Only the tile family refuses shapes (rows that do not divide a vector, strided or
            // unaligned rows); every other entry takes every shape.
            const std::size_t align = s.offset % 4 == 0 ? 16 : dtype_size(k.dtype);
            if (e.can_implement(p, align, dev.limits)) {
              ASSERT_EQ(e.params.family, seg::SegFamily::tile) << e.id << ", " << s.name;
              continue;
            }
            DeviceBuffer ws(std::max<std::size_t>(e.workspace_bytes(p, dev.limits), 1));
            TR_CUDA_CHECK(cudaMemset(ws.get(), 0xAB, ws.bytes()));  // may hold anything
            const auto launch = [&](const void* in, void* out, unsigned long long* counter,
                                    const seg::SegProblem& q, const DeviceBuffer& w) {
              seg::SegLaunchArgs a;
              a.in = in;
              a.out = out;
              a.problem = q;
              a.workspace = w.get();
              a.workspace_bytes = w.bytes();
              a.counter = counter;
              TR_CUDA_CHECK(e.launch(a, dev.limits));
            };
            check_results(
                k, s, want, tol, e.id,
                [&](const void* in, void* out, const void*, const void*) {
                  launch(in, out, nullptr, p, ws);
                },
                u.in, u.b, u.e, dtype_size(k.dtype));
            ++launches;
            // The split family again with a counter: one kernel where its partials are few (the
            // last block folds them), and the counter left zero for the next launch; the
            // balanced family takes its scan's ticket on it.
            if (!seg::takes_counter(e.params.family)) continue;
            unsigned long long* counter = nullptr;
            TR_CUDA_CHECK(tunedreduce::kernels::counter_table(&counter));
            // The balanced family's tiles come from the mean length the caller says: a wrong
            // one (1: a tile or a few for everything; 0: unknown, as many as are resident)
            // changes its geometry, not its results.
            if (e.params.family == seg::SegFamily::balanced) {
              for (const std::uint64_t mean : {std::uint64_t{0}, std::uint64_t{1}}) {
                seg::SegProblem q = p;
                q.mean_length = mean;
                DeviceBuffer ws2(std::max<std::size_t>(e.workspace_bytes(q, dev.limits), 1));
                TR_CUDA_CHECK(cudaMemset(ws2.get(), 0xAB, ws2.bytes()));
                check_results(
                    k, s, want, tol,
                    std::string(e.id) + " told a mean length of " + std::to_string(mean),
                    [&](const void* in, void* out, const void*, const void*) {
                      launch(in, out, counter, q, ws2);
                    },
                    u.in, u.b, u.e, dtype_size(k.dtype));
                launches += 1;
              }
            }
            check_results(
                k, s, want, tol, std::string(e.id) + " with a counter",
                [&](const void* in, void* out, const void*, const void*) {
                  launch(in, out, counter, p, ws);
                  unsigned long long left = 1;
                  TR_CUDA_CHECK(cudaMemcpy(&left, counter, sizeof left, cudaMemcpyDeviceToHost));
                  ASSERT_EQ(left, 0u)
                      << e.id << ", " << s.name << ": the counter was left non-zero";
                },
                u.in, u.b, u.e, dtype_size(k.dtype));
            ++launches;
          }
        }
      }
    }
  }
  std::printf("%zu segmented launches checked (%zu entries)\n", launches,
              seg::seg_registry().size());
}

/// The library's calls, both of them, for every key and shape: what production code calls.
TEST(SegmentedLibrary, BothCallsEveryKey) {
  cudaStream_t stream;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const KeyCheck& k : all_keys()) {
    for (bool fixed : {true, false}) {
      for (const Shape& s : fixed ? fixed_shapes() : offset_shapes()) {
        std::vector<unsigned char> input;
        std::vector<double> tol;
        const std::vector<unsigned char> want = k.reference(s, input, tol);
        for (int layout : fixed ? std::vector<int>{0} : std::vector<int>{1, 2}) {
          const auto l = static_cast<seg::SegLayout>(layout);
          const Uploaded u = upload_shape(s, input, l);
          // Offsets twice: with no longest length (the balanced family), and with the true one
          // (where it is within 4x the mean, the kernel chosen for the mean length).
          std::uint64_t longest = 0;
          for (std::uint64_t i = 0; i < s.end.size(); ++i)  // (none for rows)
            longest = std::max<std::uint64_t>(longest, s.end[i] > s.begin[i]
                                                           ? std::uint64_t(s.end[i] - s.begin[i])
                                                           : 0);
          for (const std::uint64_t max_length :
               fixed ? std::vector<std::uint64_t>{0} : std::vector<std::uint64_t>{0, longest}) {
            const auto segments = [&](const void* b, const void* e) {
              Segments g;
              if (fixed) return Segments::rows(s.count, s.size, s.stride);
              g.layout = static_cast<SegmentLayout>(layout);
              g.count = s.count;
              g.begin = b;
              g.end = e;
              g.mean_length = s.elements / std::max<std::uint64_t>(s.count, 1);
              g.max_length = max_length;
              return g;
            };
            const std::string key = std::string(dtype_name(k.dtype)) + " " + op_name(k.op) +
                                    (max_length ? " told the longest length" : "");
            check_results(
                k, s, want, tol, key + " cached",
                [&](const void* in, void* out, const void* b, const void* e) {
                  segmented_reduce(in, out, segments(b, e), k.dtype, k.op, stream);
                  TR_CUDA_CHECK(cudaStreamSynchronize(stream));
                },
                u.in, u.b, u.e, dtype_size(k.dtype));
            check_results(
                k, s, want, tol, key + " two-phase",
                [&](const void* in, void* out, const void* b, const void* e) {
                  std::size_t bytes = 0;
                  segmented_reduce(nullptr, bytes, in, out, segments(b, e), k.dtype, k.op, stream);
                  DeviceBuffer temp(bytes);
                  TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5A, bytes));
                  segmented_reduce(temp.get(), bytes, in, out, segments(b, e), k.dtype, k.op,
                                   stream);
                  TR_CUDA_CHECK(cudaStreamSynchronize(stream));
                },
                u.in, u.b, u.e, dtype_size(k.dtype));
          }
        }
      }
    }
  }
  TR_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(SegmentedLibrary, TypedHelpersAndSpecials) {
  // Rows of floats with NaN and infinities: sum, min, max, argmin, argmax per row.
  const std::vector<float> h = {1.f,       NAN, 3.f,        // row 0: NaN
                                -INFINITY, 2.f, -INFINITY,  // row 1: first -inf at 0
                                5.f,       5.f, -0.f};      // row 2: ties
  DeviceBuffer in(h.size() * 4), out(3 * 16);
  upload(in.get(), h.data(), h.size() * 4);
  const auto* d = static_cast<const float*>(in.get());
  std::vector<IndexedValue<float>> a(3);
  segmented_argmax(d, static_cast<IndexedValue<float>*>(out.get()), Segments::rows(3, 3));
  TR_CUDA_CHECK(cudaMemcpy(a.data(), out.get(), 48, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(a[0].value));
  EXPECT_EQ(a[0].index, 1);
  EXPECT_EQ(a[1].value, 2.f);
  EXPECT_EQ(a[1].index, 1);
  EXPECT_EQ(a[2].value, 5.f);
  EXPECT_EQ(a[2].index, 0);
  segmented_argmin(d, static_cast<IndexedValue<float>*>(out.get()), Segments::rows(3, 3));
  TR_CUDA_CHECK(cudaMemcpy(a.data(), out.get(), 48, cudaMemcpyDeviceToHost));
  EXPECT_EQ(a[1].value, -INFINITY);
  EXPECT_EQ(a[1].index, 0);
  EXPECT_EQ(a[2].index, 2);
  std::vector<float> f(3);
  segmented_max(d, static_cast<float*>(out.get()), Segments::rows(3, 3));
  TR_CUDA_CHECK(cudaMemcpy(f.data(), out.get(), 12, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], 2.f);
  segmented_sum(d, static_cast<float*>(out.get()), 3, 3);
  TR_CUDA_CHECK(cudaMemcpy(f.data(), out.get(), 12, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], -INFINITY);
  EXPECT_EQ(f[2], 10.f);
  // wide_sum through segmented_sum<int32_t, int64_t>: no wrap at 2^31.
  const std::vector<std::int32_t> big(1024, 0x7fffffff);
  DeviceBuffer bi(big.size() * 4), bo(16);
  upload(bi.get(), big.data(), big.size() * 4);
  segmented_sum(static_cast<const std::int32_t*>(bi.get()), static_cast<std::int64_t*>(bo.get()),
                Segments::rows(2, 512));
  std::int64_t w[2];
  TR_CUDA_CHECK(cudaMemcpy(w, bo.get(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(w[0], 512ll * 0x7fffffff);
  EXPECT_EQ(w[1], 512ll * 0x7fffffff);
  // CSR with an empty segment: sum 0, argmax index -1.
  const std::vector<std::int32_t> off = {0, 2, 2, 9};
  DeviceBuffer doff(16);
  upload(doff.get(), off.data(), 16);
  segmented_argmax(d, static_cast<IndexedValue<float>*>(out.get()),
                   Segments::csr(3, static_cast<const std::int32_t*>(doff.get()), 3));
  TR_CUDA_CHECK(cudaMemcpy(a.data(), out.get(), 48, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(a[0].value));
  EXPECT_EQ(a[1].index, -1);
  EXPECT_EQ(a[1].value, -INFINITY);
  EXPECT_EQ(a[2].index, 4);  // [2, 9): 3, -inf, 2, -inf, 5, 5, -0
}

TEST(SegmentedLibrary, BadArguments) {
  DeviceBuffer in(4096), out(4096);
  const auto* d = static_cast<const float*>(in.get());
  auto* o = static_cast<float*>(out.get());
  auto status_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const ReduceError& e) {
      return e.status();
    }
    return Status::success;
  };
  EXPECT_EQ(status_of([&] { segmented_sum(d, o, Segments::rows(10, 8, 4)); }),
            Status::invalid_argument);
  EXPECT_EQ(status_of(
                [&] { segmented_sum(d, static_cast<float*>(nullptr), Segments::rows(1, 8)); }),
            Status::invalid_argument);
  EXPECT_EQ(status_of([&] {
              segmented_reduce(d, o, Segments::rows(4, 8), DType::f32, Op::exact_sum, 0);
            }),
            Status::invalid_argument);
  EXPECT_EQ(status_of([&] {
              segmented_max(d, o,
                            Segments::offsets(4, static_cast<const std::int32_t*>(nullptr),
                                              static_cast<const std::int32_t*>(nullptr)));
            }),
            Status::invalid_argument);
  std::vector<float> host(16);
  EXPECT_EQ(status_of([&] { segmented_sum(host.data(), o, Segments::rows(2, 8)); }),
            Status::invalid_argument);
  EXPECT_EQ(status_of([&] { segmented_sum(d, o, Segments::rows(0, 8)); }), Status::success);
  std::size_t bytes = 0;
  segmented_reduce(nullptr, bytes, d, o, Segments::rows(2, 1 << 20), DType::f32, Op::sum, 0);
  EXPECT_GE(bytes, 1u);
  // Two long rows run the split family, whose partials need more than one byte.
  DeviceBuffer big(std::size_t(2) << 22), t(256);
  const auto* b = static_cast<const float*>(big.get());
  const Segments few_long = Segments::rows(2, 1 << 20);
  segmented_reduce(nullptr, bytes, b, o, few_long, DType::f32, Op::sum, 0);
  EXPECT_GT(bytes, 1u);
  std::size_t small = 1;
  EXPECT_EQ(status_of(
                [&] { segmented_reduce(t.get(), small, b, o, few_long, DType::f32, Op::sum, 0); }),
            Status::temp_too_small);
}

/// Checked offsets (Segments::checked()): good ones reduce as unchecked ones do, in both calls;
/// a negative begin, or an end before its begin, anywhere among many segments is an error that
/// names the first such segment and its offsets, with out left as it was; a stream under capture
/// is refused.
TEST(SegmentedLibrary, CheckedOffsets) {
  std::mt19937_64 rng(test_seed() + 13);
  const std::uint64_t S = 300000;
  std::vector<std::int64_t> off(S + 1, 0);
  for (std::uint64_t i = 0; i < S; ++i) off[i + 1] = off[i] + std::int64_t(rng() % 9);
  const std::uint64_t n = std::uint64_t(off[S]);
  std::vector<float> h(n);
  for (auto& x : h) x = float(rng() % 8) * 0.25f;
  DeviceBuffer in(n * 4), out(S * 4), doff(off.size() * 8);
  upload(in.get(), h.data(), n * 4);
  upload(doff.get(), off.data(), off.size() * 8);
  const auto* d_in = static_cast<const float*>(in.get());
  auto* d_out = static_cast<float*>(out.get());
  const auto* d_off = static_cast<const std::int64_t*>(doff.get());
  const auto expect_sums = [&](const char* what) {
    std::vector<float> r(S);
    TR_CUDA_CHECK(cudaMemcpy(r.data(), d_out, S * 4, cudaMemcpyDeviceToHost));
    for (std::uint64_t i = 0; i < S; ++i) {
      double want = 0;
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k) want += h[std::size_t(k)];
      ASSERT_EQ(double(r[i]), want) << what << ", segment " << i;
    }
  };
  const Segments checked = Segments::csr(S, d_off).checked();
  TR_CUDA_CHECK(cudaMemset(d_out, 0xCD, S * 4));
  segmented_sum(d_in, d_out, checked);
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  expect_sums("cached call");
  std::size_t bytes = 0;
  segmented_reduce(nullptr, bytes, d_in, d_out, checked, DType::f32, Op::sum, 0);
  DeviceBuffer temp(bytes);
  TR_CUDA_CHECK(cudaMemset(d_out, 0xCD, S * 4));
  segmented_reduce(temp.get(), bytes, d_in, d_out, checked, DType::f32, Op::sum, 0);
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  expect_sums("two-phase call");
  const auto message_of = [&](const Segments& seg, bool two_phase) {
    try {
      if (two_phase) segmented_reduce(temp.get(), bytes, d_in, d_out, seg, DType::f32, Op::max, 0);
      else segmented_reduce(d_in, d_out, seg, DType::f32, Op::max, 0);
    } catch (const ReduceError& e) {
      EXPECT_EQ(e.status(), Status::invalid_argument) << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Two steps back (the first one is named), and out untouched.
  std::vector<std::int64_t> bad = off;
  bad[200001] = bad[200000] - 2;  // segment 200000 ends before it begins
  bad[250001] = bad[250000] - 1;
  upload(doff.get(), bad.data(), bad.size() * 8);
  TR_CUDA_CHECK(cudaMemset(d_out, 0xCD, S * 4));
  for (bool two_phase : {false, true})
    EXPECT_NE(message_of(checked, two_phase)
                  .find("segment 200000 ends before it begins (seg.begin[200000] = " +
                        std::to_string(bad[200000]) + ", seg.end[200000] = " +
                        std::to_string(bad[200001]) + "); nothing was reduced"),
              std::string::npos)
        << message_of(checked, two_phase);
  // The C API's checked call says the same.
  EXPECT_EQ(tr_segmented_reduce_offsets_checked(nullptr, nullptr, d_in, d_out, S, d_off, d_off + 1,
                                                8, 0, 0, TR_F32, TR_SUM, nullptr),
            TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("segment 200000 ends before it begins"),
            std::string::npos)
      << tr_last_error();
  std::vector<unsigned char> raw(S * 4);
  TR_CUDA_CHECK(cudaMemcpy(raw.data(), d_out, S * 4, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(raw.begin(), raw.end(), [](unsigned char c) { return c == 0xCD; }));
  // Unchecked, the same offsets are CUB's: an empty segment, no error.
  segmented_max(d_in, d_out, Segments::csr(S, d_off));
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  // A negative begin (32-bit offsets, begin and end arrays).
  std::vector<std::int32_t> b32(S), e32(S);
  for (std::uint64_t i = 0; i < S; ++i) {
    b32[i] = std::int32_t(off[i]);
    e32[i] = std::int32_t(off[i + 1]);
  }
  b32[123456] = -7;
  DeviceBuffer db(S * 4), de(S * 4);
  upload(db.get(), b32.data(), S * 4);
  upload(de.get(), e32.data(), S * 4);
  const Segments neg = Segments::offsets(S, static_cast<const std::int32_t*>(db.get()),
                                         static_cast<const std::int32_t*>(de.get()))
                           .checked();
  EXPECT_NE(message_of(neg, false)
                .find("segment 123456 begins at a negative offset (seg.begin[123456] = -7)"),
            std::string::npos)
      << message_of(neg, false);
  // Under capture: refused, the capture still valid.
  cudaStream_t s;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  TR_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    segmented_sum(d_in, d_out, checked, s);
    ADD_FAILURE() << "a checked call under capture was accepted";
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), Status::unsupported) << e.what();
  }
  TR_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  TR_CUDA_CHECK(cudaGraphDestroy(g));
  TR_CUDA_CHECK(cudaStreamDestroy(s));
}

/// The balanced family under graph capture: offsets of lengths that spread (no longest length
/// given), over several of its scan's chunks, one segment across most tiles; the graph replayed.
TEST(SegmentedLibrary, GraphCaptureOfSpreadOffsets) {
  std::mt19937_64 rng(test_seed() + 11);
  const std::uint64_t S = 5000;
  std::vector<std::int64_t> off(S + 1, 0);
  for (std::uint64_t i = 0; i < S; ++i) {
    const std::int64_t len = i == S / 3 ? (1 << 20) : std::int64_t(rng() % 600);
    off[i + 1] = off[i] + len;
  }
  const std::uint64_t n = std::uint64_t(off[S]);
  std::vector<float> h(n);
  for (auto& x : h) x = float(rng() % 8) * 0.25f;  // sums exact in float (below 2^24 / 4)
  DeviceBuffer in(n * 4), out(S * 4), doff(off.size() * 8);
  upload(in.get(), h.data(), n * 4);
  upload(doff.get(), off.data(), off.size() * 8);
  const Segments seg = Segments::csr(S, static_cast<const std::int64_t*>(doff.get()), n / S);
  ASSERT_STREQ(lookup_segmented(DType::f32, Op::sum, seg).family, "balanced");
  cudaStream_t s;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  TR_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  segmented_sum(static_cast<const float*>(in.get()), static_cast<float*>(out.get()), seg, s);
  TR_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t x;
  TR_CUDA_CHECK(cudaGraphInstantiate(&x, g, 0));
  for (int rep = 0; rep < 3; ++rep) {
    TR_CUDA_CHECK(cudaMemset(out.get(), 0xCD, S * 4));
    TR_CUDA_CHECK(cudaGraphLaunch(x, s));
    TR_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> r(S);
    TR_CUDA_CHECK(cudaMemcpy(r.data(), out.get(), S * 4, cudaMemcpyDeviceToHost));
    for (std::uint64_t i = 0; i < S; ++i) {
      double want = 0;
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k) want += h[std::size_t(k)];
      ASSERT_EQ(double(r[i]), want) << "segment " << i << ", replay " << rep;
    }
  }
  TR_CUDA_CHECK(cudaGraphExecDestroy(x));
  TR_CUDA_CHECK(cudaGraphDestroy(g));
  TR_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST(SegmentedLibrary, GraphCapture) {
  const std::uint64_t S = 3, L = 1 << 20;  // the split family: a workspace the graph owns
  std::vector<float> h(S * L, 0.5f);
  DeviceBuffer in(h.size() * 4), out(S * 4);
  upload(in.get(), h.data(), h.size() * 4);
  cudaStream_t s;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  TR_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  segmented_sum(static_cast<const float*>(in.get()), static_cast<float*>(out.get()),
                Segments::rows(S, L), s);
  TR_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t x;
  TR_CUDA_CHECK(cudaGraphInstantiate(&x, g, 0));
  for (int rep = 0; rep < 3; ++rep) {
    TR_CUDA_CHECK(cudaMemset(out.get(), 0, S * 4));
    TR_CUDA_CHECK(cudaGraphLaunch(x, s));
    TR_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> r(S);
    TR_CUDA_CHECK(cudaMemcpy(r.data(), out.get(), S * 4, cudaMemcpyDeviceToHost));
    for (float v : r) EXPECT_EQ(v, 0.5f * L);
  }
  TR_CUDA_CHECK(cudaGraphExecDestroy(x));
  TR_CUDA_CHECK(cudaGraphDestroy(g));
  TR_CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace
}  // namespace tunedreduce::test

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
