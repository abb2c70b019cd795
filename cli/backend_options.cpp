#include "cli/backend_options.h"

#include <iostream>

#include "sim/core/input_error.h"

namespace placesim {

void add_backend_options(CLI::App* command, BackendOptions* options) {
  command->add_option("--backend", options->backend, "Where to execute: cpu (worker threads, OpenBLAS) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  command->add_option("--warmup", options->warmup_runs, "Untimed runs of the whole plan before timing")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--runs", options->timed_runs, "Timed runs; each task's start and end are the medians")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_flag("-q,--quiet", options->quiet, "No progress on stderr");
  command->add_flag("--share-gpus", options->share_gpus,
                    "cuda: run plan GPU k on GPU k mod (GPUs here), one compute stream per plan GPU");
  command->add_option("--gpu-dispatch", options->gpu_dispatch,
                      "cuda: ahead (enqueue the whole plan with stream/event dependencies, as a framework does) "
                      "or loop (issue each task when its deps have finished)")
      ->check(CLI::IsMember({"ahead", "loop"}))
      ->capture_default_str();
}

real::Backend parse_backend_option(const std::string& text) {
  auto backend = real::parse_backend(text);
  if (!backend) throw InputError("--backend", "", "unknown backend \"" + text + "\" (expected cpu or cuda)");
  return *backend;
}

MeasuredRunOptions measured_run_options(const BackendOptions& options, const std::string& plan_name) {
  MeasuredRunOptions run;
  run.backend = parse_backend_option(options.backend);
  run.warmup_runs = options.warmup_runs;
  run.timed_runs = options.timed_runs;
  run.share_gpus = options.share_gpus;
  run.gpu_dispatch = options.gpu_dispatch == "loop" ? real::GpuDispatch::kLoop : real::GpuDispatch::kAhead;
  if (!options.quiet) {
    run.progress = [plan_name](const std::string& line) {
      std::cerr << "placesim: " << plan_name << ": " << line << std::endl;
    };
  }
  run.warning = print_note;
  return run;
}

void print_note(const std::string& line) { std::cerr << "placesim: " << line << "\n"; }

}  // namespace placesim
