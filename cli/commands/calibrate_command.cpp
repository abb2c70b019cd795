// `placesim calibrate --backend cpu|cuda -o DIR/NAME.json`: measure this machine with the real
// backend's own kernels and write a device profile, link type and cluster for it, so that
// `placesim --profiles DIR ...` predicts this machine (layout: docs/real-backend.md).
// `placesim calibrate --from-kernels TABLE.csv --device ID -o PROFILE.json`: fit a device's
// kernel model to a measured kernel table and write its profile (docs/cost-model.md).
// `placesim calibrate --from-trace TRACE.json --device ID -o TABLE.csv`: such a table from a
// PyTorch profiler trace (calibrate_trace.h).
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "cli/commands/calibrate_nccl_tests.h"
#include "cli/commands/calibrate_trace.h"
#include "real_backend/calibration.h"
#include "real_backend/runtime/machine_load.h"
#include "real_backend/runtime/speed_probe.h"
#include "sim/calibration/attention_calibration.h"
#include "sim/calibration/board_gemm_calibration.h"
#include "sim/calibration/kernel_calibration.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

/// Reads the profile back as the catalog would, so that an invalid measurement never reaches disk.
DeviceSpec check_profile(const Json& device, const std::string& what) {
  return read_device_profile(JsonReader(device, what));
}

/// Checks `profile` as the catalog would read it, then writes it to `output` in the key order of
/// the catalog's file of `device`, so that a calibrated profile reads like the one it replaces.
int write_device_profile(const std::string& output, const Json& profile, const std::string& device,
                         const HardwareCatalog& catalog) {
  check_profile(profile, device);
  write_file_atomically(output, profile_text_in_file_order(catalog.root() / "devices" / (device + ".json"), profile));
  std::cerr << "placesim: wrote " << output << "\n";
  return 0;
}

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::ostringstream text;
  text << std::put_time(&utc, "%Y-%m-%d");
  return text.str();
}

void print_fit(const KernelCalibration& calibration, std::ostream& out) {
  const KernelModel& m = calibration.fit.model;
  out << "Kernel model fitted on " << m.fit.training_rows << " rows, checked on " << m.fit.held_out_rows
      << " held-out rows (" << m.fit.table << ")\n";
  out << "  GEMM efficiency:";
  for (const auto& [precision, value] : m.gemm_efficiency) out << " " << to_string(precision) << " " << value;
  out << "; tile overhead " << m.tile_overhead_k << " k-steps; small-tile exponent " << m.small_tile_exponent
      << "; kernel overhead " << m.kernel_overhead_seconds * 1e6 << " us\n";
  if (!m.conv_efficiency.empty()) {
    out << "  Convolution algorithms (relative to the GEMM model):";
    for (const auto& [algorithm, value] : m.conv_efficiency) out << " " << to_string(algorithm) << " " << value;
    out << "\n";
  }
  out << "  |predicted / measured - 1|       held out (median, p90)      fitted on (median, p90)\n";
  for (size_t i = 0; i < calibration.fit.held_out.size(); ++i) {
    const KernelErrorSummary& held = calibration.fit.held_out[i];
    out << "  " << std::left << std::setw(16) << held.op << std::right << std::setw(5) << held.rows << " rows "
        << std::setw(8) << format_percent(held.median_error) << std::setw(8) << format_percent(held.p90_error);
    for (const auto& train : calibration.fit.training) {
      if (train.op == held.op) {
        out << "   " << std::setw(5) << train.rows << " rows " << std::setw(8) << format_percent(train.median_error)
            << std::setw(8) << format_percent(train.p90_error);
      }
    }
    out << "\n";
  }
  for (const auto& [reason, count] : calibration.skipped) out << "  skipped " << count << " rows: " << reason << "\n";
}

void print_check(const KernelModelCheck& check, std::ostream& out) {
  out << "Checked on " << check.tables << " (never fitted on):\n";
  out << "  |predicted / measured - 1|       median     p90\n";
  for (const KernelErrorSummary& summary : check.errors) {
    out << "  " << std::left << std::setw(16) << summary.op << std::right << std::setw(5) << summary.rows << " rows "
        << std::setw(8) << format_percent(summary.median_error) << std::setw(8) << format_percent(summary.p90_error)
        << "\n";
  }
  for (const auto& [reason, count] : check.skipped) out << "  skipped " << count << " rows: " << reason << "\n";
}

void print_attention_fit(const AttentionCalibration& calibration, const std::string& device, std::ostream& out) {
  const AttentionKernelFit& fit = calibration.fit;
  out << "Fused attention (" << fit.implementation << ") of " << device << " against its GEMM model, " << fit.rows
      << " rows: forward " << format_number(fit.forward_efficiency, "%.4f") << ", backward "
      << format_number(fit.backward_efficiency, "%.4f") << "\n";
  out << "  op             shape                                    measured    predicted   error\n";
  for (const AttentionPrediction& p : calibration.predictions) {
    out << "  " << pad(p.row.op, 14, true) << " " << pad(p.row.shape.describe(), 40, true) << " "
        << pad(format_seconds(p.row.seconds), 11, false) << " " << pad(format_seconds(p.predicted_seconds), 11, false)
        << " " << pad(format_percent(p.predicted_seconds / p.row.seconds - 1), 7, false) << "\n";
  }
  out << "  |predicted / measured - 1|: median " << format_percent(fit.median_error) << ", p90 "
      << format_percent(fit.p90_error) << "\n";
  for (const auto& [reason, count] : calibration.skipped) out << "  skipped " << count << " rows: " << reason << "\n";
}

void print_board_gemm(const BoardGemmCalibration& calibration, const std::string& device, std::ostream& out) {
  const KernelModel model = read_kernel_model(JsonReader(calibration.profile.at("kernel_model"), "kernel_model"));
  out << "GEMM efficiency of " << device << " on its own rows (the rest of its kernel model stays "
      << model.fit.scaled_from << "'s):\n";
  for (const BoardGemmRefit& refit : calibration.refits) {
    std::string precisions;
    for (Precision precision : refit.precisions) precisions += (precisions.empty() ? "" : "/") + to_string(precision);
    out << "  " << precisions << " " << format_number(model.gemm_efficiency_for(refit.precisions.front()), "%.4f")
        << " (borrowed " << format_number(refit.borrowed_efficiency, "%.4f") << "), " << refit.training_rows
        << " rows fitted; a call timed alone adds " << format_number(refit.isolated_floor_seconds * 1e6, "%.1f")
        << " us (not charged in a step)\n";
  }
  out << "  |predicted / measured - 1| on held-out rows   borrowed (median, p90)   refitted (median, p90)\n";
  for (size_t i = 0; i < calibration.held_out_after.size(); ++i) {
    const KernelErrorSummary& after = calibration.held_out_after[i];
    const KernelErrorSummary& before = calibration.held_out_before[i];
    out << "  " << std::left << std::setw(16) << after.op << std::right << std::setw(5) << after.rows << " rows "
        << std::setw(14) << format_percent(before.median_error) << std::setw(8) << format_percent(before.p90_error)
        << std::setw(16) << format_percent(after.median_error) << std::setw(8) << format_percent(after.p90_error)
        << "\n";
  }
}

/// --precision's values (CLI11 has checked each is a precision's name).
std::set<Precision> precision_set(const std::vector<std::string>& names) {
  std::set<Precision> precisions;
  for (const auto& name : names) precisions.insert(*parse_precision(name));
  return precisions;
}

/// calibrate --check-kernels TABLE... --device ID: the catalog's kernel model of ID on its rows.
/// With --predictions, also writes each checked row's measured and predicted time.
int check_shipped_kernel_model(const std::vector<std::string>& tables, const std::string& device,
                               const std::vector<std::string>& precision_names, const HardwareCatalog& catalog,
                               const std::string& predictions) {
  if (device.empty()) throw InputError("--device", "", "--check-kernels needs --device ID");
  const Json option = device;
  const DeviceSpec& spec = catalog.device(device, JsonReader(option, "--device"));
  if (!spec.kernel_model) {
    throw InputError("--device", "", "\"" + device + "\" has no kernel model to check (its costs are the datasheet "
                                     "roofline): fit one with --from-kernels");
  }
  const std::set<Precision> precisions = precision_set(precision_names);
  const std::vector<std::filesystem::path> paths(tables.begin(), tables.end());
  const KernelModelFit& fit = spec.kernel_model->fit;
  const FittedTables fitted = fitted_tables_of(fit.table, catalog);
  const KernelModelCheck check =
      check_kernel_model(*spec.kernel_model, spec, paths, precisions, catalog, fitted.whole, fitted.memory_rows);
  std::cout << device << "'s kernel model (" << (fit.scaled_from.empty() ? "" : "of " + fit.scaled_from + ", ")
            << "fitted on " << fit.table << ")\n";
  print_check(check, std::cout);
  if (!predictions.empty()) write_file_atomically(predictions, predictions_csv(check.predictions));
  return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string backend = "cpu";
    std::string output;
    bool quick = false;
    std::vector<std::string> kernel_tables;
    std::vector<std::string> memory_tables;
    std::string memory_device;
    std::string device;
    std::vector<std::string> precisions;
    std::string kernel_model_from;
    std::string predictions;
    std::vector<std::string> check_tables;
    std::vector<std::string> sibling_devices;
    std::vector<std::string> board_gemm_tables;
    std::vector<std::string> attention_tables;
    std::string attention_implementation = "flash2";
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "calibrate", "Measure this machine and write a device profile and cluster for it (a profile directory)");
  command->add_option("--backend", options->backend, "What to measure: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  command
      ->add_option("-o,--output", options->output,
                   "DIR/NAME.json: the cluster file to write; DIR becomes a profile directory (devices/NAME.json, "
                   "clusters/NAME.json, links.json) for --profiles DIR (every mode but --check-kernels alone)");
  command->add_flag("--quick", options->quick, "Fewer sizes and repetitions (~3 s on the CPU; less precise)");
  command->add_option("--from-kernels", options->kernel_tables,
                      "Instead of measuring: fit --device's kernel model to measured kernel tables (CSV, "
                      "hardware_profiles/kernels/) and write its profile to -o PROFILE.json");
  command->add_option("--memory-kernels", options->memory_tables,
                      "With --from-kernels: take the memory-bound rows (elementwise, softmax, layernorm) from these "
                      "tables as well, and only those (their GEMMs were timed another way)");
  command->add_option("--memory-kernels-device", options->memory_device,
                      "Without --from-kernels: fit the roofline bandwidth fractions of --device (a profile without a "
                      "kernel model) on this device's memory-bound rows of the --memory-kernels tables (the same or a "
                      "sibling board with the same memory), and write its profile to -o");
  command->add_option("--device", options->device,
                      "With --from-kernels: the device profile id to fit; with --from-trace: the device the trace ran on");
  command->add_option("--precision", options->precisions, "With --from-kernels: use rows of this precision only")
      ->check(CLI::IsMember(precision_names()));
  command->add_option("--sibling-devices", options->sibling_devices,
                      "With --from-kernels: also fit on these boards' GEMM and convolution rows (the same chip: SM "
                      "count and compute capability), each against its own datasheet peak");
  command->add_option("--predictions", options->predictions,
                      "With --from-kernels or --check-kernels: also write every row's measured and predicted time to "
                      "this CSV");
  command->add_option("--check-kernels", options->check_tables,
                      "Check --device's kernel model on its rows of these tables (another source's measurements, or "
                      "your own: calibrate --from-trace): the shipped model, or with --from-kernels the fitted one, "
                      "leaving out the rows the fit took; writes nothing");
  command->add_option("--kernel-model-from", options->kernel_model_from,
                      "Instead of measuring: give --device the kernel model of this measured device (same or nearest "
                      "generation) with --device's own SM count, peak and bandwidth, and write its profile to -o");
  command->add_option("--board-gemm-kernels", options->board_gemm_tables,
                      "Refit the GEMM efficiency of --device (a borrowed kernel model: --kernel-model-from) on its "
                      "own GEMM rows of these tables, per precision, keeping the borrowed shape parameters; "
                      "writes its profile to -o");
  command->add_option("--attention-kernels", options->attention_tables,
                      "Fit --device's fused attention (FlashAttention) against its GEMM model on the attention_fwd "
                      "and attention_bwd rows of these tables (one efficiency per pass); writes its profile to -o");
  command->add_option("--attention-implementation", options->attention_implementation,
                      "With --attention-kernels: the table's kernels to fit (its algorithm column)")
      ->capture_default_str();
  auto nccl_tests = add_nccl_tests_options(command);
  auto trace = add_trace_options(command);
  return {command, [options, nccl_tests, trace, &global] {
            if (!options->check_tables.empty() && options->kernel_tables.empty()) {
              return check_shipped_kernel_model(options->check_tables, options->device, options->precisions,
                                                global.catalog(), options->predictions);
            }
            if (options->output.empty()) throw InputError("--output", "", "-o FILE is required (what to write)");
            if (!nccl_tests->log.empty()) return import_nccl_tests(*nccl_tests, options->output);
            if (!trace->trace.empty()) return import_trace(*trace, options->device, options->output);
            if (!options->kernel_model_from.empty()) {
              if (options->device.empty()) throw InputError("--device", "", "--kernel-model-from needs --device ID");
              Json profile =
                  transfer_kernel_model(options->kernel_model_from, options->device, global.catalog(), today());
              return write_device_profile(options->output, profile, options->device, global.catalog());
            }
            if (!options->attention_tables.empty()) {
              if (options->device.empty()) throw InputError("--device", "", "--attention-kernels needs --device ID");
              std::vector<std::filesystem::path> tables(options->attention_tables.begin(), options->attention_tables.end());
              AttentionCalibration calibration = calibrate_attention_from_kernel_tables(
                  tables, options->device, options->attention_implementation, global.catalog(), today());
              print_attention_fit(calibration, options->device, std::cout);
              return write_device_profile(options->output, calibration.profile, options->device, global.catalog());
            }
            if (!options->board_gemm_tables.empty()) {
              if (options->device.empty()) throw InputError("--device", "", "--board-gemm-kernels needs --device ID");
              std::vector<std::filesystem::path> tables(options->board_gemm_tables.begin(),
                                                        options->board_gemm_tables.end());
              BoardGemmCalibration calibration =
                  calibrate_board_gemm_from_kernel_tables(tables, options->device, global.catalog(), today());
              print_board_gemm(calibration, options->device, std::cout);
              if (!options->predictions.empty()) {
                write_file_atomically(options->predictions, predictions_csv(calibration.predictions));
              }
              return write_device_profile(options->output, calibration.profile, options->device, global.catalog());
            }
            if (options->kernel_tables.empty() && !options->memory_tables.empty()) {
              if (options->device.empty()) throw InputError("--device", "", "--memory-kernels needs --device ID");
              const std::string source = options->memory_device.empty() ? options->device : options->memory_device;
              std::vector<std::filesystem::path> tables(options->memory_tables.begin(), options->memory_tables.end());
              MemoryCalibration calibration =
                  calibrate_memory_from_kernel_tables(tables, options->device, source, global.catalog(), today());
              std::cout << "Bandwidth fractions of " << options->device << " from " << source
                        << "'s memory-bound kernels (" << calibration.training_rows << " rows fitted):\n"
                        << "  elementwise " << format_number(calibration.elementwise.efficiency, "%.4f")
                        << " (floor " << format_number(calibration.elementwise.floor_seconds * 1e6, "%.1f")
                        << " us), reductions " << format_number(calibration.reduction.efficiency, "%.4f") << " (floor "
                        << format_number(calibration.reduction.floor_seconds * 1e6, "%.1f") << " us)\n";
              for (const KernelErrorSummary& summary : calibration.held_out) {
                std::cout << "  held out " << pad(summary.op, 12, true) << " " << summary.rows << " rows, median "
                          << format_number(summary.median_error * 100, "%.1f") << "%, p90 "
                          << format_number(summary.p90_error * 100, "%.1f") << "%\n";
              }
              return write_device_profile(options->output, calibration.profile, options->device, global.catalog());
            }
            if (!options->kernel_tables.empty()) {
              if (options->device.empty()) throw InputError("--device", "", "--from-kernels needs --device ID");
              const std::set<Precision> precisions = precision_set(options->precisions);
              std::vector<std::filesystem::path> tables(options->kernel_tables.begin(), options->kernel_tables.end());
              std::vector<std::filesystem::path> memory_tables(options->memory_tables.begin(),
                                                               options->memory_tables.end());
              KernelCalibration calibration =
                  calibrate_from_kernel_tables(tables, options->device, precisions, global.catalog(), today(),
                                               memory_tables, options->sibling_devices);
              print_fit(calibration, std::cout);
              if (!options->check_tables.empty()) {
                const DeviceSpec& spec = check_profile(calibration.profile, options->device);
                std::vector<std::filesystem::path> check_tables(options->check_tables.begin(),
                                                                options->check_tables.end());
                print_check(check_kernel_model(*spec.kernel_model, spec, check_tables, precisions, global.catalog(),
                                               tables, memory_tables),
                            std::cout);
              }
              if (!options->predictions.empty()) {
                write_file_atomically(options->predictions, predictions_csv(calibration.fit.predictions));
              }
              return write_device_profile(options->output, calibration.profile, options->device, global.catalog());
            }
            std::filesystem::path output = options->output;
            std::filesystem::path directory = output.parent_path().empty() ? "." : output.parent_path();
            if (output.extension() != ".json" || output.stem().empty()) {
              throw InputError("--output", "", "expected DIR/NAME.json, got \"" + options->output + "\"");
            }
            // A missing profile directory is created (docs/real-backend.md's first command writes into
            // measured/); something there that is not a directory is refused, before measuring.
            std::error_code error;
            if (!std::filesystem::exists(std::filesystem::symlink_status(directory, error))) {
              std::filesystem::create_directories(directory, error);
              if (!error) std::cerr << "placesim: created the directory " << directory.string() << "\n";
            }
            if (!std::filesystem::is_directory(directory, error)) {
              throw InputError("--output", "", "cannot write \"" + options->output + "\": \"" + directory.string() +
                                                   "\" is not a directory and cannot be created" +
                                                   (error ? " (" + error.message() + ")" : std::string()));
            }
            const std::string id = output.stem().string();
            auto progress = [](const std::string& line) { std::cerr << "placesim: " << line << std::endl; };
            real::MachineLoad load;
            real::CalibratedProfiles profiles;
            std::vector<std::pair<std::string, Json>> extra_devices;
            if (options->backend == "cpu") {
              real::CpuMeasurements measured = real::measure_cpu(progress, options->quick);
              profiles = real::cpu_profiles(measured, id);
            } else {
              real::require_cuda_devices();  // fail before measuring the host
              real::CpuMeasurements host = real::measure_cpu(progress, true);
              real::CudaMeasurements measured = real::measure_cuda(progress);
              profiles = real::cuda_profiles(measured, host, id);
              real::CalibratedProfiles host_profiles = real::cpu_profiles(host, id + "-host");
              extra_devices.emplace_back(id + "-host", host_profiles.device);
              check_profile(host_profiles.device, id + "-host");
            }
            const DeviceSpec calibrated = check_profile(profiles.device, id);
            if (options->backend == "cpu") {
              // The same kernels once more: a machine whose speed changed during the sweep (another
              // virtual machine on the same cores) gives a profile that describes neither state.
              const real::MachineSpeed again = real::probe_machine_speed(options->quick ? 0.02 : 0.06);
              if (std::string drift = real::speed_drift({again}, real::profile_speed(calibrated)); !drift.empty()) {
                std::cerr << "placesim: warning: this machine's speed changed during calibration, by more than "
                          << 100 * real::kSpeedTolerance << "%: measured again at the end, " << drift
                          << " (calibrate again on a quiet machine)\n";
              }
            }
            if (std::string warning = load.busy_warning(); !warning.empty()) {
              std::cerr << "placesim: " << warning << " (calibrate again on a quiet machine)\n";
            }
            real::write_profile_directory(output, profiles, extra_devices, global.catalog().root());
            std::cerr << "placesim: wrote " << output.string() << " and " << (directory / "devices" / (id + ".json")).string()
                      << "; use them with: placesim --profiles " << directory.string()
                      << " ... (cluster template \"" << id << "\")\n";
            return 0;
          }};
}

}  // namespace placesim
