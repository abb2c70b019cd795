// A device's fused attention kernels (FlashAttention) against its own GEMM model: one efficiency
// per pass, the median over a measured table's rows of (the GEMM model's time for the work of the
// kernel) / (its measured time). The kernel's shape effects (waves, tiles, the causal mask's
// skipped blocks) come from the GEMM model; the efficiencies carry what fusion gains or loses.
// Method and figures: docs/cost-model.md ("Fused attention").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/calibration/kernel_table.h"
#include "sim/cluster/hardware_catalog.h"

namespace placesim {

struct AttentionPrediction {
  KernelMeasurement row;
  double predicted_seconds = 0;
};

struct AttentionCalibration {
  Json profile;  ///< the catalog's profile of the device, its kernel model's "attention" set
  AttentionKernelFit fit;
  std::vector<AttentionPrediction> predictions;  ///< every fitted row, with the fitted efficiencies
  std::map<std::string, int64_t> skipped;
};

/// Fits `device_id`'s rows of `implementation` in `tables` (attention_fwd and attention_bwd,
/// read_attention_table): InputError when the device is unknown, has no kernel model, or has no
/// forward or no backward row of that implementation.
AttentionCalibration calibrate_attention_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                            const std::string& device_id,
                                                            const std::string& implementation,
                                                            const HardwareCatalog& catalog, const std::string& date);

}  // namespace placesim
