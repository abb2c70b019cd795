// `placesim calibrate --backend cpu|cuda -o DIR/NAME.json`: measure this machine with the real
// backend's own kernels and write a device profile, link type and cluster for it, so that
// `placesim --profiles DIR ...` predicts this machine (layout: docs/real-backend.md).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/commands/calibrate_nccl_tests.h"
#include "real_backend/calibration.h"
#include "real_backend/machine_load.h"
#include "sim/core/input_error.h"

namespace placesim {
namespace {

/// Reads the profile back as the catalog would, so that an invalid measurement never reaches disk.
void check_profile(const Json& device, const std::string& what) { read_device_profile(JsonReader(device, what)); }

}  // namespace

Command add_calibrate_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string backend = "cpu";
    std::string output;
    bool quick = false;
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
                   "clusters/NAME.json, links.json) for --profiles DIR")
      ->required();
  command->add_flag("--quick", options->quick, "Fewer sizes and repetitions (~3 s on the CPU; less precise)");
  auto nccl_tests = add_nccl_tests_options(command);
  return {command, [options, nccl_tests, &global] {
            if (!nccl_tests->log.empty()) return import_nccl_tests(*nccl_tests, options->output);
            std::filesystem::path output = options->output;
            std::filesystem::path directory = output.parent_path().empty() ? "." : output.parent_path();
            if (output.extension() != ".json" || output.stem().empty()) {
              throw InputError("--output", "", "expected DIR/NAME.json, got \"" + options->output + "\"");
            }
            if (!std::filesystem::is_directory(directory)) {
              throw InputError("--output", "", "cannot write \"" + options->output + "\": no such directory \"" +
                                                   directory.string() + "\"");
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
            check_profile(profiles.device, id);
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
