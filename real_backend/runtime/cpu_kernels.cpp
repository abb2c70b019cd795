#include "real_backend/runtime/cpu_kernels.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "sim/cost/roofline.h"
#include "sim/plan/kernel_precision.h"

namespace placesim::real {
namespace {

constexpr size_t kTriadBytesPerElement = 3 * sizeof(float);  // read b, read c, write a
constexpr size_t kArithmeticElements = 1024;                   // 4 KiB: stays in L1
constexpr size_t kMaxCopyBufferBytes = 64u << 20;

// OpenBLAS is opened on first use, not linked: its constructor starts a thread per core and maps
// its buffers in every process, and only the CPU executor and calibration need it (start-up,
// docs/performance.md). PLACESIM_OPENBLAS_LIBRARY is the library CMake found (real_backend/CMakeLists.txt).
struct Blas {
  decltype(&::openblas_set_num_threads) set_num_threads = nullptr;
  decltype(&::cblas_sgemm) sgemm = nullptr;
};

const Blas& blas() {
  static Blas loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = nullptr;
    for (const char* name : {PLACESIM_OPENBLAS_LIBRARY, "libopenblas.so.0", "libopenblas.so"}) {
      if ((library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (!library) throw std::runtime_error(std::string("cannot load OpenBLAS (") + PLACESIM_OPENBLAS_LIBRARY + ")");
    loaded.set_num_threads =
        reinterpret_cast<decltype(loaded.set_num_threads)>(::dlsym(library, "openblas_set_num_threads"));
    loaded.sgemm = reinterpret_cast<decltype(loaded.sgemm)>(::dlsym(library, "cblas_sgemm"));
    if (!loaded.set_num_threads || !loaded.sgemm) throw std::runtime_error("OpenBLAS lacks cblas_sgemm");
  });
  return loaded;
}

}  // namespace

void use_single_threaded_blas() { blas().set_num_threads(1); }

GemmShape square_gemm_for(double flops) {
  GemmShape shape;
  if (!(flops > 0)) return shape;
  const double max_call_flops = 2.0 * std::pow(static_cast<double>(kMaxGemmSide), 3);
  shape.repeats = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(flops / max_call_flops)));
  const double per_call = flops / static_cast<double>(shape.repeats);
  shape.m = shape.n = std::max<int64_t>(1, std::llround(std::cbrt(per_call / 2.0)));
  const double mn = static_cast<double>(shape.m) * static_cast<double>(shape.n);
  shape.k = std::max<int64_t>(1, std::llround(per_call / (2.0 * mn)));
  return shape;
}

ComputeWork compute_work(const Task& task, Precision precision, const ClusterDevice& device) {
  ComputeWork work;
  const double scale = task.compute_scale / device.speed_factor;
  const double flops = task.flops * scale;
  const double bytes = task.memory_bytes * kernel_bytes_scale(precision, task.op_kind) * scale;
  if (flops <= 0 && bytes <= 0) return work;
  // Which term bounds the task on the profile (the scale multiplies both alike).
  const RooflineTerms terms = roofline_terms(task, precision, device.spec, device.spec.memory_efficiency_for(task.op_kind));
  if (terms.memory_seconds > terms.math_seconds) {
    work.kind = WorkKind::kStream;
    work.bytes = bytes;
  } else if (is_gemm_kind(task.op_kind)) {
    work.kind = WorkKind::kGemm;
    work.flops = flops;
    work.gemm = square_gemm_for(flops);
  } else {
    work.kind = WorkKind::kArithmetic;
    work.flops = flops;
  }
  return work;
}

Workspace::Workspace()
    : ring_a_(kStreamPoolBytes / kTriadBytesPerElement, 0.0f),
      ring_b_(kStreamPoolBytes / kTriadBytesPerElement, 1.0f),
      ring_c_(kStreamPoolBytes / kTriadBytesPerElement, 2.0f),
      registers_(kArithmeticElements, 1.0f) {}

void Workspace::reserve(const GemmShape& shape) {
  // Small non-zero operands: no denormals, no overflow, whatever the shape.
  auto grow = [](std::vector<float>& matrix, int64_t rows, int64_t columns) {
    size_t size = static_cast<size_t>(rows * columns);
    if (matrix.size() < size) matrix.assign(size, 1.0f / 1024);
  };
  grow(a_, shape.m, shape.k);
  grow(b_, shape.k, shape.n);
  grow(c_, shape.m, shape.n);
}

void Workspace::run(const ComputeWork& work) {
  switch (work.kind) {
    case WorkKind::kNone: return;
    case WorkKind::kGemm: gemm(work.gemm); return;
    case WorkKind::kStream: stream(work.bytes); return;
    case WorkKind::kArithmetic: arithmetic(work.flops); return;
  }
}

void Workspace::gemm(const GemmShape& shape) {
  reserve(shape);
  const int m = static_cast<int>(shape.m), n = static_cast<int>(shape.n), k = static_cast<int>(shape.k);
  for (int64_t r = 0; r < shape.repeats; ++r) {
    blas().sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a_.data(), k, b_.data(), n, 0.0f,
                 c_.data(), n);
  }
}

void Workspace::stream(double bytes) {
  size_t remaining = static_cast<size_t>(std::llround(bytes / kTriadBytesPerElement));
  const size_t ring = ring_a_.size();
  float* a = ring_a_.data();
  const float* b = ring_b_.data();
  const float* c = ring_c_.data();
  const float s = 0.5f;
  while (remaining > 0) {
    size_t chunk = std::min(remaining, ring - ring_offset_);
    for (size_t i = ring_offset_; i < ring_offset_ + chunk; ++i) a[i] = b[i] + s * c[i];
    remaining -= chunk;
    ring_offset_ = (ring_offset_ + chunk) % ring;
  }
}

void Workspace::arithmetic(double flops) {
  // x = x * 0.999 + 0.001 converges to 1: no overflow or denormals however long it runs.
  const double passes = std::ceil(flops / (2.0 * kArithmeticElements));
  float* x = registers_.data();
  for (double pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < kArithmeticElements; ++i) x[i] = x[i] * 0.999f + 0.001f;
    asm volatile("" : : "r"(x) : "memory");  // keep each pass: its result is "used"
  }
}

CopyBuffers::CopyBuffers(double max_bytes) {
  size_t size = std::clamp<size_t>(static_cast<size_t>(max_bytes), 1, kMaxCopyBufferBytes);
  from_.assign(size, 1);
  to_.assign(size, 0);
}

void CopyBuffers::copy(double bytes) {
  size_t remaining = static_cast<size_t>(std::llround(bytes));
  while (remaining > 0) {
    size_t chunk = std::min(remaining, from_.size() - offset_);
    std::memcpy(to_.data() + offset_, from_.data() + offset_, chunk);
    remaining -= chunk;
    offset_ = (offset_ + chunk) % from_.size();
  }
}

void add_into(float* into, const float* values, size_t count) {
  for (size_t i = 0; i < count; ++i) into[i] += values[i];
}

void pin_current_thread(unsigned cpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  // The cpu-th CPU this process may use (containers may restrict us to a subset).
  unsigned seen = 0;
  for (int id = 0; id < CPU_SETSIZE; ++id) {
    if (!CPU_ISSET(id, &allowed)) continue;
    if (seen++ == cpu) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(id, &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      return;
    }
  }
}

unsigned usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(CPU_COUNT(&allowed));
}

}  // namespace placesim::real
