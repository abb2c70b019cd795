// The work the CPU executor does for a task, and the single-threaded kernels that do it:
// OpenBLAS sgemm for GEMM-bound tasks, a STREAM-like triad for memory-bound ones, a vectorised
// multiply-add loop for compute-bound tasks that are not GEMMs, chunked memcpy for
// transfers, and an elementwise float add for the reduce steps of all-reduces. Calibration (real_backend/calibration.h) times these same kernels, so a profile it
// writes describes exactly what the executor runs.
//
// Thread-safety: a Workspace belongs to one thread; the free functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"

namespace placesim::real {

/// Forces OpenBLAS to run every call on the calling thread (one core per plan device).
void use_single_threaded_blas();

/// A square GEMM (m = n = k) repeated `repeats` times: FLOPs = 2 m n k x repeats.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t repeats = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                                static_cast<double>(repeats); }
};

/// Largest side of one GEMM call: 3 x 2048^2 floats = 48 MiB of matrices per worker.
constexpr int64_t kMaxGemmSide = 2048;

/// The square GEMM whose FLOPs are closest to `flops`: m = n = round(cbrt(flops / 2)), k chosen
/// so that 2 m n k matches; calls larger than kMaxGemmSide are split into equal repeats.
GemmShape square_gemm_for(double flops);

enum class WorkKind { kNone, kGemm, kStream, kArithmetic };

/// What the executor runs for one compute task.
struct ComputeWork {
  WorkKind kind = WorkKind::kNone;
  GemmShape gemm;    ///< kGemm
  double bytes = 0;  ///< kStream: bytes read + written
  double flops = 0;  ///< kArithmetic (and kGemm: the FLOPs asked for)
};

/// The larger of the task's two roofline terms on this device, as real work: a kernel overlaps
/// its memory traffic with its arithmetic, so it runs whichever bounds it. Matmul and conv tasks
/// run a square sgemm of the task's FLOPs when compute-bound; any task runs a triad over its
/// bytes when memory-bound; other compute-bound tasks run multiply-adds. The work is scaled by
/// compute_scale / speed_factor (stragglers).
ComputeWork compute_work(const Task& task, Precision precision, const ClusterDevice& device);

/// Bytes of the triad ring each worker streams through (three float arrays of 64 MiB). Fixed so
/// that calibration and execution see the same cache behaviour, and larger than any CPU's
/// last-level cache share so that they see the same one whatever ran before: over a 48 MiB ring
/// a triad ran at 24 GB/s alone but 12 GB/s right after a GEMM had evicted it (Xeon 8400-class
/// VM, 2026-11-30), so plans measured half the calibrated rate; over 192 MiB it is 11.6-12 GB/s
/// in both (docs/real-backend.md).
constexpr size_t kStreamPoolBytes = 192u << 20;

/// One worker's memory: GEMM matrices, the triad ring and a small multiply-add array.
class Workspace {
 public:
  Workspace();
  /// Allocates (and touches) matrices for `shape`; call before timing.
  void reserve(const GemmShape& shape);
  void run(const ComputeWork& work);
  void gemm(const GemmShape& shape);
  /// Triad a[i] = b[i] + s * c[i] over bytes / 12 floats, continuing around the ring.
  void stream(double bytes);
  /// 2 FLOPs per element per pass over an L1-resident array.
  void arithmetic(double flops);

 private:
  std::vector<float> a_, b_, c_;           // GEMM operands
  std::vector<float> ring_a_, ring_b_, ring_c_;
  size_t ring_offset_ = 0;
  std::vector<float> registers_;
};

/// A pair of buffers a copy channel moves bytes between, chunked around a ring.
class CopyBuffers {
 public:
  explicit CopyBuffers(double max_bytes);
  void copy(double bytes);

 private:
  std::vector<char> from_, to_;
  size_t offset_ = 0;
};

/// into[i] += values[i] for i < count: what a reduce step of an all-reduce does with the chunk it
/// received.
void add_into(float* into, const float* values, size_t count);

/// Pins the calling thread to one logical CPU (ignored where the OS refuses).
void pin_current_thread(unsigned cpu);
/// Logical CPUs this process may run on.
unsigned usable_cpus();
}  // namespace placesim::real
