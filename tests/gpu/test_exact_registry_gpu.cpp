// The exact sums as a full citizen (docs/kernels.md, "Exact sums"): every exact registry entry, the
// library's two API paths (tunedreduce::exact_sum, cached and two-phase) and the tuner's worker
// give the bits of the host exact reference (exact/reference.hpp) on random data and on the
// adversarial cases (exact/adversarial.hpp), so the same bits everywhere; the compiled entries'
// workspace (exact_sum's size query) is what the registry without kernels computes. Without a CUDA
// device it exits 77.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exact/adversarial.hpp"
#include "exact/reference.hpp"
#include "kernels/counters.hpp"
#include "kernels/device.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/registry.hpp"
#include "tests/exact/cases.hpp"
#include "tests/gpu/gpu_main.hpp"
#include "tests/gpu/gpu_util.hpp"
#include "tests/gpu/half_data.hpp"
#include "tunedreduce/tunedreduce.h"
#include "tunedreduce/tunedreduce.hpp"
#include "tuner/worker/measurer.hpp"

namespace tunedreduce {
namespace {

using exact::testing::Distribution;
using exact::testing::same_bits;
using test::DeviceBuffer;

template <class T>
constexpr DType dtype_v = sizeof(T) == 4 ? DType::f32 : DType::f64;

template <class T>
std::vector<const kernels::Entry*> exact_entries() {
  std::vector<const kernels::Entry*> out;
  for (const kernels::Entry& e : kernels::registry())
    if (e.params.op == Op::exact_sum && e.params.dtype == dtype_v<T>) out.push_back(&e);
  return out;
}

constexpr std::size_t kCounterBytes = kernels::counter_stride_words * sizeof(unsigned long long);

/// Every word of the counter (ticket and accumulator) left zero by the launches.
void expect_counter_zero(const unsigned long long* ctr) {
  std::vector<unsigned long long> left(kernels::counter_stride_words, 1);
  TR_CUDA_CHECK(cudaMemcpy(left.data(), ctr, kCounterBytes, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < left.size(); ++i)
    EXPECT_EQ(left[i], 0u) << "word " << i << " of the external counter was not left zero";
}

/// One launch of \p e through the registry (LaunchArgs as the tuner gives them), output
/// poisoned first.
template <class T>
T run_entry(const kernels::Entry& e, const kernels::DeviceLimits& dev, const T* d_in,
            std::uint64_t n, DeviceBuffer& ws, bool use_counter, unsigned long long* counter) {
  const std::size_t need = std::max<std::size_t>(e.workspace_bytes(n, dev), 256);
  if (ws.bytes() < need) ws = DeviceBuffer(need);
  // The workspace may hold anything on entry: single_pass zeroes its ticket and accumulator
  // there first unless it has the counter.
  TR_CUDA_CHECK(cudaMemset(ws.get(), 0xA5, ws.bytes()));
  DeviceBuffer out(sizeof(T));
  TR_CUDA_CHECK(cudaMemset(out.get(), 0xFF, sizeof(T)));
  kernels::LaunchArgs a;
  a.in = d_in;
  a.out = out.get();
  a.n = n;
  a.workspace = ws.get();
  a.workspace_bytes = ws.bytes();
  a.counter = use_counter ? counter : nullptr;
  const cudaError_t err = e.launch(a, dev);
  EXPECT_EQ(err, cudaSuccess) << e.id << ": " << cudaGetErrorName(err);
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  T got{};
  TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
  return got;
}

template <class T>
class ExactRegistryGpu : public ::testing::Test {};
struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return sizeof(T) == 4 ? "float" : "double";
  }
};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactRegistryGpu, Types, TypeNames);

TYPED_TEST(ExactRegistryGpu, EveryEntryGivesTheReferenceBitsOnRandomAndAdversarialData) {
  using T = TypeParam;
  const kernels::DeviceLimits dev = kernels::query_device_limits(0);
  const auto entries = exact_entries<T>();
  ASSERT_EQ(entries.size(), sizeof(T) == 4 ? 54u : 36u);
  DeviceBuffer ws;
  // A counter of the library's table: the ticket, and the accumulator after it.
  DeviceBuffer counter(kCounterBytes);
  TR_CUDA_CHECK(cudaMemset(counter.get(), 0, kCounterBytes));
  auto* ctr = static_cast<unsigned long long*>(counter.get());

  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  for (const auto& c : exact::adversarial_cases<T>()) inputs.emplace_back(c.name, c.values);
  std::mt19937_64 rng(test::test_seed());
  for (Distribution d : {Distribution::uniform01, Distribution::full_range,
                         Distribution::cancelling_pairs, Distribution::near_max})
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{4097},
                            (std::uint64_t{1} << 20) + 13})
      inputs.emplace_back(std::string(exact::testing::distribution_name(d)) +
                              " n=" + std::to_string(n),
                          exact::testing::generate<T>(d, n, rng));

  for (const auto& [name, values] : inputs) {
    SCOPED_TRACE(name);
    const T expected = exact::exact_sum(std::span<const T>(values));
    // One element past the start: the 16-byte loads start after a head of single elements.
    DeviceBuffer buf((values.size() + 1) * sizeof(T));
    T* d_in = static_cast<T*>(buf.get()) + (values.size() % 2);
    if (!values.empty()) tunedreduce::test::upload(d_in, values.data(), values.size() * sizeof(T));
    int failures = 0;
    for (const kernels::Entry* e : entries) {
      for (bool use_counter : {false, true}) {
        const T got = run_entry<T>(*e, dev, d_in, values.size(), ws, use_counter, ctr);
        EXPECT_TRUE(same_bits(expected, got)) << e->id << (use_counter ? " (counter)" : "");
        if (!same_bits(expected, got) && ++failures == 5) FAIL() << "giving up on " << name;
      }
    }
    expect_counter_zero(ctr);
  }
}

TYPED_TEST(ExactRegistryGpu, CompiledWorkspaceIsWhatTheRegistryWithoutKernelsComputes) {
  using T = TypeParam;
  const kernels::DeviceLimits dev = kernels::query_device_limits(0);
  for (const kernels::Entry* e : exact_entries<T>()) {
    ASSERT_NE(e->query_workspace_bytes, nullptr) << e->id;
    const int resident = e->resident_blocks_per_sm(dev);
    EXPECT_GE(resident, 1) << e->id;
    for (std::uint64_t n :
         {std::uint64_t{1}, std::uint64_t{3000}, std::uint64_t{1} << 24, std::uint64_t{1} << 36}) {
      EXPECT_EQ(e->workspace_bytes(n, dev),
                kernels::exact_geometry::workspace_bytes(e->params, n, dev, resident))
          << e->id << " n=" << n;
      EXPECT_EQ(e->grid_size(n, dev),
                kernels::exact_geometry::grid_size(e->params, n, dev, resident))
          << e->id << " n=" << n;
    }
  }
}

template <class T>
void expect_api_bits(const std::vector<T>& values, const std::string& name) {
  SCOPED_TRACE(name);
  const T expected = exact::exact_sum(std::span<const T>(values));
  DeviceBuffer in(std::max<std::size_t>(values.size(), 1) * sizeof(T));
  DeviceBuffer out(sizeof(T));
  if (!values.empty())
    tunedreduce::test::upload(in.get(), values.data(), values.size() * sizeof(T));
  const T* d_in = static_cast<const T*>(in.get());
  T* d_out = static_cast<T*>(out.get());
  T got{};
  // The cached path.
  TR_CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(T)));
  tunedreduce::exact_sum(d_in, d_out, values.size());
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(expected, got)) << "cached";
  // The two-phase path, the caller's buffer filled with garbage.
  std::size_t bytes = 0;
  tunedreduce::exact_sum(nullptr, bytes, d_in, d_out, values.size());
  DeviceBuffer temp(std::max<std::size_t>(bytes, 1));
  TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5A, temp.bytes()));
  TR_CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(T)));
  tunedreduce::exact_sum(temp.get(), bytes, d_in, d_out, values.size());
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(expected, got)) << "two-phase";
}

TYPED_TEST(ExactRegistryGpu, ApiPathsGiveTheReferenceBits) {
  using T = TypeParam;
  tunedreduce::set_database("/nonexistent/no-database-here.db");  // the built-in default
  for (const auto& c : exact::adversarial_cases<T>()) expect_api_bits<T>(c.values, c.name);
  std::mt19937_64 rng(test::test_seed() + 1);
  for (std::uint64_t n :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{100003}, std::uint64_t{1} << 24})
    expect_api_bits<T>(exact::testing::generate<T>(Distribution::full_range, n, rng),
                       "full_range n=" + std::to_string(n));
  // After an exact sum on a stream, a plain sum on the same cached workspace is still right.
  std::vector<T> ones(1 << 20, T(1));
  DeviceBuffer in(ones.size() * sizeof(T));
  DeviceBuffer out(sizeof(T));
  tunedreduce::test::upload(in.get(), ones.data(), ones.size() * sizeof(T));
  const T* d_in = static_cast<const T*>(in.get());
  T* d_out = static_cast<T*>(out.get());
  for (int round = 0; round < 3; ++round) {
    tunedreduce::exact_sum(d_in, d_out, ones.size());
    tunedreduce::sum(d_in, d_out, ones.size());
    T got{};
    TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, T(1 << 20)) << "round " << round;
  }
  // n = 0 gives +0.
  T got = T(5);
  tunedreduce::test::upload(out.get(), &got, sizeof(T));
  tunedreduce::exact_sum(d_in, d_out, 0);
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(T(0), got));
  tunedreduce::set_database("");
}

// The half types: every exact entry of f16 and bf16 (the three families, each block, unroll and
// finish: 54 a type), the library's two calls and the worker, against the host reference over
// the halves' values (a float result).
DType half_dtype(exact::HalfFormat format) {
  return format == exact::HalfFormat::f16 ? DType::f16 : DType::bf16;
}

std::vector<std::pair<std::string, std::vector<std::uint16_t>>> half_inputs(
    exact::HalfFormat format, std::uint64_t seed) {
  std::vector<std::pair<std::string, std::vector<std::uint16_t>>> inputs;
  for (const auto& c : exact::adversarial_half_cases(format)) inputs.emplace_back(c.name, c.bits);
  std::mt19937_64 rng(seed);
  for (const test::HalfDistribution d : test::kHalfDistributions)
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{4097},
                            (std::uint64_t{1} << 20) + 13})
      inputs.emplace_back(std::string(test::half_distribution_name(d)) + " n=" + std::to_string(n),
                          test::generate_halves(format, d, n, rng));
  return inputs;
}

class ExactHalfRegistryGpu : public ::testing::TestWithParam<exact::HalfFormat> {};
INSTANTIATE_TEST_SUITE_P(Halves, ExactHalfRegistryGpu,
                         ::testing::Values(exact::HalfFormat::f16, exact::HalfFormat::bf16),
                         [](const auto& info) { return exact::half_format_name(info.param); });

TEST_P(ExactHalfRegistryGpu, EveryEntryGivesTheReferenceBitsOnRandomAndAdversarialData) {
  const exact::HalfFormat format = GetParam();
  const kernels::DeviceLimits dev = kernels::query_device_limits(0);
  std::vector<const kernels::Entry*> entries;
  for (const kernels::Entry& e : kernels::registry())
    if (e.params.op == Op::exact_sum && e.params.dtype == half_dtype(format)) entries.push_back(&e);
  ASSERT_EQ(entries.size(), 54u);
  DeviceBuffer ws;
  // A counter of the library's table: the ticket, and the accumulator after it.
  DeviceBuffer counter(kCounterBytes);
  TR_CUDA_CHECK(cudaMemset(counter.get(), 0, kCounterBytes));
  auto* ctr = static_cast<unsigned long long*>(counter.get());
  for (const auto& [name, bits] : half_inputs(format, test::test_seed())) {
    SCOPED_TRACE(name);
    const float expected = exact::exact_sum(format, std::span<const std::uint16_t>(bits));
    // 1 to 3 halves past a 16-byte boundary: a head of single elements before the loads.
    DeviceBuffer buf((bits.size() + 4) * 2);
    auto* d_in = static_cast<std::uint16_t*>(buf.get()) + 1 + bits.size() % 3;
    if (!bits.empty()) tunedreduce::test::upload(d_in, bits.data(), bits.size() * 2);
    int failures = 0;
    for (const kernels::Entry* e : entries) {
      for (bool use_counter : {false, true}) {
        // run_entry's output is the result type's: a float.
        const float got = run_entry<float>(*e, dev, reinterpret_cast<const float*>(d_in),
                                           bits.size(), ws, use_counter, ctr);
        EXPECT_TRUE(same_bits(expected, got)) << e->id << (use_counter ? " (counter)" : "");
        if (!same_bits(expected, got) && ++failures == 5) FAIL() << "giving up on " << name;
      }
    }
    expect_counter_zero(ctr);
  }
  for (const kernels::Entry* e : entries) {
    const int resident = e->resident_blocks_per_sm(dev);
    EXPECT_GE(resident, 1) << e->id;
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{3000}, std::uint64_t{1} << 24}) {
      EXPECT_EQ(e->workspace_bytes(n, dev),
                kernels::exact_geometry::workspace_bytes(e->params, n, dev, resident))
          << e->id << " n=" << n;
      EXPECT_EQ(e->grid_size(n, dev),
                kernels::exact_geometry::grid_size(e->params, n, dev, resident))
          << e->id << " n=" << n;
    }
  }
}

template <class H>
void expect_half_api_bits(exact::HalfFormat format, const std::vector<std::uint16_t>& bits,
                          const std::string& name) {
  SCOPED_TRACE(name);
  const float expected = exact::exact_sum(format, std::span<const std::uint16_t>(bits));
  DeviceBuffer in(std::max<std::size_t>(bits.size(), 1) * 2);
  DeviceBuffer out(sizeof(float));
  if (!bits.empty()) tunedreduce::test::upload(in.get(), bits.data(), bits.size() * 2);
  const H* d_in = static_cast<const H*>(in.get());
  auto* d_out = static_cast<float*>(out.get());
  float got = 0;
  TR_CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(float)));
  tunedreduce::exact_sum(d_in, d_out, bits.size());
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(expected, got)) << "cached";
  std::size_t bytes = 0;
  tunedreduce::exact_sum(nullptr, bytes, d_in, d_out, bits.size());
  DeviceBuffer temp(std::max<std::size_t>(bytes, 1));
  TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5A, temp.bytes()));
  TR_CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(float)));
  tunedreduce::exact_sum(temp.get(), bytes, d_in, d_out, bits.size());
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(expected, got)) << "two-phase";
  // The C API's cached call, the same bits.
  TR_CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(float)));
  EXPECT_EQ(tr_exact_sum(d_in, d_out, bits.size(),
                         format == exact::HalfFormat::f16 ? TR_F16 : TR_BF16, nullptr),
            TR_SUCCESS);
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(same_bits(expected, got)) << "C API";
}

TEST_P(ExactHalfRegistryGpu, ApiPathsGiveTheReferenceBits) {
  const exact::HalfFormat format = GetParam();
  tunedreduce::set_database("/nonexistent/no-database-here.db");  // the built-in default
  auto inputs = half_inputs(format, test::test_seed() + 1);
  std::mt19937_64 rng(test::test_seed() + 2);
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1} << 24, (std::uint64_t{1} << 25) + 5})
    inputs.emplace_back("finite_bits n=" + std::to_string(n),
                        test::generate_halves(format, test::HalfDistribution::finite_bits, n, rng));
  for (const auto& [name, bits] : inputs) {
    if (format == exact::HalfFormat::f16) expect_half_api_bits<__half>(format, bits, name);
    else expect_half_api_bits<__nv_bfloat16>(format, bits, name);
  }
  // A half exact sum's result type is float: a same-type result is refused by name.
  DeviceBuffer in(64), out(8);
  try {
    tunedreduce::reduce(in.get(), out.get(), 16, half_dtype(format), Op::sum, nullptr);
    FAIL() << "a half sum ran";
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
  }
  tunedreduce::set_database("");
}

TEST(ExactWorkerGpu, HalfExactCandidatesAreMeasuredAndVerified) {
  tuner::Measurer m(0, 16);
  tuner::MeasurePolicy policy;
  policy.min_repeats = 2;
  policy.max_repeats = 3;
  for (const char* id : {"exact.b256.u2.two_pass.f16.exact_sum",
                         "exact_registers.b512.u4.single_pass.bf16.exact_sum"}) {
    const kernels::Entry* e = kernels::find(id);
    ASSERT_NE(e, nullptr) << id;
    for (std::uint64_t n : {std::uint64_t{1000}, std::uint64_t{1} << 22}) {
      const tuner::Result r = m.measure(*e, n, policy, [] {});
      EXPECT_EQ(r.outcome, db::Outcome::ok) << id << " n=" << n << ": " << r.error;
    }
  }
  // An "exact" f16 entry that runs the float-accumulated wide sum: not bit for bit.
  const kernels::Entry* e = kernels::find("exact.b256.u2.two_pass.f16.exact_sum");
  const kernels::Entry* inexact = kernels::find("vectorized.b256.u4.two_pass.f16.wide_sum");
  ASSERT_NE(e, nullptr);
  ASSERT_NE(inexact, nullptr);
  kernels::Entry wrong = *e;
  wrong.id = "exact.b256.u2.two_pass.f16.exact_sum (wrong)";
  wrong.launch = inexact->launch;
  wrong.resident_blocks_per_sm = inexact->resident_blocks_per_sm;
  wrong.query_workspace_bytes = nullptr;
  const tuner::Result bad = m.measure(wrong, 1 << 20, policy, [] {});
  EXPECT_EQ(bad.outcome, db::Outcome::incorrect);
  EXPECT_FALSE(bad.error.empty());
}

TEST(ExactApiGpu, IntegerTypesAreRefusedThroughTheGenericPath) {
  DeviceBuffer in(64), out(8);
  try {
    tunedreduce::reduce(in.get(), out.get(), 16, DType::i32, Op::exact_sum, nullptr);
    FAIL() << "an integer exact_sum ran";
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(
                  "exact_sum is defined for f32, f64, f16 and bf16 only, not dtype i32"),
              std::string::npos)
        << e.what();
  }
}

TEST(ExactWorkerGpu, ExactCandidatesAreMeasuredAndAWrongOneIsIncorrect) {
  tuner::Measurer m(0, 16);
  tuner::MeasurePolicy policy;
  policy.min_repeats = 2;
  policy.max_repeats = 3;
  const kernels::Entry* e = kernels::find("exact_wide.b256.u2.two_pass.f32.exact_sum");
  ASSERT_NE(e, nullptr);
  const tuner::Result ok = m.measure(*e, 1 << 20, policy, [] {});
  EXPECT_EQ(ok.outcome, db::Outcome::ok) << ok.error;
  // An "exact" entry that runs the ordinary float sum: right to n * eps, not bit for bit.
  kernels::Entry wrong = *e;
  wrong.id = "exact_wide.b256.u2.two_pass.f32.exact_sum (wrong)";
  const kernels::Entry* inexact = kernels::find("warp_shuffle.b256.u4.two_pass.f32.sum");
  ASSERT_NE(inexact, nullptr);
  wrong.launch = inexact->launch;
  wrong.resident_blocks_per_sm = inexact->resident_blocks_per_sm;
  wrong.query_workspace_bytes = nullptr;
  const tuner::Result bad = m.measure(wrong, 1 << 20, policy, [] {});
  EXPECT_EQ(bad.outcome, db::Outcome::incorrect);
  EXPECT_FALSE(bad.error.empty());
}

}  // namespace
}  // namespace tunedreduce

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
