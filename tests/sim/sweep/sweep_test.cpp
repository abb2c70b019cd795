// The sweep's logic on small hand-checked cases: expansion of the spec, costs and constraints,
// the Pareto frontier, the recommendation, the resume store, the process pool and the reports'
// data points.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "sim/sweep/pareto_frontier.h"
#include "sim/sweep/process_pool.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/recommendation.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/report/chart/svg_text.h"
#include "sim/sweep/report/svg_chart.h"
#include "sim/sweep/result_store.h"
#include "sim/scenario/sweep_reader.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {
namespace {

HardwareCatalog catalog() { return HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"); }

SweepSpec read(const std::string& text) {
  static Json document;  // the spec's readers keep paths into it only while reading
  document = Json::parse(text);
  HardwareCatalog hardware = catalog();
  return read_sweep_spec(JsonReader(document, "sweep.json"), hardware);
}

StrategyVariant variant_of(const std::string& label, const std::string& kind, Json strategy) {
  StrategyVariant variant;
  variant.label = label;
  variant.kind = kind;
  variant.strategy = std::move(strategy);
  return variant;
}

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

// --- spec and expansion -------------------------------------------------------------------

TEST(SweepSpec, ExpandsEveryDimensionNodeTypeSlowestPrecisionFastest) {
  SweepSpec spec = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"devices_per_node": [1, 2, 8, 16], "nodes": [1, 2], "fabric": ["ib_edr", "eth_100g"],
              "strategies": [{"name": "ar", "data_parallel": {"algorithm": "ring"}},
                             {"name": "ps", "data_parallel": {"aggregation": "parameter_server", "num_ps": [1, 2]}}],
              "batch_size": [32], "precision": ["fp32", "fp16"]}})");
  // 16 > 8 GPUs per DGX-1 is left out: 3 device counts; 1 node (no fabric) + 2 nodes x 2 fabrics
  // = 3 layouts; strategies: ar + ps num_ps=1 + ps num_ps=2 = 3; 2 precisions: 3 x 3 x 3 x 2 = 54.
  ASSERT_EQ(spec.configurations.size(), 3u * 3u * 3u * 2u);
  // The count the 1,000,000-configuration limit is checked on, before anything is built.
  const SweepDimensions dimensions{{1, 2, 8, 16}, {1, 2}, {"ib_edr", "eth_100g"}, {32}, {"fp32", "fp16"}};
  EXPECT_EQ(configuration_count(spec, dimensions), 54u);
  EXPECT_EQ(expand_configurations(spec, dimensions).size(), 54u);
  ASSERT_EQ(spec.strategies.size(), 3u);
  EXPECT_EQ(spec.strategies[1].label, "ps num_ps=1");
  EXPECT_EQ(spec.strategies[2].label, "ps num_ps=2");
  const SweepConfiguration& second = spec.configurations[1];
  EXPECT_EQ(second.devices_per_node, 1);
  EXPECT_EQ(second.precision, "fp16");
  EXPECT_EQ(spec.configurations[2].strategy, 1u);
  // After the 1-node block (3 strategies x 2 precisions = 6) come 2 nodes on ib_edr.
  EXPECT_EQ(spec.configurations[6].nodes, 2);
  EXPECT_EQ(spec.configurations[6].fabric, "ib_edr");
  EXPECT_EQ(spec.configurations[12].fabric, "eth_100g");
  for (size_t i = 0; i < spec.configurations.size(); ++i) EXPECT_EQ(spec.configurations[i].index, i);
  EXPECT_EQ(spec.node_types[0].device_id, "v100-sxm2-16gb");
  EXPECT_EQ(spec.node_types[0].accelerators.size(), 8u);
}

TEST(SweepSpec, RangesAreArithmeticOrGeometric) {
  SweepSpec spec = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"fabric": ["ib_edr"], "nodes": {"from": 1, "to": 8, "times": 2}, "batch_size": {"from": 16, "to": 48, "step": 16}}})");
  // nodes 1, 2, 4, 8 x batches 16, 32, 48, 8 GPUs per node by default.
  ASSERT_EQ(spec.configurations.size(), 4u * 3u);
  EXPECT_EQ(spec.configurations.back().nodes, 8);
  EXPECT_EQ(spec.configurations.back().batch_size, 48);
  EXPECT_EQ(spec.configurations.back().devices(), 64);
}

TEST(SweepSpec, ConfigurationDevicesAreEachNodesFirstAccelerators) {
  SweepSpec spec = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"devices_per_node": [2], "nodes": [2], "fabric": ["ib_edr"], "batch_size": [8], "precision": ["fp16"]}})");
  EXPECT_EQ(configuration_devices(spec, spec.configurations[0]),
            (std::vector<std::string>{"/task:0/device:GPU:0", "/task:0/device:GPU:1", "/task:1/device:GPU:0",
                                      "/task:1/device:GPU:1"}));
}

// A variant remembers where each listed value came from (for the errors of the configurations
// that use it), and a 3D variant's micro_batch_size, which is the sweep's, not a scenario option.
TEST(SweepSpec, VariantsKnowTheJsonPathOfEveryListedValue) {
  SweepSpec spec = read(R"({"model": {"zoo": "gpt"}, "cluster": {"template": "dgx_a100"},
    "sweep": {"strategies": [{"data_parallel": {}}, {"parallelism": {"tensor": [8, 4], "pipeline": 2, "micro_batch_size": [1, 3]}}]}})");
  ASSERT_EQ(spec.strategies.size(), 5u);
  EXPECT_EQ(spec.strategies[0].json_path, "/sweep/strategies/0/data_parallel");
  EXPECT_TRUE(spec.strategies[0].option_paths.empty());
  const StrategyVariant& four_by_three = spec.strategies[4];
  EXPECT_EQ(four_by_three.label, "3D micro_batch_size=3 tensor=4");  // keys in order, the first slowest
  EXPECT_EQ(four_by_three.json_path, "/sweep/strategies/1/parallelism");
  EXPECT_EQ(four_by_three.option_paths.at("tensor"), "/sweep/strategies/1/parallelism/tensor/1");
  EXPECT_EQ(four_by_three.option_paths.at("micro_batch_size"), "/sweep/strategies/1/parallelism/micro_batch_size/1");
  EXPECT_EQ(four_by_three.option_paths.count("pipeline"), 0u);
  EXPECT_EQ(four_by_three.micro_batch_size, 3);
  EXPECT_FALSE(four_by_three.sets_micro_batches);  // micro-batches come from micro_batch_size
  EXPECT_FALSE(four_by_three.sets_algorithm);      // the ring by default
  EXPECT_FALSE(four_by_three.strategy["parallelism"].contains("micro_batch_size"));
  EXPECT_EQ(four_by_three.strategy["parallelism"]["tensor"], 4);
}

TEST(SweepSpec, BadSizesNameTheirJsonPath) {
  EXPECT_NE(error_of(R"({"model": {"zoo": "gpt"}, "cluster": {"template": "dgx_a100"},
    "sweep": {"strategies": [{"parallelism": {"data": 2}}]}})").find("/sweep/strategies/0/parallelism/data: the sweep sets"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"zoo": "gpt"}, "cluster": {"template": "dgx_a100"},
    "sweep": {"strategies": [{"parallelism": {"tensor": [8, "4"]}}]}})").find("/sweep/strategies/0/parallelism/tensor/1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model": {"zoo": "gpt"}, "cluster": {"template": "dgx_a100"},
    "sweep": {"strategies": [{"parallelism": {"pipeline": 2, "virtual_stages": [2, 0]}}]}})")
                .find("/sweep/strategies/0/parallelism/virtual_stages/1"),
            std::string::npos);
  // PipeDream's replicated stages have widths of their own; the sweep sizes every stage alike.
  EXPECT_NE(error_of(R"({"model": {"zoo": "gpt"}, "cluster": {"template": "dgx_a100"},
    "sweep": {"strategies": [{"parallelism": {"pipeline": 2, "schedule": "pipedream", "stage_replicas": [3, 1]}}]}})")
                .find("/sweep/strategies/0/parallelism/stage_replicas: a sweep gives every stage"),
            std::string::npos);
}

// 8 GPU counts x 1,000 node counts (999 of them on the fabric) x 200 batches = 1,600,000 > the
// 1,000,000 configurations a sweep may have: refused from the count, before any is built.
TEST(SweepSpec, MoreThanAMillionConfigurationsAreRefusedBeforeTheyAreBuilt) {
  EXPECT_NE(error_of(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"devices_per_node": {"from": 1, "to": 8, "step": 1}, "nodes": {"from": 1, "to": 1000, "step": 1},
              "fabric": ["ib_edr"], "batch_size": {"from": 1, "to": 200, "step": 1}}})")
                .find("/sweep: more than 1000000 configurations"),
            std::string::npos);
}

TEST(SweepSpec, BadValuesNameTheirJsonPath) {
  const std::string head = R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"}, "sweep": )";
  EXPECT_NE(error_of(head + R"({"precision": ["fp33"]}})").find("/sweep/precision/0: unknown precision \"fp33\""),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"nodes": [1, 2]}})").find("/sweep/nodes: \"dgx1_v100\" has no fabric"), std::string::npos);
  EXPECT_NE(error_of(head + R"({"fidelity": "analytical+recheck 0"}})").find("/sweep/fidelity"), std::string::npos);
  EXPECT_NE(error_of(head + R"({"strategies": [{"data_parallel": {"replicas": 4}}]}})").find("/sweep/strategies/0/data_parallel/replicas"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"target": {"time_to_train_seconds": 10}}})").find("needs \"train\""), std::string::npos);
  EXPECT_NE(error_of(head + R"({"devices_per_node": [9]}})").find("/sweep/devices_per_node"), std::string::npos);
  EXPECT_NE(error_of(head + R"({"batch_size": [8, 8]}})").find("/sweep/batch_size/1: the value 8 is listed twice"),
            std::string::npos);
}

TEST(SweepSpec, FidelityRecheckTakesACount) {
  SweepSpec spec = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
                            "sweep": {"fidelity": "analytical+recheck 3"}})");
  EXPECT_EQ(spec.tier, Tier::kAnalytical);
  EXPECT_EQ(fidelity_name(spec), "analytical+recheck 3");
  EXPECT_EQ(spec.recheck, 3u);
}

TEST(SweepSpec, ThePriceComesFromTheProfilesUnlessTheScenarioOverridesIt) {
  SweepSpec listed = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"}, "sweep": {}})");
  // hardware_profiles/prices.json: p3.16xlarge $24.48/h over 8 GPUs.
  EXPECT_DOUBLE_EQ(*listed.prices.device_price("v100-sxm2-16gb"), 24.48 / 8);
  SweepSpec overridden = read(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"prices": {"devices": {"v100-sxm2-16gb": 1.5}, "nodes": {"dgx1_v100": 2}}}})");
  // 8 devices on 2 nodes: 8 x 1.5 + 2 x 2 = 16 $/h.
  EXPECT_DOUBLE_EQ(*overridden.prices.usd_per_hour("v100-sxm2-16gb", "dgx1_v100", 8, 2), 8 * 1.5 + 2 * 2.0);
}

TEST(SweepSpec, TokensPerSampleComeFromTheGptSequence) {
  SweepSpec spec = read(R"({"model": {"zoo": "gpt", "parameters": {"sequence": 512}}, "cluster": {"template": "dgx1_v100"},
    "sweep": {"target": {"tokens_per_second": 1e5}, "train": {"tokens": 1e9}}})");
  EXPECT_EQ(spec.tokens_per_sample, 512);
  EXPECT_DOUBLE_EQ(spec.train_samples, 1e9 / 512);
}

// --- outcomes, Pareto frontier, recommendation ---------------------------------------------

/// A hand-made sweep: one node type (price $2/device-hour), configurations with 1, 2, 4 and 8
/// devices, train 3.6e6 samples.
SweepSpec hand_spec(size_t count) {
  SweepSpec spec;
  spec.node_types.push_back({"box", "gpu", {"GPU:0", "GPU:1", "GPU:2", "GPU:3", "GPU:4", "GPU:5", "GPU:6", "GPU:7"}, true});
  spec.strategies.push_back(variant_of("all-reduce", "data_parallel", Json::object()));
  spec.prices.usd_per_device_hour["gpu"] = 2.0;
  spec.train_samples = 3.6e6;
  for (size_t i = 0; i < count; ++i) {
    SweepConfiguration c;
    c.index = i;
    c.devices_per_node = int64_t{1} << std::min<size_t>(i, 3);
    c.precision = "fp32";
    spec.configurations.push_back(c);
  }
  return spec;
}

SweepRow ok_row(size_t index, double samples_per_second, double single = 0) {
  SweepRow row;
  row.index = index;
  row.samples_per_second = samples_per_second;
  row.step_seconds = 1;
  row.compute_seconds = 0.75;
  row.exposed_communication_seconds = 0.25;
  row.single_replica_samples_per_second = single;
  return row;
}

std::map<std::pair<size_t, Tier>, SweepRow> rows_of(const std::vector<SweepRow>& rows) {
  std::map<std::pair<size_t, Tier>, SweepRow> map;
  for (const auto& row : rows) map[{row.index, row.tier}] = row;
  return map;
}

TEST(SweepOutcome, CostAndTimeToTrainFollowFromThroughputAndPrice) {
  SweepSpec spec = hand_spec(2);
  auto outcomes = assess(spec, rows_of({ok_row(0, 1000, 1000), ok_row(1, 1600, 1000)}));
  // 1 device at 1000 samples/s: 3.6e6 / 1000 = 3600 s = 1 h at $2/h = $2.
  EXPECT_DOUBLE_EQ(outcomes[0].time_to_train_seconds, 3600);
  EXPECT_DOUBLE_EQ(outcomes[0].usd_to_train, 2.0);
  // 2 devices at 1600 samples/s: 2250 s at $4/h = $2.50; efficiency 1600 / (2 x 1000) = 0.8.
  EXPECT_DOUBLE_EQ(outcomes[1].time_to_train_seconds, 2250);
  EXPECT_DOUBLE_EQ(outcomes[1].usd_to_train, 4.0 * 2250 / 3600);
  EXPECT_DOUBLE_EQ(outcomes[1].scaling_efficiency, 0.8);
}

TEST(SweepOutcome, TargetAndBudgetDecideWhatIsAcceptable) {
  SweepSpec spec = hand_spec(3);
  spec.target = SweepTarget{"samples_per_second", 1500};
  spec.budget_usd_per_hour = 5.0;
  // 1 device / 1000 samples/s misses the target; 2 devices / 1600 meets both ($4/h);
  // 4 devices / 3000 meets the target but costs $8/h.
  auto outcomes = assess(spec, rows_of({ok_row(0, 1000), ok_row(1, 1600), ok_row(2, 3000)}));
  EXPECT_FALSE(outcomes[0].meets_target);
  EXPECT_TRUE(outcomes[1].acceptable());
  EXPECT_TRUE(outcomes[2].meets_target);
  EXPECT_FALSE(outcomes[2].within_budget);
}

TEST(SweepOutcome, OutOfMemoryIsNeverAcceptable) {
  SweepSpec spec = hand_spec(1);
  SweepRow row = ok_row(0, 5000);
  row.status = RowStatus::kOutOfMemory;
  auto outcomes = assess(spec, rows_of({row}));
  EXPECT_FALSE(outcomes[0].fits());
  EXPECT_FALSE(outcomes[0].acceptable());
  Recommendation r = recommend(spec, &outcomes);
  EXPECT_FALSE(r.index.has_value());
  EXPECT_NE(r.reason.find("0 fit in memory"), std::string::npos) << r.reason;
}

TEST(ParetoFrontier, KeepsThePointsNoOtherBeatsOnBothAxes) {
  // (usd, seconds): A(1, 10) B(2, 5) C(3, 6) D(4, 1) E(2, 5) F(5, 1)
  // C is beaten by B (cheaper and faster); F by D (same time, cheaper); E duplicates B.
  std::vector<bool> frontier = pareto_frontier({{1, 10}, {2, 5}, {3, 6}, {4, 1}, {2, 5}, {5, 1}});
  EXPECT_EQ(frontier, (std::vector<bool>{true, true, false, true, true, false}));
}

TEST(ParetoFrontier, OnlyConfigurationsThatFitAreOnIt) {
  SweepSpec spec = hand_spec(2);
  SweepRow oom = ok_row(1, 1e9);
  oom.status = RowStatus::kOutOfMemory;
  auto outcomes = assess(spec, rows_of({ok_row(0, 1000), oom}));
  mark_pareto_frontier(&outcomes);
  EXPECT_TRUE(outcomes[0].pareto);
  EXPECT_FALSE(outcomes[1].pareto);
}

TEST(Recommendation, PicksTheCheapestAcceptableAndSaysWhy) {
  SweepSpec spec = hand_spec(4);
  spec.target = SweepTarget{"samples_per_second", 1500};
  // Costs to train 3.6e6 samples at $2/device-hour: 1 device @1000: $2 (misses the target);
  // 2 @1600: $2.50; 4 @3600: $2.22; 8 @6000: $2.67. Cheapest acceptable: 4 devices (index 2).
  auto outcomes = assess(spec, rows_of({ok_row(0, 1000), ok_row(1, 1600), ok_row(2, 3600), ok_row(3, 6000)}));
  Recommendation r = recommend(spec, &outcomes);
  ASSERT_TRUE(r.index.has_value());
  EXPECT_EQ(*r.index, 2u);
  EXPECT_TRUE(outcomes[2].recommended);
  EXPECT_NE(r.reason.find("cheapest of the 3 of 4 configurations"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("$2.22"), std::string::npos) << r.reason;
  // The next cheapest acceptable is 2 devices: 2.5 / 2.222 - 1 = 12.5% more.
  EXPECT_NE(r.reason.find("configuration 1"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("12.5% more"), std::string::npos) << r.reason;
  EXPECT_EQ(rank_configurations(outcomes), (std::vector<size_t>{2, 1, 3, 0}));
}

TEST(Recommendation, NothingQualifiesWhenTheTargetIsOutOfReach) {
  SweepSpec spec = hand_spec(2);
  spec.target = SweepTarget{"samples_per_second", 1e6};
  auto outcomes = assess(spec, rows_of({ok_row(0, 1000), ok_row(1, 1900)}));
  Recommendation r = recommend(spec, &outcomes);
  EXPECT_FALSE(r.index.has_value());
  EXPECT_NE(r.reason.find("the fastest, configuration 1"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("short of the target"), std::string::npos) << r.reason;
}

TEST(SweepRow, SplitsTheIdlePartOfAStepInOrder) {
  SweepRow row;
  // step 10, compute 6: 4 idle = 3 exposed communication + 1 of the 2 straggler seconds.
  split_step_time(10, 6, 3, 2, 0, &row);
  EXPECT_DOUBLE_EQ(row.compute_seconds, 6);
  EXPECT_DOUBLE_EQ(row.exposed_communication_seconds, 3);
  EXPECT_DOUBLE_EQ(row.straggler_seconds, 1);
  EXPECT_DOUBLE_EQ(row.other_seconds, 0);
  EXPECT_DOUBLE_EQ(row.compute_seconds + row.exposed_communication_seconds + row.straggler_seconds +
                       row.bubble_seconds + row.other_seconds,
                   10);
}

// --- resume store ---------------------------------------------------------------------------

/// The resume file's line as nlohmann writes the object of the row's fields (what the store
/// wrote before it wrote lines directly).
std::string dumped_object(const SweepRow& row) {
  return Json{{"index", row.index},
              {"tier", to_string(row.tier)},
              {"status", to_string(row.status)},
              {"reason", row.reason},
              {"step_seconds", row.step_seconds},
              {"samples_per_second", row.samples_per_second},
              {"single_replica_samples_per_second", row.single_replica_samples_per_second},
              {"replicas", row.replicas},
              {"compute_seconds", row.compute_seconds},
              {"exposed_communication_seconds", row.exposed_communication_seconds},
              {"bubble_seconds", row.bubble_seconds},
              {"straggler_seconds", row.straggler_seconds},
              {"other_seconds", row.other_seconds},
              {"peak_memory_bytes", row.peak_memory_bytes},
              {"memory_capacity_bytes", row.memory_capacity_bytes},
              {"tasks", row.tasks},
              {"model_flops_per_sample", row.model_flops_per_sample},
              {"hardware_flops_per_sample", row.hardware_flops_per_sample},
              {"tokens_per_sample", row.tokens_per_sample},
              {"peak_flops_per_second", row.peak_flops_per_second}}
             .dump();
}

TEST(SweepRow, ALineIsTheDumpOfItsObjectByteForByte) {
  // Doubles at every switch of the number format (fixed below 1e15, exponent from 1e16 and
  // under 1e-4, a negative zero, integral values written with ".0"), not finite ones (null),
  // a reason with characters to escape, every tier and status, a negative replica count.
  const std::vector<double> numbers = {0.0, -0.0, 1.0, 0.1, 1.0 / 3.0, 56.684158860869125, 6.33216e+16, 1e15, 1e16,
                                       123456789012345.0, 1e-4, 1.5e-5, 1e-300, 1.7976931348623157e308, -2.5,
                                       std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
  const std::vector<Tier> tiers = {Tier::kAnalytical, Tier::kSimulated, Tier::kSearch};
  const std::vector<RowStatus> statuses = {RowStatus::kOk, RowStatus::kOutOfMemory, RowStatus::kNotApplicable};
  for (size_t i = 0; i < numbers.size(); ++i) {
    SweepRow row;
    row.index = 1000003 * i;
    row.tier = tiers[i % tiers.size()];
    row.status = statuses[i % statuses.size()];
    row.reason = i % 2 ? "stage 0 needs \"1.2 TiB\"\tof\n80 GiB \\ caf\u00e9 \x01" : "";
    row.replicas = i == 3 ? -1 : static_cast<int64_t>(i);
    row.tasks = 7 * i;
    double* fields[] = {&row.step_seconds, &row.samples_per_second, &row.single_replica_samples_per_second,
                        &row.compute_seconds, &row.exposed_communication_seconds, &row.bubble_seconds,
                        &row.straggler_seconds, &row.other_seconds, &row.peak_memory_bytes,
                        &row.memory_capacity_bytes, &row.model_flops_per_sample, &row.hardware_flops_per_sample,
                        &row.tokens_per_sample, &row.peak_flops_per_second};
    for (size_t f = 0; f < std::size(fields); ++f) *fields[f] = numbers[(i + f) % numbers.size()];
    std::string line;
    append_row_json_line(row, &line);
    EXPECT_EQ(line, dumped_object(row) + "\n") << "numbers from " << i;
  }
}

std::filesystem::path temp_file(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("placesim_sweep_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return dir / name;
}

TEST(ResultStore, KeepsFinishedRowsAndDropsALineCutShort) {
  std::filesystem::path path = temp_file("results.jsonl");
  {
    ResultStore store(path, "abc");
    store.append(ok_row(0, 10));
    store.append(ok_row(1, 20));
  }
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"index": 2, "tier": "analy)";  // interrupted mid-line
  }
  ResultStore reopened(path, "abc");
  EXPECT_EQ(reopened.rows().size(), 2u);
  EXPECT_TRUE(reopened.has(1, Tier::kAnalytical));
  EXPECT_FALSE(reopened.has(2, Tier::kAnalytical));
  reopened.append(ok_row(2, 30));
  ResultStore again(path, "abc");
  EXPECT_EQ(again.rows().size(), 3u);
  EXPECT_DOUBLE_EQ(again.rows().at({2, Tier::kAnalytical}).samples_per_second, 30);
}

TEST(ResultStore, RefusesTheResultsOfAnotherSweep) {
  std::filesystem::path path = temp_file("other.jsonl");
  { ResultStore store(path, "abc"); }
  EXPECT_THROW(ResultStore(path, "def"), InputError);
}

// --- process pool and progress -------------------------------------------------------------

TEST(ProcessPool, EveryItemIsEvaluatedOnceInAChildProcess) {
  std::vector<size_t> items = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::map<size_t, std::string> got;
  pid_t parent = ::getpid();
  run_in_processes(
      items, 3, [parent](size_t i) { return std::to_string(i * i) + (::getpid() != parent ? " child" : " parent"); },
      [&](size_t i, const std::string& text) { EXPECT_TRUE(got.emplace(i, text).second); });
  ASSERT_EQ(got.size(), items.size());
  for (size_t i : items) EXPECT_EQ(got[i], std::to_string(i * i) + " child");
}

TEST(ProcessPool, AWorkerThatDiesEndsThePoolWithAnError) {
  EXPECT_THROW(run_in_processes({0, 1, 2}, 2, [](size_t i) -> std::string {
                 if (i == 1) ::_exit(9);
                 return "ok";
               }, [](size_t, const std::string&) {}),
               std::runtime_error);
}

TEST(ProcessPool, KeepsItsWorkersFromOneBatchToTheNextAndForksMoreOnlyWhenABatchNeedsThem) {
  // Each answer names the worker's process, the tag its batch was sent with, and how many items
  // that process evaluated before (state kept in the child, as a sweep's caches are).
  size_t evaluated_here = 0;
  ProcessPool pool(2, [&evaluated_here](size_t item, int tag) {
    return std::to_string(::getpid()) + " " + std::to_string(tag) + " " + std::to_string(item) + " " +
           std::to_string(evaluated_here++);
  });
  auto batch = [&](const std::vector<size_t>& items, int tag) {
    std::map<size_t, std::vector<std::string>> got;
    pool.run(items, tag, [&](size_t item, const std::string& text) {
      std::istringstream fields(text);
      std::vector<std::string> words{std::istream_iterator<std::string>(fields), {}};
      EXPECT_EQ(words.size(), 4u) << text;
      EXPECT_EQ(words[1], std::to_string(tag));
      EXPECT_EQ(words[2], std::to_string(item));
      EXPECT_TRUE(got.emplace(item, words).second);
    });
    EXPECT_EQ(got.size(), items.size());
    return got;
  };
  auto pids = [](const std::map<size_t, std::vector<std::string>>& got) {
    std::set<std::string> result;
    for (const auto& [item, words] : got) result.insert(words[0]);
    return result;
  };
  const auto first = batch({7}, 3);  // one item: one worker
  ASSERT_EQ(pids(first).size(), 1u);
  EXPECT_NE(first.at(7)[0], std::to_string(::getpid()));
  EXPECT_EQ(first.at(7)[3], "0");
  const auto second = batch({0, 1, 2, 3, 4, 5}, -1);  // the first worker and one more
  const std::set<std::string> both = pids(second);
  EXPECT_EQ(both.size(), 2u);
  EXPECT_EQ(both.count(first.at(7)[0]), 1u);
  size_t counted_before = 0;  // the first worker goes on counting from 1
  for (const auto& [item, words] : second) counted_before += words[0] == first.at(7)[0] && words[3] == "1";
  EXPECT_EQ(counted_before, 1u);
  EXPECT_EQ(evaluated_here, 0u);  // nothing ran in this process

  // on_result throws: the batch's workers are stopped, and the next batch forks new ones.
  EXPECT_THROW(pool.run({0, 1, 2, 3}, 0, [](size_t, const std::string&) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  const auto after = batch({8, 9}, 1);
  for (const std::string& pid : pids(after)) EXPECT_EQ(both.count(pid), 0u) << pid;
  for (const auto& [item, words] : after) EXPECT_EQ(words[3], "0");
}

TEST(ProgressBar, ShowsCountRateAndTimeLeft) {
  // 10 of 40 after 5 s: 2.0/s, 30 left -> 15 s.
  EXPECT_EQ(ProgressBar::render("sweep", 10, 40, 5.0), "sweep [#######                       ] 10/40  2.0/s  ETA 15s");
}

TEST(ProgressBar, PrintsPlainLinesWhenNotATerminal) {
  std::ostringstream out;
  ProgressBar bar(out, "sweep", 20, false);
  for (int i = 0; i < 20; ++i) bar.advance();
  bar.finish();
  std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);  // one line per tenth
}

// On a terminal the bar is redrawn at most ten times a second and at the end: 100,000 rows that
// finish in well under a second redraw it a handful of times (not 100,000), the last at 100%.
TEST(ProgressBar, RedrawsATerminalAtMostTenTimesASecondAndAtTheEnd) {
  std::ostringstream out;
  const auto start = std::chrono::steady_clock::now();
  ProgressBar bar(out, "search", 100000, true);
  for (int i = 0; i < 100000; ++i) bar.advance();
  bar.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string text = out.str();
  const auto redraws = static_cast<double>(std::count(text.begin(), text.end(), '\r'));
  EXPECT_LE(redraws, 3 + 10 * seconds) << seconds << " s";  // the initial draw, the first advance, the last
  EXPECT_NE(text.rfind("100000/100000"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

// --- reports --------------------------------------------------------------------------------

size_t count(const std::string& text, const std::regex& pattern) {
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

/// The part of the page inside <svg id="ID"> ... </svg>.
std::string svg_of(const std::string& html, const std::string& id) {
  size_t start = html.find("<svg id=\"" + id + "\"");
  size_t end = html.find("</svg>", start);
  return start == std::string::npos ? "" : html.substr(start, end - start);
}

/// Two device types x two per-replica batches of all-reduce on 1 and 2 devices (4 series, 8
/// configurations, scaling defined), and a 3D strategy on 4 and 8 devices of the first type at
/// global batch 512 (1 series, no one-device baseline: scaling efficiency undefined).
SweepReport mixed_report(SweepSpec* spec) {
  spec->node_types.push_back({"box_a", "gpuA", {"GPU:0", "GPU:1", "GPU:2", "GPU:3", "GPU:4", "GPU:5", "GPU:6", "GPU:7"}, true, 8});
  spec->node_types.push_back({"box_b", "gpuB", {"GPU:0", "GPU:1", "GPU:2", "GPU:3", "GPU:4", "GPU:5", "GPU:6", "GPU:7"}, true, 8});
  spec->strategies.push_back(variant_of("all-reduce", "data_parallel", Json::object()));
  spec->strategies.push_back(variant_of("3D", "parallelism", Json{{"parallelism", {{"tensor", 2}, {"pipeline", 2}}}}));
  spec->prices.usd_per_device_hour["gpuA"] = 2.0;
  spec->prices.usd_per_device_hour["gpuB"] = 3.0;
  spec->train_samples = 3.6e6;
  std::vector<SweepRow> rows;
  auto add = [&](size_t type, size_t strategy, int64_t batch, int64_t devices, double samples, double single) {
    SweepConfiguration c;
    c.index = spec->configurations.size();
    c.node_type = type, c.strategy = strategy, c.batch_size = batch, c.devices_per_node = devices, c.precision = "fp16";
    spec->configurations.push_back(c);
    rows.push_back(ok_row(c.index, samples, single));
  };
  // One device of type t gives 1000 (t + 1) samples/s; two give twice that (efficiency 1).
  for (size_t type : {0, 1}) {
    const double one_device = 1000.0 * static_cast<double>(type + 1);
    for (int64_t batch : {64, 256}) {
      for (int64_t devices : {1, 2}) add(type, 0, batch, devices, one_device * static_cast<double>(devices), one_device);
    }
  }
  add(0, 1, 512, 4, 3000, 0);
  add(0, 1, 512, 8, 5000, 0);
  SweepReport report;
  report.scenario = "mixed";
  report.spec = spec;
  report.outcomes = assess(*spec, rows_of(rows));
  mark_pareto_frontier(&report.outcomes);
  report.recommendation = recommend(*spec, &report.outcomes);
  return report;
}

/// Every (data-series, data-color, data-marker) of a chart's legend.
std::vector<std::array<std::string, 3>> legend_of(const std::string& svg) {
  std::vector<std::array<std::string, 3>> entries;
  const std::regex entry("class=\"legend-entry\" data-series=\"([^\"]*)\" data-color=\"([^\"]*)\" data-marker=\"([^\"]*)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), entry), end; it != end; ++it) {
    entries.push_back({(*it)[1].str(), (*it)[2].str(), (*it)[3].str()});
  }
  return entries;
}

TEST(SweepReports, EverySeriesOfStrategyDeviceAndBatchHasItsOwnColourMarkerAndLegendEntry) {
  SweepSpec spec;
  const std::string html = sweep_html(mixed_report(&spec));
  const std::string throughput = svg_of(html, "throughput");
  const auto legend = legend_of(throughput);
  // 4 all-reduce series (2 types x 2 batches) + 1 3D series + the recommendation's ring.
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> styles;
  for (const auto& [name, color, marker] : legend) {
    if (name == "recommended") continue;
    names.insert(name);
    styles.insert({color, marker});
    // Each series' points are drawn, and the legend's series name is the points' data-series.
    EXPECT_GE(count(throughput, std::regex("class=\"point\" data-config=\"[0-9]+\" data-series=\"" + name + "\"")), 1u) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"all-reduce, gpuA, batch 64/replica", "all-reduce, gpuA, batch 256/replica",
                                          "all-reduce, gpuB, batch 64/replica", "all-reduce, gpuB, batch 256/replica",
                                          "3D, gpuA, global batch 512"}));
  EXPECT_EQ(styles.size(), names.size()) << "two series share a colour and marker";
}

TEST(SweepReports, ScalingChartLeavesOutAndNamesRowsWithoutABaseline) {
  SweepSpec spec;
  const std::string html = sweep_html(mixed_report(&spec));
  const std::string scaling = svg_of(html, "scaling");
  // The 8 all-reduce configurations are drawn; the two 3D ones (scaling efficiency undefined) are
  // not, neither at 0 nor anywhere, and a note says so.
  EXPECT_EQ(count(scaling, std::regex("<path class=\"point\"")), 8u);
  EXPECT_EQ(scaling.find("data-series=\"3D, gpuA, global batch 512\""), std::string::npos);
  EXPECT_NE(scaling.find("Not shown: 2 configurations (3D) without a one-device baseline"), std::string::npos);
  // Efficiencies: 2 devices at 2x one device = 1.0; the axis is 0 to 1 in steps of 0.2.
  EXPECT_NE(scaling.find(">1.0</text>"), std::string::npos);
  EXPECT_EQ(count(svg_of(html, "throughput"), std::regex("<path class=\"point\"")), 10u);
}

TEST(SweepReports, ASearchsManySeriesDrawTheBestFifteenApartAndTheRestInGrey) {
  // 19 strategies (a search's layouts) on one device type, each on 8 devices at global batch
  // 512: strategy k gives 1000 + 100 k samples/s, so the best fifteen are strategies 18 down to
  // 4, and 0-3 are one grey series beneath them.
  SweepSpec spec;
  spec.node_types.push_back({"box_a", "gpuA", {"GPU:0", "GPU:1", "GPU:2", "GPU:3", "GPU:4", "GPU:5", "GPU:6", "GPU:7"}, true, 8});
  spec.prices.usd_per_device_hour["gpuA"] = 2.0;
  spec.train_samples = 3.6e6;
  std::vector<SweepRow> rows;
  for (size_t k = 0; k < 19; ++k) {
    spec.strategies.push_back(variant_of("layout " + std::to_string(k), "parallelism", Json{{"parallelism", {{"tensor", 2}}}}));
    SweepConfiguration c;
    c.index = k, c.node_type = 0, c.strategy = k, c.batch_size = 512, c.devices_per_node = 8, c.precision = "fp16";
    spec.configurations.push_back(c);
    rows.push_back(ok_row(k, 1000.0 + 100.0 * static_cast<double>(k)));
  }
  SweepReport report;
  report.scenario = "search";
  report.spec = &spec;
  report.outcomes = assess(spec, rows_of(rows));
  mark_pareto_frontier(&report.outcomes);
  report.recommendation = recommend(spec, &report.outcomes);
  const std::string throughput = svg_of(sweep_html(report), "throughput");
  std::set<std::string> names;
  for (const auto& entry : legend_of(throughput)) names.insert(entry[0]);
  EXPECT_EQ(names.size(), 17u) << throughput;  // fifteen series, the grey one, the recommendation's ring
  EXPECT_EQ(names.count("the other 4 series"), 1u);
  for (size_t k = 4; k < 19; ++k) EXPECT_EQ(names.count("layout " + std::to_string(k) + ", gpuA, global batch 512"), 1u) << k;
  EXPECT_EQ(names.count("layout 3, gpuA, global batch 512"), 0u);
  EXPECT_NE(throughput.find("19 series of strategy, device type and batch: the 15 with the best configurations drawn "
                            "apart, the other 4 (4 configurations) in grey"),
            std::string::npos);
  // Every configuration is still a marker (100 samples/s apart on a 0-3000 axis: no two coincide).
  EXPECT_EQ(count(throughput, std::regex("<path class=\"point\"")), 19u);
  // The scaling chart's note, one line, counts the strategies without a baseline when naming
  // them would run past 120 characters (19 names of 8-9 characters and their commas do).
  EXPECT_NE(sweep_html(report).find("Not shown: 19 configurations (19 strategies) without a one-device baseline"),
            std::string::npos);
  EXPECT_NE(throughput.find("class=\"point\" data-config=\"0\" data-series=\"the other 4 series\""), std::string::npos);
}

TEST(SweepReports, LongSeriesNamesAreShortenedInTheLegendOnly) {
  // Two layouts named by every option (wider than 35% of the chart at 12 px) differ only in
  // tensor and pipeline: their labels keep those; a short name stays; one without anything to
  // drop is cut with an ellipsis. Points and legend entries keep the full names (data-series).
  const std::string common = "schedule=1f1b selective_recompute=false stage_split=layers virtual_stages=1 zero=1 "
                             "sequence_parallel=true, h100-sxm5-80gb, global batch 1024";
  const std::string a = "3D expert=8 tensor=1 pipeline=4 " + common, b = "3D expert=8 tensor=2 pipeline=2 " + common;
  const std::string alone = std::string(200, 'x');
  ScatterChart chart{"c", "t", "x", "y", AxisScale::kLinear, AxisScale::kLinear, {}, "", false};
  for (const std::string& name : {a, b, std::string("the other 3 series")}) {
    chart.series.push_back({name, {{8, 100, chart.series.size(), "tip", false}}, false, false, std::nullopt});
  }
  std::string svg = render_scatter(chart);
  EXPECT_NE(svg.find(">tensor=1 pipeline=4</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">tensor=2 pipeline=2</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">the other 3 series</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"legend-entry\" data-series=\"" + a + "\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"point\" data-config=\"1\" data-series=\"" + b + "\""), std::string::npos) << svg;
  chart.series = {{alone, {{8, 100, 0, "tip", false}}, false, false, std::nullopt}};
  svg = render_scatter(chart);
  const std::regex cut(">(x+)\u2026</text>");
  std::smatch label;
  ASSERT_TRUE(std::regex_search(svg, label, cut)) << svg;
  EXPECT_LT(label[1].length(), alone.size());
  EXPECT_LE(text_width(label[1].str() + "\u2026", 12), 0.35 * kChartWidth);
}

TEST(SweepReports, CoincidentMarkersAreDrawnOnceAndNameEveryConfiguration) {
  // Configurations 3, 5 and 9 of one series have one value at one device count (ZeRO stages
  // that leave a step as it was), 4 another; the ringed recommendation (9) leads its marker.
  // Twelve more coincide at 16 devices: the tooltip names ten of the other eleven and counts one.
  ScatterChart chart{"c", "t", "x", "y", AxisScale::kLinear, AxisScale::kLinear, {}, "", false};
  ChartSeries series{"s", {}, false, false, std::nullopt};
  series.points = {{8, 100, 3, "#3", false}, {8, 200, 4, "#4", false}, {8, 100, 5, "#5", false}, {8, 100, 9, "#9", true}};
  for (size_t config = 20; config < 32; ++config) series.points.push_back({16, 50, config, "#" + std::to_string(config), false});
  chart.series.push_back(series);
  const std::string svg = render_scatter(chart);
  EXPECT_EQ(count(svg, std::regex("<path class=\"point\"")), 3u);
  EXPECT_NE(svg.find("data-config=\"9\" data-series=\"s\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>#9 (the same here: #3, #5)</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-config=\"4\" data-series=\"s\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>#4</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>#20 (the same here: #21, #22, #23, #24, #25, #26, #27, #28, #29, #30 and 1 more)</title>"),
            std::string::npos)
      << svg;
  EXPECT_EQ(count(svg, std::regex("class=\"highlight\"")), 1u);
}

TEST(SweepReports, DeviceAxisEndsAtTheLargestConfigurationAndLabelsCarryTheGlobalBatch) {
  SweepSpec spec;
  const std::string html = sweep_html(mixed_report(&spec));
  const std::string throughput = svg_of(html, "throughput");
  // 1 to 8 devices on powers of two: ticks 1, 2, 4, 8 and nothing beyond (no 10 or 100).
  for (const char* tick : {">1</text>", ">2</text>", ">4</text>", ">8</text>"}) EXPECT_NE(throughput.find(tick), std::string::npos) << tick;
  EXPECT_EQ(throughput.find(">16</text>"), std::string::npos);
  EXPECT_EQ(throughput.find(">100</text>"), std::string::npos);
  // Step-time rows name the global batch: configuration 1 is batch 64 per replica on 2 devices
  // = 128; configuration 3 is 256 x 2 = 512; 3D configuration 8 has global batch 512.
  const std::string breakdown = svg_of(html, "breakdown");
  EXPECT_NE(breakdown.find(">#1 2 x gpuA, all-reduce, global batch 128"), std::string::npos);
  EXPECT_NE(breakdown.find(">#3 2 x gpuA, all-reduce, global batch 512"), std::string::npos);
  EXPECT_NE(breakdown.find(">#8 4 x gpuA, 3D, global batch 512"), std::string::npos);
  // Its value axis has tick values: the longest step is 1 s (ok_row), so 0 to 1 in steps of 0.2.
  EXPECT_NE(breakdown.find("class=\"tick\""), std::string::npos);
  EXPECT_NE(breakdown.find(">0.2</text>"), std::string::npos);
}

TEST(SweepReports, EveryChartHasADataPointPerConfigurationThatFits) {
  SweepSpec spec = hand_spec(4);
  SweepRow oom = ok_row(3, 1);
  oom.status = RowStatus::kOutOfMemory;
  oom.reason = "GPU:0 needs 20 GiB, has 16 GiB";
  SweepReport report;
  report.scenario = "hand";
  report.spec = &spec;
  report.outcomes = assess(spec, rows_of({ok_row(0, 1000, 1000), ok_row(1, 1600, 1000), ok_row(2, 3600, 1000), oom}));
  mark_pareto_frontier(&report.outcomes);
  report.recommendation = recommend(spec, &report.outcomes);
  std::string html = sweep_html(report);
  const std::regex point("<path class=\"point\"");
  EXPECT_EQ(count(svg_of(html, "throughput"), point), 3u);
  EXPECT_EQ(count(svg_of(html, "scaling"), point), 3u);
  EXPECT_EQ(count(svg_of(html, "pareto"), point), 3u);
  EXPECT_EQ(count(svg_of(html, "breakdown"), std::regex("<rect class=\"bar\" data-config=\"0\"")), 5u);  // 5 parts
  EXPECT_EQ(count(html, std::regex("<tr class=\"infeasible\" data-config=\"3\"")), 1u);
  EXPECT_NE(html.find("GPU:0 needs 20 GiB, has 16 GiB"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external resource

  std::string csv = sweep_csv(report);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);  // header + 4 configurations
  // Every line has the header's number of fields (commas inside quotes do not separate).
  auto fields = [](const std::string& line) {
    size_t n = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(fields(header), 44u);
  for (std::string line; std::getline(lines, line);) EXPECT_EQ(fields(line), 44u) << line;
  std::string summary = sweep_summary_markdown(report);
  EXPECT_NE(summary.find("## Recommendation"), std::string::npos);
  EXPECT_NE(summary.find("out of memory: GPU:0 needs 20 GiB"), std::string::npos);
}

// MFU in the sweep (docs/llm-planning.md): a row on 4 devices of 100 TFLOP/s each (summed peak
// 4e14) at 1,000 samples/s of 1e11 model FLOPs (1.2e11 with recomputation) runs 1e14 FLOP/s:
// MFU 1e14 / 4e14 = 25%, HFU 30%, 25 TFLOP/s per device; a row without a single-device baseline
// (a search row) leaves its baseline and scaling cells empty instead of writing 0.
TEST(SweepReports, CsvAndSummaryReportMfuAndNoScalingWithoutABaseline) {
  SweepSpec spec = hand_spec(3);
  SweepRow row = ok_row(2, 1000);
  row.model_flops_per_sample = 1e11;
  row.hardware_flops_per_sample = 1.2e11;
  row.peak_flops_per_second = 4e14;
  SweepReport report;
  report.scenario = "hand";
  report.spec = &spec;
  report.outcomes = assess(spec, rows_of({row}));
  const SweepOutcome& outcome = report.outcomes[2];
  EXPECT_DOUBLE_EQ(outcome.mfu, 0.25);
  EXPECT_DOUBLE_EQ(outcome.hfu, 0.30);
  EXPECT_DOUBLE_EQ(outcome.model_flops_per_second_per_device, 2.5e13);
  const std::string csv = sweep_csv(report);
  const std::string line = csv.substr(csv.find("\n2,"));
  EXPECT_NE(line.find(",1000,,,,0.75,"), std::string::npos) << line;  // samples/s; tokens, single, scaling empty
  EXPECT_NE(line.find(",0.25,0.3,25,,,\n"), std::string::npos) << line;  // mfu, hfu, TFLOP/s per device, tokens/day, no search
  EXPECT_NE(sweep_summary_markdown(report).find(" | 25% | - | "), std::string::npos);
}

// A search sweep's outcomes (sim/sweep/sweep_outcome.h): the analytical row outranks the
// screen's, which stands alone where nothing else ran; the search's error is its step against
// the analytical one: (0.98 - 1) / 1 = -2%.
TEST(SweepOutcome, ASearchRowStandsAloneAndYieldsToTheAnalyticalOne) {
  SweepSpec spec = hand_spec(2);
  SweepRow screened0 = ok_row(0, 900), screened1 = ok_row(1, 1700), exact1 = ok_row(1, 1600);
  screened0.tier = screened1.tier = Tier::kSearch;
  screened1.step_seconds = 0.98;
  const auto outcomes = assess(spec, rows_of({screened0, screened1, exact1}));
  ASSERT_TRUE(outcomes[0].evaluated());
  EXPECT_EQ(outcomes[0].row().tier, Tier::kSearch);
  EXPECT_DOUBLE_EQ(outcomes[0].time_to_train_seconds, 3.6e6 / 900);
  EXPECT_FALSE(outcomes[0].search_error_percent().has_value());
  EXPECT_EQ(outcomes[1].row().tier, Tier::kAnalytical);
  EXPECT_DOUBLE_EQ(outcomes[1].time_to_train_seconds, 3.6e6 / 1600);
  ASSERT_TRUE(outcomes[1].search_error_percent().has_value());
  EXPECT_NEAR(*outcomes[1].search_error_percent(), -2.0, 1e-12);
  SweepReport report;
  report.scenario = "hand";
  report.spec = &spec;
  report.outcomes = outcomes;
  const std::string summary = sweep_summary_markdown(report);
  EXPECT_NE(summary.find("## Search tier vs analytical tier"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| 1 | "), std::string::npos);
  EXPECT_NE(summary.find(" | -2% |"), std::string::npos) << summary;
  EXPECT_NE(sweep_html(report).find("Search tier vs analytical tier"), std::string::npos);
  const std::string csv = sweep_csv(report);
  EXPECT_NE(csv.find("\n0,box,gpu,1,1,1,,all-reduce,data_parallel,1,1,fp32,search,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0.98,-2\n"), std::string::npos) << csv;  // search step, search error
}

// A search's thousands of configurations that do not fit are not all listed: the first 100 in
// summary.md and report.html, and a count of the rest (results.csv has them all).
TEST(SweepReports, SummaryAndPageListTheFirstHundredConfigurationsThatDoNotFit) {
  SweepSpec spec = hand_spec(130);
  std::vector<SweepRow> rows;
  for (size_t i = 0; i < 130; ++i) {
    SweepRow row;
    row.index = i;
    row.status = RowStatus::kNotApplicable;
    row.reason = "reason number " + std::to_string(i) + ".";
    rows.push_back(row);
  }
  SweepReport report;
  report.scenario = "hand";
  report.spec = &spec;
  report.outcomes = assess(spec, rows_of(rows));
  const std::string summary = sweep_summary_markdown(report), page = sweep_html(report);
  for (const std::string* text : {&summary, &page}) {
    EXPECT_NE(text->find("reason number 99."), std::string::npos);
    EXPECT_EQ(text->find("reason number 100."), std::string::npos);
    EXPECT_NE(text->find("... and 30 more (results.csv has every configuration's reason)."), std::string::npos);
  }
  EXPECT_NE(sweep_csv(report).find("reason number 129."), std::string::npos);
}

}  // namespace
}  // namespace placesim
