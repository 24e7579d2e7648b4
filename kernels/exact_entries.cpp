// The exact families' entries whose first pass this build compiled (all of them but in a
// deployment build, exact/CMakeLists.txt): Entry::launch builds the entry's ExactLaunch
// (kernels/exact_geometry.hpp) and calls exact::exact_sum; the grid is persistent, the occupancy
// calculator's resident blocks per multiprocessor on every multiprocessor (exact/occupancy.hpp),
// which exact_sum caps by the work; the workspace is what exact_sum's size query says.

#include "kernels/exact_entries.hpp"

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "exact/occupancy.hpp"
#include "exact/sum.hpp"
#include "exact/temp_size.hpp"
#include "kernels/counters.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/geometry.hpp"
#include "kernels/space.hpp"

namespace tunedreduce::kernels::detail {

namespace {

constexpr int max_devices = 64;

template <KernelParams P>
struct ExactDispatch {
  static_assert(is_exact_family(P.family) && P.op == Op::exact_sum);
  /// The input's element type; the result's is T (float for the half types).
  using In = dtype_t<P.dtype>;
  using T = dtype_t<result_dtype(P.dtype, Op::exact_sum)>;

  /// Once per device, as Dispatch does; the thread limit when the calculator cannot say.
  static int resident_blocks_per_sm(const DeviceLimits& dev) {
    static std::atomic<int> cache[max_devices];
    const int slot = dev.ordinal >= 0 && dev.ordinal < max_devices ? dev.ordinal : -1;
    if (slot >= 0) {
      const int cached = cache[slot].load(std::memory_order_relaxed);
      if (cached > 0) return cached;
    }
    int blocks = 0;
    if (exact::resident_blocks_per_sm(P.dtype, exact_geometry::launch_config(P), blocks) !=
            cudaSuccess ||
        blocks <= 0) {
      (void)cudaGetLastError();  // not sticky
      blocks = geometry::estimated_resident_blocks(P, dev);
    } else if (slot >= 0) {
      cache[slot].store(blocks, std::memory_order_relaxed);
    }
    return blocks;
  }

  static exact::ExactLaunch config(std::uint64_t n, const DeviceLimits& dev) {
    exact::ExactLaunch c = exact_geometry::launch_config(P);
    // The grid from the registry's device limits, so that the size query, the launch and
    // Entry::grid_size agree (exact_sum would otherwise ask the current device).
    c.grid_blocks =
        static_cast<unsigned>(exact_geometry::launch_grid(P, n, dev, resident_blocks_per_sm(dev)));
    return c;
  }

  /// exact_sum's size query at an input aligned to 16 bytes: the query reads d_in's address
  /// only, and that alignment gives the most loads, so the most blocks, of any.
  static std::size_t workspace_bytes(std::uint64_t n, const DeviceLimits& dev) {
    if (n == 0 || n > max_elements_of(P)) return 0;
    const auto* aligned = reinterpret_cast<const In*>(std::uintptr_t{256});
    std::size_t bytes = 0;
    if (exact::exact_sum(aligned, nullptr, n, nullptr, bytes, nullptr, config(n, dev)) !=
        cudaSuccess)
      return exact_geometry::workspace_bytes(P, n, dev, resident_blocks_per_sm(dev));
    return bytes;
  }

  static cudaError_t launch(const LaunchArgs& a, const DeviceLimits& dev) {
    if (a.n == 0) return cudaMemsetAsync(a.out, 0, sizeof(T), a.stream);  // +0
    if (a.n > max_elements_of(P) || !a.in || !a.out || !a.workspace) return cudaErrorInvalidValue;
    exact::ExactLaunch c = config(a.n, dev);
    if constexpr (P.finish == Finish::single_pass) {
      // exact_sum's ticket and accumulator (exact/temp_size.hpp's finish_bytes) are zero on
      // entry and left zero. The external counter is the start of counter_stride_words words,
      // zero on entry and left zero by every launch (kernels/counters.hpp). A clean workspace's
      // ticket area is zero too. Otherwise exact_sum zeroes them in the workspace first.
      static_assert(counter_stride_words * sizeof(unsigned long long) >=
                    exact::temp_size::finish_bytes<double>);
      if (a.counter) c.counter = reinterpret_cast<unsigned*>(a.counter);
      else if (a.workspace_clean) c.counter = static_cast<unsigned*>(a.workspace);
    }
    std::size_t bytes = a.workspace_bytes;
    return exact::exact_sum(static_cast<const In*>(a.in), static_cast<T*>(a.out), a.n, a.workspace,
                            bytes, a.stream, c);
  }
};

template <DType D>
inline constexpr auto exact_configs_v = space::configs<D, Op::exact_sum>();

template <const auto& Configs, std::size_t... I>
std::span<const Entry> make_entries(std::index_sequence<I...>) {
  static const Entry table[] = {Entry{Configs[I], nullptr, &ExactDispatch<Configs[I]>::launch,
                                      &ExactDispatch<Configs[I]>::resident_blocks_per_sm,
                                      &ExactDispatch<Configs[I]>::workspace_bytes}...};
  return table;
}

template <DType D>
std::span<const Entry> entries_of() {
  return make_entries<exact_configs_v<D>>(std::make_index_sequence<exact_configs_v<D>.size()>{});
}

}  // namespace

std::span<const Entry> exact_entries() {
  static const std::vector<Entry> all = [] {
    std::vector<Entry> v;
    const auto add = [&v](std::span<const Entry> entries) {
      for (const Entry& e : entries) {
        // A deployment build compiles the first passes of its list's exact entries alone.
        if (exact::has_first_pass(e.params.dtype, exact_geometry::launch_config(e.params))) {
          v.push_back(e);
        }
      }
    };
    for_each_dtype([&](auto d) {
      if constexpr (op_applies(d.value, Op::exact_sum)) add(entries_of<d.value>());
    });
    return v;
  }();
  return all;
}

}  // namespace tunedreduce::kernels::detail
