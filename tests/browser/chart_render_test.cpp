// The sweep's report.html and the convergence page, rendered in headless Chromium (the Debian
// `chromium` package, scripts/install_deps.sh) with render_check.js injected: no text leaves its
// chart, no legend covers a plot, every series has its own style and is visible. Skips when
// Chromium is not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;
using placesim::testing::shell_quote;

// Two device types x two per-replica batches x (ring + PS with 1 or 2 servers) on 1 to 8
// devices: 12 series on the per-device-count charts, 48 configurations (analytical tier).
const char* kSweep = R"({
  "name": "render_sweep",
  "model": {"zoo": "mlp"},
  "cluster": {"template": "dgx1_v100"},
  "run": {"batch_size": 64},
  "sweep": {
    "node": ["dgx1_v100", "dgx_a100"],
    "devices_per_node": [1, 4],
    "nodes": [1, 2],
    "fabric": ["ib_edr"],
    "strategies": [{"name": "ring", "data_parallel": {"algorithm": "ring"}},
                   {"name": "ps", "data_parallel": {"aggregation": "parameter_server", "num_ps": [1, 2]}}],
    "batch_size": [64, 256],
    "train": {"samples": 1e7},
    "target": {"samples_per_second": 20000},
    "fidelity": "analytical"
  }
})";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string chromium_binary() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return "";
}

class ChartRender : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = chromium_binary();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install_deps.sh installs it)";
    directory_ = make_temp_directory();
  }
  void TearDown() override {
    if (!directory_.empty()) std::filesystem::remove_all(directory_);
  }

  /// The lines of <pre id="render-check"> after loading `page` with render_check.js injected.
  std::vector<std::string> render_check(const std::filesystem::path& page) {
    std::string html = read_text(page);
    const std::string script = read_text(std::filesystem::path(PLACESIM_SOURCE_DIR) / "tests/browser/render_check.js");
    const size_t body_end = html.rfind("</body>");
    EXPECT_NE(body_end, std::string::npos);
    html.insert(body_end, "<script>\n" + script + "</script>\n");
    const std::filesystem::path checked = page.parent_path() / ("checked_" + page.filename().string());
    std::ofstream(checked, std::ios::binary) << html;
    const std::filesystem::path dom = directory_ / "dom.html", log = directory_ / "chromium.log";
    // A profile of its own and no /dev/shm (small in containers); at most a minute.
    const std::string command =
        "timeout 60 " + shell_quote(chromium_) +
        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --window-size=1400,1800"
        " --virtual-time-budget=2000 --user-data-dir=" + shell_quote((directory_ / "profile").string()) +
        " --dump-dom " + shell_quote("file://" + checked.string()) + " >" + shell_quote(dom.string()) + " 2>" +
        shell_quote(log.string());
    EXPECT_EQ(std::system(command.c_str()), 0) << read_text(log);
    std::smatch result;
    const std::string loaded = read_text(dom);
    if (!std::regex_search(loaded, result, std::regex("<pre id=\"render-check\">([^<]*)</pre>"))) {
      ADD_FAILURE() << "no render check in the page: the script did not run\n" << read_text(log);
      return {};
    }
    std::vector<std::string> lines;
    std::istringstream in(result[1].str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::cout << "render check of " << page.filename().string() << ":\n" << result[1].str() << "\n";
    return lines;
  }

  /// Expects a clean check with at least `texts` text elements and `series` legend entries.
  void expect_clean(const std::vector<std::string>& lines, size_t texts, size_t series) {
    ASSERT_GE(lines.size(), 2u);
    EXPECT_GE(std::stoul(lines[0].substr(lines[0].find(' ') + 1)), texts) << lines[0];
    EXPECT_GE(std::stoul(lines[1].substr(lines[1].find(' ') + 1)), series) << lines[1];
    for (size_t i = 2; i < lines.size(); ++i) ADD_FAILURE() << lines[i];
  }

  std::string chromium_;
  std::filesystem::path directory_;
};

TEST_F(ChartRender, SweepReportTextsFitAndEverySeriesIsVisible) {
  const std::filesystem::path scenario = directory_ / "sweep.json";
  std::ofstream(scenario) << kSweep;
  const auto result = run_placesim({"sweep", scenario.string(), "-o", (directory_ / "out").string(), "-q"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  // Two charts with 12 series each (+ the recommendation), the Pareto chart's 2, the breakdown's
  // parts: at least 2 x 12 + 2 + 2 legend entries.
  expect_clean(render_check(directory_ / "out" / "report.html"), 100, 28);
}

TEST_F(ChartRender, ConvergencePageTextsFitAndEveryRunIsVisible) {
  const auto result = run_placesim({"converge", "scenarios/converge_sync_vs_async.json", "--output-dir",
                                    (directory_ / "out").string()});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  // 7 runs (3 sync, 4 async) and a target entry in each panel's legend.
  expect_clean(render_check(directory_ / "out" / "convergence.html"), 30, 9);
}

}  // namespace
}  // namespace placesim
