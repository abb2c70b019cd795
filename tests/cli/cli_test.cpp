// The placesim command line: help for every command, exit status 2 for a wrong command line, a
// clean check of every bundled hardware profile and scenario, and outputs written all or nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

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
      {"plan", {"scenario", "--output"}},
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
TEST(CliTest, CheckAcceptsEveryBundledProfileAndScenario) {
  const std::filesystem::path root = PLACESIM_SOURCE_DIR;
  std::vector<std::string> files;
  for (const char* folder : {"hardware_profiles", "scenarios"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(std::filesystem::relative(entry.path(), root).generic_string());
      }
    }
  }
  ASSERT_FALSE(files.empty());
  // Known: `run` refuses this validation file's "1 GPU" strategy as out of memory (the memory model
  // puts ResNet-152's activations at batch 64 at 19.1 GiB, over the P100's 16 GiB, where TensorFlow's
  // benchmark ran it; `validate` predicts it anyway). `check` gives the verdict `run` gives (issue
  // 24), so it refuses the file too, with run's words. Remove the entry once the memory model fits it.
  const std::set<std::string> refused_by_run = {"scenarios/validation/tf_dgx1_p100_resnet152_ps_cpu.json"};
  for (const auto& file : files) {
    auto result = run_placesim({"check", file});
    SCOPED_TRACE("placesim check " + file + " printed:\n" + result.output);
    if (refused_by_run.count(file)) {
      EXPECT_EQ(result.exit_status, kExitInputError);
      EXPECT_TRUE(mentions(result.output, "does not fit in memory")) << result.output;
      auto run = run_placesim({"run", "-q", file});
      EXPECT_EQ(run.exit_status, kExitInputError);
      EXPECT_EQ(result.output, run.output);
      continue;
    }
    EXPECT_EQ(result.exit_status, 0);
    EXPECT_TRUE(mentions(result.output, file + ": OK: "));
  }
}

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

}  // namespace
}  // namespace placesim
