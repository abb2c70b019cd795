// How well a step uses its devices, in the numbers LLM training teams quote (docs/llm-planning.md):
// model FLOPs utilisation (MFU, PaLM's definition), hardware FLOPs utilisation (HFU, counting
// recomputation), model TFLOP/s per device, tokens/s and tokens/day for language models,
// samples/s, and the per-replica, micro and global batch. Plain numbers in; no simulation.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/json_reader.h"
#include "sim/spec/batch_sizes.h"

namespace placesim {

struct TrainingEfficiency {
  BatchSizes batch;
  int64_t devices = 0;                ///< every device the strategy runs on
  double peak_flops_per_second = 0;   ///< their peaks at the run's precision, summed
  /// The precision of that peak ("bf16", ...). fp8 runs quote MFU against the dense FP8 peak
  /// (docs/llm-planning.md, "FP8"), and the text says so.
  std::string peak_precision;
  double samples_per_second = 0;
  double tokens_per_sample = 0;       ///< 0: not a language model
  double model_flops_per_sample = 0;  ///< sim/graph/model_flops.h
  double hardware_flops_per_sample = 0;

  bool language_model() const { return tokens_per_sample > 0; }
  double tokens_per_second() const { return samples_per_second * tokens_per_sample; }
  double tokens_per_day() const { return tokens_per_second() * 86400.0; }
  /// Model FLOPs per second achieved, divided over the devices.
  double model_flops_per_second_per_device() const;
  /// Model FLOPs per second achieved / the devices' peak (PaLM appendix B).
  double mfu() const;
  /// The same with the FLOPs the devices execute (recomputed forwards included).
  double hfu() const;
};

/// "Global batch 16 (4 per replica x 4 replicas; micro-batch 1 x 4) ... MFU 41.2%" lines.
std::string efficiency_text(const TrainingEfficiency& efficiency);
/// The line that explains an MFU above 100% (a CNN whose convolutions run as Winograd or FFT
/// does fewer multiplications than the direct-convolution FLOPs MFU counts), for the texts that
/// print one; "" when `mfu` is at most 1.
std::string mfu_above_peak_note(double mfu);
Json efficiency_json(const TrainingEfficiency& efficiency);

}  // namespace placesim
