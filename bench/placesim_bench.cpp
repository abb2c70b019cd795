// placesim_bench: the simulator's speed on fixed cases. Prints one row per case: wall seconds
// (median of --repeat runs), simulated tasks per second, and the simulation process's peak
// memory. Not a test: run it on an idle machine, in a release build (see docs/performance.md).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/synthetic_plan.h"
#include "sim/session/pipeline.h"
#include "sim/session/sweep_evaluation.h"
#include "sim/session/sweep_run.h"
#include "sim/session/sweep_screen.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/fd_io.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/process_pool.h"
#include "sim/sweep/recommendation.h"
#include "sim/sweep/row_wire.h"
#include "sim/sweep/sweep_outcome.h"
#include "sim/engine/engine_factory.h"
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

// 3D layouts of GPT-3 175B (96 layers, hidden 12288, 2048 tokens, global batch 1536,
// recomputation): 2 node types x 8 node counts x 4 tensor x 6 pipeline x 3 micro-batch sizes x 2
// schedules = 2,304 configurations, each on the closed-form tier (the analytical fidelity of a
// 3D strategy), memory verdicts included; about a third cannot be built (the GPU count is not a
// multiple of tensor x pipeline).
const char* kSweep3dScenario = R"({
  "model": {"zoo": "gpt", "parameters": {"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048, "vocabulary": 51200}},
  "cluster": {"template": "dgx_a100_80gb"},
  "run": {"mode": "training", "batch_size": 1536, "precision": "fp16", "optimizer": "adam", "recompute": true},
  "sweep": {"node": ["dgx_a100_80gb", "dgx_h100"], "nodes": [16, 32, 48, 64, 96, 128, 192, 256], "fabric": ["ib_hdr"],
            "strategies": [{"name": "3D", "parallelism": {"tensor": [1, 2, 4, 8], "pipeline": [4, 8, 12, 16, 24, 32],
                                                          "micro_batch_size": [1, 2, 4], "schedule": ["1f1b", "gpipe"]}}],
            "batch_size": [1536], "fidelity": "analytical"}})";

// Routes at scale (issue 23): one configuration of 100,000 one-GPU nodes under one switch, tree
// all-reduce on the analytical tier: 4 x 99,999 transfers, each needing a route across the switch.
const char* kSweep100000NodesScenario = R"({
  "model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"}, "run": {"batch_size": 32, "steps": 1},
  "sweep": {"node": ["dgx1_v100"], "devices_per_node": [1], "nodes": [100000], "fabric": ["ib_edr"],
            "strategies": [{"name": "tree", "data_parallel": {"algorithm": "tree"}}]}})";

void run_sweep_case(const std::string& name, const char* scenario) {
  HardwareCatalog catalog(HardwareCatalog::default_root());
  const SweepContext context = make_sweep_context(Json::parse(scenario), "bench_sweep.json", catalog);
  // As `placesim sweep` hands them out: one item per group of configurations sharing cells.
  std::vector<size_t> all(context.spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<size_t> items = work_items(context, all, Tier::kAnalytical);
  int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto start = std::chrono::steady_clock::now();
  size_t tasks = 0;
  run_in_processes(
      items, workers,
      [&](size_t i) {
        size_t group_tasks = 0;
        for (const SweepRow& row : evaluate_configurations(
                 context, configurations_sharing_cells(context, i, Tier::kAnalytical), Tier::kAnalytical)) {
          group_tasks += row.tasks;
        }
        return std::to_string(group_tasks);
      },
      [&](size_t, const std::string& text) { tasks += std::stoul(text); });
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-36s %10zu %10.3f %14.0f %12s %14s  (%zu configurations, %d processes)\n", name.c_str(), tasks, wall,
              static_cast<double>(tasks) / wall, "-", "-", all.size(), workers);
  std::fflush(stdout);
}

// The search tier's premise measured (docs/llm-planning.md, "Search speed"): one cell per
// (node type, layout but for its data width and schedule, micro-batch size), taken from the
// sweep's first configuration of that layout, serves every data width; each configuration then
// costs its scenario and the recurrence. One process, both passes; prints the screen's speed and
// its step-time error against each configuration's own closed form, and whether the closed
// form's best layouts are among the screen's best. Not a tier placesim offers: a measurement.
void run_screen_probe_case(const std::string& name, const char* scenario) {
  HardwareCatalog catalog(HardwareCatalog::default_root());
  const SweepContext context = make_sweep_context(Json::parse(scenario), "bench_sweep.json", catalog);
  const size_t count = context.spec.configurations.size();
  std::vector<double> exact(count, 0), screened(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const SweepRow row = evaluate_configuration(context, i, Tier::kAnalytical);
    if (row.status == RowStatus::kOk) exact[i] = row.samples_per_second;
  }
  std::vector<size_t> all(count);
  for (size_t i = 0; i < count; ++i) all[i] = i;
  const auto start = std::chrono::steady_clock::now();
  double probe_seconds = 0;  // building the cells' configurations and analysing the cells
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, all, &probe_seconds);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t analysed = 0;
  size_t screened_count = 0;
  for (const ScreenedConfiguration& screen : rows) {
    if (screen.row.status == RowStatus::kNotApplicable) continue;
    ++screened_count;
    screened[screen.row.index] = screen.row.samples_per_second;
    if (screen.cell_from == screen.row.index) ++analysed;
  }
  std::vector<double> errors;
  std::vector<size_t> ok;
  for (size_t i = 0; i < count; ++i) {
    if (exact[i] > 0 && screened[i] > 0) {
      errors.push_back(std::abs(screened[i] / exact[i] - 1));
      ok.push_back(i);
    }
  }
  std::sort(errors.begin(), errors.end());
  auto percentile = [&](double q) { return errors.empty() ? 0.0 : errors[static_cast<size_t>(q * static_cast<double>(errors.size() - 1))]; };
  auto ranked = [&](const std::vector<double>& rate) {
    std::vector<size_t> order = ok;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rate[a] > rate[b]; });
    return order;
  };
  const std::vector<size_t> by_exact = ranked(exact), by_screen = ranked(screened);
  auto position_in_screen = [&](size_t index) {
    return static_cast<size_t>(std::find(by_screen.begin(), by_screen.end(), index) - by_screen.begin()) + 1;
  };
  size_t worst_of_top10 = 0;
  for (size_t k = 0; k < std::min<size_t>(10, by_exact.size()); ++k) worst_of_top10 = std::max(worst_of_top10, position_in_screen(by_exact[k]));
  std::printf("%-36s %10zu %10.3f %14.0f %12s %14s  (%zu configurations screened on 1 process from %zu cells, without a scenario each: "
              "%.0f/s, %.3f s of it on the cells, %.0f/s beside them; |screen/closed form - 1| of samples/s over %zu: median %.2f%%, p90 %.2f%%, max %.2f%%; the "
              "closed form's best is the screen's #%zu, its top 10 within the screen's top %zu)\n",
              name.c_str(), screened_count, wall, static_cast<double>(screened_count) / wall, "-", "-", screened_count,
              analysed, static_cast<double>(screened_count) / wall, probe_seconds,
              static_cast<double>(screened_count - analysed) / (wall - probe_seconds), errors.size(), 100 * percentile(0.5),
              100 * percentile(0.9), 100 * percentile(1.0), by_exact.empty() ? 0 : position_in_screen(by_exact.front()),
              worst_of_top10);
  std::fflush(stdout);
}

// The bundled search's screen on one process, split into the cells (building their
// configurations and analysing them) and the rest (each configuration's sizing, recurrence and
// memory pass): where a screen's time goes. By name only (a measurement, not a tier).
void run_screen_split_case(const std::string& name, const std::string& file) {
  HardwareCatalog catalog(HardwareCatalog::default_root());
  const SweepContext context = make_sweep_context(parse_json_file(file), file, catalog);
  std::vector<size_t> all;
  for (size_t i = 0; i < context.spec.configurations.size(); ++i) {
    if (!screen_key(context, i).empty()) all.push_back(i);
  }
  const auto start = std::chrono::steady_clock::now();
  double cell_seconds = 0;
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, all, &cell_seconds);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t cells = 0, built = 0;
  for (const ScreenedConfiguration& screen : rows) {
    cells += screen.cell_from == screen.row.index && screen.row.status != RowStatus::kNotApplicable ? 1 : 0;
    built += screen.row.status != RowStatus::kNotApplicable ? 1 : 0;
  }
  std::printf("%-36s %10zu %10.3f %14.0f %12s %14s  (1 process: %zu cells in %.3f s; %zu rows built, %zu not applicable, "
              "%.3f s beside the cells)\n",
              name.c_str(), rows.size(), wall, static_cast<double>(rows.size()) / wall, "-", "-", cells, cell_seconds, built,
              rows.size() - built, wall - cell_seconds);
  std::fflush(stdout);
}

// The search tier as `placesim sweep` runs "fidelity": "search N" (docs/capacity-planning.md),
// without the files: one work item per screen key on one process per core, the rows sent back
// in row_wire.h's binary form, then the best N of the screen on the analytical tier. Prints configurations
// per second over the whole sweep, and how many could be built and fit.
void run_search_case(const std::string& name, const std::string& file) {
  HardwareCatalog catalog(HardwareCatalog::default_root());
  const SweepContext context = make_sweep_context(parse_json_file(file), file, catalog);
  const SweepSpec& spec = context.spec;
  const size_t count = spec.configurations.size();
  std::vector<size_t> screened, exact;
  for (size_t i = 0; i < count; ++i) (screen_key(context, i).empty() ? exact : screened).push_back(i);
  const std::vector<size_t> screened_leaders = work_items(context, screened, Tier::kSearch);
  const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::map<std::pair<size_t, Tier>, SweepRow> rows;
  auto collect = [&](size_t, const std::string& text) {
    for (SweepRow& row : decode_rows(text)) rows[{row.index, row.tier}] = std::move(row);
  };
  const auto start = std::chrono::steady_clock::now();
  // As `placesim sweep` hands them out (sweep_run.cpp, LocalProcesses): one work item per group
  // of configurations that share cells on the tier, each group's rows evaluated together, on
  // workers kept from the screen to the best N.
  std::optional<ProcessPool> pool;
  pool.emplace(workers, [&context](size_t i, int tier) { return sweep_work_item_text(context, i, Tier(tier)); });
  pool->run(screened_leaders, static_cast<int>(Tier::kSearch), collect);
  pool->run(work_items(context, exact, Tier::kAnalytical), static_cast<int>(Tier::kAnalytical), collect);
  const double screen_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<size_t> best = rank_configurations(assess(spec, rows));
  best.resize(std::min(best.size(), spec.search));
  pool->run(work_items(context, best, Tier::kAnalytical), static_cast<int>(Tier::kAnalytical), collect);
  pool.reset();  // the workers' exit is the search's too
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t built = 0, fit = 0;
  for (const auto& [key, row] : rows) {
    if (key.second != Tier::kSearch) continue;
    built += row.status != RowStatus::kNotApplicable ? 1 : 0;
    fit += row.status == RowStatus::kOk ? 1 : 0;
  }
  std::printf("%-36s %10zu %10.3f %14.0f %12s %14s  (%zu configurations, %zu screen keys, %d processes: %.0f/s; %zu could "
              "be built, %zu fit; the screen %.3f s, the best %zu on the analytical tier %.3f s)\n",
              name.c_str(), count, wall, static_cast<double>(count) / wall, "-", "-", count, screened_leaders.size(),
              workers, static_cast<double>(count) / wall, built, fit, screen_wall, best.size(), wall - screen_wall);
  std::fflush(stdout);
}

// Issue 9's microbenchmark, as ASTRA-sim's peer figure was measured (../shared/REFERENCE.md):
// one ring all-reduce on 512 devices in a ring of 50 GiB/s, 500 ns links. The wall time covers
// the whole run: cluster, plan, simulation. Also prints the alpha-beta formula's time and the
// simulated time's difference from it.
void run_ring_case(const std::string& name, double bytes, int repeat) {
  constexpr size_t kDevices = 512;
  constexpr double kBandwidth = 50.0 * (1 << 30), kLatency = 500e-9;
  std::vector<double> walls;
  double simulated = 0;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    Cluster cluster = ring_cluster(kDevices, kBandwidth, kLatency);
    ExecutionPlan plan;
    plan.name = name;
    plan.static_memory.assign(kDevices, StaticMemory{});
    Task task;
    task.kind = TaskKind::kCollective;
    task.phase = Phase::kCollective;
    task.bytes = bytes;
    for (DeviceId d = 0; d < kDevices; ++d) task.group.push_back(d);
    plan.tasks.push_back(task);
    simulated = make_simgrid_engine()->simulate(plan, cluster).makespan_seconds();
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(walls.begin(), walls.end());
  const double n = kDevices;
  const double formula = 2 * (n - 1) / n * bytes / kBandwidth + 2 * (n - 1) * kLatency;
  std::printf("%-36s %10d %10.3f %14s %12.1f %14.6f  (alpha-beta %.6f s, difference %+.2e)\n", name.c_str(), 1,
              walls[walls.size() / 2], "-", peak_child_memory_mib(), simulated, formula, simulated / formula - 1);
  std::fflush(stdout);
}

// A bundled scenario (bench/scenarios/) run end to end as `placesim run` does it: load, plan,
// simulate (or the analytical tier), metrics. Each run in its own process, so that the peak
// memory is this case's: the larger of the process's and its simulation child's.
struct ScenarioCase {
  std::string name;
  std::string file;
  Tier tier = Tier::kSimulated;
};

struct ScenarioSample {
  double wall_seconds = 0;
  double tasks = 0;
  double simulated_seconds = 0;
  double peak_mib = 0;
  double load_seconds = 0;  ///< scenario, model and cluster
  double plan_seconds = 0;  ///< placement and execution plan
};

ScenarioSample run_scenario_once(const ScenarioCase& c) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    ScenarioSample sample;
    auto start = std::chrono::steady_clock::now();
    HardwareCatalog catalog(HardwareCatalog::default_root());
    Scenario scenario = load_scenario(std::string(PLACESIM_BENCH_SCENARIOS) + "/" + c.file, catalog);
    auto loaded = std::chrono::steady_clock::now();
    const Strategy& strategy = scenario.strategies.front();
    const Cluster& cluster = scenario.cluster_for(strategy);
    if (c.tier == Tier::kClosedForm) {  // no plan of the step: one micro-batch's cells
      ClosedFormStepEstimate estimate =
          estimate_3d_step_closed_form(scenario.graph, cluster, scenario.run, *strategy.parallelism);
      sample.load_seconds = std::chrono::duration<double>(loaded - start).count();
      sample.simulated_seconds = estimate.step_seconds;
      sample.tasks = static_cast<double>(estimate.cell_plan_tasks);
    } else {
      PlannedScenario planned = plan_scenario(scenario);
      auto planned_at = std::chrono::steady_clock::now();
      sample.load_seconds = std::chrono::duration<double>(loaded - start).count();
      sample.plan_seconds = std::chrono::duration<double>(planned_at - loaded).count();
      Timeline timeline = make_engine(c.tier)->simulate(planned.plan, cluster);
      sample.simulated_seconds = compute_metrics(planned.plan, cluster, timeline).step_time_seconds;
      sample.tasks = static_cast<double>(planned.plan.tasks.size());
    }
    sample.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    sample.peak_mib = static_cast<double>(std::max(self.ru_maxrss, children.ru_maxrss)) / 1024.0;
    _exit(write_all(fds[1], &sample, sizeof(sample)) ? 0 : 3);
  }
  ::close(fds[1]);
  ScenarioSample sample;
  bool complete = read_all(fds[0], &sample, sizeof(sample));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "placesim_bench: case %s failed (wait status %d)\n", c.name.c_str(), status);
    return {};
  }
  return sample;
}

void run_scenario_case(const ScenarioCase& c, int repeat) {
  std::vector<ScenarioSample> samples;
  for (int r = 0; r < repeat; ++r) samples.push_back(run_scenario_once(c));
  std::sort(samples.begin(), samples.end(),
            [](const ScenarioSample& a, const ScenarioSample& b) { return a.wall_seconds < b.wall_seconds; });
  const ScenarioSample& median = samples[samples.size() / 2];
  double peak = 0;
  for (const auto& sample : samples) peak = std::max(peak, sample.peak_mib);
  std::printf("%-36s %10.0f %10.3f %14.0f %12.1f %14.6f  (%s, step time; load %.2f s, plan %.2f s)\n",
              c.name.c_str(), median.tasks, median.wall_seconds, median.tasks / median.wall_seconds, peak,
              median.simulated_seconds, c.file.c_str(), median.load_seconds, median.plan_seconds);
  std::fflush(stdout);
}

// Start-up (issue 23): one `placesim` invocation that does almost nothing (--version; check and
// run of the seed scenario), from fork to exit, with its peak resident memory (wait4's: the
// process and the SimGrid child it waits for). Median of max(--repeat, 11) runs: each takes
// milliseconds, so single runs are noise on a shared machine.
void run_startup_case(const std::string& name, const std::vector<std::string>& arguments, int repeat) {
  std::vector<double> walls;
  double peak_mib = 0;
  for (int r = 0; r < std::max(repeat, 11); ++r) {
    std::vector<char*> argv;
    std::string binary = PLACESIM_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copies = arguments;
    for (std::string& argument : copies) argv.push_back(argument.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    auto start = std::chrono::steady_clock::now();
    pid_t child = ::fork();
    if (child == 0) {
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      if (::chdir(PLACESIM_SOURCE_DIR) != 0) _exit(126);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
    int status = 0;
    rusage usage{};
    ::wait4(child, &status, 0, &usage);
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "placesim_bench: case %s failed (wait status %d)\n", name.c_str(), status);
      return;
    }
    peak_mib = std::max(peak_mib, static_cast<double>(usage.ru_maxrss) / 1024.0);
  }
  std::sort(walls.begin(), walls.end());
  std::printf("%-36s %10s %10.4f %14s %12.1f %14s  (median of %zu, fastest %.4f s)\n", name.c_str(), "-",
              walls[walls.size() / 2], "-", peak_mib, "-", walls.size(), walls.front());
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
  for (const auto& [name, bytes] : {std::make_pair(std::string("ring_allreduce_512_devices_1MiB"), double(1 << 20)),
                                    std::make_pair(std::string("ring_allreduce_512_devices_1GiB"), double(1 << 30))}) {
    if (only.empty() || only == name) run_ring_case(name, bytes, repeat);
  }
  const std::vector<ScenarioCase> scenario_cases = {
      {"resnet50_dp_1024_gpus", "resnet50_dp_1024_dgx1_ib.json"},
      {"resnet50_dp_8192_gpus", "resnet50_dp_8192_dgx1_ib.json"},
      {"gpt_1t_3072_gpus_3d", "gpt_1t_3072_gpus_3d.json"},
      {"gpt_1t_3072_gpus_3d_analytical", "gpt_1t_3072_gpus_3d.json", Tier::kAnalytical},
      {"gpt_1t_3072_gpus_3d_closed_form", "gpt_1t_3072_gpus_3d.json", Tier::kClosedForm},
      {"mixtral_8x7b_ep8_64_gpus_closed_form", "mixtral_8x7b_ep8_64_gpus.json", Tier::kClosedForm},
      {"pipedream_gpt_8_gpus", "pipedream_gpt_8_gpus.json"},
  };
  for (const ScenarioCase& c : scenario_cases) {
    if (only.empty() || only == c.name) run_scenario_case(c, repeat);
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> startup_cases = {
      {"startup_version", {"--version"}},
      {"startup_check_seed", {"check", "scenarios/seed_device_placement.json"}},
      {"startup_run_seed", {"run", "scenarios/seed_device_placement.json"}},
  };
  for (const auto& [name, arguments] : startup_cases) {
    if (only.empty() || only == name) run_startup_case(name, arguments, repeat);
  }
  const std::string sweep_case = "sweep_resnet50_1000_configs_analytical";
  if (only.empty() || only == sweep_case) run_sweep_case(sweep_case, kSweepScenario);
  const std::string sweep_3d_case = "sweep_gpt3_175b_2304_3d_configs_closed_form";
  if (only.empty() || only == sweep_3d_case) run_sweep_case(sweep_3d_case, kSweep3dScenario);
  const std::string screen_case = "screen_probe_gpt3_175b_2304_3d_configs";
  if (only == screen_case) run_screen_probe_case(screen_case, kSweep3dScenario);  // by name only: a measurement
  const std::string split_case = "screen_split_gpt3_175b_20736_3d_configs";
  if (only == split_case) run_screen_split_case(split_case, "scenarios/sweep_gpt3_175b_search.json");  // by name only
  const std::string search_case = "search_gpt3_175b_20736_3d_configs";
  if (only.empty() || only == search_case) run_search_case(search_case, "scenarios/sweep_gpt3_175b_search.json");
  // The same tier over expert layouts (a cell per layout across data widths since 2026-12-06).
  const std::string moe_search_case = "search_mixtral_8x7b_4096_moe_configs";
  if (only.empty() || only == moe_search_case) run_search_case(moe_search_case, "scenarios/sweep_mixtral_8x7b_search.json");
  const std::string sweep_nodes_case = "sweep_mlp_tree_100000_nodes_analytical";
  if (only.empty() || only == sweep_nodes_case) run_sweep_case(sweep_nodes_case, kSweep100000NodesScenario);
  return 0;
}

}  // namespace
}  // namespace placesim::bench

int main(int argc, char** argv) {
  // Its scenarios are read relative to the repository root: run elsewhere, it says so instead of
  // aborting on the uncaught error.
  try {
    return placesim::bench::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "placesim_bench: %s (run it from the repository root)\n", error.what());
    return 2;
  }
}
