// `placesim sweep` end to end on a small sweep (an MLP, analytical tier): its outputs, resuming
// after an interruption to the same results.csv, independence from the number of processes,
// the analytical+recheck fidelity, and the report's data points. Optionally (when the Debian
// `chromium` package is installed) the page loads in headless Chromium without errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;
using placesim::testing::shell_quote;

// 3 GPU counts x 2 node counts x (ring all-reduce + PS with 1 or 2 servers) = 18 configurations.
const char* kSweep = R"({
  "name": "tiny_sweep",
  "model": {"zoo": "mlp"},
  "cluster": {"template": "dgx1_v100"},
  "run": {"batch_size": 64},
  "sweep": {
    "devices_per_node": [1, 2, 4],
    "nodes": [1, 2],
    "fabric": ["ib_edr"],
    "strategies": [{"name": "ring", "data_parallel": {"algorithm": "ring"}},
                   {"name": "ps", "data_parallel": {"aggregation": "parameter_server", "num_ps": [1, 2]}}],
    "train": {"samples": 1e7},
    "target": {"samples_per_second": 20000},
    FIDELITY
  }
})";

/// How many times `pattern` matches in `text`.
size_t count_matches(const std::string& text, const std::string& pattern) {
  const std::regex expression(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), expression), std::sregex_iterator()));
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override { directory_ = make_temp_directory(); }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::filesystem::path write_scenario(const std::string& fidelity) {
    std::string text = kSweep;
    text.replace(text.find("FIDELITY"), 8, "\"fidelity\": \"" + fidelity + "\"");
    std::filesystem::path path = directory_ / "sweep.json";
    std::ofstream(path) << text;
    return path;
  }

  placesim::testing::CommandResult sweep(const std::filesystem::path& scenario, const std::string& out,
                                         const std::string& jobs = "2") {
    return run_placesim({"sweep", scenario.string(), "-o", (directory_ / out).string(), "-j", jobs});
  }

  std::filesystem::path directory_;
};

TEST_F(SweepCli, WritesEveryOutputWithOneRowPerConfiguration) {
  auto scenario = write_scenario("analytical");
  auto result = sweep(scenario, "out");
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("Recommendation: configuration "), std::string::npos) << result.output;
  std::string csv = read_text(directory_ / "out" / "results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 18);
  std::string summary = read_text(directory_ / "out" / "summary.md");
  EXPECT_NE(summary.find("# Capacity plan: tiny_sweep"), std::string::npos);
  EXPECT_NE(summary.find("18 configurations"), std::string::npos);
  // Not a terminal: progress comes as plain lines.
  EXPECT_NE(result.output.find("analytical [##############################] 18/18"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find('\r'), std::string::npos);
}

TEST_F(SweepCli, AnInterruptedSweepResumesToTheSameCsv) {
  auto scenario = write_scenario("analytical");
  ASSERT_EQ(sweep(scenario, "whole").exit_status, 0);
  std::string whole = read_text(directory_ / "whole" / "results.csv");

  // An interruption: the resume file keeps its header and 5 rows, and the 6th is cut mid-line.
  std::filesystem::create_directories(directory_ / "resumed");
  std::istringstream lines(read_text(directory_ / "whole" / "results.jsonl"));
  std::ofstream cut(directory_ / "resumed" / "results.jsonl", std::ios::binary);
  std::string line;
  for (int i = 0; i < 6 && std::getline(lines, line); ++i) cut << line << "\n";
  std::getline(lines, line);
  cut << line.substr(0, line.size() / 2);
  cut.close();

  auto result = sweep(scenario, "resumed");
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("resuming: 5 already in"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("13/13"), std::string::npos) << result.output;  // only the rest evaluated
  EXPECT_EQ(read_text(directory_ / "resumed" / "results.csv"), whole);
}

TEST_F(SweepCli, TheNumberOfProcessesDoesNotChangeTheResults) {
  auto scenario = write_scenario("analytical");
  ASSERT_EQ(sweep(scenario, "one", "1").exit_status, 0);
  ASSERT_EQ(sweep(scenario, "three", "3").exit_status, 0);
  EXPECT_EQ(read_text(directory_ / "one" / "results.csv"), read_text(directory_ / "three" / "results.csv"));
}

TEST_F(SweepCli, RecheckSimulatesTheBestAndReportsTheDifference) {
  auto scenario = write_scenario("analytical+recheck 2");
  auto result = sweep(scenario, "out");
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::string csv = read_text(directory_ / "out" / "results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 18);
  // Exactly two rows come from the simulation (tier "simulated").
  EXPECT_EQ(count_matches(csv, ",simulated,"), 2u);
  EXPECT_NE(read_text(directory_ / "out" / "summary.md").find("## Analytical tier vs simulation"), std::string::npos);
}

TEST_F(SweepCli, TheReportHasADataPointPerConfiguration) {
  auto scenario = write_scenario("analytical");
  ASSERT_EQ(sweep(scenario, "out").exit_status, 0);
  std::string html = read_text(directory_ / "out" / "report.html");
  std::string csv = read_text(directory_ / "out" / "results.csv");
  // Every configuration of this sweep fits (an MLP is small), so every chart shows all 18.
  size_t ok = count_matches(csv, ",ok,");
  EXPECT_EQ(ok, 18u);
  for (const std::string id : {"throughput", "scaling", "pareto"}) {
    size_t start = html.find("<svg id=\"" + id + "\"");
    ASSERT_NE(start, std::string::npos) << id;
    std::string svg = html.substr(start, html.find("</svg>", start) - start);
    size_t points = count_matches(svg, "<circle class=\"point\"");
    EXPECT_EQ(points, ok) << id;
  }
}

// Headless Chromium (Debian `chromium`, scripts/install_deps.sh): the page loads without a
// console error and its charts are drawn (the DOM after load still holds every point).
TEST_F(SweepCli, TheReportLoadsInHeadlessChromium) {
  std::string chromium;
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (std::filesystem::exists(candidate)) chromium = candidate;
  }
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install_deps.sh installs it)";
  auto scenario = write_scenario("analytical");
  ASSERT_EQ(sweep(scenario, "out").exit_status, 0);
  std::filesystem::path page = directory_ / "out" / "report.html";
  std::filesystem::path dom = directory_ / "dom.html";
  std::filesystem::path log = directory_ / "chromium.log";
  // A profile of its own and no /dev/shm (small in containers); at most a minute.
  std::string command = "timeout 60 " + shell_quote(chromium) +
                        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
                        " --user-data-dir=" + shell_quote((directory_ / "chromium-profile").string()) +
                        " --enable-logging=stderr --v=0 --dump-dom " +
                        shell_quote("file://" + page.string()) + " >" + shell_quote(dom.string()) + " 2>" +
                        shell_quote(log.string());
  ASSERT_EQ(std::system(command.c_str()), 0) << read_text(log);
  std::string loaded = read_text(dom);
  std::string messages = read_text(log);
  EXPECT_EQ(messages.find("CONSOLE"), std::string::npos) << messages;  // console messages are logged as "CONSOLE(...)"
  EXPECT_EQ(messages.find("Uncaught"), std::string::npos) << messages;
  size_t points = count_matches(loaded, "<circle class=\"point\"");
  EXPECT_EQ(points, 3u * 18u) << "the loaded page lost chart points";
}

}  // namespace
}  // namespace placesim
