// libtunedreduce on a GPU, through its public API: sum/min/max of every type against a host
// reference (built-in defaults, the H100 sample database, and tuned global-memory kernels whose
// workspace grows between launches in flight), the two-phase API, argument errors that launch
// nothing, many threads x many streams at once, several GPUs, and the C API.

#include <cuda_runtime_api.h>

#include <atomic>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "db/database.hpp"
#include "gpu_util.hpp"
#include "kernels/device.hpp"
#include "tests/db/test_util.hpp"
#include "tunedreduce/tunedreduce.h"
#include "tunedreduce/tunedreduce.hpp"
#include "tests/gpu/gpu_main.hpp"

namespace tunedreduce::test {
namespace {

/// The operators this test checks against its own host reference; exact_sum (bit for bit the
/// exact reference) is tests/gpu/test_exact_registry_gpu's.
constexpr Op plain_ops[] = {Op::sum, Op::min, Op::max};

namespace fs = std::filesystem;
constexpr unsigned char poison = 0xA5;

db::test::TempDir& scratch() {
  static db::test::TempDir d;
  return d;
}

/// The sample database, copied (a reader writes -shm beside a WAL file); empty when not found
/// (the binary may run from another folder than the one it was built in).
std::string sample_copy() {
  for (const fs::path& p : {fs::path(TR_SAMPLE_DB), fs::path("tests/data/h100-sample.db")})
    if (fs::exists(p)) {
      const fs::path dst = scratch() / "sample.db";
      if (!fs::exists(dst)) fs::copy_file(p, dst);
      return dst.string();
    }
  return {};
}

void use_defaults() { tunedreduce::set_database((scratch() / "none.db").string()); }

/// Checks \p got against the reduction of x[0, n): exact for integers, min and max; within
/// n * eps * sum|x| for floating-point sums.
template <class T>
void check_result(Op op, const T* x, std::uint64_t n, T got, const std::string& what) {
  const Reference<T> ref = host_reference(op, x, n);
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::sum) {
      const long double bound =
          static_cast<long double>(n) * std::numeric_limits<T>::epsilon() * ref.abs_sum +
          std::numeric_limits<T>::min();
      EXPECT_LE(std::fabs(static_cast<long double>(got) - static_cast<long double>(ref.value)),
                bound)
          << what << ": got " << got << ", expected " << ref.value;
      return;
    }
  }
  EXPECT_EQ(got, ref.value) << what;
}

template <class T>
void run_op(Op op, const T* in, T* out, std::uint64_t n, cudaStream_t s) {
  switch (op) {
    case Op::sum:
      tunedreduce::sum(in, out, n, s);
      break;
    case Op::min:
      tunedreduce::min(in, out, n, s);
      break;
    case Op::max:
      tunedreduce::max(in, out, n, s);
      break;
    case Op::exact_sum:
      ADD_FAILURE() << "exact_sum is test_exact_registry_gpu's";
      break;
    case Op::wide_sum:
      ADD_FAILURE() << "wide_sum has its own test (WideSums*): its result is wider than T";
      break;
    case Op::argmin:
    case Op::argmax:
      ADD_FAILURE() << "argmin and argmax have their own test (Arg*): their result is indexed";
      break;
    case Op::absmax:
      ADD_FAILURE() << "absmax has its own test (Absmax*), for the floating-point types";
      break;
  }
}

/// Every size of \p sizes for (T, op), from an aligned pointer and one offset by one element.
template <class T>
void check_type(Op op, const std::vector<std::uint64_t>& sizes, std::uint64_t stream_id) {
  const std::uint64_t max_n = *std::max_element(sizes.begin(), sizes.end()) + 1;
  std::vector<T> host(max_n);
  fill_random(host, test_seed() ^ stream_id);
  DeviceBuffer in(max_n * sizeof(T)), out(3 * sizeof(T));
  tunedreduce::test::upload(in.get(), host.data(), max_n * sizeof(T));
  for (std::uint64_t n : sizes)
    for (int offset : {0, 1}) {
      if (n + offset > max_n) continue;
      TR_CUDA_CHECK(cudaMemset(out.get(), poison, 3 * sizeof(T)));
      const T* d_in = static_cast<const T*>(in.get()) + offset;
      T* d_out = static_cast<T*>(out.get()) + 1;
      run_op<T>(op, d_in, d_out, n, nullptr);
      T got[3];
      TR_CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
      const std::string what = std::string(dtype_name(dtype_of<T>)) + " " + op_name(op) +
                               " n=" + std::to_string(n) + " offset " + std::to_string(offset) +
                               " (" + tunedreduce::lookup<T>(op, n).kernel_id + ")";
      unsigned char guard[sizeof(T)];
      std::memset(guard, poison, sizeof(T));
      EXPECT_EQ(std::memcmp(&got[0], guard, sizeof(T)), 0) << what << ": wrote before d_out";
      EXPECT_EQ(std::memcmp(&got[2], guard, sizeof(T)), 0) << what << ": wrote after d_out";
      check_result<T>(op, host.data() + offset, n, got[1], what);
    }
}

void check_every_type(const std::vector<std::uint64_t>& sizes) {
  for (Op op : plain_ops) {
    check_type<std::int32_t>(op, sizes, 1);
    check_type<std::uint32_t>(op, sizes, 2);
    check_type<std::int64_t>(op, sizes, 3);
    check_type<std::uint64_t>(op, sizes, 4);
    check_type<float>(op, sizes, 5);
    check_type<double>(op, sizes, 6);
  }
}

const std::vector<std::uint64_t> sizes = {
    0, 1, 31, 33, 1000, 4097, 65537, (1u << 20) + 3, 999983, (1u << 24) + 7};

// ---- CUDA graphs: these come first, so the process's first reduction is inside a capture ------

/// Records reductions of T (every size of \p ns, through the cached call or the two-phase one)
/// into a CUDA graph on a stream the library has never seen, in capture \p mode, while another
/// thread makes its first cached call on a stream of its own; then checks that nothing ran at
/// capture time, replays the graph three times over new data, and checks that no graph memory
/// is left once the graph is gone.
template <class T>
void check_captured(cudaStreamCaptureMode mode, bool two_phase, Op op,
                    const std::vector<std::uint64_t>& ns, std::uint64_t seed) {
  const std::string what =
      std::string(dtype_name(dtype_of<T>)) + " " + op_name(op) +
      (two_phase ? " two-phase" : " cached") +
      (mode == cudaStreamCaptureModeGlobal ? ", global capture" : ", thread-local capture");
  // A failure of an earlier case leaves its error as the thread's last one, which the launches
  // below would report as theirs: start clean.
  (void)cudaGetLastError();
  const std::uint64_t max_n = *std::max_element(ns.begin(), ns.end());
  DeviceBuffer in(max_n * sizeof(T)), out(ns.size() * sizeof(T));
  auto* d_in = static_cast<T*>(in.get());
  auto* d_out = static_cast<T*>(out.get());
  std::vector<DeviceBuffer> temps;  // the caller's, allocated before the capture
  std::vector<std::size_t> temp_bytes;
  if (two_phase)
    for (std::uint64_t n : ns) {
      std::size_t b = 0;
      tunedreduce::reduce<T>(nullptr, b, d_in, d_out, n, op);
      temps.emplace_back(b);
      TR_CUDA_CHECK(cudaMemset(temps.back().get(), 0xff, b));  // anything
      temp_bytes.push_back(b);
    }
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, ns.size() * sizeof(T)));
  // A stream of another thread, reduced on during the capture (its first call: it allocates).
  DeviceBuffer other_out(sizeof(T));
  cudaStream_t s = nullptr, other = nullptr;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  std::vector<T> host(max_n);
  fill_random(host, seed);
  tunedreduce::test::upload(d_in, host.data(), max_n * sizeof(T));
  // s and other do not wait for the legacy stream's copies and memsets: finish them first.
  TR_CUDA_CHECK(cudaDeviceSynchronize());

  TR_CUDA_CHECK(cudaStreamBeginCapture(s, mode));
  std::string other_error;
  std::thread neighbour([&] {
    try {
      TR_CUDA_CHECK(cudaSetDevice(0));
      run_op<T>(op, d_in, static_cast<T*>(other_out.get()), max_n, other);
    } catch (const std::exception& e) {
      other_error = e.what();
    }
  });
  std::string capture_error;
  try {
    for (std::size_t i = 0; i < ns.size(); ++i) {
      if (two_phase)
        tunedreduce::reduce<T>(temps[i].get(), temp_bytes[i], d_in, d_out + i, ns[i], op, s);
      else run_op<T>(op, d_in, d_out + i, ns[i], s);
    }
  } catch (const std::exception& e) {
    capture_error = e.what();
  }
  neighbour.join();
  cudaGraph_t graph = nullptr;
  TR_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  ASSERT_EQ(capture_error, "") << what;
  EXPECT_EQ(other_error, "") << what << ": the neighbour's call";
  ASSERT_NE(graph, nullptr) << what;
  {  // The neighbour's result is right: its call was not captured.
    TR_CUDA_CHECK(cudaStreamSynchronize(other));
    T got;
    TR_CUDA_CHECK(cudaMemcpy(&got, other_out.get(), sizeof got, cudaMemcpyDeviceToHost));
    check_result<T>(op, host.data(), max_n, got, what + ", the neighbour's call");
  }
  {  // Nothing ran at capture time.
    std::vector<unsigned char> b(ns.size() * sizeof(T));
    TR_CUDA_CHECK(cudaMemcpy(b.data(), d_out, b.size(), cudaMemcpyDeviceToHost));
    for (unsigned char c : b) ASSERT_EQ(c, poison) << what << ": a captured call ran at capture";
  }
  cudaGraphExec_t exec = nullptr;
  TR_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int rep = 0; rep < 3; ++rep) {
    fill_random(host, seed + 1 + rep);
    tunedreduce::test::upload(d_in, host.data(), max_n * sizeof(T));
    TR_CUDA_CHECK(cudaMemset(out.get(), poison, ns.size() * sizeof(T)));
    TR_CUDA_CHECK(cudaDeviceSynchronize());
    TR_CUDA_CHECK(cudaGraphLaunch(exec, s));
    TR_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<T> got(ns.size());
    TR_CUDA_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < ns.size(); ++i)
      check_result<T>(op, host.data(), ns[i], got[i],
                      what + ", replay " + std::to_string(rep) + ", n=" + std::to_string(ns[i]) +
                          " (" + tunedreduce::lookup<T>(op, ns[i]).kernel_id + ")");
  }
  TR_CUDA_CHECK(cudaGraphExecDestroy(exec));
  TR_CUDA_CHECK(cudaGraphDestroy(graph));
  // Every allocation the graph made was freed inside it: none outlives it.
  TR_CUDA_CHECK(cudaDeviceGraphMemTrim(0));
  std::uint64_t used = ~0ull;
  TR_CUDA_CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
  EXPECT_EQ(used, 0u) << what << ": graph memory left after the graph was destroyed";
  // The stream works as before once the capture has ended (the cache allocates now).
  TR_CUDA_CHECK(cudaMemsetAsync(out.get(), poison, sizeof(T), s));
  run_op<T>(op, d_in, d_out, max_n, s);
  TR_CUDA_CHECK(cudaStreamSynchronize(s));
  T got;
  TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  check_result<T>(op, host.data(), max_n, got, what + ", after the capture");
  tunedreduce::release_workspace(s);
  tunedreduce::release_workspace(other);
  TR_CUDA_CHECK(cudaStreamSynchronize(s));
  TR_CUDA_CHECK(cudaStreamSynchronize(other));
  TR_CUDA_CHECK(cudaStreamDestroy(s));
  TR_CUDA_CHECK(cudaStreamDestroy(other));
}

const std::vector<std::uint64_t> graph_sizes = {1000, (1u << 20) + 3, (1u << 24) + 7};

TEST(Graph, AStreamsFirstCachedCallInsideAGlobalCapture) {
  use_defaults();
  check_captured<float>(cudaStreamCaptureModeGlobal, false, Op::sum, graph_sizes, 101);
  check_captured<std::int64_t>(cudaStreamCaptureModeGlobal, false, Op::max, graph_sizes, 102);
}

TEST(Graph, AStreamsFirstCachedCallInsideAThreadLocalCapture) {
  use_defaults();
  check_captured<double>(cudaStreamCaptureModeThreadLocal, false, Op::sum, graph_sizes, 103);
  check_captured<std::int32_t>(cudaStreamCaptureModeThreadLocal, false, Op::min, graph_sizes, 104);
}

TEST(Graph, TheTwoPhaseCallInsideBothCaptureModes) {
  use_defaults();
  check_captured<float>(cudaStreamCaptureModeGlobal, true, Op::max, graph_sizes, 105);
  check_captured<std::int32_t>(cudaStreamCaptureModeThreadLocal, true, Op::sum, graph_sizes, 106);
}

TEST(Graph, TheSampleDatabasesWinnersInsideACapture) {
  const std::string db = sample_copy();
  if (db.empty()) GTEST_SKIP() << "tests/data/h100-sample.db not found from here";
  tunedreduce::set_database(db);
  const std::vector<std::uint64_t> ns = {4096, 65537, (1u << 22) + 1};
  check_captured<std::int32_t>(cudaStreamCaptureModeGlobal, false, Op::sum, ns, 107);
  check_captured<float>(cudaStreamCaptureModeGlobal, true, Op::sum, ns, 108);
  use_defaults();
}

TEST(Library, EveryTypeAndOperatorWithTheBuiltInDefaults) {
  use_defaults();
  EXPECT_EQ(tunedreduce::lookup<float>(Op::sum, 1 << 20).level, Level::builtin_default);
  check_every_type(sizes);
}

TEST(Library, EveryTypeAndOperatorWithTheSampleDatabase) {
  const std::string db = sample_copy();
  if (db.empty()) GTEST_SKIP() << "tests/data/h100-sample.db not found from here";
  tunedreduce::set_database(db);
  const Config c = tunedreduce::lookup<std::int32_t>(Op::sum, 1 << 20);
  std::printf("with the sample database: i32 sum 2^20 -> %s (%s, tuned on %s)\n", c.kernel_id,
              level_name(c.level), c.tuned_on);
  const DeviceFingerprint fp = kernels::query_fingerprint(0);
  if (fp.key() == "09b523d0aee380fb") {  // the very H100 model the sample was recorded on
    EXPECT_EQ(c.level, Level::exact);
  }
  check_every_type(sizes);
  use_defaults();
}

TEST(Library, TunedGlobalMemoryKernelsGrowTheWorkspaceBetweenLaunchesInFlight) {
  // A database for this very device whose f32 sum winners are global-memory kernels: their
  // workspace holds block elements per block, so it grows with n and the cache must free the
  // old one in stream order while earlier launches may still use it.
  const fs::path path = scratch() / "global.db";
  {
    db::Database d = db::Database::open_writer(path);
    const DeviceFingerprint fp = kernels::query_fingerprint(0);
    const auto dev = d.upsert_device(fp);
    const auto run = d.begin_run(db::test::run_info());
    std::vector<db::Winner> ws;
    const std::pair<std::uint64_t, std::uint64_t> ranges[] = {{1, 65535},
                                                              {65536, std::uint64_t{1} << 40}};
    const char* ids[] = {"interleaved.b256.two_pass.f32.sum", "unroll.b256.u8.single_pass.f32.sum"};
    for (int i = 0; i < 2; ++i) {
      db::Winner w;
      w.dtype = DType::f32;
      w.op = Op::sum;
      w.n_lo = ranges[i].first;
      w.n_hi = ranges[i].second;
      w.kernel_id = ids[i];
      w.measurement_id = d.insert_measurement(db::test::measurement(run, dev, ids[i], w.n_lo, 10));
      w.driver_version = fp.driver_version;
      w.runtime_version = fp.runtime_version;
      ws.push_back(w);
    }
    d.replace_winners(dev, DType::f32, Op::sum, ws);
  }
  tunedreduce::set_database(path.string());
  EXPECT_EQ(tunedreduce::lookup<float>(Op::sum, 1 << 24).level, Level::exact);
  EXPECT_STREQ(tunedreduce::lookup<float>(Op::sum, 1 << 24).kernel_id,
               "unroll.b256.u8.single_pass.f32.sum");

  const std::uint64_t n_max = (1u << 24) + 5;
  std::vector<float> host(n_max);
  fill_random(host, test_seed() ^ 77);
  DeviceBuffer in(n_max * sizeof(float)), out(64 * sizeof(float));
  tunedreduce::test::upload(in.get(), host.data(), n_max * sizeof(float));
  cudaStream_t s;
  TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Growing sizes, no synchronisation in between: every growth frees the previous workspace
  // while the launches before it may still be running.
  std::vector<std::uint64_t> ns;
  for (std::uint64_t n = 1000; n < n_max && ns.size() < 63; n = n * 3 / 2 + 7) ns.push_back(n);
  ns.push_back(n_max);
  auto* o = static_cast<float*>(out.get());
  for (std::size_t i = 0; i < ns.size(); ++i)
    tunedreduce::sum(static_cast<const float*>(in.get()), o + i, ns[i], s);
  std::vector<float> got(ns.size());
  TR_CUDA_CHECK(
      cudaMemcpyAsync(got.data(), o, ns.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  TR_CUDA_CHECK(cudaStreamSynchronize(s));
  for (std::size_t i = 0; i < ns.size(); ++i)
    check_result<float>(Op::sum, host.data(), ns[i], got[i],
                        "growing f32 sum n=" + std::to_string(ns[i]));
  tunedreduce::release_workspace(s);
  TR_CUDA_CHECK(cudaStreamDestroy(s));
  use_defaults();
}

TEST(Library, TwoPhase) {
  use_defaults();
  const std::uint64_t n = (1u << 22) + 1;
  std::vector<double> host(n);
  fill_random(host, test_seed() ^ 11);
  DeviceBuffer in(n * sizeof(double)), out(sizeof(double));
  tunedreduce::test::upload(in.get(), host.data(), n * sizeof(double));
  const auto* d_in = static_cast<const double*>(in.get());
  auto* d_out = static_cast<double*>(out.get());
  std::size_t bytes = 0;
  tunedreduce::reduce<double>(nullptr, bytes, d_in, d_out, n, Op::max);
  ASSERT_GT(bytes, 0u);
  DeviceBuffer temp(bytes);
  for (int rep = 0; rep < 3; ++rep) {  // the counter is zeroed by every launch: reusable
    TR_CUDA_CHECK(cudaMemset(out.get(), poison, sizeof(double)));
    tunedreduce::reduce<double>(temp.get(), bytes, d_in, d_out, n, Op::max);
    double got = 0;
    TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
    check_result<double>(Op::max, host.data(), n, got, "two-phase f64 max");
  }
  // Too small: an error, and nothing ran (the output stays poisoned).
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, sizeof(double)));
  std::size_t small = bytes - 1;
  try {
    tunedreduce::reduce<double>(temp.get(), small, d_in, d_out, n, Op::max);
    ADD_FAILURE() << "no error for a small temp buffer";
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), Status::temp_too_small) << e.what();
  }
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char b[sizeof(double)];
  TR_CUDA_CHECK(cudaMemcpy(b, d_out, sizeof b, cudaMemcpyDeviceToHost));
  for (unsigned char c : b) EXPECT_EQ(c, poison);
}

/// A floating-point sum of only -0.0 is -0.0 through both calls, with the built-in defaults and
/// the sample database (every size picks another kernel); a +0.0 among them, or n == 0, gives
/// +0.0.
template <class T>
void check_signed_zero_sums() {
  const std::vector<std::uint64_t> ns = {0, 1, 33, 4097, 65537, (1u << 20) + 3, (1u << 24) + 7};
  const std::uint64_t max_n = ns.back();
  std::vector<T> host(max_n, -T(0));
  DeviceBuffer in(max_n * sizeof(T)), out(sizeof(T));
  tunedreduce::test::upload(in.get(), host.data(), max_n * sizeof(T));
  auto* d_in = static_cast<T*>(in.get());
  auto* d_out = static_cast<T*>(out.get());
  std::size_t bytes = 0;  // each size may pick another kernel: the most any of them needs
  for (std::uint64_t n : ns) {
    std::size_t b = 0;
    tunedreduce::reduce<T>(nullptr, b, d_in, d_out, n, Op::sum);
    bytes = std::max(bytes, b);
  }
  DeviceBuffer temp(bytes);
  for (bool with_plus : {false, true}) {
    if (with_plus) {  // one +0.0, at the last element of every size
      const T plus = T(0);
      for (std::uint64_t n : ns)
        if (n > 0) tunedreduce::test::upload(d_in + n - 1, &plus, sizeof(T));
    }
    for (std::uint64_t n : ns)
      for (bool two_phase : {false, true}) {
        TR_CUDA_CHECK(cudaMemset(out.get(), poison, sizeof(T)));
        if (two_phase) {
          TR_CUDA_CHECK(cudaMemset(temp.get(), 0xff, bytes));  // the caller's: anything
          std::size_t b = bytes;
          tunedreduce::reduce<T>(temp.get(), b, d_in, d_out, n, Op::sum);
        } else {
          tunedreduce::sum(d_in, d_out, n);
        }
        T got;
        TR_CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
        const bool want_minus = n > 0 && !with_plus;
        EXPECT_TRUE(got == T(0) && std::signbit(got) == want_minus)
            << dtype_name(dtype_of<T>) << " sum of " << n
            << (with_plus ? " zeros, one +0.0" : " x -0.0")
            << (two_phase ? " (two-phase)" : " (sum)") << " ("
            << tunedreduce::lookup<T>(Op::sum, n).kernel_id << "): got " << got
            << (std::signbit(got) ? " (sign set)" : "") << ", expected "
            << (want_minus ? "-0" : "+0");
      }
  }
}

TEST(Library, ASumOfOnlyMinusZeroIsMinusZero) {
  use_defaults();
  check_signed_zero_sums<float>();
  check_signed_zero_sums<double>();
  const std::string db = sample_copy();
  if (db.empty()) return;
  tunedreduce::set_database(db);
  check_signed_zero_sums<float>();
  check_signed_zero_sums<double>();
  use_defaults();
}

/// The two-phase call of every type and operator with storage full of garbage before every
/// call (CUB's contract: it may hold anything), back to back on one stream without waiting
/// (one buffer, so one counter, reused by launches in flight), then eight buffers on eight
/// streams at once; every result checked.
template <class T>
void check_two_phase_type(std::uint64_t stream_id) {
  const std::vector<std::uint64_t> ns = {1, 1000, 65537, (1u << 20) + 3, (1u << 24) + 7};
  const std::uint64_t max_n = ns.back() + 1;
  std::vector<T> host(max_n);
  fill_random(host, test_seed() ^ stream_id);
  DeviceBuffer in(max_n * sizeof(T));
  tunedreduce::test::upload(in.get(), host.data(), max_n * sizeof(T));
  std::size_t bytes = 1;
  for (Op op : plain_ops)
    for (std::uint64_t n : ns) {
      std::size_t b = 0;
      tunedreduce::reduce<T>(nullptr, b, nullptr, nullptr, n, op);
      bytes = std::max(bytes, b);
    }
  constexpr int streams = 8;
  const std::size_t calls = std::size(plain_ops) * ns.size() * 2;
  DeviceBuffer out(calls * streams * sizeof(T));
  std::vector<DeviceBuffer> temps;
  std::vector<cudaStream_t> ss(streams);
  for (int i = 0; i < streams; ++i) {
    temps.emplace_back(bytes);
    TR_CUDA_CHECK(cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking));
  }
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, calls * streams * sizeof(T)));
  // The streams are cudaStreamNonBlocking: they do not wait for the legacy stream's memset.
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  auto* o = static_cast<T*>(out.get());
  struct Call {
    Op op;
    std::uint64_t n;
    int offset;
  };
  std::vector<Call> done;
  for (Op op : plain_ops)
    for (std::uint64_t n : ns)
      for (int offset : {0, 1}) done.push_back({op, n, offset});
  // Stream 0 alone first, then all eight at once; garbage written into each buffer in stream
  // order before each call.
  for (int round = 0; round < 2; ++round)
    for (int k = 0; k < (round == 0 ? 1 : streams); ++k)
      for (std::size_t c = 0; c < done.size(); ++c) {
        TR_CUDA_CHECK(cudaMemsetAsync(temps[k].get(), int(0x11 * (c % 15) + k), bytes, ss[k]));
        std::size_t b = bytes;
        tunedreduce::reduce<T>(temps[k].get(), b, static_cast<const T*>(in.get()) + done[c].offset,
                               o + k * done.size() + c, done[c].n, done[c].op, ss[k]);
      }
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> got(calls * streams);
  TR_CUDA_CHECK(cudaMemcpy(got.data(), o, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (int k = 0; k < streams; ++k)
    for (std::size_t c = 0; c < done.size(); ++c)
      check_result<T>(done[c].op, host.data() + done[c].offset, done[c].n, got[k * done.size() + c],
                      std::string("two-phase ") + dtype_name(dtype_of<T>) + " " +
                          op_name(done[c].op) + " n=" + std::to_string(done[c].n) + " offset " +
                          std::to_string(done[c].offset) + " stream " + std::to_string(k) + " (" +
                          tunedreduce::lookup<T>(done[c].op, done[c].n).kernel_id + ")");
  for (cudaStream_t s : ss) TR_CUDA_CHECK(cudaStreamDestroy(s));
}

void check_two_phase_every_type() {
  check_two_phase_type<std::int32_t>(21);
  check_two_phase_type<std::uint32_t>(22);
  check_two_phase_type<std::int64_t>(23);
  check_two_phase_type<std::uint64_t>(24);
  check_two_phase_type<float>(25);
  check_two_phase_type<double>(26);
}

TEST(Library, TwoPhaseWithGarbageInTheCallersStorageEveryTypeAndOperator) {
  use_defaults();
  check_two_phase_every_type();
  const std::string db = sample_copy();
  if (db.empty()) return;
  tunedreduce::set_database(db);
  check_two_phase_every_type();
  use_defaults();
}

// ---- wide sums: i32 -> i64, u32 -> u64, f32 -> f64, f16 and bf16 -> f32 ----------------------

/// sum<T, W> (Op::wide_sum) through both calls, cached and two-phase with garbage in the caller's
/// storage, at sizes around the kernels' tiles and vectors and at offsets of 0, 1 and 3 elements,
/// each result between two poisoned guards: integers exactly the sum modulo 2^64 of the values
/// (whole-range random values, so the 32-bit sum wraps and the wide one must not), floats within
/// n * eps(W) * sum|x| of the long-double sum (W: double for float, float for the half types).
template <class T, class W>
void check_wide_sums(std::uint64_t stream_id) {
  const std::vector<std::uint64_t> ns = {0,
                                         1,
                                         3,
                                         31,
                                         33,
                                         1000,
                                         4096,
                                         4099,
                                         16387,
                                         65537,
                                         999983,
                                         (1u << 20) + 3,
                                         (1u << 24) + 7,
                                         (1u << 26) + 5};
  const std::uint64_t max_n = ns.back() + 3;
  std::vector<T> host(max_n);
  fill_random(host, test_seed() ^ stream_id);
  DeviceBuffer in(max_n * sizeof(T)), out(3 * sizeof(W));
  tunedreduce::test::upload(in.get(), host.data(), max_n * sizeof(T));
  std::size_t temp_bytes = 0;
  for (std::uint64_t n : ns) {
    std::size_t b = 0;
    tunedreduce::sum<T, W>(nullptr, b, static_cast<const T*>(nullptr), static_cast<W*>(nullptr), n);
    temp_bytes = std::max(temp_bytes, b);
  }
  DeviceBuffer temp(std::max<std::size_t>(temp_bytes, 1));
  bool wrapped = false;  // some 32-bit integer sum of the data leaves the 32-bit range
  for (std::uint64_t n : ns)
    for (int offset : {0, 1, 3})
      for (bool two_phase : {false, true}) {
        TR_CUDA_CHECK(cudaMemset(out.get(), poison, 3 * sizeof(W)));
        TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5a + offset, temp.bytes()));
        const T* d_in = static_cast<const T*>(in.get()) + offset;
        W* d_out = static_cast<W*>(out.get()) + 1;
        if (two_phase) {
          std::size_t b = temp_bytes;
          tunedreduce::sum<T, W>(temp.get(), b, d_in, d_out, n);
        } else {
          tunedreduce::sum<T, W>(d_in, d_out, n);
        }
        W got[3];
        TR_CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
        const std::string what = std::string(two_phase ? "two-phase " : "cached ") +
                                 dtype_name(dtype_of<T>) + " wide_sum n=" + std::to_string(n) +
                                 " offset " + std::to_string(offset) + " (" +
                                 tunedreduce::lookup<T>(Op::wide_sum, n).kernel_id + ")";
        unsigned char guard[sizeof(W)];
        std::memset(guard, poison, sizeof(W));
        EXPECT_EQ(std::memcmp(&got[0], guard, sizeof(W)), 0) << what << ": wrote before d_out";
        EXPECT_EQ(std::memcmp(&got[2], guard, sizeof(W)), 0) << what << ": wrote after d_out";
        const T* x = host.data() + offset;
        if constexpr (std::is_integral_v<T>) {
          std::uint64_t acc = 0;  // the values sign- or zero-extended, summed modulo 2^64
          for (std::uint64_t i = 0; i < n; ++i) acc += static_cast<std::uint64_t>(W(x[i]));
          EXPECT_EQ(got[1], static_cast<W>(acc)) << what;
          wrapped = wrapped || static_cast<W>(acc) != static_cast<W>(static_cast<T>(acc));
        } else {
          long double acc = 0, abs_sum = 0;
          for (std::uint64_t i = 0; i < n; ++i) {
            const auto v = static_cast<long double>(static_cast<float>(x[i]));  // exact
            acc += v;
            abs_sum += std::fabs(v);
          }
          const long double bound =
              static_cast<long double>(n) * std::numeric_limits<W>::epsilon() * abs_sum;
          EXPECT_LE(std::fabs(static_cast<long double>(got[1]) - acc), bound)
              << what << ": got " << got[1] << ", expected " << static_cast<double>(acc);
          if (n == 0) {
            EXPECT_EQ(std::signbit(got[1]), false) << what << ": the empty sum is +0";
          }
        }
      }
  if constexpr (std::is_integral_v<T>) {
    EXPECT_TRUE(wrapped) << "no size's 32-bit sum wrapped: the test data does not test the width";
  }
}

TEST(Library, WideSumsBothCallsEveryTypeSizeAndOffsetWithTheBuiltInDefaults) {
  use_defaults();
  check_wide_sums<std::int32_t, std::int64_t>(31);
  check_wide_sums<std::uint32_t, std::uint64_t>(32);
  check_wide_sums<float, double>(33);
  check_wide_sums<__half, float>(34);
  check_wide_sums<__nv_bfloat16, float>(35);
}

void expect_refused(const std::function<void()>& f, Status status, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error (expected '" << needle << "')";
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

/// wide_sum's misuse: a result of the element's type, a 64-bit element type, a result pointer
/// aligned for the element but not for the result; each refused before anything launches.
TEST(Library, WideSumsMisuseIsRefusedWithTheTypesNamed) {
  use_defaults();
  DeviceBuffer in(64 * sizeof(std::int64_t)), out(2 * sizeof(std::int64_t));
  auto* in32 = static_cast<const std::int32_t*>(in.get());
  auto* out32 = static_cast<std::int32_t*>(out.get());
  std::size_t b = 0;
  // wide_sum of i32 into a 32-bit output: the two-phase template names the types.
  expect_refused(
      [&] { tunedreduce::reduce<std::int32_t>(nullptr, b, in32, out32, 64, Op::wide_sum); },
      Status::invalid_argument, "returns i64");
  // wide_sum of a 64-bit type does not exist.
  expect_refused(
      [&] { tunedreduce::reduce(in.get(), out.get(), 8, DType::i64, Op::wide_sum, nullptr); },
      Status::invalid_argument,
      "wide_sum is defined for i32, u32, f32, f16 and bf16 only, not dtype i64");
  // The half types: wide_sum and exact_sum alone; sum, min and max of f16 or bf16 do not exist.
  for (const Op o : {Op::sum, Op::min, Op::max})
    expect_refused([&] { tunedreduce::reduce(in.get(), out.get(), 8, DType::f16, o, nullptr); },
                   Status::invalid_argument, "only, not dtype f16");
  // wide_sum of a half type into a half: the two-phase template names the float it returns.
  expect_refused(
      [&] {
        tunedreduce::reduce<__nv_bfloat16>(nullptr, b, static_cast<const __nv_bfloat16*>(in.get()),
                                           static_cast<__nv_bfloat16*>(out.get()), 64,
                                           Op::wide_sum);
      },
      Status::invalid_argument, "returns f32");
  // exact_sum of a half type into a half: refused the same way (its result is a float too).
  expect_refused(
      [&] {
        tunedreduce::reduce<__half>(nullptr, b, static_cast<const __half*>(in.get()),
                                    static_cast<__half*>(out.get()), 64, Op::exact_sum);
      },
      Status::invalid_argument, "returns f32");
  // A result pointer aligned for the element (4 bytes) but not for the wide result (8).
  expect_refused(
      [&] {
        tunedreduce::reduce(in.get(), static_cast<unsigned char*>(out.get()) + 4, 8, DType::i32,
                            Op::wide_sum, nullptr);
      },
      Status::invalid_argument, "is not aligned to 8 bytes");
  EXPECT_EQ(tr_wide_sum(in.get(), out.get(), 8, TR_F64, nullptr), TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("wide_sum"), std::string::npos) << tr_last_error();
}

// ---- argmin / argmax ------------------------------------------------------------------------

/// argmin<T> and argmax<T> through both calls (cached; two-phase with garbage in the caller's
/// storage), at sizes around the kernels' tiles and vectors and at offsets of 0, 1 and 3
/// elements, each IndexedValue between two poisoned guards, against the test's reference bit for
/// bit (value bits and index). The data: 97 values, so the extreme value occurs many times from
/// a few hundred elements on and the first index must win across threads and blocks; floats also
/// with +0.0 / -0.0 as the minimum and with NaNs.
template <class T>
void check_args(std::uint64_t stream_id) {
  const std::vector<std::uint64_t> ns = {0,
                                         1,
                                         3,
                                         31,
                                         33,
                                         1000,
                                         2048,
                                         4099,
                                         16387,
                                         65537,
                                         999983,
                                         (1u << 20) + 3,
                                         (1u << 24) + 7,
                                         (1u << 26) + 5};
  const std::uint64_t max_n = ns.back() + 3;
  std::vector<T> host(max_n);
  for (std::uint64_t i = 0; i < max_n; ++i)
    host[i] = static_cast<T>(static_cast<int>(splitmix64(test_seed() ^ stream_id ^ (i << 8)) % 97) -
                             48 + (std::is_signed_v<T> ? 0 : 48));
  DeviceBuffer in(max_n * sizeof(T)), out(3 * sizeof(IndexedValue<T>));
  std::size_t temp_bytes = 0;
  for (std::uint64_t n : ns)
    for (Op op : {Op::argmin, Op::argmax}) {
      std::size_t b = 0;
      tunedreduce::reduce(nullptr, b, nullptr, nullptr, n, dtype_of<T>, op, nullptr);
      temp_bytes = std::max(temp_bytes, b);
    }
  DeviceBuffer temp(std::max<std::size_t>(temp_bytes, 1));
  const int cases = std::is_floating_point_v<T> ? 3 : 1;  // floats: also zeros, NaNs
  for (int c = 0; c < cases; ++c) {
    std::vector<T> h = host;
    const std::uint64_t p = 5 + splitmix64(stream_id + c) % 900, q = p + 37 + c;
    if constexpr (std::is_floating_point_v<T>) {
      if (c == 1) {  // argmin: +0.0 and -0.0 tie below every other value
        for (T& v : h) v = v <= 0 ? std::fabs(v) + 1 : v;
        h[p] = -T(0), h[q] = T(0);
      }
      if (c == 2) h[p + 1000] = std::numeric_limits<T>::quiet_NaN(), h[q + 5000] = -h[p + 1000];
    }
    tunedreduce::test::upload(in.get(), h.data(), max_n * sizeof(T));
    for (Op op : {Op::argmin, Op::argmax})
      for (std::uint64_t n : ns)
        for (int offset : {0, 1, 3})
          for (bool two_phase : {false, true}) {
            TR_CUDA_CHECK(cudaMemset(out.get(), poison, 3 * sizeof(IndexedValue<T>)));
            TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5a + offset, temp.bytes()));
            const T* d_in = static_cast<const T*>(in.get()) + offset;
            auto* d_out = static_cast<IndexedValue<T>*>(out.get()) + 1;
            std::size_t b = temp_bytes;
            if (op == Op::argmin) {
              if (two_phase) tunedreduce::argmin(temp.get(), b, d_in, d_out, n);
              else tunedreduce::argmin(d_in, d_out, n);
            } else {
              if (two_phase) tunedreduce::argmax(temp.get(), b, d_in, d_out, n);
              else tunedreduce::argmax(d_in, d_out, n);
            }
            IndexedValue<T> got[3];
            TR_CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
            const std::string what = std::string(two_phase ? "two-phase " : "cached ") +
                                     dtype_name(dtype_of<T>) + " " + op_name(op) + " case " +
                                     std::to_string(c) + " n=" + std::to_string(n) + " offset " +
                                     std::to_string(offset) + " (" +
                                     tunedreduce::lookup<T>(op, n).kernel_id + ")";
            unsigned char guard[sizeof(IndexedValue<T>)];
            std::memset(guard, poison, sizeof guard);
            EXPECT_EQ(std::memcmp(&got[0], guard, sizeof guard), 0) << what << ": before d_out";
            EXPECT_EQ(std::memcmp(&got[2], guard, sizeof guard), 0) << what << ": after d_out";
            const IndexedValue<T> want = arg_reference<T>(op, h.data() + offset, n);
            EXPECT_TRUE(std::memcmp(&got[1].value, &want.value, sizeof(T)) == 0 &&
                        got[1].index == want.index)
                << what << ": got {" << +got[1].value << ", " << got[1].index << "}, expected {"
                << +want.value << ", " << want.index << "}";
          }
  }
}

TEST(Library, ArgMinMaxBothCallsEveryTypeSizeAndOffsetWithTheBuiltInDefaults) {
  use_defaults();
  check_args<std::int32_t>(41);
  check_args<std::uint32_t>(42);
  check_args<std::int64_t>(43);
  check_args<std::uint64_t>(44);
  check_args<float>(45);
  check_args<double>(46);
}

// ---- absmax ----------------------------------------------------------------------------------

/// absmax<T> through both calls (cached; two-phase with garbage in the caller's storage), at
/// sizes around the kernels' tiles and vectors and at offsets of 0, 1 and 3 elements, each result
/// between two poisoned guards, against the largest magnitude's bits computed here (the bits less
/// the sign bit as an unsigned integer). Cases: values of both signs (the largest magnitude
/// negative in half of them); only -0.0 and +0.0 (+0.0); a -inf; a NaN with its sign bit set
/// among them (that NaN, its sign dropped).
template <class T, class Bits>
void check_absmax(std::uint64_t stream_id) {
  const std::vector<std::uint64_t> ns = {
      0, 1, 3, 31, 33, 1000, 2048, 4099, 16387, 65537, 999983, (1u << 20) + 3, (1u << 24) + 7};
  const std::uint64_t max_n = ns.back() + 3;
  const auto bits_of = [](T v) { return std::bit_cast<Bits>(v); };
  const auto of_bits = [](Bits b) { return std::bit_cast<T>(b); };
  const auto value = [](float f) {
    if constexpr (std::is_same_v<T, __half>) return __float2half_rn(f);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(f);
    else return static_cast<T>(f);
  };
  constexpr Bits sign = static_cast<Bits>(Bits{1} << (8 * sizeof(T) - 1));
  std::vector<T> base(max_n);
  for (std::uint64_t i = 0; i < max_n; ++i)
    base[i] =
        value(static_cast<float>(
                  static_cast<int>(splitmix64(test_seed() ^ stream_id ^ (i << 8)) % 2001) - 1000) *
              0.125f);
  DeviceBuffer in(max_n * sizeof(T)), out(3 * sizeof(T));
  std::size_t temp_bytes = 1;
  for (std::uint64_t n : ns) {
    std::size_t b = 0;
    tunedreduce::reduce(nullptr, b, nullptr, nullptr, n, dtype_of<T>, Op::absmax, nullptr);
    temp_bytes = std::max(temp_bytes, b);
  }
  DeviceBuffer temp(temp_bytes);
  for (int c = 0; c < 4; ++c) {
    std::vector<T> h = base;
    const std::uint64_t p = 5 + splitmix64(stream_id + c) % 900;
    if (c == 1)
      for (std::uint64_t i = 0; i < max_n; ++i) h[i] = of_bits(i % 3 ? sign : Bits{0});  // +-0
    if (c == 2) h[p] = of_bits(static_cast<Bits>(bits_of(value(INFINITY)) | sign));      // -inf
    if (c == 3) {  // a NaN with a payload and its sign bit, and another without either
      h[p] = of_bits(static_cast<Bits>(bits_of(value(NAN)) | sign | 1));
      h[p + 3000] = value(NAN);
    }
    tunedreduce::test::upload(in.get(), h.data(), max_n * sizeof(T));
    for (std::uint64_t n : ns)
      for (int offset : {0, 1, 3})
        for (bool two_phase : {false, true}) {
          TR_CUDA_CHECK(cudaMemset(out.get(), poison, 3 * sizeof(T)));
          TR_CUDA_CHECK(cudaMemset(temp.get(), 0x5a + offset, temp.bytes()));
          const T* d_in = static_cast<const T*>(in.get()) + offset;
          T* d_out = static_cast<T*>(out.get()) + 1;
          std::size_t b = temp_bytes;
          if (two_phase) tunedreduce::absmax(temp.get(), b, d_in, d_out, n);
          else tunedreduce::absmax(d_in, d_out, n);
          Bits got[3];
          TR_CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
          Bits want = 0;
          for (std::uint64_t i = 0; i < n; ++i)
            want = std::max<Bits>(want, bits_of(h[offset + i]) & static_cast<Bits>(~sign));
          const std::string what = std::string(two_phase ? "two-phase " : "cached ") +
                                   dtype_name(dtype_of<T>) + " absmax case " + std::to_string(c) +
                                   " n=" + std::to_string(n) + " offset " + std::to_string(offset) +
                                   " (" + tunedreduce::lookup<T>(Op::absmax, n).kernel_id + ")";
          Bits guard;
          std::memset(&guard, poison, sizeof guard);
          EXPECT_EQ(got[0], guard) << what << ": before d_out";
          EXPECT_EQ(got[2], guard) << what << ": after d_out";
          EXPECT_EQ(got[1], want) << what << std::hex << ": got bits 0x" << +got[1]
                                  << ", expected 0x" << +want;
        }
  }
}

TEST(Library, AbsmaxBothCallsEveryTypeSizeAndOffsetWithTheBuiltInDefaults) {
  use_defaults();
  check_absmax<float, std::uint32_t>(51);
  check_absmax<double, std::uint64_t>(52);
  check_absmax<__half, std::uint16_t>(53);
  check_absmax<__nv_bfloat16, std::uint16_t>(54);
}

/// absmax misuse: an integer type, a result of another type, an unknown C operator; refused
/// before anything launches, naming what is wrong.
TEST(Library, AbsmaxMisuseIsRefusedWithTheTypesNamed) {
  use_defaults();
  DeviceBuffer in(64 * sizeof(double)), out(4 * sizeof(double));
  std::size_t b = 0;
  expect_refused(
      [&] { tunedreduce::reduce(in.get(), out.get(), 8, DType::i32, Op::absmax, nullptr); },
      Status::invalid_argument, "absmax is defined for f32, f64, f16 and bf16 only, not dtype i32");
  expect_refused(
      [&] {
        tunedreduce::reduce<float, double>(nullptr, b, static_cast<const float*>(in.get()),
                                           static_cast<double*>(out.get()), 64, Op::absmax);
      },
      Status::invalid_argument, "returns f32");
  EXPECT_EQ(tr_absmax(in.get(), out.get(), 8, TR_U64, nullptr), TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("absmax"), std::string::npos) << tr_last_error();
  EXPECT_EQ(tr_reduce_cached(in.get(), out.get(), 8, TR_F32, 8, nullptr),
            TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("0..7"), std::string::npos) << tr_last_error();
  // The C call of a float: the largest magnitude, positive.
  const float h[4] = {1.5f, -7.25f, 3.0f, -0.0f};
  tunedreduce::test::upload(in.get(), h, sizeof h);
  ASSERT_EQ(tr_absmax(in.get(), out.get(), 4, TR_F32, nullptr), TR_SUCCESS) << tr_last_error();
  float r = 0;
  TR_CUDA_CHECK(cudaMemcpy(&r, out.get(), sizeof r, cudaMemcpyDeviceToHost));
  EXPECT_EQ(r, 7.25f);
}

/// argmin / argmax misuse: a plain result pointer, a half type, a result pointer not aligned to
/// 8 bytes, an unknown C operator; each refused before anything launches, naming what is wrong.
TEST(Library, ArgMinMaxMisuseIsRefusedWithTheReasonNamed) {
  use_defaults();
  DeviceBuffer in(64 * sizeof(double)), out(4 * sizeof(IndexedValue<double>));
  std::size_t b = 0;
  expect_refused(
      [&] {
        tunedreduce::reduce<float>(nullptr, b, static_cast<const float*>(in.get()),
                                   static_cast<float*>(out.get()), 64, Op::argmin);
      },
      Status::invalid_argument, "argmin writes an IndexedValue<f32>");
  expect_refused(
      [&] { tunedreduce::reduce(in.get(), out.get(), 8, DType::bf16, Op::argmax, nullptr); },
      Status::invalid_argument, "only, not dtype bf16");
  expect_refused(
      [&] {
        tunedreduce::reduce(in.get(), static_cast<unsigned char*>(out.get()) + 4, 8, DType::f32,
                            Op::argmin, nullptr);
      },
      Status::invalid_argument, "is not aligned to 8 bytes");
  // The typed two-phase reduce with an IndexedValue result: argmin and argmax only.
  auto* pair = static_cast<IndexedValue<float>*>(out.get());
  expect_refused(
      [&] {
        tunedreduce::reduce<float>(nullptr, b, static_cast<const float*>(in.get()), pair, 64,
                                   Op::sum);
      },
      Status::invalid_argument, "which only argmin and argmax write, not sum");
  b = 0;
  EXPECT_NO_THROW(tunedreduce::reduce<float>(nullptr, b, static_cast<const float*>(in.get()), pair,
                                             64, Op::argmax));
  EXPECT_EQ(tr_argmax(in.get(), out.get(), 8, TR_F16, nullptr), TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("argmax"), std::string::npos) << tr_last_error();
  EXPECT_EQ(tr_reduce_cached(in.get(), out.get(), 8, TR_F32, 8, nullptr),
            TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("0..7"), std::string::npos) << tr_last_error();
}

TEST(Library, HostAndOtherDevicePointersAreRefusedAndNothingLaunches) {
  use_defaults();
  DeviceBuffer in(1024 * sizeof(int)), out(sizeof(int));
  TR_CUDA_CHECK(cudaMemset(in.get(), 0, 1024 * sizeof(int)));
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, sizeof(int)));
  auto* d_out = static_cast<int*>(out.get());
  std::vector<int> host(1024, 1);
  expect_refused([&] { tunedreduce::sum(host.data(), d_out, host.size()); },
                 Status::invalid_argument, "is host memory");
  int* pinned = nullptr;
  TR_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), 1024 * sizeof(int)));
  expect_refused([&] { tunedreduce::sum(pinned, d_out, 1024); }, Status::invalid_argument,
                 "page-locked host memory");
  expect_refused([&] { tunedreduce::sum(static_cast<const int*>(in.get()), pinned, 1024); },
                 Status::invalid_argument, "d_out");
  TR_CUDA_CHECK(cudaFreeHost(pinned));
  expect_refused(
      [&] {
        tunedreduce::sum(static_cast<const int*>(in.get()), d_out, (std::uint64_t{1} << 40) + 1);
      },
      Status::unsupported, "exceeds the limit");
  int devices = 0;
  TR_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices > 1) {
    TR_CUDA_CHECK(cudaSetDevice(1));
    DeviceBuffer other(1024 * sizeof(int));
    TR_CUDA_CHECK(cudaSetDevice(0));
    expect_refused([&] { tunedreduce::sum(static_cast<const int*>(other.get()), d_out, 1024); },
                   Status::invalid_argument, "is memory of device 1, but the current device is 0");
  }
  TR_CUDA_CHECK(cudaSetDevice(0));
  TR_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char b[sizeof(int)];
  TR_CUDA_CHECK(cudaMemcpy(b, d_out, sizeof b, cudaMemcpyDeviceToHost));
  for (unsigned char c : b) EXPECT_EQ(c, poison) << "something was launched";
  if (devices < 2) std::printf("(one GPU: the other-device case is covered by tests/runtime)\n");
}

TEST(Library, ManyThreadsManyStreams) {
  const std::string db = sample_copy();
  if (!db.empty()) tunedreduce::set_database(db);
  constexpr int threads = 8, streams_per_thread = 4, calls = 48;
  const std::uint64_t n_max = 1 << 22;
  std::vector<std::int32_t> hi(n_max);
  std::vector<float> hf(n_max);
  fill_random(hi, test_seed() ^ 21);
  fill_random(hf, test_seed() ^ 22);
  DeviceBuffer di(n_max * 4), df(n_max * 4);
  tunedreduce::test::upload(di.get(), hi.data(), n_max * 4);
  tunedreduce::test::upload(df.get(), hf.data(), n_max * 4);
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        TR_CUDA_CHECK(cudaSetDevice(0));
        std::vector<cudaStream_t> ss(streams_per_thread);
        for (auto& s : ss) TR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        DeviceBuffer out(calls * 8);
        struct Call {
          bool is_float;
          Op op;
          std::uint64_t n;
        };
        std::vector<Call> cs;
        for (int c = 0; c < calls; ++c) {
          const std::uint64_t n = 1 + (splitmix64(test_seed() + t * 1000 + c) % n_max);
          const Call call{(c + t) % 2 == 0, plain_ops[(c / 2 + t) % 3], n};
          cs.push_back(call);
          cudaStream_t s = c % 5 == 4 ? cudaStreamPerThread : ss[c % streams_per_thread];
          if (call.is_float)
            run_op<float>(call.op, static_cast<const float*>(df.get()),
                          static_cast<float*>(out.get()) + 2 * c, n, s);
          else
            run_op<std::int32_t>(call.op, static_cast<const std::int32_t*>(di.get()),
                                 static_cast<std::int32_t*>(out.get()) + 2 * c, n, s);
        }
        TR_CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<unsigned char> got(calls * 8);
        TR_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost));
        for (int c = 0; c < calls; ++c) {
          const Call& call = cs[c];
          if (call.is_float) {
            float v;
            std::memcpy(&v, got.data() + 8 * c, 4);
            check_result<float>(call.op, hf.data(), call.n, v,
                                "thread " + std::to_string(t) + " call " + std::to_string(c));
          } else {
            std::int32_t v;
            std::memcpy(&v, got.data() + 8 * c, 4);
            check_result<std::int32_t>(call.op, hi.data(), call.n, v,
                                       "thread " + std::to_string(t) + " call " +
                                           std::to_string(c));
          }
        }
        for (auto& s : ss) {
          tunedreduce::release_workspace(s);
          TR_CUDA_CHECK(cudaStreamDestroy(s));
        }
      } catch (const std::exception& e) {
        ++failures;
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  use_defaults();
}

TEST(Library, EveryGpuAtOnce) {
  int devices = 0;
  TR_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) GTEST_SKIP() << "one GPU";
  use_defaults();
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int d = 0; d < devices; ++d)
    pool.emplace_back([&, d] {
      try {
        TR_CUDA_CHECK(cudaSetDevice(d));
        const std::uint64_t n = (1u << 20) + d;
        std::vector<std::uint64_t> host(n);
        fill_random(host, test_seed() ^ (100 + d));
        DeviceBuffer in(n * 8), out(8);
        tunedreduce::test::upload(in.get(), host.data(), n * 8);
        for (int rep = 0; rep < 20; ++rep) {
          tunedreduce::sum(static_cast<const std::uint64_t*>(in.get()),
                           static_cast<std::uint64_t*>(out.get()), n);
          std::uint64_t got = 0;
          TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
          check_result<std::uint64_t>(Op::sum, host.data(), n, got, "device " + std::to_string(d));
        }
        if (tunedreduce::lookup<std::uint64_t>(Op::sum, n).device != d) ++failures;
      } catch (const std::exception& e) {
        ++failures;
        std::fprintf(stderr, "device %d: %s\n", d, e.what());
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  TR_CUDA_CHECK(cudaSetDevice(0));
}

TEST(Library, TheCApiOnTheGpu) {
  use_defaults();
  const std::uint64_t n = 100003;
  std::vector<std::int64_t> host(n);
  fill_random(host, test_seed() ^ 31);
  DeviceBuffer in(n * 8), out(8);
  tunedreduce::test::upload(in.get(), host.data(), n * 8);
  ASSERT_EQ(tr_min(in.get(), out.get(), n, TR_I64, nullptr), TR_SUCCESS) << tr_last_error();
  std::int64_t got = 0;
  TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
  check_result<std::int64_t>(Op::min, host.data(), n, got, "tr_min i64");
  std::size_t bytes = 0;
  ASSERT_EQ(tr_reduce(nullptr, &bytes, in.get(), out.get(), n, TR_I64, TR_SUM, nullptr),
            TR_SUCCESS);
  DeviceBuffer temp(bytes);
  ASSERT_EQ(tr_reduce(temp.get(), &bytes, in.get(), out.get(), n, TR_I64, TR_SUM, nullptr),
            TR_SUCCESS)
      << tr_last_error();
  TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
  check_result<std::int64_t>(Op::sum, host.data(), n, got, "tr_reduce i64 sum");
  EXPECT_EQ(tr_sum(host.data(), out.get(), n, TR_I64, nullptr), TR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tr_last_error()).find("host memory"), std::string::npos);
  // The wide sum of the same bytes read as n int32 values (the low and high halves of the
  // int64s), into an int64, through tr_wide_sum and the two-phase tr_reduce with TR_WIDE_SUM.
  const auto* as32 = reinterpret_cast<const std::int32_t*>(host.data());
  std::uint64_t want = 0;
  for (std::uint64_t i = 0; i < n; ++i) want += static_cast<std::uint64_t>(std::int64_t{as32[i]});
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, 8));
  ASSERT_EQ(tr_wide_sum(in.get(), out.get(), n, TR_I32, nullptr), TR_SUCCESS) << tr_last_error();
  TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, static_cast<std::int64_t>(want)) << "tr_wide_sum i32";
  std::size_t wide_bytes = 0;
  ASSERT_EQ(tr_reduce(nullptr, &wide_bytes, in.get(), out.get(), n, TR_I32, TR_WIDE_SUM, nullptr),
            TR_SUCCESS);
  DeviceBuffer wide_temp(wide_bytes);
  TR_CUDA_CHECK(cudaMemset(out.get(), poison, 8));
  ASSERT_EQ(tr_reduce(wide_temp.get(), &wide_bytes, in.get(), out.get(), n, TR_I32, TR_WIDE_SUM,
                      nullptr),
            TR_SUCCESS)
      << tr_last_error();
  TR_CUDA_CHECK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, static_cast<std::int64_t>(want)) << "tr_reduce i32 wide_sum";
}

}  // namespace
}  // namespace tunedreduce::test

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
