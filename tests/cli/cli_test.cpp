// The placesim command line: help for every command, exit status 2 for a wrong command line, a
// clean check of every bundled hardware profile and scenario, and outputs written all or nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;
using placesim::testing::run_placesim_split;

constexpr int kExitInputError = 2;

bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

TEST(CliTest, HelpListsEverySubcommand) {
  auto result = run_placesim({"--help"});
  EXPECT_EQ(result.exit_status, 0);
  for (const char* word : {"run", "check", "plan", "simulate", "--profiles", "--version"}) {
    EXPECT_TRUE(mentions(result.output, word)) << word << " in:\n" << result.output;
  }
}

TEST(CliTest, EachSubcommandHelpListsItsOptions) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"run", {"scenario", "--trace", "--report", "--log-device-placement", "--quiet"}},
      {"check", {"files", "--kind", "scenario", "model", "device", "links", "cluster", "plan"}},
      {"plan", {"scenario", "--output", "--strategy"}},
      {"simulate", {"plan", "--trace", "--report", "--quiet"}},
  };
  for (const auto& [command, options] : expected) {
    auto result = run_placesim({command, "--help"});
    SCOPED_TRACE("placesim " + command + " --help printed:\n" + result.output);
    EXPECT_EQ(result.exit_status, 0);
    for (const auto& option : options) EXPECT_TRUE(mentions(result.output, option)) << option;
  }
}

TEST(CliTest, WrongCommandLinesExitWithStatus2) {
  const std::vector<std::vector<std::string>> command_lines = {
      {},                                                   // no subcommand
      {"simulat", "plan.json"},                             // unknown subcommand
      {"run"},                                              // missing scenario
      {"check"},                                            // missing files
      {"plan"},                                             // missing scenario
      {"simulate"},                                         // missing plan
      {"check", "--kind", "modle", "scenarios/seed_device_placement.json"},  // unknown --kind
      {"run", "--no-such-flag", "scenarios/seed_device_placement.json"},     // unknown flag
  };
  for (const auto& arguments : command_lines) {
    std::string line = "placesim";
    for (const auto& argument : arguments) line += " " + argument;
    auto result = run_placesim(arguments);
    SCOPED_TRACE(line + " printed:\n" + result.output);
    EXPECT_EQ(result.exit_status, kExitInputError);
    EXPECT_FALSE(mentions(result.output, "internal error"));
  }
}

TEST(CliTest, MissingFileExitsWithStatus2AndNamesIt) {
  auto result = run_placesim({"run", "no_such_scenario.json"});
  EXPECT_EQ(result.exit_status, kExitInputError);
  EXPECT_TRUE(mentions(result.output, "error: no_such_scenario.json: no such file")) << result.output;
}

// Every bundled file must pass the checks users run on their own files.
// The bundled JSON files under `folder` (relative to the source tree), sorted.
std::vector<std::string> bundled_json_files(const char* folder) {
  const std::filesystem::path root = PLACESIM_SOURCE_DIR;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(std::filesystem::relative(entry.path(), root).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void expect_check_accepts(const std::string& file) {
  // Validation scenarios reproduce published runs as published; `validate` predicts them whatever
  // the memory model says (docs/validation.md), so `check` takes them as `run --allow-oom` would.
  const bool validation = file.rfind("scenarios/validation/", 0) == 0;
  auto result = validation ? run_placesim({"check", "--allow-oom", file}) : run_placesim({"check", file});
  SCOPED_TRACE("placesim check " + file + " printed:\n" + result.output);
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_TRUE(mentions(result.output, file + ": OK: "));
}

// Llama 3 405B at 8,192 GPUs as Meta ran it does not fit in placesim's memory model (docs/validation.md):
// `check` refuses it as `run` does, and with --allow-oom accepts it and names the fullest stage.
TEST(CliTest, CheckAllowOomNamesTheVerdictInsteadOfRefusing) {
  const std::string file = "scenarios/validation/llama3_405b_h100_8192_gpus.json";
  auto refused = run_placesim({"check", file});
  EXPECT_EQ(refused.exit_status, 2);
  EXPECT_TRUE(mentions(refused.output, "does not fit in memory: stage 0")) << refused.output;
  auto allowed = run_placesim({"check", "--allow-oom", file});
  EXPECT_EQ(allowed.exit_status, 0) << allowed.output;
  EXPECT_TRUE(mentions(allowed.output, "does not fit in memory (`placesim run` refuses it without --allow-oom): stage 0"))
      << allowed.output;
}

TEST(CliTest, CheckAcceptsEveryBundledProfile) {
  const auto files = bundled_json_files("hardware_profiles");
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) expect_check_accepts(file);
}

// One case per bundled scenario: `check` simulates each on its tier (memory verdicts), so the
// large ones take seconds under the sanitizers; separate cases let CTest run them side by side.
class BundledScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(BundledScenario, IsAcceptedByCheck) { expect_check_accepts(GetParam()); }

INSTANTIATE_TEST_SUITE_P(CliTest, BundledScenario, ::testing::ValuesIn(bundled_json_files("scenarios")),
                         [](const ::testing::TestParamInfo<std::string>& scenario) {
                           std::string name = scenario.param.substr(std::string("scenarios/").size());
                           name = name.substr(0, name.size() - std::string(".json").size());
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(CliTest, RunWritesTheRequestedTraceAndReport) {
  std::filesystem::path outputs = make_temp_directory();
  auto result = run_placesim({"run", "--quiet", "scenarios/seed_device_placement.json", "--trace",
                              (outputs / "trace.json").string(), "--report", (outputs / "report.json").string()});
  EXPECT_EQ(result.exit_status, 0) << result.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(outputs / "trace.json"));
  EXPECT_TRUE(std::filesystem::is_regular_file(outputs / "report.json"));
  std::filesystem::remove_all(outputs);
}

// A report written over an existing file replaces it by rename (atomic_file.h): a hard link to the
// old file keeps the old bytes, which a truncate-and-rewrite in place would have destroyed, and
// no temporary file is left beside it.
TEST(CliTest, RunReplacesAnExistingReportAtomically) {
  std::filesystem::path outputs = make_temp_directory();
  const std::string old_report = "{\"old\": true}\n";
  std::ofstream(outputs / "report.json") << old_report;
  std::filesystem::create_hard_link(outputs / "report.json", outputs / "old.json");
  auto result = run_placesim({"run", "--quiet", "scenarios/seed_device_placement.json", "--report",
                              (outputs / "report.json").string()});
  EXPECT_EQ(result.exit_status, 0) << result.output;
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(outputs / "old.json"), old_report) << "the old file was rewritten in place";
  EXPECT_TRUE(mentions(read(outputs / "report.json"), "\"step_time")) << read(outputs / "report.json");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(outputs)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"old.json", "report.json"})) << "a temporary file was left behind";
  std::filesystem::remove_all(outputs);
}

// An output that cannot be written is found before the simulation, and nothing is written.
TEST(CliTest, RunIntoAMissingDirectoryWritesNothing) {
  std::filesystem::path outputs = make_temp_directory();
  auto result = run_placesim({"run", "scenarios/seed_device_placement.json", "--trace",
                              (outputs / "trace.json").string(), "--report",
                              (outputs / "missing" / "report.json").string()});
  EXPECT_EQ(result.exit_status, kExitInputError) << result.output;
  EXPECT_TRUE(mentions(result.output, "error: --report: cannot write")) << result.output;
  EXPECT_FALSE(mentions(result.output, "Predicted step time")) << "the check must come before the simulation";
  EXPECT_TRUE(std::filesystem::is_empty(outputs));
  std::filesystem::remove_all(outputs);
}

// --- outputs that say what they are (issue 24) ----------------------------------------------

TEST(CliTest, AnUnknownSubcommandIsNamedWithADidYouMeanAndTheList) {
  auto result = run_placesim({"rn", "scenarios/seed_device_placement.json"});
  EXPECT_EQ(result.exit_status, kExitInputError) << result.output;
  EXPECT_TRUE(mentions(result.output, "error: unknown subcommand 'rn'; did you mean 'run'?")) << result.output;
  EXPECT_TRUE(mentions(result.output, "(subcommands: run check plan simulate execute")) << result.output;
  EXPECT_FALSE(mentions(result.output, "A subcommand is required")) << result.output;
  // After a global option too; nothing close: no did-you-mean, still the list.
  auto far = run_placesim({"--profiles", "hardware_profiles", "xyzzyplugh"});
  EXPECT_EQ(far.exit_status, kExitInputError) << far.output;
  EXPECT_TRUE(mentions(far.output, "error: unknown subcommand 'xyzzyplugh' (subcommands: run ")) << far.output;
  // No subcommand at all is still CLI11's message.
  auto none = run_placesim({});
  EXPECT_EQ(none.exit_status, kExitInputError) << none.output;
  EXPECT_FALSE(mentions(none.output, "unknown subcommand")) << none.output;
}

TEST(CliTest, HelpDocumentsTheExitStatuses) {
  auto result = run_placesim({"--help"});
  EXPECT_EQ(result.exit_status, 0) << result.output;
  EXPECT_TRUE(mentions(result.output, "Exit status: 0 success; 2 bad input")) << result.output;
  EXPECT_TRUE(mentions(result.output, "1 an internal error")) << result.output;
}

// --json and --report - print the JSON report and nothing else on standard output: it parses
// whole, and carries the step time the report file carries.
TEST(CliTest, RunPrintsItsJsonReportAloneOnStandardOutput) {
  std::filesystem::path outputs = make_temp_directory();
  auto to_file = run_placesim({"run", "-q", "scenarios/seed_device_placement.json", "--report",
                               (outputs / "report.json").string()});
  ASSERT_EQ(to_file.exit_status, 0) << to_file.output;
  std::ifstream in(outputs / "report.json");
  const nlohmann::json expected = nlohmann::json::parse(in);
  for (const auto& flags : {std::vector<std::string>{"--json"}, std::vector<std::string>{"--report", "-"}}) {
    // Run from the outputs directory: a file named "-" would appear there.
    std::vector<std::string> arguments = {"run", std::string(PLACESIM_SOURCE_DIR) + "/scenarios/seed_device_placement.json"};
    arguments.insert(arguments.end(), flags.begin(), flags.end());
    auto result = run_placesim_split(arguments, outputs);
    SCOPED_TRACE(flags.back());
    ASSERT_EQ(result.exit_status, 0) << result.errors;
    nlohmann::json report;
    ASSERT_NO_THROW(report = nlohmann::json::parse(result.output)) << result.output;
    EXPECT_EQ(report.at("kind"), "placesim-report");
    EXPECT_EQ(report.at("step_time_seconds"), expected.at("step_time_seconds"));
    EXPECT_FALSE(std::filesystem::exists(outputs / "-")) << "a file named - was written";
  }
  auto both = run_placesim({"run", "scenarios/seed_device_placement.json", "--json", "--report", "r.json"});
  EXPECT_EQ(both.exit_status, kExitInputError) << both.output;
  EXPECT_TRUE(mentions(both.output, "error: --json: ")) << both.output;
  std::filesystem::remove_all(outputs);
}

// simulate (and execute) share --trace/--report: a report on standard output is stdout's whole.
TEST(CliTest, SimulatePrintsItsJsonReportAloneOnStandardOutput) {
  std::filesystem::path outputs = make_temp_directory();
  const std::string plan = (outputs / "plan.json").string();
  ASSERT_EQ(run_placesim({"plan", "scenarios/seed_device_placement.json", "-o", plan}).exit_status, 0);
  auto result = run_placesim_split({"simulate", plan, "--report", "-"});
  ASSERT_EQ(result.exit_status, 0) << result.errors;
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(result.output)) << result.output;
  EXPECT_EQ(report.at("kind"), "placesim-report");
  auto both = run_placesim({"simulate", plan, "--report", "-", "--trace", "-"});
  EXPECT_EQ(both.exit_status, kExitInputError) << both.output;
  EXPECT_TRUE(mentions(both.output, "error: --trace: the report already goes to standard output")) << both.output;
  std::filesystem::remove_all(outputs);
}

// plan --strategy writes the named strategy's plan (with its own cluster, where it has one), which
// simulate then times as run does: the bundled replicated-stages scenario's 10 GbE PipeDream.
TEST(CliTest, PlanWritesTheNamedStrategy) {
  std::filesystem::path outputs = make_temp_directory();
  const std::string plan = (outputs / "plan.json").string();
  const std::string scenario = "scenarios/pipedream_replicated_stages_vgg16.json";
  const std::string name = "PipeDream 15-1, 4 x 4 GPUs on 10 GbE";
  ASSERT_EQ(run_placesim({"plan", scenario, "--strategy", name, "-o", plan}).exit_status, 0);
  auto simulated = run_placesim_split({"simulate", plan, "--report", "-"});
  auto ran = run_placesim_split({"run", scenario, "--strategy", name, "--report", "-"});
  ASSERT_EQ(simulated.exit_status, 0) << simulated.errors;
  ASSERT_EQ(ran.exit_status, 0) << ran.errors;
  EXPECT_EQ(nlohmann::json::parse(simulated.output).at("step_time_seconds"),
            nlohmann::json::parse(ran.output).at("step_time_seconds"));
  auto unknown = run_placesim({"plan", scenario, "--strategy", "nope"});
  EXPECT_EQ(unknown.exit_status, kExitInputError);
  EXPECT_TRUE(mentions(unknown.output, "error: --strategy: no strategy named \"nope\" (the scenario has: data parallel,"))
      << unknown.output;
  std::filesystem::remove_all(outputs);
}

TEST(CliTest, TraceWithSeveralStrategiesNamesThem) {
  auto result = run_placesim({"run", "scenarios/pipeline_gpt_dgx1.json", "--trace", "t.json"});
  EXPECT_EQ(result.exit_status, kExitInputError) << result.output;
  EXPECT_TRUE(mentions(result.output, "the scenario has 2 strategies (GPipe, 1F1B): choose one with --strategy NAME"))
      << result.output;
}

// With several strategies `run` still says where each device's costs come from (issue 19), in the
// text after the strategies and in the comparison report.
TEST(CliTest, SeveralStrategiesStillNameWhereTheCostsComeFrom) {
  auto text = run_placesim({"run", "scenarios/pipeline_gpt_dgx1.json"});
  ASSERT_EQ(text.exit_status, 0) << text.output;
  EXPECT_TRUE(mentions(text.output, "Compute costs (docs/cost-model.md; step-level validation: docs/validation.md):\n"
                                    "  x86-server-cpu: datasheet roofline with estimated efficiencies (no measured kernel "
                                    "table); no published step time on this profile\n  v100-sxm2-16gb: kernel model "
                                    "(hardware_profiles/kernels/deepbench_v100-sxm2-16gb.csv"))
      << text.output;
  // The V100's step-level error on the open set (hardware_profiles/devices/v100-sxm2-16gb.json).
  EXPECT_TRUE(mentions(text.output, "; published steps 5.5% MAPE over 4 cases (2026-12-06)\n")) << text.output;
  // Its fp16 kernels at the random-data rate, DeepBench having timed them on zero inputs.
  EXPECT_TRUE(mentions(text.output, "; fp16 kernels at 0.871 of the fitted compute rate (the fit's rows ran on inputs that "
                                    "draw less power than training data; kernel_model.input_power)")) << text.output;
  auto json = run_placesim_split({"run", "scenarios/pipeline_gpt_dgx1.json", "--report", "-"});
  ASSERT_EQ(json.exit_status, 0) << json.errors;
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(json.output)) << json.output;
  ASSERT_EQ(report.at("compute_costs").size(), 2u);
  EXPECT_EQ(report["compute_costs"][1].at("profile"), "v100-sxm2-16gb");
  EXPECT_EQ(report["compute_costs"][1].at("kind"), "kernel model");
  EXPECT_EQ(report["compute_costs"][1].at("step_validation").at("cases"), 4);
  EXPECT_DOUBLE_EQ(report["compute_costs"][1].at("input_power_fraction").get<double>(), 0.871);
  EXPECT_FALSE(report["compute_costs"][0].contains("step_validation"));
  EXPECT_FALSE(report["compute_costs"][0].contains("input_power_fraction"));
}

// The H100's FP8 kernels run at a sustained 1288.7 / 1491.9 = 0.864 of a burst's rate and under
// the fastest FP8 matmul sustained at its power limit (stas00/ml-engineering's MSMF, 1288.7
// TFLOPS, below its burst table's 1402.6; hardware_profiles/devices/h100-sxm5-80gb.json): `run`
// says so, and the JSON report carries both.
TEST(CliTest, TheH100sCostLineNamesItsMeasuredMatmulCeiling) {
  auto text = run_placesim({"run", "scenarios/gpt_fp8_dgx_h100.json"});
  ASSERT_EQ(text.exit_status, 0) << text.output;
  EXPECT_TRUE(mentions(text.output, "; fp8 tensor-core kernels at 0.864 of a burst's rate (the board at its power limit "
                                    "through a step, where its kernel tables were timed in bursts; sustained_matmul)"))
      << text.output;
  EXPECT_TRUE(mentions(text.output, "; fp8 GEMMs at most 1288.7 TFLOP/s (the fastest matmul measured on it under sustained "
                                    "load; sustained_matmul)")) << text.output;
  auto json = run_placesim_split({"run", "scenarios/gpt_fp8_dgx_h100.json", "--report", "-"});
  ASSERT_EQ(json.exit_status, 0) << json.errors;
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(json.output)) << json.output;
  bool found = false;
  for (const auto& entry : report.at("compute_costs")) {
    if (entry.at("profile") != "h100-sxm5-80gb") continue;
    found = true;
    EXPECT_DOUBLE_EQ(entry.at("matmul_ceiling_flops_per_second").get<double>(), 1288.7e12);
    EXPECT_NEAR(entry.at("sustained_fraction").get<double>(), 1288.7 / 1491.9, 1e-15);
  }
  EXPECT_TRUE(found);
}

// `place --json`: one entry per algorithm with its step time and every op's device.
TEST(CliTest, PlacePrintsAMachineReadableComparison) {
  std::filesystem::path directory = make_temp_directory();
  std::ofstream(directory / "place.json") << R"({
    "model": {"zoo": "mlp"},
    "cluster": {"template": "workstation_2gpu"},
    "strategy": {"placement": {"auto": {"algorithm": "m-etf"}}}
  })";
  auto result = run_placesim_split({"place", (directory / "place.json").string(), "--json"});
  ASSERT_EQ(result.exit_status, 0) << result.errors;
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(result.output)) << result.output;
  EXPECT_EQ(report.at("kind"), "placesim-placement-report");
  EXPECT_EQ(report.at("shown"), "m-etf");
  ASSERT_EQ(report.at("algorithms").size(), 4u) << report.dump(2);  // expert, m-topo, m-etf, m-sct
  size_t ops = 0;
  for (const auto& entry : report.at("algorithms")) {
    SCOPED_TRACE(entry.at("algorithm").get<std::string>());
    ASSERT_TRUE(entry.at("placed").get<bool>()) << entry.dump();
    EXPECT_GT(entry.at("step_time_seconds").get<double>(), 0);
    if (ops == 0) ops = entry.at("placement").size();
    EXPECT_EQ(entry.at("placement").size(), ops) << "every algorithm places every op";
    EXPECT_TRUE(entry.at("out_of_memory_verdicts").empty());
  }
  EXPECT_GT(ops, 0u);
  // The text goes nowhere when standard output holds the report; into a file, both.
  auto text = run_placesim({"place", (directory / "place.json").string(), "--report", (directory / "p.json").string()});
  ASSERT_EQ(text.exit_status, 0) << text.output;
  EXPECT_TRUE(mentions(text.output, "algorithm")) << text.output;
  std::ifstream in(directory / "p.json");
  EXPECT_EQ(nlohmann::json::parse(in).at("algorithms").size(), 4u);
  std::filesystem::remove_all(directory);
}

// An ONNX file exported at batch 32 re-imports at 32: inspect prints the same totals as the zoo
// model at batch 32, unless --batch says otherwise.
TEST(CliTest, AnExportedOnnxFileReimportsAtItsBatch) {
  std::filesystem::path directory = make_temp_directory();
  const std::string onnx = (directory / "mlp32.onnx").string();
  auto exported = run_placesim({"export-onnx", "mlp", "--batch", "32", "-o", onnx});
  if (exported.exit_status != 0 && mentions(exported.output, "without ONNX support")) GTEST_SKIP() << exported.output;
  ASSERT_EQ(exported.exit_status, 0) << exported.output;
  auto last_line = [](const std::string& text) {
    std::string trimmed = text.substr(0, text.find_last_not_of('\n') + 1);
    return trimmed.substr(trimmed.find_last_of('\n') + 1);
  };
  auto zoo32 = run_placesim_split({"inspect", "mlp", "--batch", "32"});
  auto zoo4 = run_placesim_split({"inspect", "mlp", "--batch", "4"});
  auto file = run_placesim_split({"inspect", onnx});
  auto file4 = run_placesim_split({"inspect", onnx, "--batch", "4"});
  ASSERT_EQ(file.exit_status, 0) << file.errors;
  ASSERT_NE(last_line(zoo32.output), last_line(zoo4.output)) << "the totals line does not depend on the batch";
  EXPECT_EQ(last_line(file.output), last_line(zoo32.output)) << file.output;
  EXPECT_EQ(last_line(file4.output), last_line(zoo4.output)) << file4.output;
  std::filesystem::remove_all(directory);
}

// A run of several strategies lists each one's collectives with nccl-tests' algbw and busbw, as a
// single strategy's report does (issue 21): the interleaved scenario's three 3D strategies each
// all-reduce inside their tensor pairs and all-gather the pieces sent between stages.
TEST(Cli, EachStrategyOfSeveralListsItsCollectivesWithAlgbwAndBusbw) {
  auto result = run_placesim({"run", "scenarios/interleaved_1f1b_gpt.json"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  size_t tables = 0;
  for (size_t at = result.output.find("Collectives (nccl-tests"); at != std::string::npos;
       at = result.output.find("Collectives (nccl-tests", at + 1)) {
    ++tables;
  }
  EXPECT_EQ(tables, 3u) << result.output;
  EXPECT_NE(result.output.find("  all_gather           2097152      2         1"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace placesim
