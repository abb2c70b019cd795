// placesim_bench: the simulator's speed on fixed cases. Prints one row per case: wall seconds
// (median of --repeat runs), simulated tasks per second, and the simulation process's peak
// memory. Not a test: run it on an idle machine, in a release build (see docs/performance.md).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/synthetic_plan.h"
#include "cli/sweep_evaluation.h"
#include "sim/sweep/process_pool.h"
#include "sim/engine/simgrid_engine.h"

namespace placesim::bench {
namespace {

struct Case {
  std::string name;
  std::function<std::pair<ExecutionPlan, Cluster>()> build;
};

double peak_child_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Capacity planning (issue 7): 1,000 ResNet-50 data-parallel configurations on the analytical
// tier, one process per core, as `placesim sweep` evaluates them (without writing outputs):
// 2 node types x 4 GPU counts x 5 layouts (1 node, or 2 or 4 nodes on IB EDR or 100 GbE)
// x 5 strategies x 5 per-GPU batches.
const char* kSweepScenario = R"({
  "model": {"zoo": "resnet50"}, "cluster": {"template": "dgx1_v100"},
  "run": {"batch_size": 64, "precision": "fp16", "optimizer": "momentum"},
  "sweep": {"node": ["dgx1_v100", "dgx_a100"], "devices_per_node": [1, 2, 4, 8], "nodes": [1, 2, 4],
            "fabric": ["ib_edr", "eth_100g"],
            "strategies": [{"name": "all-reduce", "data_parallel": {"algorithm": ["ring", "auto"]}},
                           {"name": "PS", "data_parallel": {"aggregation": "parameter_server", "num_ps": [1, 2, 4]}}],
            "batch_size": [32, 64, 128, 256, 512], "fidelity": "analytical"}})";

void run_sweep_case(const std::string& name) {
  HardwareCatalog catalog(HardwareCatalog::default_root());
  SweepContext context;
  context.document = Json::parse(kSweepScenario);
  context.file = "bench_sweep.json";
  context.catalog = &catalog;
  context.spec = read_sweep_spec(JsonReader(context.document, context.file), catalog);
  std::vector<size_t> items(context.spec.configurations.size());
  for (size_t i = 0; i < items.size(); ++i) items[i] = i;
  int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto start = std::chrono::steady_clock::now();
  size_t tasks = 0;
  run_in_processes(
      items, workers, [&](size_t i) { return std::to_string(evaluate_configuration(context, i, Tier::kAnalytical).tasks); },
      [&](size_t, const std::string& text) { tasks += std::stoul(text); });
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-36s %10zu %10.3f %14.0f %12s %14s  (%zu configurations, %d processes)\n", name.c_str(), tasks, wall,
              static_cast<double>(tasks) / wall, "-", "-", items.size(), workers);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  int repeat = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: placesim_bench [--repeat N] [--case NAME]\n");
      return 2;
    }
  }
  std::vector<Case> cases = {
      {"synthetic_100k_tasks_64_devices",
       [] {
         Cluster cluster = ring_cluster(64);
         return std::make_pair(synthetic_plan(cluster, 100000, 10), cluster);
       }},
      {"synthetic_1M_tasks_64_devices",
       [] {
         Cluster cluster = ring_cluster(64);
         return std::make_pair(synthetic_plan(cluster, 1000000, 10), cluster);
       }},
  };
  std::printf("%-36s %10s %10s %14s %12s %14s\n", "case", "tasks", "wall_s", "tasks_per_s", "peak_MiB", "simulated_s");
  for (const Case& c : cases) {
    if (!only.empty() && c.name != only) continue;
    auto [plan, cluster] = c.build();
    std::vector<double> walls;
    double simulated = 0;
    for (int r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      Timeline timeline = make_simgrid_engine()->simulate(plan, cluster);
      walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      simulated = timeline.makespan_seconds();
    }
    std::sort(walls.begin(), walls.end());
    double median = walls[walls.size() / 2];
    std::printf("%-36s %10zu %10.3f %14.0f %12.1f %14.6f\n", c.name.c_str(), plan.tasks.size(), median,
                static_cast<double>(plan.tasks.size()) / median, peak_child_memory_mib(), simulated);
    std::fflush(stdout);
  }
  const std::string sweep_case = "sweep_resnet50_1000_configs_analytical";
  if (only.empty() || only == sweep_case) run_sweep_case(sweep_case);
  return 0;
}

}  // namespace
}  // namespace placesim::bench

int main(int argc, char** argv) { return placesim::bench::run(argc, argv); }
