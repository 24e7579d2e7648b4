// Clocks through NVML, loaded at run time: the driver ships libnvidia-ml.so.1; nothing is linked,
// and a machine without it just has no clock figures.

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>

#include "measure/clocks.hpp"

namespace tunedreduce::measure {

namespace {

using nvml_device = void*;
enum : int { nvml_clock_sm = 1, nvml_clock_mem = 2 };

struct Nvml {
  int (*init)() = nullptr;
  int (*by_pci)(const char*, nvml_device*) = nullptr;
  int (*clock)(nvml_device, int, unsigned*) = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static Nvml lib = [] {
    Nvml n;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return n;
    n.init = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<int (*)(const char*, nvml_device*)>(
        dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock =
        reinterpret_cast<int (*)(nvml_device, int, unsigned*)>(dlsym(h, "nvmlDeviceGetClockInfo"));
    n.ok = n.init && n.by_pci && n.clock && n.init() == 0;
    return n;
  }();
  return lib;
}

}  // namespace

Clocks read_clocks(int cuda_device) {
  Clocks c;
  const Nvml& n = nvml();
  if (!n.ok) return c;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) return c;
  nvml_device dev = nullptr;
  if (n.by_pci(bus, &dev) != 0) return c;
  unsigned mhz = 0;
  if (n.clock(dev, nvml_clock_sm, &mhz) == 0) c.sm_mhz = static_cast<int>(mhz);
  if (n.clock(dev, nvml_clock_mem, &mhz) == 0) c.mem_mhz = static_cast<int>(mhz);
  return c;
}

}  // namespace tunedreduce::measure
