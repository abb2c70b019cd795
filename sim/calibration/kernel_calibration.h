// Calibration of a device profile from measured kernel tables: reads the tables, fits the
// device's kernel model (kernel_fit.h) and returns the profile with its "kernel_model" and the
// fit's provenance, ready to write under hardware_profiles/devices/ or a --profiles directory.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/calibration/kernel_fit.h"
#include "sim/cluster/hardware_catalog.h"

namespace placesim {

struct KernelCalibration {
  Json profile;  ///< the catalog's profile of the device, with "kernel_model" set
  KernelFit fit;
  std::map<std::string, int64_t> skipped;  ///< rows of the device the model cannot use, by reason
};

/// Fits `device_id`'s kernel model on its rows of `tables` (only `precisions`, when not empty),
/// plus the memory-bound rows (elementwise, softmax, layernorm) of `memory_tables` and only those
/// (a table whose GEMMs were timed another way, e.g. with a framework's dispatch inside). The fit
/// names them "TABLE + memory-bound rows of TABLE". The GEMM and convolution rows of
/// `sibling_ids` (boards of the same chip: same SM count and compute capability) count too, each
/// against its own board's datasheet (KernelFitOptions::siblings). InputError when a device is
/// unknown, its profile has no sm_count, a sibling is not of the same chip, or no row fits.
KernelCalibration calibrate_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                               const std::string& device_id, const std::set<Precision>& precisions,
                                               const HardwareCatalog& catalog, const std::string& date,
                                               const std::vector<std::filesystem::path>& memory_tables = {},
                                               const std::vector<std::string>& sibling_ids = {});

/// A fitted kernel model's errors on tables it was never fitted on: another lab's measurements of
/// the same device (an independent check of the model, beside the fit's own held-out rows).
struct KernelModelCheck {
  std::string tables;  ///< as the fit names tables ("A.csv + B.csv")
  std::vector<KernelPrediction> predictions;
  std::vector<KernelErrorSummary> errors;  ///< per op, then "all"
  std::map<std::string, int64_t> skipped;  ///< rows of the device the model cannot use, by reason
};

/// Predicts `spec`'s rows of `tables` (only `precisions`, when not empty) with `model`, leaving
/// out what the fit saw: every row of a table in `fitted_tables`, the memory-bound rows of one in
/// `fitted_memory_tables`. InputError when no row of the device is left.
KernelModelCheck check_kernel_model(const KernelModel& model, const DeviceSpec& spec,
                                    const std::vector<std::filesystem::path>& tables,
                                    const std::set<Precision>& precisions, const HardwareCatalog& catalog,
                                    const std::vector<std::filesystem::path>& fitted_tables = {},
                                    const std::vector<std::filesystem::path>& fitted_memory_tables = {});

/// The tables a fit names ("A.csv + memory-bound rows of B.csv", as KernelModelFit::table says),
/// as (tables fitted whole, tables whose memory-bound rows were fitted); a bundled table's
/// "hardware_profiles/kernels/..." resolves under the catalog's root.
struct FittedTables {
  std::vector<std::filesystem::path> whole;
  std::vector<std::filesystem::path> memory_rows;
};
FittedTables fitted_tables_of(const std::string& fit_table, const HardwareCatalog& catalog);

/// A roofline profile's bandwidth fractions fitted on measured memory-bound kernels.
struct MemoryCalibration {
  Json profile;  ///< the catalog's profile of the device, with memory_efficiency and reduction_memory_efficiency set
  MemoryFit elementwise;
  MemoryFit reduction;
  std::vector<KernelErrorSummary> held_out;  ///< per op, then "all", on rows the fit never saw
  int64_t training_rows = 0;
};

/// Fits `device_id`'s bandwidth fractions (a profile without a kernel model of its own: its
/// memory_efficiency and reduction_memory_efficiency, and a borrowed kernel model's copies of
/// them, transfer_kernel_model) on the memory-bound rows (elementwise,
/// softmax, layernorm) that `source_id` measured in `tables`, as fractions of the source's own
/// bandwidth: the same device, or a board with the same memory technology (e.g. the PCIe card of
/// an SXM module). One row in five is held out as in the kernel fit. The sources name the tables,
/// the source device and the fit. InputError when a profile is unknown, the target has a fitted kernel
/// model (fit it with --from-kernels and --memory-kernels), or a kernel class has no rows.
MemoryCalibration calibrate_memory_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                      const std::string& device_id, const std::string& source_id,
                                                      const HardwareCatalog& catalog, const std::string& date);

/// How a fit names a table: a bundled one by its place in the repository
/// ("hardware_profiles/kernels/NAME.csv"), a user's own (calibrate --from-trace) as given.
std::string fitted_table_name(const std::filesystem::path& path, const HardwareCatalog& catalog);

/// The prefix naming a memory-bound-rows-only table in a fit's table list.
extern const char* const kMemoryRowsOf;

/// `updated` as text in the key order of the profile file it came from (keys it adds go last),
/// so that a calibrated profile reads like the hand-written one it replaces.
std::string profile_text_in_file_order(const std::filesystem::path& original, const Json& updated);

/// A device with no measured table borrows the kernel model of a measured device of its (or the
/// nearest) generation: the efficiencies are fractions of peak, so they carry over, while the
/// SM count, peak and bandwidth stay the target's own datasheet numbers. A target whose profile
/// already carries measured bandwidth fractions (`reduction_memory_efficiency`, written by
/// `--memory-kernels` or `--memory-kernels-device`) keeps them: memory-bound kernels come from its
/// own measurements, GEMMs and convolutions from the borrowed model. The fit says "scaled_from".
/// InputError when either profile lacks what this needs.
Json transfer_kernel_model(const std::string& source_id, const std::string& target_id, const HardwareCatalog& catalog,
                           const std::string& date);

}  // namespace placesim
