// Issue 23 through the real binary: outputs to standard output, links, FIFOs and read-only
// directories; a scenario's outputs confined to its directory; inputs that are FIFOs, link loops
// or too large; misleading messages; compare's refusals; a sweep's CSV, summary and temporaries.
// Special files are made by each test in its own temp directory (mkfifo, symlink); the only real
// device named is /dev/stdout, which here is the test's own log file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_placesim.h"

namespace placesim {
namespace file_safety_cli_test {  // a unity batch holds several test files
namespace {

namespace fs = std::filesystem;
using placesim::testing::CommandResult;
using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

const fs::path kSource = PLACESIM_SOURCE_DIR;
const std::string kSeed = (kSource / "scenarios" / "seed_device_placement.json").string();

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class FileSafetyCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_directory(); }
  void TearDown() override {
    std::error_code ignored;
    for (const auto& entry : fs::recursive_directory_iterator(dir_, ignored)) {
      if (entry.is_directory(ignored)) fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ignored);
    }
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir_, ignored);
  }
  // The seed scenario with `outputs`, in the temp directory (it names no file of its own).
  fs::path seed_with_outputs(const std::string& outputs) {
    nlohmann::json scenario = nlohmann::json::parse(read_text(kSeed));
    scenario["outputs"] = nlohmann::json::parse(outputs);
    fs::path path = dir_ / "scenario.json";
    write_text(path, scenario.dump(2));
    return path;
  }
  fs::path dir_;
};

TEST_F(FileSafetyCli, ReportToDashOrDevStdoutPrintsTheJson) {
  for (const std::string target : {"-", "/dev/stdout"}) {
    SCOPED_TRACE(target);
    CommandResult result = run_placesim({"run", kSeed, "-q", "--report", target}, dir_);
    ASSERT_EQ(result.exit_status, 0) << result.output;
    nlohmann::json report = nlohmann::json::parse(result.output);  // -q: the JSON alone
    EXPECT_EQ(report["kind"], "placesim-report");
    EXPECT_TRUE(fs::is_empty(dir_)) << "no file named - or temporary was made";
  }
  CommandResult plan = run_placesim({"plan", kSeed, "-o", "/dev/stdout"}, dir_);
  ASSERT_EQ(plan.exit_status, 0) << plan.output;
  EXPECT_EQ(nlohmann::json::parse(plan.output)["kind"], "placesim-plan");
}

TEST_F(FileSafetyCli, ALinkOrFifoGivenAsAnOutputIsRefusedBeforeAnyWork) {
  write_text(dir_ / "victim.txt", "precious\n");
  fs::create_symlink(dir_ / "victim.txt", dir_ / "report.json");
  ASSERT_EQ(::mkfifo((dir_ / "trace.json").c_str(), 0600), 0);
  CommandResult link = run_placesim({"run", kSeed, "--report", (dir_ / "report.json").string()}, dir_);
  EXPECT_EQ(link.exit_status, 2) << link.output;
  EXPECT_TRUE(mentions(link.output, "error: --report: cannot write \"" + (dir_ / "report.json").string() +
                                        "\": is a symbolic link, not a regular file: refusing to replace it"))
      << link.output;
  EXPECT_TRUE(fs::is_symlink(dir_ / "report.json"));
  EXPECT_EQ(read_text(dir_ / "victim.txt"), "precious\n");
  CommandResult fifo = run_placesim({"run", kSeed, "--trace", (dir_ / "trace.json").string()}, dir_);
  EXPECT_EQ(fifo.exit_status, 2) << fifo.output;
  EXPECT_TRUE(mentions(fifo.output, "is a named pipe (FIFO), not a regular file")) << fifo.output;
  CommandResult onnx = run_placesim({"export-onnx", "mlp", "-o", (dir_ / "report.json").string()}, dir_);
  EXPECT_EQ(onnx.exit_status, 2) << onnx.output;
  EXPECT_TRUE(mentions(onnx.output, "error: --output: ")) << onnx.output;
  EXPECT_EQ(read_text(dir_ / "victim.txt"), "precious\n");
}

TEST_F(FileSafetyCli, AReadOnlyDirectoryIsNamedWithTheSystemsReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  fs::create_directory(dir_ / "ro");
  fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  for (const auto& arguments : std::vector<std::vector<std::string>>{
           {"run", kSeed, "--report", (dir_ / "ro" / "r.json").string()},
           {"plan", kSeed, "-o", (dir_ / "ro" / "p.json").string()}}) {
    CommandResult result = run_placesim(arguments, dir_);
    EXPECT_EQ(result.exit_status, 2) << result.output;
    EXPECT_TRUE(mentions(result.output, "cannot write into directory \"" + (dir_ / "ro").string() +
                                            "\": Permission denied"))
        << result.output;
    EXPECT_FALSE(mentions(result.output, "does the directory exist")) << result.output;
  }
}

TEST_F(FileSafetyCli, ScenarioOutputsStayInTheScenariosDirectory) {
  fs::create_directory(dir_ / "inner");
  // Relative paths resolve against the scenario's directory, whatever the working directory.
  fs::path scenario = seed_with_outputs(R"({"report": "inner/report.json"})");
  CommandResult check = run_placesim({"check", scenario.string()}, kSource);
  EXPECT_EQ(check.exit_status, 0) << check.output;
  EXPECT_TRUE(mentions(check.output, "; run writes its report to " + (dir_ / "inner" / "report.json").string()))
      << check.output;
  CommandResult run = run_placesim({"run", scenario.string(), "-q"}, kSource);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "inner" / "report.json"));

  fs::path elsewhere = make_temp_directory();  // outside the scenario's directory
  fs::create_directory_symlink(elsewhere, dir_ / "inner" / "link");
  for (const std::string outputs : {R"({"report": "../escaped.json"})", R"({"report": "/tmp/placesim_escaped.json"})",
                                    R"({"trace": "inner/link/escaped.json"})"}) {
    SCOPED_TRACE(outputs);
    scenario = seed_with_outputs(outputs);
    std::string key = mentions(outputs, "trace") ? "/outputs/trace" : "/outputs/report";
    for (const std::string command : {"check", "run"}) {
      CommandResult refused = run_placesim({command, scenario.string()}, dir_);
      EXPECT_EQ(refused.exit_status, 2) << refused.output;
      EXPECT_TRUE(mentions(refused.output, "error: " + scenario.string() + ": " + key + ": ")) << refused.output;
      EXPECT_TRUE(mentions(refused.output, "is outside the scenario's directory")) << refused.output;
    }
  }
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "escaped.json"));
  EXPECT_TRUE(fs::is_empty(elsewhere));
  fs::remove_all(elsewhere);
  scenario = seed_with_outputs(R"({"report": "../allowed.json"})");
  fs::create_directory(dir_ / "sub");
  fs::rename(scenario, dir_ / "sub" / "scenario.json");
  CommandResult allowed =
      run_placesim({"run", (dir_ / "sub" / "scenario.json").string(), "-q", "--allow-outside-outputs"}, kSource);
  EXPECT_EQ(allowed.exit_status, 0) << allowed.output;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "allowed.json"));
}

TEST_F(FileSafetyCli, FifoInputsAreRefusedWithoutWaitingForAWriter) {
  fs::path fifo = dir_ / "input.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::copy(kSource / "hardware_profiles", dir_ / "profiles", fs::copy_options::recursive);
  fs::remove(dir_ / "profiles" / "links.json");
  ASSERT_EQ(::mkfifo((dir_ / "profiles" / "links.json").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  for (const auto& arguments : std::vector<std::vector<std::string>>{{"run", fifo.string()},
                                                                     {"check", fifo.string()},
                                                                     {"simulate", fifo.string()},
                                                                     {"compare", fifo.string(), fifo.string()},
                                                                     {"inspect", fifo.string()}}) {
    CommandResult result = run_placesim(arguments, dir_);
    EXPECT_EQ(result.exit_status, 2) << arguments[0] << ": " << result.output;
    EXPECT_TRUE(mentions(result.output, "error: " + fifo.string() + ": is a named pipe (FIFO), not a regular file"))
        << arguments[0] << ": " << result.output;
  }
  CommandResult links = run_placesim(
      {"--profiles", (dir_ / "profiles").string(), "check", (kSource / "hardware_profiles" / "clusters" / "dgx1_v100.json").string()},
      dir_);
  EXPECT_EQ(links.exit_status, 2) << links.output;
  EXPECT_TRUE(mentions(links.output, "links.json: is a named pipe (FIFO)")) << links.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST_F(FileSafetyCli, InputSizeLimitFromTheFlagOrTheEnvironment) {
  std::string size = std::to_string(fs::file_size(kSeed));
  CommandResult flag = run_placesim({"--max-input-bytes", "100", "check", kSeed}, dir_);
  EXPECT_EQ(flag.exit_status, 2) << flag.output;
  EXPECT_TRUE(mentions(flag.output, "error: " + kSeed + ": is " + size + " bytes, above the input size limit of 100 bytes"))
      << flag.output;
  // The scenario passes at its own size, the larger cluster template it names does not: every file read counts.
  CommandResult raised = run_placesim({"--max-input-bytes", size, "check", kSeed}, dir_);
  EXPECT_EQ(raised.exit_status, 2) << raised.output;
  EXPECT_TRUE(mentions(raised.output, "laptop_gtx850m.json: is ")) << raised.output;
  raised = run_placesim({"--max-input-bytes", "65536", "check", kSeed}, dir_);
  EXPECT_EQ(raised.exit_status, 0) << raised.output;
  ::setenv("PLACESIM_MAX_INPUT_BYTES", "100", 1);
  CommandResult environment = run_placesim({"check", kSeed}, dir_);
  ::unsetenv("PLACESIM_MAX_INPUT_BYTES");
  EXPECT_EQ(environment.exit_status, 2) << environment.output;
  EXPECT_TRUE(mentions(environment.output, "above the input size limit of 100 bytes")) << environment.output;
}

TEST_F(FileSafetyCli, ProfileDirectoryProblemsAreNamed) {
  CommandResult missing = run_placesim({"--profiles", (dir_ / "nowhere").string(), "check", kSeed}, dir_);
  EXPECT_EQ(missing.exit_status, 2) << missing.output;
  EXPECT_TRUE(mentions(missing.output, "/cluster/template: cannot look up cluster template \"laptop_gtx850m\": the "
                                       "hardware profile directory \"" + (dir_ / "nowhere").string() +
                                       "\" does not exist"))
      << missing.output;

  // A copy of the bundled profiles whose GTX 850M profile is a link loop.
  fs::copy(kSource / "hardware_profiles", dir_ / "profiles", fs::copy_options::recursive);
  fs::remove(dir_ / "profiles" / "devices" / "gtx-850m.json");
  fs::create_symlink(dir_ / "profiles" / "devices" / "loop.json", dir_ / "profiles" / "devices" / "gtx-850m.json");
  fs::create_symlink(dir_ / "profiles" / "devices" / "gtx-850m.json", dir_ / "profiles" / "devices" / "loop.json");
  CommandResult loop = run_placesim({"--profiles", (dir_ / "profiles").string(), "check", kSeed}, dir_);
  EXPECT_EQ(loop.exit_status, 2) << loop.output;
  EXPECT_TRUE(mentions(loop.output, "gtx-850m.json: is a symbolic link loop")) << loop.output;
  EXPECT_FALSE(mentions(loop.output, "did you mean")) << loop.output;
}

TEST_F(FileSafetyCli, InputShapesForAZooModelAreRefused) {
  CommandResult result = run_placesim({"inspect", "mlp", "--input", "x=1,2"}, dir_);
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_TRUE(mentions(result.output, "error: --input: gives ONNX input shapes, but \"mlp\" is not an ONNX model"))
      << result.output;
}

TEST_F(FileSafetyCli, CompareRefusesANegativeDurationAndAZeroStep) {
  fs::path predicted = dir_ / "predicted.json";
  ASSERT_EQ(run_placesim({"run", kSeed, "-q", "--report", predicted.string()}, dir_).exit_status, 0);
  nlohmann::json report = nlohmann::json::parse(read_text(predicted));
  ASSERT_FALSE(report["tasks"].empty());

  nlohmann::json zero_step = report;
  zero_step["step_time_seconds"] = 0;
  write_text(dir_ / "zero.json", zero_step.dump());
  CommandResult zero = run_placesim({"compare", predicted.string(), (dir_ / "zero.json").string()}, dir_);
  EXPECT_EQ(zero.exit_status, 2) << zero.output;
  EXPECT_TRUE(mentions(zero.output, "zero.json: /step_time_seconds: expected a positive number, got 0")) << zero.output;

  nlohmann::json negative = report;
  negative["tasks"][0]["start_seconds"] = 0.002;
  negative["tasks"][0]["end_seconds"] = 0.001;  // ends 1 ms before it starts
  write_text(dir_ / "negative.json", negative.dump());
  CommandResult backwards = run_placesim({"compare", predicted.string(), (dir_ / "negative.json").string()}, dir_);
  EXPECT_EQ(backwards.exit_status, 2) << backwards.output;
  EXPECT_TRUE(mentions(backwards.output, "negative.json: /tasks/0/end_seconds: ")) << backwards.output;
  EXPECT_TRUE(mentions(backwards.output, "a duration cannot be negative")) << backwards.output;
}

// 2 GPU counts x 1 node count x 2 strategies = 4 configurations, analytical: about a second.
const char* kHostileSweep = R"json({
  "name": "<img src=x onerror=alert(1)>",
  "model": {"zoo": "mlp"},
  "cluster": {"template": "dgx1_v100"},
  "run": {"batch_size": 64},
  "sweep": {
    "devices_per_node": [1, 2],
    "nodes": [1],
    "fabric": ["ib_edr"],
    "strategies": [{"name": "=HYPERLINK(\"http://x\")", "data_parallel": {"algorithm": "ring"}},
                   {"name": "-2", "data_parallel": {"algorithm": "tree"}}],
    "train": {"samples": 1e7},
    "fidelity": "analytical"
  }
})json";

TEST_F(FileSafetyCli, SweepOutputsNeutraliseFormulasAndHtmlAndDropStaleTemporaries) {
  write_text(dir_ / "sweep.json", kHostileSweep);
  fs::create_directory(dir_ / "out");
  // A sweep killed at its final rename left this (PIDs above pid_max belong to no process).
  write_text(dir_ / "out" / "results.csv.tmp99999999.1", "index,cut");
  CommandResult result = run_placesim({"sweep", (dir_ / "sweep.json").string(), "-o", (dir_ / "out").string(), "-j", "1"}, dir_);
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::string csv = read_text(dir_ / "out" / "results.csv");
  EXPECT_TRUE(mentions(csv, ",\"'=HYPERLINK(\"\"http://x\"\")\",")) << csv;  // OWASP: a leading '
  EXPECT_TRUE(mentions(csv, ",-2,")) << csv;                                  // a number stays a number
  EXPECT_FALSE(mentions(csv, ",=")) << csv;
  std::string summary = read_text(dir_ / "out" / "summary.md");
  EXPECT_TRUE(mentions(summary, "# Capacity plan: &lt;img src=x onerror=alert(1)&gt;")) << summary;
  EXPECT_FALSE(mentions(summary, "<img")) << summary;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "results.csv.tmp99999999.1"));

  if (::geteuid() != 0) {  // resuming into a directory that became read-only: refused up front
    fs::permissions(dir_ / "out", fs::perms::owner_read | fs::perms::owner_exec);
    CommandResult read_only = run_placesim({"sweep", (dir_ / "sweep.json").string(), "-o", (dir_ / "out").string()}, dir_);
    EXPECT_EQ(read_only.exit_status, 2) << read_only.output;
    EXPECT_TRUE(mentions(read_only.output, "error: -o: cannot write \"" + (dir_ / "out" / "results.jsonl").string() +
                                               "\": cannot write into directory"))
        << read_only.output;
    EXPECT_TRUE(mentions(read_only.output, "Permission denied")) << read_only.output;
    fs::permissions(dir_ / "out", fs::perms::owner_all);
  }
  fs::remove(dir_ / "out" / "results.jsonl");
  fs::create_symlink(dir_ / "elsewhere.jsonl", dir_ / "out" / "results.jsonl");
  CommandResult link = run_placesim({"sweep", (dir_ / "sweep.json").string(), "-o", (dir_ / "out").string()}, dir_);
  EXPECT_EQ(link.exit_status, 2) << link.output;
  EXPECT_TRUE(mentions(link.output, "results.jsonl\": is a symbolic link")) << link.output;
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere.jsonl"));
}

}  // namespace
}  // namespace file_safety_cli_test
}  // namespace placesim
