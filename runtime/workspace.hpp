#pragma once
// The workspace that tunedreduce::sum/min/max use: one per (device, stream), allocated, grown
// and freed in stream order, so a call never synchronises and growing never frees memory that a
// kernel still in flight uses. It is zeroed whole once when it is allocated; every single-pass or
// packed launch leaves its counter and partial slots at zero again, so launches run with
// workspace_clean = true (after an exact family's launch, which leaves its slots written, the
// next launch zeroes what it uses first).
//
// A stream being captured into a CUDA graph gets none of this: a call recorded into a graph gets
// a workspace of its own, allocated and freed inside the graph (a graph-owned allocation, needs
// stream-ordered allocation), so the graph neither outlives nor shares the cache's memory.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <tuple>
#include <type_traits>

#include "runtime/platform.hpp"

namespace tunedreduce::runtime {

class WorkspaceCache {
 public:
  explicit WorkspaceCache(Platform& platform);
  WorkspaceCache(const WorkspaceCache&) = delete;
  WorkspaceCache& operator=(const WorkspaceCache&) = delete;

  /// Grows the workspace of (device, stream) to \p bytes if needed, then calls
  /// use(workspace, bytes held, clean) with the slot locked, so no other thread enqueues a free
  /// of this memory before use's launches; `clean` says the counter is known to be zero.
  /// \p leaves_clean: whether use's launches leave the counter and partial slots zero, as the
  /// registry's kernels do, except the exact families' (exact_sum writes its slots and leaves
  /// them): after those the next launch zeroes what it needs first.
  /// Throws ReduceError(cuda_error) when an allocation fails; returns use's result.
  template <class F>
  cudaError_t run(int device, cudaStream_t stream, std::size_t bytes, F&& use,
                  bool leaves_clean = true) {
    return run_erased(
        device, stream, bytes, &use,
        [](void* ctx, void* ws, std::size_t b, bool c) {
          return (*static_cast<std::remove_reference_t<F>*>(ctx))(ws, b, c);
        },
        leaves_clean);
  }

  /// Frees the workspace of (device, stream) in stream order. Throws ReduceError(invalid_argument)
  /// when \p stream is being captured (the free would become a node of the graph).
  void release(int device, cudaStream_t stream);

  /// Bytes held by (device, stream) (0 when none); for tests.
  std::size_t held(int device, cudaStream_t stream);

  /// The first bytes of a workspace hold the completion counter (kernels/registry.hpp).
  static constexpr std::size_t counter_bytes = 256;

 private:
  using UseFn = cudaError_t (*)(void* ctx, void* workspace, std::size_t bytes, bool clean);
  cudaError_t run_erased(int device, cudaStream_t stream, std::size_t bytes, void* ctx, UseFn use,
                         bool leaves_clean);
  cudaError_t run_captured(int device, cudaStream_t stream, std::size_t bytes, void* ctx,
                           UseFn use);

  struct Slot {
    std::mutex m;
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool clean = false;
  };
  // cudaStreamPerThread names a different stream in every thread: the thread is part of its key.
  using Key = std::tuple<int, std::uintptr_t, std::thread::id>;
  static Key key(int device, cudaStream_t stream);
  Slot& slot(const Key& k);

  Platform& platform_;
  const std::uint64_t id_;  // tells this cache's entries in the per-thread last-slot cache
  std::shared_mutex map_mutex_;
  std::map<Key, std::unique_ptr<Slot>> slots_;  // never erased: released slots keep bytes = 0
};

}  // namespace tunedreduce::runtime
