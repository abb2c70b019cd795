// A whole sweep (sim/session/sweep_run.h) on workers the test provides: what it hands out on
// which tier and in which order, what it writes, that a resumed run hands out nothing and writes
// the same files, and that where the items run (this process or forked ones) changes nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "sim/session/sweep_run.h"
#include "sim/sweep/result_store.h"

namespace placesim {
namespace {

const std::filesystem::path kSweepRunRoot = PLACESIM_SOURCE_DIR;

const HardwareCatalog& sweep_run_catalog() {
  static const HardwareCatalog hardware(kSweepRunRoot / "hardware_profiles");
  return hardware;
}

/// Runs every item in the test's own process, in the order given, and records them.
class InThisProcess final : public SweepWorkers {
 public:
  explicit InThisProcess(const SweepContext& context)
      : work_([&context](size_t index, int tier) { return sweep_work_item_text(context, index, Tier(tier)); }) {}
  void run(const std::vector<size_t>& items, int tier, const OnResult& on_result) override {
    for (size_t item : items) {
      handed.push_back({item, Tier(tier)});
      on_result(item, work_(item, tier));
    }
  }
  std::string description() const override { return "the test's own process"; }
  void finish() override { ++finished; }

  std::vector<std::pair<size_t, Tier>> handed;
  int finished = 0;

 private:
  Work work_;
};

// A small GPT on 1, 2 or 4 DGX A100: layouts the search tier screens (PipeDream's among them), and
// ZeRO 3, whose slots move with the data width, which it does not cover (the analytical tier
// evaluates it in the first pass).
const char* kSearchSweep = R"({
  "name": "small_search",
  "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
  "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
  "sweep": {"nodes": [1, 2, 4], "fabric": ["ib_hdr"], "batch_size": [64], "fidelity": "search 2",
            "strategies": [{"parallelism": {"pipeline": [2, 4], "micro_batch_size": [1, 2], "stage_split": "layers",
                                            "schedule": ["gpipe", "1f1b"]}},
                           {"name": "pipedream", "parallelism": {"pipeline": 2, "schedule": "pipedream"}},
                           {"name": "zero3", "parallelism": {"pipeline": 2, "zero": 3}}]}})";

std::string sweep_run_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A fresh, empty directory under the system's temporary one.
std::filesystem::path sweep_run_directory(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("placesim_sweep_run_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

SweepRunResult run_into(const SweepContext& context, SweepWorkers& workers, const std::filesystem::path& out,
                        std::ostringstream* progress) {
  SweepRunOptions options;
  options.output = out;
  options.progress = progress;
  return run_sweep(context, "small_search", workers, options);
}

TEST(SweepRun, ASearchScreensFirstThenEvaluatesItsBestOnTheAnalyticalTierAndAResumeHandsOutNothing) {
  const SweepContext context = make_sweep_context(Json::parse(kSearchSweep), "sweep.json", sweep_run_catalog());
  const size_t configurations = context.spec.configurations.size();
  ASSERT_EQ(configurations, 3u * (2 * 2 * 2 + 1 + 1));  // 3 node counts x (8 screened layouts + PipeDream + ZeRO 3)
  const std::filesystem::path out = sweep_run_directory("search");

  InThisProcess workers(context);
  std::ostringstream progress;
  const SweepRunResult result = run_into(context, workers, out, &progress);

  // The screen first, then the configurations it does not cover, then the best 2 (or more, while
  // the recommendation stands on a screen's estimate) on the analytical tier.
  size_t screened = 0;
  while (screened < workers.handed.size() && workers.handed[screened].second == Tier::kSearch) ++screened;
  ASSERT_GT(screened, 0u);
  for (size_t i = screened; i < workers.handed.size(); ++i) EXPECT_EQ(workers.handed[i].second, Tier::kAnalytical);
  EXPECT_EQ(workers.finished, 1);

  // Every configuration has a first-pass row; the 3 the screen does not cover (ZeRO 3 on 1, 2 and
  // 4 nodes) and the best 2 an analytical one.
  ResultStore store(out / "results.jsonl", fingerprint(context.spec.fingerprint_source.dump()));
  size_t first_pass = 0, analytical = 0;
  for (size_t i = 0; i < configurations; ++i) {
    first_pass += store.has(i, Tier::kSearch) || store.has(i, Tier::kAnalytical);
    analytical += store.has(i, Tier::kAnalytical);
  }
  EXPECT_EQ(first_pass, configurations);
  EXPECT_GE(analytical, 3u + 2u);
  EXPECT_NE(progress.str().find("placesim: sweep small_search: 30 configurations, fidelity search 2, the test's own "
                                "process\n"),
            std::string::npos)
      << progress.str();
  EXPECT_NE(progress.str().find("placesim: screened 27 configurations on the search tier in this run; evaluated 3 it "
                                "does not cover, 2 of the search's best 2 and "),
            std::string::npos)
      << progress.str();
  EXPECT_EQ(result.results_csv, out / "results.csv");
  EXPECT_EQ(result.summary_md, out / "summary.md");
  EXPECT_EQ(result.report_html, out / "report.html");
  EXPECT_FALSE(result.recommendation.empty());
  const std::string csv = sweep_run_text(result.results_csv);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<std::ptrdiff_t>(configurations + 1));

  // Resumed: nothing is handed out, and the same files are written.
  InThisProcess again(context);
  std::ostringstream resumed_progress;
  const SweepRunResult resumed = run_into(context, again, out, &resumed_progress);
  EXPECT_TRUE(again.handed.empty());
  EXPECT_EQ(again.finished, 1);
  EXPECT_NE(resumed_progress.str().find("; resuming: 30 already in"), std::string::npos) << resumed_progress.str();
  EXPECT_EQ(resumed.recommendation, result.recommendation);
  EXPECT_EQ(sweep_run_text(resumed.results_csv), csv);
  std::filesystem::remove_all(out);
}

TEST(SweepRun, ForkedProcessesWriteTheSameFilesAsOneProcess) {
  const SweepContext context = make_sweep_context(Json::parse(kSearchSweep), "sweep.json", sweep_run_catalog());
  const std::filesystem::path here = sweep_run_directory("here"), forked = sweep_run_directory("forked");
  InThisProcess one(context);
  LocalProcesses two(2, [&context](size_t index, int tier) { return sweep_work_item_text(context, index, Tier(tier)); });
  EXPECT_EQ(two.description(), "2 processes");
  const SweepRunResult a = run_into(context, one, here, nullptr);
  const SweepRunResult b = run_into(context, two, forked, nullptr);
  EXPECT_EQ(a.recommendation, b.recommendation);
  for (const char* name : {"results.csv", "summary.md"}) {
    EXPECT_EQ(sweep_run_text(here / name), sweep_run_text(forked / name)) << name;
  }
  std::filesystem::remove_all(here);
  std::filesystem::remove_all(forked);
}

}  // namespace
}  // namespace placesim
