#include "runtime/workspace.hpp"

#include <atomic>

#include <fmt/format.h>

#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

namespace {
// Grown in steps of 64 KiB: the small workspaces of the persistent-grid kernels fit the first
// allocation, and a large one is not doubled past what it needs.
constexpr std::size_t growth_step = 64 * 1024;

std::atomic<std::uint64_t> next_id{1};

/// The slot this thread used last: a loop on one stream finds it without the map's lock. Slots
/// are never erased, so the pointer stays valid while its cache lives.
struct LastSlot {
  std::uint64_t owner = 0;
  int device = -1;
  std::uintptr_t stream = 0;
  void* slot = nullptr;
};
thread_local LastSlot last_slot;
}  // namespace

WorkspaceCache::WorkspaceCache(Platform& platform) : platform_(platform), id_(next_id++) {}

WorkspaceCache::Key WorkspaceCache::key(int device, cudaStream_t stream) {
  const bool per_thread = stream == cudaStreamPerThread;
  return {device, reinterpret_cast<std::uintptr_t>(stream),
          per_thread ? std::this_thread::get_id() : std::thread::id()};
}

WorkspaceCache::Slot& WorkspaceCache::slot(const Key& k) {
  {
    std::shared_lock lk(map_mutex_);
    if (auto it = slots_.find(k); it != slots_.end()) return *it->second;
  }
  std::unique_lock lk(map_mutex_);
  auto& s = slots_[k];
  if (!s) s = std::make_unique<Slot>();
  return *s;
}

cudaError_t WorkspaceCache::run_erased(int device, cudaStream_t stream, std::size_t bytes,
                                       void* ctx, UseFn use, bool leaves_clean) {
  if (platform_.capturing(stream)) return run_captured(device, stream, bytes, ctx, use);
  // The key of the per-thread default stream includes the thread, which the thread-local
  // cache is anyway.
  const auto sid = reinterpret_cast<std::uintptr_t>(stream);
  Slot* sp;
  if (last_slot.owner == id_ && last_slot.device == device && last_slot.stream == sid) {
    sp = static_cast<Slot*>(last_slot.slot);
  } else {
    sp = &slot(key(device, stream));
    last_slot = {id_, device, sid, sp};
  }
  Slot& s = *sp;
  std::lock_guard lk(s.m);
  if (s.bytes < bytes) {
    if (s.ptr) {
      // Stream order: the free happens after every launch already enqueued on this stream.
      cudaError_t e = platform_.free_async(s.ptr, stream);
      s.ptr = nullptr;
      s.bytes = 0;
      if (e != cudaSuccess)
        throw ReduceError(Status::cuda_error,
                          "freeing the cached workspace failed: " + platform_.error_text(e));
    }
    const std::size_t grown = (bytes + growth_step - 1) / growth_step * growth_step;
    void* p = nullptr;
    if (cudaError_t e = platform_.alloc_async(&p, grown, stream); e != cudaSuccess)
      throw ReduceError(Status::cuda_error,
                        fmt::format("allocating a workspace of {} bytes failed: {}", grown,
                                    platform_.error_text(e)));
    if (cudaError_t e = platform_.memset_async(p, 0, grown, stream); e != cudaSuccess) {
      (void)platform_.free_async(p, stream);
      throw ReduceError(Status::cuda_error,
                        "zeroing a new workspace failed: " + platform_.error_text(e));
    }
    s.ptr = p;
    s.bytes = grown;
    s.clean = true;
  }
  const cudaError_t e = use(ctx, s.ptr, s.bytes, s.clean);
  // A launch that failed may have left the counter anywhere: the next one zeroes it first.
  s.clean = e == cudaSuccess && leaves_clean;
  return e;
}

cudaError_t WorkspaceCache::run_captured(int device, cudaStream_t stream, std::size_t bytes,
                                         void* ctx, UseFn use) {
  // Captured, cudaMallocAsync and cudaFreeAsync become an allocation node and a free node of the
  // graph: every launch of the graph has its workspace, and none is left once it has run. The
  // cache's workspace is not used: a later call could free or grow it while the graph lives,
  // and a launch of the graph on another stream would share it.
  if (!platform_.stream_ordered_allocation(device))
    throw ReduceError(
        Status::unsupported,
        fmt::format("this call is being captured into a CUDA graph, and device {} has "
                    "no stream-ordered allocation (memory pools) for a workspace the "
                    "graph owns: use the two-phase call reduce(d_temp, temp_bytes, "
                    "...) with temporary storage of your own",
                    device));
  void* p = nullptr;
  if (cudaError_t e = platform_.alloc_async(&p, bytes, stream); e != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      fmt::format("allocating a workspace of {} bytes inside a CUDA graph capture "
                                  "failed: {}",
                                  bytes, platform_.error_text(e)));
  // Not clean: the launch zeroes what it needs of it first (a memset node).
  const cudaError_t e = use(ctx, p, bytes, false);
  const cudaError_t f = platform_.free_async(p, stream);
  if (e == cudaSuccess && f != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      "freeing a workspace inside a CUDA graph capture failed: " +
                          platform_.error_text(f));
  return e;
}

void WorkspaceCache::release(int device, cudaStream_t stream) {
  if (platform_.capturing(stream))
    throw ReduceError(Status::invalid_argument,
                      "release_workspace: the stream is being captured into a CUDA graph (the "
                      "free would become a node of it); release it after cudaStreamEndCapture");
  Slot& s = slot(key(device, stream));
  std::lock_guard lk(s.m);
  if (!s.ptr) return;
  cudaError_t e = platform_.free_async(s.ptr, stream);
  s.ptr = nullptr;
  s.bytes = 0;
  s.clean = false;
  if (e != cudaSuccess)
    throw ReduceError(Status::cuda_error,
                      "freeing the cached workspace failed: " + platform_.error_text(e));
}

std::size_t WorkspaceCache::held(int device, cudaStream_t stream) {
  Slot& s = slot(key(device, stream));
  std::lock_guard lk(s.m);
  return s.bytes;
}

}  // namespace tunedreduce::runtime
