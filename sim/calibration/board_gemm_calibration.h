// A board's own GEMM efficiency on top of a kernel model borrowed from another board of its
// chip (transfer_kernel_model): one chip on different boards sustains different clocks under
// load (the A100 is a 300 W PCIe card and a 400 W SXM4 module), so the share of the datasheet
// peak its tensor cores reach is the board's, while tile shapes, waves and overheads are the
// chip's. Method and figures: docs/cost-model.md ("A board's own GEMM efficiency").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/calibration/kernel_fit.h"
#include "sim/cluster/hardware_catalog.h"

namespace placesim {

struct BoardGemmCalibration {
  Json profile;  ///< the catalog's profile of the device, its kernel model's efficiencies refitted
  /// One refit per precision group the rows cover (fp16 and bf16 are one group: the same tensor
  /// cores at the same datasheet rate).
  std::vector<BoardGemmRefit> refits;
  std::vector<KernelPrediction> predictions;        ///< every row, refitted model and floor
  std::vector<KernelErrorSummary> held_out_before;  ///< held-out rows with the borrowed model (and the fitted floor)
  std::vector<KernelErrorSummary> held_out_after;
};

/// The GEMM rows `device_id` measured in `tables`, one precision group at a time: fits
/// t = (the borrowed model's time at efficiency e) + floor, by Nelder-Mead on the mean absolute
/// log ratio over the rows not held out (the kernel fit's fixed split), and sets e as the
/// group's gemm_efficiency. The floor is a timing's own fixed cost (a host wall-clock around one
/// framework call) and stays out of the model. InputError when the device is unknown, has no
/// borrowed kernel model (fit one with --from-kernels, or borrow one with --kernel-model-from
/// first), or has no GEMM row to fit or to hold out.
BoardGemmCalibration calibrate_board_gemm_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                             const std::string& device_id,
                                                             const HardwareCatalog& catalog, const std::string& date);

}  // namespace placesim
