#include "runtime/workspace.hpp"

#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

namespace {
// Grown in steps of 64 KiB: the small workspaces of the persistent-grid kernels fit the first
// allocation, and a large one is not doubled past what it needs.
constexpr std::size_t growth_step = 64 * 1024;
}  // namespace

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
                                       void* ctx, UseFn use) {
  Slot& s = slot(key(device, stream));
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
      throw ReduceError(Status::cuda_error, "allocating a workspace of " + std::to_string(grown) +
                                                " bytes failed: " + platform_.error_text(e));
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
  s.clean = e == cudaSuccess;
  return e;
}

void WorkspaceCache::release(int device, cudaStream_t stream) {
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
