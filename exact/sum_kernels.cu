// exact_sum's launcher (exact/sum.hpp), the occupancy query of its first passes
// (exact/occupancy.hpp), the table of the compiled first passes they launch (exact/first_pass.hpp;
// the instances are in generated translation units, exact/CMakeLists.txt) and the two finishes.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "exact/first_pass.hpp"
#include "exact/occupancy.hpp"
#include "exact/sum.hpp"
#include "exact/sum_kernels.cuh"
#include "exact/temp_size.hpp"

namespace tunedreduce::exact::detail {

#include "first_pass_index.inc"

std::span<const FirstPass> compiled_first_passes() {
  static const std::vector<FirstPass> all = [] {
    std::vector<FirstPass> v;
    for (const auto part : first_pass_parts) {
      for (const FirstPass& f : part()) v.push_back(f);
    }
    return v;
  }();
  return all;
}

namespace {

/// A knob's index among its values (-1 if none): block 128, 256, 512; vector 1, 2, 4, 8; unroll
/// 1, 2, 4; expansion float and halves 1, 2, double 2, 3; element type f32, f64, f16, bf16.
template <std::size_t N>
int index_of(int value, const std::array<int, N>& values) {
  const auto* it = std::find(values.begin(), values.end(), value);
  return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

/// The first pass's slot of the lookup table, or -1 for knobs exact_sum does not have.
int slot_of(DType dtype, int block_threads, int vector, int unroll, int expansion, bool registers) {
  const int d = index_of(static_cast<int>(dtype),
                         std::array{static_cast<int>(DType::f32), static_cast<int>(DType::f64),
                                    static_cast<int>(DType::f16), static_cast<int>(DType::bf16)});
  const int b = index_of(block_threads, std::array{128, 256, 512});
  const int v = index_of(vector, std::array{1, 2, 4, 8});
  const int u = index_of(unroll, std::array{1, 2, 4});
  const int e = index_of(expansion, dtype == DType::f64 ? std::array{2, 3} : std::array{1, 2});
  if (d < 0 || b < 0 || v < 0 || u < 0 || e < 0) return -1;
  return (((((d * 3 + b) * 4 + v) * 3 + u) * 2 + e) * 2) + int{registers};
}

constexpr std::size_t kSlots = 4 * 3 * 4 * 3 * 2 * 2;

}  // namespace

const FirstPass* find_first_pass(DType dtype, int block_threads, int vector, int unroll,
                                 int expansion, bool registers) {
  static const std::array<const FirstPass*, kSlots> table = [] {
    std::array<const FirstPass*, kSlots> t{};
    for (const FirstPass& f : compiled_first_passes()) {
      const int slot =
          slot_of(f.dtype, f.block_threads, f.vector, f.unroll, f.expansion, f.registers);
      if (slot >= 0) t[static_cast<std::size_t>(slot)] = &f;
    }
    return t;
  }();
  const int slot = slot_of(dtype, block_threads, vector, unroll, expansion, registers);
  return slot < 0 ? nullptr : table[static_cast<std::size_t>(slot)];
}

}  // namespace tunedreduce::exact::detail

namespace tunedreduce::exact {

namespace {

thread_local std::string last_error;

cudaError_t invalid(std::string what) {
  last_error = std::move(what);
  return cudaErrorInvalidValue;
}

/// The workspace (exact/temp_size.hpp): single_pass's ticket and accumulator, then two_pass's
/// slots (8-byte words).
constexpr std::size_t kTicketBytes = temp_size::ticket_bytes;
constexpr unsigned kFinishThreads = 512;
/// The finish sums a word of each block's slot (below 2^43, see exact_sum_blocks) in an int64.
constexpr std::uint64_t kMaxBlocks = std::uint64_t{1} << 19;

/// Fills in cfg's defaults for In (the widest load; expansion float and halves 2, double 3;
/// chunks float and halves registers, double local), checks the knobs that name a first pass
/// and sets \p pass to the compiled one. Returns what is wrong ("" if nothing): exact_sum's
/// launch and its occupancy query (resident_blocks) both start here, so they name the same
/// instance.
template <class In>
std::string normalise(ExactLaunch& cfg, const detail::FirstPass*& pass) {
  pass = nullptr;
  constexpr bool is_double = std::is_same_v<In, double>;
  constexpr bool is_half = detail::is_half_input_v<In>;
  const char* type = detail::InputOf<In>::name;
  if (cfg.block_threads != 128 && cfg.block_threads != 256 && cfg.block_threads != 512) {
    return "exact_sum: block_threads " + std::to_string(cfg.block_threads) +
           " is not 128, 256 or 512";
  }
  const int max_vector = is_half ? 8 : is_double ? 2 : 4;
  if (cfg.vector == 0) cfg.vector = max_vector;  // the default: the widest load
  if (is_half ? cfg.vector != 8 : cfg.vector != 1 && cfg.vector != 2 && cfg.vector != max_vector) {
    return std::string("exact_sum: vector ") + std::to_string(cfg.vector) + " for " + type +
           " is not " +
           (is_half     ? "8"
            : is_double ? "1 or 2"
                        : "1, 2 or 4");
  }
  if (cfg.unroll != 1 && cfg.unroll != 2 && cfg.unroll != 4) {
    return "exact_sum: unroll " + std::to_string(cfg.unroll) + " is not 1, 2 or 4";
  }
  const int small_expansion = is_double ? 2 : 1;
  if (cfg.expansion == 0) cfg.expansion = small_expansion + 1;  // the default: float 2, double 3
  if (cfg.expansion != small_expansion && cfg.expansion != small_expansion + 1) {
    return "exact_sum: expansion " + std::to_string(cfg.expansion) + " for " + type + " is not " +
           (is_double ? "2 or 3" : "1 or 2");
  }
  if (cfg.chunks == ExactChunks::automatic) {
    cfg.chunks = is_double ? ExactChunks::local : ExactChunks::registers;
  }
  if (cfg.chunks != ExactChunks::registers && cfg.chunks != ExactChunks::local) {
    return "exact_sum: chunks " + std::to_string(static_cast<int>(cfg.chunks)) +
           " is not automatic, registers or local";
  }
  if (is_double && cfg.chunks == ExactChunks::registers) {
    return "exact_sum: chunks registers for double (66 chunks): only local";
  }
  const bool registers = cfg.chunks == ExactChunks::registers;
  pass = detail::find_first_pass(detail::InputOf<In>::dtype, cfg.block_threads, cfg.vector,
                                 cfg.unroll, cfg.expansion, registers);
  if (pass == nullptr) {
    return std::string("exact_sum: the first pass for ") + type + ", block_threads " +
           std::to_string(cfg.block_threads) + ", vector " + std::to_string(cfg.vector) +
           ", unroll " + std::to_string(cfg.unroll) + ", expansion " +
           std::to_string(cfg.expansion) + ", chunks " + (registers ? "registers" : "local") +
           " is not in this library (a deployment build has those of its kernel list's exact "
           "entries and the built-in rules')";
  }
  return "";
}

/// In: the input's element type; T: the accumulator's and the result's (AccumOf<In>).
template <class In, class T = detail::AccumOf<In>>
cudaError_t exact_sum_impl(const In* d_in, T* d_out, std::uint64_t n, void* d_temp,
                           std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg) {
  const char* type = detail::InputOf<In>::name;
  const detail::FirstPass* pass = nullptr;
  if (std::string why = normalise<In>(cfg, pass); !why.empty()) return invalid(std::move(why));
  if (cfg.grid_blocks == 0 && cfg.blocks_per_sm < 1) {
    return invalid("exact_sum: blocks_per_sm " + std::to_string(cfg.blocks_per_sm) +
                   " is below 1 and grid_blocks is 0");
  }
  if (cfg.finish != ExactFinish::two_pass && cfg.finish != ExactFinish::single_pass) {
    return invalid("exact_sum: finish " + std::to_string(static_cast<int>(cfg.finish)) +
                   " is neither two_pass nor single_pass");
  }
  const auto address = reinterpret_cast<std::uintptr_t>(d_in);
  if (n > 0 && d_in == nullptr) return invalid("exact_sum: d_in is null and n is not 0");
  if (address % sizeof(In) != 0) {
    return invalid(std::string("exact_sum: d_in is not aligned to its ") + type);
  }
  if (n >= (std::uint64_t{1} << 40)) {
    return invalid("exact_sum: n " + std::to_string(n) + " is 2^40 or more");
  }
  if (n == 0) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    if (d_out == nullptr) return invalid("exact_sum: d_out is null");
    return cudaMemsetAsync(d_out, 0, sizeof(T), stream);  // +0
  }

  // The vectors start at the first kVector-aligned element.
  const std::uint64_t vector_bytes = sizeof(In) * static_cast<unsigned>(cfg.vector);
  const std::uint64_t head = std::min<std::uint64_t>(n, (vector_bytes - address % vector_bytes) %
                                                            vector_bytes / sizeof(In));
  const std::uint64_t vectors = (n - head) / static_cast<unsigned>(cfg.vector);

  std::uint64_t grid = cfg.grid_blocks;
  if (grid == 0) {
    int device = 0;
    int sms = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess) {
      return e;
    }
    grid = static_cast<std::uint64_t>(cfg.blocks_per_sm) * static_cast<unsigned>(sms);
  }
  if (grid > kMaxBlocks) {
    return invalid("exact_sum: a grid of " + std::to_string(grid) + " blocks is above 2^19");
  }
  // No block without a round of loads to make: a block reads block_threads × unroll vectors a
  // round. (Rounding up to whole rounds lets n up to one block's round, 2^11 floats or 2^10
  // doubles at 512 threads × 2, take the one-block path: no slots, ticket or finish.)
  const std::uint64_t per_round =
      static_cast<std::uint64_t>(cfg.block_threads) * static_cast<unsigned>(cfg.unroll);
  grid = std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid,
                                                            (vectors + per_round - 1) / per_round));

  static_assert(temp_size::slot_words<T> == detail::kSlotWords<T>);
  const std::size_t needed = temp_size::bytes<T>(grid, cfg.finish == ExactFinish::two_pass);
  const auto blocks = static_cast<unsigned>(grid);
  if (d_temp == nullptr) {
    temp_bytes = needed;
    return cudaSuccess;
  }
  if (temp_bytes < needed) {
    return invalid("exact_sum: temp_bytes " + std::to_string(temp_bytes) + " is below the " +
                   std::to_string(needed) + " this call needs");
  }
  if (reinterpret_cast<std::uintptr_t>(d_temp) % 8 != 0) {
    return invalid("exact_sum: d_temp is not 8-byte aligned");
  }
  if (d_out == nullptr) return invalid("exact_sum: d_out is null");

  if (reinterpret_cast<std::uintptr_t>(cfg.counter) % 8 != 0) {
    return invalid("exact_sum: counter is not 8-byte aligned");
  }

  // One block rounds its own sum (exact_sum_blocks): no ticket, no finish kernel.
  const bool one_block = blocks == 1;
  const bool single = cfg.finish == ExactFinish::single_pass || one_block;
  auto* ticket = cfg.counter != nullptr ? cfg.counter : static_cast<unsigned*>(d_temp);
  auto* slots = reinterpret_cast<std::int64_t*>(static_cast<char*>(d_temp) + kTicketBytes);
  if (single && !one_block && cfg.counter == nullptr) {
    if (const cudaError_t e = cudaMemsetAsync(ticket, 0, temp_size::finish_bytes<T>, stream);
        e != cudaSuccess) {
      return e;
    }
  }
  unsigned* const pass_ticket = single && !one_block ? ticket : nullptr;
  const detail::FirstPassArgs args{.in = d_in,
                                   .n = n,
                                   .head = head,
                                   .vectors = vectors,
                                   .slots = slots,
                                   .ticket = pass_ticket,
                                   .out = d_out,
                                   .blocks = blocks,
                                   .stream = stream};
  if (const cudaError_t e = pass->launch(args); e != cudaSuccess) return e;
  if (single) return cudaSuccess;
  detail::exact_sum_finish<T, kFinishThreads>
      <<<1, kFinishThreads, 0, stream>>>(slots, blocks, d_out);
  return cudaGetLastError();
}

}  // namespace

cudaError_t exact_sum(const float* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg) {
  return exact_sum_impl(d_in, d_out, n, d_temp, temp_bytes, stream, cfg);
}

cudaError_t exact_sum(const double* d_in, double* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg) {
  return exact_sum_impl(d_in, d_out, n, d_temp, temp_bytes, stream, cfg);
}

cudaError_t exact_sum(const __half* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg) {
  return exact_sum_impl(d_in, d_out, n, d_temp, temp_bytes, stream, cfg);
}

cudaError_t exact_sum(const __nv_bfloat16* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg) {
  return exact_sum_impl(d_in, d_out, n, d_temp, temp_bytes, stream, cfg);
}

const char* exact_sum_error_text() { return last_error.c_str(); }

namespace {

/// The compiled first pass of (dtype, cfg), or null (normalise refuses it, or dtype is not one
/// exact_sum sums).
const detail::FirstPass* pass_of(DType dtype, ExactLaunch cfg) {
  const detail::FirstPass* pass = nullptr;
  switch (dtype) {
    case DType::f32:
      (void)normalise<float>(cfg, pass);
      break;
    case DType::f64:
      (void)normalise<double>(cfg, pass);
      break;
    case DType::f16:
      (void)normalise<__half>(cfg, pass);
      break;
    case DType::bf16:
      (void)normalise<__nv_bfloat16>(cfg, pass);
      break;
    default:
      break;
  }
  return pass;
}

}  // namespace

cudaError_t resident_blocks_per_sm(DType dtype, const ExactLaunch& cfg, int& blocks) {
  blocks = 0;
  const detail::FirstPass* pass = pass_of(dtype, cfg);
  return pass == nullptr ? cudaErrorInvalidValue : pass->resident_blocks(blocks);
}

bool has_first_pass(DType dtype, const ExactLaunch& cfg) { return pass_of(dtype, cfg) != nullptr; }

}  // namespace tunedreduce::exact
