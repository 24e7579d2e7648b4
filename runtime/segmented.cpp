// The segmented reductions of the public API (tunedreduce/segmented.hpp): argument checks, the
// choice of kernel (runtime/segmented_rules.hpp) and the launch, through the workspace cache
// (cached call) or the caller's storage (two-phase call).

#include <fmt/format.h>

#include <algorithm>

#include "common/names.hpp"
#include "runtime/runtime.hpp"
#include "runtime/segmented_rules.hpp"

namespace tunedreduce::runtime {

namespace seg = kernels::segmented;

struct Runtime::SegResolved {
  int device = -1;
  const DeviceState* state = nullptr;
  const seg::SegEntry* entry = nullptr;
  seg::SegProblem problem;
  SegPick pick;
};

namespace {

constexpr std::uint64_t max_span = std::uint64_t{1} << 62;

void check_segments(const Segments& s, DType dtype, Op op) {
  check_enums(dtype, op);
  if (!seg::seg_op_applies(dtype, op))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("op {} has no segmented kernels (every operator but exact_sum "
                                  "has)",
                                  op_name(op)));
  const int l = static_cast<int>(s.layout);
  if (l < 0 || l > static_cast<int>(SegmentLayout::offsets64))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("seg.layout {} is not a SegmentLayout (0 rows, 1 offsets32, 2 "
                                  "offsets64)",
                                  l));
  if (s.count > seg::max_segments)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("seg.count = {} is more than the {} segments one call takes",
                                  s.count, seg::max_segments));
  if (s.layout == SegmentLayout::rows) {
    const std::uint64_t stride = s.stride ? s.stride : s.size;
    if (s.count > 1 && stride < s.size)
      throw ReduceError(Status::invalid_argument,
                        fmt::format("seg.stride = {} is smaller than seg.size = {} (rows overlap)",
                                    stride, s.size));
    if (s.count > 0 && s.size > 0 &&
        (s.size > max_span ||
         (s.count - 1) > (max_span - s.size) / std::max<std::uint64_t>(stride, 1)))
      throw ReduceError(Status::invalid_argument,
                        fmt::format("seg.count = {} rows of seg.size = {} elements, seg.stride = "
                                    "{} apart, span more than 2^62 elements",
                                    s.count, s.size, stride));
  }
}

/// One row of the rows layout is a whole-array reduction of its elements, and the library runs
/// the whole-array path for it (its tuned winners or rules, both calls, graph capture alike): on
/// the H200 (f32 sum, cold L2, built-in rules) 4.90 / 5.92 / 19.97 µs at 2^16 / 2^20 / 2^24
/// elements where the split family took 6.0 / 6.9 / 22.8, level at 2^28 (docs/performance.md
/// 3.45).
bool one_row(const Segments& s) { return s.layout == SegmentLayout::rows && s.count == 1; }

/// Bytes and alignment of one result of (dtype, op).
std::size_t result_alignment(DType dtype, Op op) {
  return is_arg_op(op) ? 8 : dtype_size(result_dtype(dtype, op));
}

}  // namespace

Runtime::SegResolved Runtime::prepare_segmented(const void* d_in, const void* d_out,
                                                const Segments& s, DType dtype, Op op) {
  check_segments(s, dtype, op);
  SegResolved r;
  r.problem = seg_problem_of(s);
  const bool rows = s.layout == SegmentLayout::rows;
  // Null pointers first: no CUDA call is made for them.
  if (!d_out) throw ReduceError(Status::invalid_argument, "d_out is a null pointer");
  const bool reads_input = !rows || s.size > 0;
  if (!d_in && reads_input)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("d_in is a null pointer ({} segments)", s.count));
  if (!rows && (!s.begin || !s.end))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("seg.{} is a null pointer (the offsets of {} segments)",
                                  s.begin ? "end" : "begin", s.count));
  r.device = platform_->current_device();
  r.state = &device_state(r.device);
  if (reads_input) check_pointer("d_in", d_in, r.device, dtype_size(dtype));
  check_pointer("d_out", d_out, r.device, result_alignment(dtype, op));
  if (!rows) {
    const std::size_t off = s.layout == SegmentLayout::offsets32 ? 4 : 8;
    check_pointer("seg.begin", s.begin, r.device, off);
    check_pointer("seg.end", s.end, r.device, off);
  }
  const std::size_t alignment = reads_input ? alignment_of(d_in) : 256;
  r.pick = pick_segmented(*r.state, dtype, op, s, alignment);
  r.entry = r.pick.entry;
  if (!r.entry)
    throw ReduceError(Status::unsupported,
                      fmt::format("this library has no segmented kernel '{}' ({}): it was built "
                                  "without the segmented kernels (TUNEDREDUCE_SEGMENTED=OFF)",
                                  seg::make_seg_id(r.pick.params), r.pick.rule));
  if (auto why = r.entry->can_implement(r.problem, alignment, r.state->info.limits))
    throw ReduceError(Status::unsupported,
                      fmt::format("segmented kernel '{}' cannot run this reduction: {}",
                                  r.entry->id, *why));
  return r;
}

Runtime::SegPick Runtime::pick_segmented(const DeviceState& st, DType dtype, Op op,
                                         const Segments& s, std::size_t in_alignment) const {
  SegPick pick;
  const seg::SegLayout layout = seg_layout_of(s.layout);
  // The tuned plane's size axis: a row's elements, or the mean length the caller gave for
  // offsets whose lengths stay close to it (else the rules' balanced family: the tuner measures
  // segments of equal lengths).
  const std::uint64_t size = s.layout == SegmentLayout::rows ? s.size : s.mean_length;
  if (size > 0 && s.count > 0 && !lengths_may_spread(s)) {
    const SegChoice c =
        st.table.choose_segmented(dtype, op, layout, size, s.count, preferred_mode());
    if (c.entry) {
      if (auto why = c.entry->can_implement(seg_problem_of(s), in_alignment, st.info.limits)) {
        pick.rule =
            fmt::format("the tuned kernel '{}' cannot run this call ({}); ", c.entry->id, *why);
      } else {
        pick.params = c.entry->params;
        pick.entry = c.entry;
        pick.tuned = c;
        return pick;
      }
    }
  }
  std::string rule;
  pick.params = builtin_segmented(dtype, op, s, in_alignment, st.info.limits, rule);
  pick.rule += rule;
  pick.entry = seg::find_seg(pick.params);
  return pick;
}

SegmentedConfig Runtime::lookup_segmented(DType dtype, Op op, const Segments& s, int device) {
  check_segments(s, dtype, op);
  if (one_row(s)) {
    // The whole-array reduction's configuration (its lookup: the cached call's).
    const Config w = lookup(dtype, op, s.size, device);
    SegmentedConfig c;
    c.kernel_id = w.kernel_id;
    c.family = "whole";
    c.block = w.block;
    c.group = w.block;
    c.vec = 1;
    c.level = w.level;
    c.size_lo = w.n_lo;
    c.size_hi = w.n_hi;
    c.count_lo = c.count_hi = w.level == Level::builtin_default ? 0 : 1;
    c.source = w.source;
    c.tuned_on = w.tuned_on;
    c.tuned_median_us = w.tuned_median_us;
    c.cache_state = w.cache_state;
    c.stale = w.stale;
    c.device = w.device;
    return c;
  }
  const DeviceState& st = lookup_state(device);
  const SegPick pick = pick_segmented(st, dtype, op, s, 256);
  const seg::SegParams& p = pick.params;
  // The strings live as long as the process: a small set of distinct texts.
  static std::mutex m;
  static std::set<std::string> texts;
  std::lock_guard lk(m);
  auto keep = [&](const std::string& t) { return texts.insert(t).first->c_str(); };
  SegmentedConfig c;
  c.kernel_id = keep(seg::make_seg_id(p));
  c.family = seg::seg_family_name(p.family);
  c.block = p.block;
  c.group = p.group;
  c.vec = p.vec;
  const seg::SegEntry probe{p, nullptr, nullptr};
  c.blocks_per_segment = probe.blocks_per_segment(seg_problem_of(s), st.info.limits);
  if (const db::SegSnapshotEntry* row = pick.tuned.row) {
    c.level = pick.tuned.level;
    c.size_lo = row->size_lo;
    c.size_hi = row->size_hi;
    c.count_lo = row->count_lo;
    c.count_hi = row->count_hi;
    c.source = st.source.c_str();
    c.tuned_on = row->device_key.c_str();
    c.tuned_median_us = row->median_us;
    c.cache_state = static_cast<CacheState>(row->l2_mode);
    c.stale = row->stale(st.info.fingerprint.driver_version, st.info.fingerprint.runtime_version);
  } else {
    c.source = keep(pick.entry ? "built-in: " + pick.rule : "not in this library: " + pick.rule);
  }
  c.device = st.device;
  return c;
}

void Runtime::check_offsets(const Segments& s, const SegResolved& r, cudaStream_t stream) {
  if (!s.check || s.layout == SegmentLayout::rows) return;
  if (platform_->capturing(stream))
    throw ReduceError(Status::unsupported,
                      "checked offsets (Segments::checked()) make the call wait for the check's "
                      "verdict, which a stream under CUDA graph capture cannot: check them "
                      "before the capture, and capture the unchecked call");
  const bool wide = s.layout == SegmentLayout::offsets64;
  seg::OffsetsVerdict v;
  if (cudaError_t e = platform_->find_bad_offsets(wide, s.begin, s.end, s.count, stream, v);
      e != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      fmt::format("checking the offsets of {} segments on device {} failed: {}",
                                  s.count, r.device, platform_->error_text(e)));
  if (!v.bad) return;
  if (v.begin < 0)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("segment {} begins at a negative offset (seg.begin[{}] = {}); "
                                  "nothing was reduced",
                                  v.segment, v.segment, v.begin));
  throw ReduceError(Status::invalid_argument,
                    fmt::format("segment {} ends before it begins (seg.begin[{}] = {}, "
                                "seg.end[{}] = {}); nothing was reduced",
                                v.segment, v.segment, v.begin, v.segment, v.end));
}

unsigned long long* Runtime::split_counter(const seg::SegEntry& entry, int device,
                                           const void* workspace) {
  // The split family finishes in its last block behind the library's counter for this
  // workspace (kernels/counters.hpp): one kernel instead of two. Without one (a full table) it
  // launches its finishing kernel. The balanced family takes its scan's ticket on it (without
  // one, on a word of its workspace, zeroed by a memset first).
  if (!seg::takes_counter(entry.params.family)) return nullptr;
  std::string why;
  unsigned long long* counter = temp_counters_.counter(device, workspace, why);
  if (!why.empty()) logger_->warn("{}", why);  // once per device (TempCounters says it once)
  return counter;
}

void Runtime::segmented_reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
                               const Segments& s, DType dtype, Op op, cudaStream_t stream) {
  if (one_row(s)) {
    check_segments(s, dtype, op);
    reduce(d_temp, temp_bytes, d_in, d_out, s.size, dtype, op, stream);
    return;
  }
  if (!d_temp) {
    // Size query: the problem is checked, no pointer, nothing is enqueued.
    check_segments(s, dtype, op);
    if (s.count == 0) {
      temp_bytes = 1;
      return;
    }
    const DeviceState& st = device_state(platform_->current_device());
    // The alignment of d_in is not known yet, and a tuned kernel that cannot run a less aligned
    // input (the tile family) gives way to the rules' kernel: enough for either, so that the
    // launch with any valid d_in (aligned to its element at least) finds its storage enough.
    std::size_t need = 1;
    for (const std::size_t alignment :
         {std::size_t{256}, static_cast<std::size_t>(dtype_size(dtype))}) {
      const SegPick pick = pick_segmented(st, dtype, op, s, alignment);
      const seg::SegEntry probe{pick.params, nullptr, nullptr};
      need = std::max(need, probe.workspace_bytes(seg_problem_of(s), st.info.limits));
    }
    temp_bytes = need;
    return;
  }
  if (s.count == 0) {
    check_segments(s, dtype, op);
    return;
  }
  const SegResolved r = prepare_segmented(d_in, d_out, s, dtype, op);
  const std::size_t need =
      std::max<std::size_t>(r.entry->workspace_bytes(r.problem, r.state->info.limits), 1);
  check_pointer("d_temp", d_temp, r.device, 256);
  if (temp_bytes < need)
    throw ReduceError(Status::temp_too_small,
                      fmt::format("temp_bytes = {} is smaller than the {} bytes segmented kernel "
                                  "'{}' needs (ask with d_temp == nullptr first)",
                                  temp_bytes, need, r.entry->id));
  check_offsets(s, r, stream);
  seg::SegLaunchArgs a;
  a.in = d_in;
  a.out = d_out;
  a.problem = r.problem;
  a.workspace = d_temp;
  a.workspace_bytes = temp_bytes;
  a.stream = stream;
  a.counter = split_counter(*r.entry, r.device, d_temp);
  if (cudaError_t e = platform_->launch_segmented(*r.entry, a, r.state->info.limits);
      e != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      fmt::format("launching segmented kernel '{}' on device {} failed: {}",
                                  r.entry->id, r.device, platform_->error_text(e)));
}

void Runtime::segmented_reduce(const void* d_in, void* d_out, const Segments& s, DType dtype, Op op,
                               cudaStream_t stream) {
  if (one_row(s)) {
    check_segments(s, dtype, op);
    reduce(d_in, d_out, s.size, dtype, op, stream);
    return;
  }
  if (s.count == 0) {
    check_segments(s, dtype, op);
    return;
  }
  const SegResolved r = prepare_segmented(d_in, d_out, s, dtype, op);
  check_offsets(s, r, stream);
  seg::SegLaunchArgs a;
  a.in = d_in;
  a.out = d_out;
  a.problem = r.problem;
  a.stream = stream;
  const std::size_t need = r.entry->workspace_bytes(r.problem, r.state->info.limits);
  cudaError_t e;
  if (need == 0) {
    e = platform_->launch_segmented(*r.entry, a, r.state->info.limits);
  } else {
    // The split family's partials overwrite the whole-array kernels' counter and slots: the
    // next launch on this workspace zeroes what it needs first (leaves_clean = false).
    e = workspaces_.run(
        r.device, stream, need,
        [&](void* ws, std::size_t bytes, bool) {
          a.workspace = ws;
          a.workspace_bytes = bytes;
          a.counter = split_counter(*r.entry, r.device, ws);
          return platform_->launch_segmented(*r.entry, a, r.state->info.limits);
        },
        /*leaves_clean=*/false);
  }
  if (e != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      fmt::format("launching segmented kernel '{}' on device {} failed: {}",
                                  r.entry->id, r.device, platform_->error_text(e)));
}

}  // namespace tunedreduce::runtime
