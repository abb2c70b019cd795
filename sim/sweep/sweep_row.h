// What evaluating one sweep configuration on one tier gives: its status, step time, throughput,
// where the step's time goes and its peak memory. One JSON line per row in the resume file;
// everything derived from prices and constraints is computed later (sweep_outcome.h).
#pragma once

#include <cstddef>
#include <string>

#include "sim/core/json_reader.h"
#include "sim/spec/tier.h"

namespace placesim {

enum class RowStatus {
  kOk,
  kOutOfMemory,    ///< evaluated, but a device's peak memory exceeds its capacity
  kNotApplicable,  ///< the configuration cannot be built (e.g. halving-doubling on 6 devices)
};
std::string to_string(RowStatus status);

struct SweepRow {
  size_t index = 0;
  Tier tier = Tier::kAnalytical;
  RowStatus status = RowStatus::kOk;
  std::string reason;  ///< why not ok
  double step_seconds = 0;
  double samples_per_second = 0;
  /// One replica's throughput, the scaling baseline: the same per-device batch on one device for
  /// data parallelism, data 1 on the first replica's tensor x pipeline devices for a 3D layout
  /// (the same tier); 0 = no baseline.
  double single_replica_samples_per_second = 0;
  int64_t replicas = 0;  ///< replicas the scaling divides by (data-parallel workers, a 3D layout's data); 0 = devices
  /// Per step, on the strategy's devices: compute (mean busy time), exposed communication,
  /// pipeline bubble and straggler wait; they and `other_seconds` add up to step_seconds.
  double compute_seconds = 0;
  double exposed_communication_seconds = 0;
  double bubble_seconds = 0;
  double straggler_seconds = 0;
  double other_seconds = 0;
  double peak_memory_bytes = 0;      ///< the largest over the devices
  double memory_capacity_bytes = 0;  ///< of that device
  size_t tasks = 0;
  /// MFU's inputs (sim/graph/model_flops.h, docs/llm-planning.md): FLOPs per sample without and
  /// with recomputation, tokens per sample (0: not a language model), the devices' summed peak.
  double model_flops_per_sample = 0;
  double hardware_flops_per_sample = 0;
  double tokens_per_sample = 0;
  double peak_flops_per_second = 0;
};

/// `row` as one line of the resume file: row_json(row).dump() and a newline, appended to `out`
/// without building the JSON object (a million-configuration sweep writes a million of them).
void append_row_json_line(const SweepRow& row, std::string* out);
/// `row` as a JSON object (the line append_row_json_line writes, read back).
Json row_json(const SweepRow& row);
/// Throws std::runtime_error (not an InputError: the resume file is ours) when malformed.
SweepRow row_from_json(const Json& json);

/// Splits the idle part of a step (step - compute) in order: exposed communication, straggler
/// wait, bubble (pipelines), and the rest into `other_seconds`; each part capped at what is left.
void split_step_time(double step_seconds, double compute_seconds, double exposed_communication_seconds,
                     double straggler_seconds, double bubble_seconds, SweepRow* row);

}  // namespace placesim
