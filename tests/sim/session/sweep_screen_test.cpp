// The screen of a sweep's 3D configurations (sim/session/sweep_screen.h) against each
// configuration's own closed form: exact where it analysed the cell or differs from that
// configuration only in GPipe/1F1B; elsewhere (another data width or ZeRO stage) off by no more
// than the cells' differences allow.
// The step is a max-plus recurrence over slot models (pipeline_closed_form.h), so moving each
// model by at most d moves the step by at most the sum of d along one path: every stage's last
// slot once, one stage's finish, and at most M forward and M backward slots per model chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/sweep_screen.h"

namespace placesim {
namespace {

const std::filesystem::path kScreenRoot = PLACESIM_SOURCE_DIR;

const HardwareCatalog& screen_catalog() {
  static const HardwareCatalog hardware(kScreenRoot / "hardware_profiles");
  return hardware;
}

SweepContext screen_context(const std::string& text) { return make_sweep_context(Json::parse(text), "sweep.json", screen_catalog()); }

/// How far apart two slot models are: their times alone and their delays from each sender.
double slot_distance(const ClosedFormSlot& a, const ClosedFormSlot& b) {
  double delay = 0;
  for (const auto& [from, seconds] : a.delay_seconds) {
    const auto it = std::find_if(b.delay_seconds.begin(), b.delay_seconds.end(),
                                 [from = from](const std::pair<size_t, double>& entry) { return entry.first == from; });
    delay = std::max(delay, it == b.delay_seconds.end() ? std::abs(seconds) : std::abs(seconds - it->second));
  }
  return std::abs(a.alone_seconds - b.alone_seconds) + delay;
}

/// The most a step can move between cells `a` and `b` at `micro_batches` micro-batches.
double step_bound(const ClosedFormCell& a, const ClosedFormCell& b, int64_t micro_batches) {
  double bound = 0, finish = 0;
  for (size_t s = 0; s < a.stages; ++s) {
    bound += slot_distance(a.last[s], b.last[s]);
    finish = std::max(finish, slot_distance(a.finish[s], b.finish[s]));
  }
  for (size_t c = 0; c < a.forward.size(); ++c) {
    bound += static_cast<double>(micro_batches) *
             (slot_distance(a.forward[c], b.forward[c]) + (a.backward_slots ? slot_distance(a.backward[c], b.backward[c]) : 0.0));
  }
  return bound + finish;
}

// A small GPT on 1, 2 or 4 DGX A100 (8 to 32 GPUs: data 4 to 16 at pipeline 2): each layout's
// first multi-node configuration analyses the cell the other node counts take.
const char* kScreenSweep = R"({
  "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
  "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
  "sweep": {"nodes": [1, 2, 4], "fabric": ["ib_hdr"], "batch_size": [64],
            "strategies": [{"parallelism": {"pipeline": [2, 4], "micro_batch_size": [1, 2], "stage_split": "layers",
                                            "schedule": ["gpipe", "1f1b"]}},
                           {"name": "zero1", "parallelism": {"pipeline": 2, "zero": [1, 2], "stage_split": "layers"}},
                           {"name": "pipedream", "parallelism": {"pipeline": 2, "schedule": "pipedream"}},
                           {"name": "zero3", "parallelism": {"pipeline": 2, "zero": 3}}]}})";

TEST(SweepScreen, MatchesEachConfigurationsClosedFormWithinWhatItsCellsDifferenceAllows) {
  const SweepContext context = screen_context(kScreenSweep);
  std::vector<size_t> all(context.spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, all);
  // 3 node counts x (2 pipelines x 2 micro-batch sizes x 2 schedules + ZeRO 1 and 2 + ZeRO 3,
  // whose cells serve one node count); PipeDream left out.
  ASSERT_EQ(rows.size(), 3u * 11u);
  size_t exact = 0, shared = 0, moved = 0, across_zero_stages = 0;
  for (const ScreenedConfiguration& screen : rows) {
    const SweepRow& row = screen.row;
    ASSERT_EQ(row.tier, Tier::kSearch);
    ASSERT_EQ(row.status, RowStatus::kOk) << row.reason;
    const SweepRow closed_form = evaluate_configuration(context, row.index, Tier::kAnalytical);
    ASSERT_EQ(closed_form.status, RowStatus::kOk) << closed_form.reason;
    const Scenario own = configuration_scenario(context, row.index), from = configuration_scenario(context, screen.cell_from);
    const SweepConfiguration& mine = context.spec.configurations[row.index];
    const SweepConfiguration& theirs = context.spec.configurations[screen.cell_from];
    const int zero = context.layouts[mine.strategy].zero_stage, cell_zero = context.layouts[theirs.strategy].zero_stage;
    if (zero != cell_zero) ++across_zero_stages;
    if (mine.nodes == theirs.nodes && zero == cell_zero) {
      // The cell's own configuration or its other schedule: the closed form itself.
      EXPECT_EQ(row.step_seconds, closed_form.step_seconds) << row.index;
      EXPECT_EQ(row.samples_per_second, closed_form.samples_per_second) << row.index;
      EXPECT_EQ(row.peak_memory_bytes, closed_form.peak_memory_bytes) << row.index;  // GPipe's, not 1F1B's
      ++exact;
      continue;
    }
    ++shared;
    const ParallelismOptions& options = *own.strategies.front().parallelism;
    const ClosedFormCell own_cell = analyse_3d_cell(own.graph, own.cluster_for(own.strategies.front()), own.run, options);
    const ClosedFormCell cell_from =
        analyse_3d_cell(from.graph, from.cluster_for(from.strategies.front()), from.run, *from.strategies.front().parallelism);
    const double bound = step_bound(own_cell, cell_from, options.micro_batches);
    EXPECT_LE(std::abs(row.step_seconds - closed_form.step_seconds), bound + 1e-12 * closed_form.step_seconds)
        << row.index << " bound " << bound;
    if (row.step_seconds != closed_form.step_seconds) ++moved;
    // Activations are the cell's and a ZeRO shard is divided by this configuration's group: the
    // closed form's memory to rounding (ZeRO 2 at 32 GPUs: data 16, where the cell had data 8;
    // ZeRO 2's gradients and optimizer state from ZeRO 1's cell, whose gradients are whole).
    EXPECT_NEAR(row.peak_memory_bytes, closed_form.peak_memory_bytes, 1e-9 * closed_form.peak_memory_bytes) << row.index;
  }
  for (const ScreenedConfiguration& screen : rows) {
    // MFU's inputs are the configuration's own: per sample the layout's, the peak its GPUs'
    // (the cell's per replica times its data width); the replicas are its data width; there
    // is no one-replica baseline.
    const SweepRow& row = screen.row;
    const SweepRow closed_form = evaluate_configuration(context, row.index, Tier::kAnalytical);
    EXPECT_EQ(row.model_flops_per_sample, closed_form.model_flops_per_sample) << row.index;
    EXPECT_EQ(row.hardware_flops_per_sample, closed_form.hardware_flops_per_sample) << row.index;
    EXPECT_EQ(row.tokens_per_sample, closed_form.tokens_per_sample) << row.index;
    EXPECT_NEAR(row.peak_flops_per_second, closed_form.peak_flops_per_second, 1e-12 * closed_form.peak_flops_per_second)
        << row.index;
    EXPECT_EQ(row.replicas, closed_form.replicas) << row.index;
    EXPECT_EQ(row.single_replica_samples_per_second, 0.0) << row.index;
    EXPECT_EQ(row.tasks, closed_form.tasks) << row.index;
  }
  // One node (its own cells), 2 nodes (the cells the 4-node ones take) and ZeRO 3 at every node
  // count; ZeRO 1 and 2 take the cell of the plain layout of the same pipeline and micro-batch
  // (ZeRO 0: the same slots, its updates whole) at every node count.
  EXPECT_EQ(exact, 2u * 8u + 3u);
  EXPECT_EQ(shared, 14u);
  EXPECT_EQ(across_zero_stages, 6u);
  EXPECT_GT(moved, 0u);  // the tails at data 16 are not data 8's, ZeRO 2's not ZeRO 1's: the bound is what holds
}

// The search tier's rows (a sweep's "fidelity": "search N"): one per configuration, in the order
// asked; the screen's where it covers the layout (ZeRO 3 too, a cell per node count), the
// analytical tier's elsewhere (PipeDream here). A configuration the strategy reader refuses is not applicable with its reason,
// though the screen builds no scenario for it: 7 GPUs are not a multiple of pipeline 2;
// interleaving with GPipe; and at a global batch of 36 on data 4, 9 micro-batches, not a
// multiple of pipeline 2 (Megatron-LM's rule), while batch 64's 16 are.
TEST(SweepScreen, SearchRowsGiveEveryConfigurationARowOnTheScreenOrTheAnalyticalTier) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "sweep": {"devices_per_node": [8, 7], "batch_size": [64, 36],
              "strategies": [{"parallelism": {"pipeline": 2, "stage_split": "layers", "schedule": ["gpipe", "1f1b"]}},
                             {"name": "interleaved", "parallelism": {"pipeline": 2, "virtual_stages": 2, "stage_split": "layers",
                                                                     "schedule": ["gpipe", "1f1b"]}},
                             {"name": "pipedream", "parallelism": {"pipeline": 2, "schedule": "pipedream"}},
                             {"name": "zero3", "parallelism": {"pipeline": 2, "zero": 3}}]}})");
  const size_t count = context.spec.configurations.size();
  ASSERT_EQ(count, 2u * 2u * 6u);
  // In index order, a layout's refused configurations after its cell's (1F1B interleaved at
  // batch 36 after batch 64) meet the screen's own checks, not the strategy reader's.
  std::vector<size_t> asked;
  for (size_t i = 0; i < count; ++i) asked.push_back(i);
  const std::vector<SweepRow> rows = search_rows(context, asked);
  const std::vector<SweepRow> backwards = search_rows(context, {7, 6, 1});
  ASSERT_EQ(backwards.size(), 3u);
  EXPECT_EQ(backwards[0].index, 7u);
  EXPECT_EQ(backwards[1].index, 6u);
  EXPECT_EQ(backwards[2].index, 1u);
  ASSERT_EQ(rows.size(), asked.size());
  size_t refused_by_interleaving = 0, screened_ok = 0;
  for (size_t k = 0; k < asked.size(); ++k) {
    const SweepRow& row = rows[k];
    ASSERT_EQ(row.index, asked[k]);
    const SweepConfiguration& configuration = context.spec.configurations[row.index];
    const std::string& name = context.spec.strategies[configuration.strategy].label;
    const std::string which = name + " batch " + std::to_string(configuration.batch_size) + " on " +
                              std::to_string(configuration.devices_per_node);
    const bool covered = name.find("pipedream") == std::string::npos;
    EXPECT_EQ(row.tier, covered ? Tier::kSearch : Tier::kAnalytical) << which;
    const SweepRow closed_form = evaluate_configuration(context, row.index, Tier::kAnalytical);
    ASSERT_EQ(row.status, closed_form.status) << which << ": " << row.reason << " / " << closed_form.reason;
    EXPECT_EQ(row.reason, closed_form.reason) << which;
    if (row.reason.find("virtual_stages 2 (interleaved 1F1B) needs") != std::string::npos) ++refused_by_interleaving;
    if (!covered) {
      EXPECT_EQ(row_json(row), row_json(closed_form)) << which;
    } else if (row.status == RowStatus::kOk) {
      ++screened_ok;
      // One node: the cell's data width. Batch 36 takes batch 64's cell, whose micro-batch is
      // the same sample, but priced as 1/16 of each op's cost at 64 samples (kernel efficiency
      // at that size), not 1/9 of its cost at 36: 2 ppm here.
      EXPECT_NEAR(row.step_seconds, closed_form.step_seconds,
                  (configuration.batch_size == 64 ? 1e-12 : 1e-5) * closed_form.step_seconds)
          << which;
    }
  }
  // GPipe interleaved at both batches, and 1F1B interleaved at batch 36.
  EXPECT_EQ(refused_by_interleaving, 3u);
  EXPECT_EQ(screened_ok, 2u + 2u + 1u + 2u);  // plain, its other schedule, interleaved 1F1B, ZeRO 3
}

TEST(SweepScreen, KeysShareSchedulesDataWidthsAndZeroStagesUpTo2ButNotTheWidthsOfLayoutsWhoseSlotsMoveWithThem) {
  const SweepContext context = screen_context(kScreenSweep);
  auto key_of = [&](int64_t nodes, const std::string& label_part) {
    for (const SweepConfiguration& c : context.spec.configurations) {
      if (c.nodes == nodes && context.spec.strategies[c.strategy].label.find(label_part) != std::string::npos) {
        return screen_key(context, c.index);
      }
    }
    return std::string("none");
  };
  const std::string gpipe = key_of(2, "micro_batch_size=1 pipeline=2 schedule=gpipe");
  ASSERT_NE(gpipe, "none");
  EXPECT_FALSE(gpipe.empty());
  EXPECT_EQ(gpipe, key_of(2, "micro_batch_size=1 pipeline=2 schedule=1f1b"));
  EXPECT_EQ(gpipe, key_of(4, "micro_batch_size=1 pipeline=2 schedule=gpipe"));
  EXPECT_NE(gpipe, key_of(1, "micro_batch_size=1 pipeline=2 schedule=gpipe"));  // one node: no fabric
  EXPECT_NE(gpipe, key_of(2, "micro_batch_size=2 pipeline=2 schedule=gpipe"));
  EXPECT_NE(gpipe, key_of(2, "micro_batch_size=1 pipeline=4 schedule=gpipe"));
  EXPECT_EQ(key_of(2, "pipedream"), "");
  // ZeRO 1 and 2 run the plain layout's slots (the same gradient bytes, as an all-reduce): one
  // cell with it; their memory is resharded and their updates are the cell's.
  EXPECT_EQ(gpipe, key_of(2, "zero=1"));
  EXPECT_EQ(gpipe, key_of(2, "zero=2"));
  // ZeRO 3 gathers its parameters over the data width: one cell per node count.
  EXPECT_FALSE(key_of(2, "zero3").empty());
  EXPECT_NE(key_of(2, "zero3"), key_of(4, "zero3"));
}

// Experts: an expert group is `expert` consecutive data replicas whatever the data width, so
// replica 0's all-to-alls run on the same GPUs at every node count and the layout's cell serves
// them all (a small Mixtral, 4 experts, pipeline 2, expert 2, on 1, 2 and 4 DGX A100: data 4, 8
// and 16), and its ZeRO stages 0-2 as a dense layout's do: an expert's optimizer state and
// gradients divide over its holders (data / expert replicas), the rest over the data width, and
// the screen reshards each part by its own group.
TEST(SweepScreen, ExpertLayoutsShareACellAcrossDataWidthsAndZeroStages) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "mixtral_8x7b", "parameters": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128,
                                                    "experts": 4, "top_k": 2, "sequence": 32, "vocabulary": 128}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "simulation": {"gpu_spread": "none"},
    "sweep": {"nodes": [1, 2, 4], "fabric": ["ib_hdr"], "batch_size": [64],
              "strategies": [{"parallelism": {"pipeline": 2, "expert": 2, "zero": [0, 1, 2], "stage_split": "layers"}}]}})");
  auto key_of = [&](int64_t nodes, int zero) {
    for (const SweepConfiguration& c : context.spec.configurations) {
      if (c.nodes == nodes && context.layouts[c.strategy].zero_stage == zero) return screen_key(context, c.index);
    }
    return std::string("none");
  };
  ASSERT_FALSE(key_of(2, 0).empty());
  EXPECT_EQ(key_of(2, 0), key_of(4, 0));  // across data widths
  EXPECT_EQ(key_of(2, 0), key_of(2, 1));  // and ZeRO stages
  EXPECT_EQ(key_of(4, 2), key_of(2, 1));
  EXPECT_NE(key_of(1, 0), key_of(2, 0));  // one node: no fabric

  std::vector<size_t> all(context.spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, all);
  ASSERT_EQ(rows.size(), 3u * 3u);
  size_t shared = 0;
  std::map<std::pair<int64_t, int>, double> memory;  // by (data width, ZeRO stage)
  for (const ScreenedConfiguration& screen : rows) {
    const SweepRow& row = screen.row;
    ASSERT_EQ(row.status, RowStatus::kOk) << row.reason;
    const SweepRow closed_form = evaluate_configuration(context, row.index, Tier::kAnalytical);
    ASSERT_EQ(closed_form.status, RowStatus::kOk) << closed_form.reason;
    // Memory: the cell's activations, the ZeRO shards divided by this configuration's groups (an
    // expert's over its holders: data / 2 replicas here, the rest over all data replicas).
    EXPECT_NEAR(row.peak_memory_bytes, closed_form.peak_memory_bytes, 1e-9 * closed_form.peak_memory_bytes) << row.index;
    const Scenario own = configuration_scenario(context, row.index);
    const ParallelismOptions& options = *own.strategies.front().parallelism;
    memory[{options.data, options.zero_stage}] = row.peak_memory_bytes;
    if (screen.cell_from == row.index) {
      EXPECT_EQ(row.step_seconds, closed_form.step_seconds) << row.index;
      continue;
    }
    ++shared;
    const Scenario from = configuration_scenario(context, screen.cell_from);
    const ParallelismOptions& from_options = *from.strategies.front().parallelism;
    EXPECT_TRUE(options.data != from_options.data || options.zero_stage != from_options.zero_stage);
    // Replica 0's all-to-alls are the same at every data width
    // (ExpertParallel.ReplicaZerosAllToAllsAreTheSameAtEveryDataWidth) and ZeRO stage, so the
    // slots are the cell's but for each op's per-micro-batch share of its whole-batch cost (a
    // weight read once per batch shared over another number of micro-batches: a few bytes of a
    // small op, ~1e-6 of a slot here; the dense layouts' cells differ alike); the stages' last
    // slots and finish (the gradient reductions over another data width, another stage's
    // updates) are the cell's.
    const ClosedFormCell own_cell = analyse_3d_cell(own.graph, own.cluster_for(own.strategies.front()), own.run, options);
    const ClosedFormCell cell_from =
        analyse_3d_cell(from.graph, from.cluster_for(from.strategies.front()), from.run, from_options);
    ASSERT_EQ(own_cell.forward.size(), cell_from.forward.size());
    for (size_t c = 0; c < own_cell.forward.size(); ++c) {
      EXPECT_LE(slot_distance(own_cell.forward[c], cell_from.forward[c]), 1e-5 * own_cell.forward[c].alone_seconds) << c;
      EXPECT_LE(slot_distance(own_cell.backward[c], cell_from.backward[c]), 1e-5 * own_cell.backward[c].alone_seconds) << c;
    }
    const double bound = step_bound(own_cell, cell_from, options.micro_batches);
    EXPECT_LE(std::abs(row.step_seconds - closed_form.step_seconds), bound + 1e-12 * closed_form.step_seconds) << row.index;
  }
  EXPECT_EQ(shared, 2u + 5u);  // one node's ZeRO 1 and 2 take its ZeRO 0 cell; 2 and 4 nodes one cell
  // Each ZeRO stage saves memory at every data width, and more at a wider one.
  for (int64_t data : {4, 8, 16}) {
    EXPECT_LT(memory.at({data, 1}), memory.at({data, 0})) << data;
    EXPECT_LT(memory.at({data, 2}), memory.at({data, 1})) << data;
  }
  EXPECT_LT(memory.at({16, 1}), memory.at({8, 1}));
}

// An expert group is `expert` consecutive data replicas, so it must divide the data width, which
// the planner checks and a shared cell cannot: 4 DGX A100 (tensor 2 x pipeline 2 x data 8)
// analyse the cell that 5 (data 10, which expert 4 does not divide) would take. The screen
// refuses it as the analytical tier does, with the same reason.
TEST(SweepScreen, AWiderDataWidthThatExpertGroupsDoNotDivideIsRefusedAsThePlannerRefusesIt) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "mixtral_8x7b", "parameters": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128,
                                                    "experts": 4, "top_k": 2, "sequence": 32, "vocabulary": 128}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "sweep": {"nodes": [4, 5], "fabric": ["ib_hdr"], "batch_size": [80],
              "strategies": [{"parallelism": {"tensor": 2, "pipeline": 2, "expert": 4, "stage_split": "layers"}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 2u);
  EXPECT_EQ(screen_key(context, 0), screen_key(context, 1));
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, {0, 1});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].row.status, RowStatus::kOk) << rows[0].row.reason;
  const SweepRow analytical = evaluate_configuration(context, 1, Tier::kAnalytical);
  ASSERT_EQ(analytical.status, RowStatus::kNotApplicable);
  EXPECT_NE(analytical.reason.find("an expert group of 4 data-parallel replicas must divide the data-parallel size 10"),
            std::string::npos)
      << analytical.reason;
  EXPECT_EQ(rows[1].row.status, RowStatus::kNotApplicable);
  EXPECT_EQ(rows[1].row.reason, analytical.reason);
}

// Halving-doubling applies to power-of-two groups only: pipeline 2 on 2 DGX A100 reduces over
// 8 replicas, on 3 over 12, which the planner refuses. A layout naming it keeps a cell per node
// count, so each configuration is checked on its own groups; ring and tree layouts share theirs.
TEST(SweepScreen, ALayoutWhoseAlgorithmFitsSomeGroupsOnlyKeepsACellPerDataWidth) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "sweep": {"nodes": [2, 3], "fabric": ["ib_hdr"], "batch_size": [96],
              "strategies": [{"parallelism": {"pipeline": 2, "stage_split": "layers",
                                              "algorithm": ["halving_doubling", "tree"]}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 4u);
  std::map<std::pair<int64_t, std::string>, size_t> index;  // by (nodes, algorithm)
  for (const SweepConfiguration& c : context.spec.configurations) {
    const std::string algorithm = context.spec.strategies[c.strategy].strategy.at("parallelism").at("algorithm").get<std::string>();
    index[{c.nodes, algorithm}] = c.index;
  }
  const size_t hd2 = index.at({2, "halving_doubling"}), hd3 = index.at({3, "halving_doubling"});
  const size_t tree2 = index.at({2, "tree"}), tree3 = index.at({3, "tree"});
  EXPECT_NE(screen_key(context, hd2), screen_key(context, hd3));
  EXPECT_EQ(screen_key(context, tree2), screen_key(context, tree3));
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, {hd2, hd3});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].row.status, RowStatus::kOk) << rows[0].row.reason;
  const SweepRow analytical = evaluate_configuration(context, hd3, Tier::kAnalytical);
  ASSERT_EQ(analytical.status, RowStatus::kNotApplicable);
  EXPECT_NE(analytical.reason.find("halving-doubling needs a power-of-two group, got 12 devices"), std::string::npos)
      << analytical.reason;
  EXPECT_EQ(rows[1].row.status, RowStatus::kNotApplicable);
  EXPECT_EQ(rows[1].row.reason, analytical.reason);
}

// Each key's cell comes from its narrowest data width whatever order the node counts are listed
// in, so a sweep's screen does not depend on it: the bundled test sweep with its node counts
// reversed gives every configuration the same row, and the same analysing node count.
TEST(SweepScreen, TheNarrowestDataWidthAnalysesTheCellWhateverTheOrderOfTheNodeCounts) {
  const std::string reversed = std::regex_replace(kScreenSweep, std::regex("\\[1, 2, 4\\]"), "[4, 2, 1]");
  ASSERT_NE(reversed, std::string(kScreenSweep));
  const SweepContext ascending = screen_context(kScreenSweep), descending = screen_context(reversed);
  auto screen_all = [](const SweepContext& context) {
    std::vector<size_t> all(context.spec.configurations.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    // By (nodes, strategy variant): the row and its analysing configuration's node count.
    std::map<std::pair<int64_t, size_t>, std::pair<SweepRow, int64_t>> rows;
    for (const ScreenedConfiguration& screen : screen_configurations(context, all)) {
      const SweepConfiguration& c = context.spec.configurations.at(screen.row.index);
      rows[{c.nodes, c.strategy}] = {screen.row, context.spec.configurations.at(screen.cell_from).nodes};
    }
    return rows;
  };
  const auto a = screen_all(ascending), b = screen_all(descending);
  ASSERT_EQ(a.size(), b.size());
  size_t shared = 0;
  for (const auto& [key, row] : a) {
    const auto& other = b.at(key);
    EXPECT_EQ(row.first.status, other.first.status);
    EXPECT_EQ(row.first.step_seconds, other.first.step_seconds) << key.first << " " << key.second;
    EXPECT_EQ(row.first.peak_memory_bytes, other.first.peak_memory_bytes);
    EXPECT_EQ(row.second, other.second);
    shared += row.second != key.first;
  }
  EXPECT_GT(shared, 0u);
}

// ZeRO 0, 1 and 2 share a screen cell, each configuration taking its own stage; FSDP (ZeRO 3 by
// its reader, with no "zero" key) keeps its own cells and its stage: on the node count whose
// cell it analysed, a screened FSDP row is its closed form, memory included.
TEST(SweepScreen, AnFsdpLayoutKeepsItsOwnCellAndItsShardedMemory) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "sweep": {"nodes": [1], "batch_size": [64],
              "strategies": [{"parallelism": {"pipeline": 2, "stage_split": "layers"}},
                             {"name": "fsdp", "parallelism": {"pipeline": 2, "stage_split": "layers", "fsdp": "full"}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 2u);
  EXPECT_NE(screen_key(context, 0), screen_key(context, 1));
  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, {0, 1});
  ASSERT_EQ(rows.size(), 2u);
  for (const ScreenedConfiguration& screen : rows) {
    EXPECT_EQ(screen.cell_from, screen.row.index);
    const SweepRow closed_form = evaluate_configuration(context, screen.row.index, Tier::kAnalytical);
    ASSERT_EQ(screen.row.status, closed_form.status) << screen.row.reason;
    EXPECT_EQ(screen.row.step_seconds, closed_form.step_seconds);
    EXPECT_EQ(screen.row.peak_memory_bytes, closed_form.peak_memory_bytes);
  }
  // Sharded parameters, gradients and optimizer state over the 4 replicas: less memory than plain.
  EXPECT_LT(rows[1].row.peak_memory_bytes, rows[0].row.peak_memory_bytes);
}

// Sequence parallelism shards what a tensor group's ranks share: at tensor 1 the plan is the same
// with it or without it, so the two variants are one layout (one screen key, one cell) and each
// screened row is that configuration's own closed form; at tensor 2 they are two layouts.
TEST(SweepScreen, SequenceParallelismWithoutATensorGroupSharesTheLayoutWithoutIt) {
  const SweepContext context = screen_context(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
    "sweep": {"nodes": [1], "batch_size": [64],
              "strategies": [{"parallelism": {"pipeline": 2, "tensor": [1, 2], "sequence_parallel": [false, true],
                                              "stage_split": "layers"}}]}})");
  auto index_of = [&](const std::string& label_part) {
    for (const SweepConfiguration& c : context.spec.configurations) {
      if (context.spec.strategies[c.strategy].label.find(label_part) != std::string::npos) return c.index;
    }
    ADD_FAILURE() << "no configuration " << label_part;
    return size_t{0};
  };
  const size_t t1_plain = index_of("sequence_parallel=false tensor=1"), t1_sp = index_of("sequence_parallel=true tensor=1");
  const size_t t2_plain = index_of("sequence_parallel=false tensor=2"), t2_sp = index_of("sequence_parallel=true tensor=2");
  EXPECT_FALSE(screen_key(context, t1_plain).empty());
  EXPECT_EQ(screen_key(context, t1_plain), screen_key(context, t1_sp));
  EXPECT_EQ(context.cell_keys[t1_plain], context.cell_keys[t1_sp]);
  EXPECT_NE(screen_key(context, t2_plain), screen_key(context, t2_sp));
  EXPECT_NE(screen_key(context, t1_plain), screen_key(context, t2_plain));

  const std::vector<ScreenedConfiguration> rows = screen_configurations(context, {t1_plain, t1_sp, t2_plain, t2_sp});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].cell_from, t1_plain);  // the tensor-1 layout's one cell
  EXPECT_EQ(rows[3].cell_from, t2_sp);     // sequence parallelism at tensor 2: its own
  for (const ScreenedConfiguration& screen : rows) {
    const SweepRow closed_form = evaluate_configuration(context, screen.row.index, Tier::kAnalytical);
    ASSERT_EQ(screen.row.status, RowStatus::kOk) << screen.row.reason;
    EXPECT_EQ(screen.row.step_seconds, closed_form.step_seconds) << screen.row.index;
    EXPECT_EQ(screen.row.peak_memory_bytes, closed_form.peak_memory_bytes) << screen.row.index;
    EXPECT_EQ(screen.row.tasks, closed_form.tasks) << screen.row.index;
  }
  // Tensor 2's reduce-scatter and all-gather are not its all-reduce: the two layouts differ.
  EXPECT_NE(rows[2].row.tasks, rows[3].row.tasks);
}

TEST(SweepScreen, SelectiveRecomputationOfFusedAttentionSharesTheLayoutWithoutIt) {
  // Megatron's selective recomputation names the core attention's scores, softmax and context
  // ops; fused attention (one FlashAttention op per layer) has none of them, so the plans with it
  // and without it are the same: one screen cell. Its hardware FLOPs differ (HFU counts the
  // recomputed attention, docs/llm-planning.md) and stay each configuration's own. Unfused, the
  // two layouts keep their cells. A run with full recomputation refuses selective besides it,
  // configuration by configuration, so there the layouts keep theirs too.
  auto sweep = [](const std::string& attention, const std::string& run_extra) {
    return screen_context(R"({
      "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000,
                                             "attention": ")" + attention + R"("}},
      "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16")" + run_extra + R"(},
      "sweep": {"nodes": [2, 4], "fabric": ["ib_hdr"], "batch_size": [64],
                "strategies": [{"parallelism": {"pipeline": 2, "tensor": 2, "selective_recompute": [false, true],
                                                "stage_split": "layers"}}]}})");
  };
  auto keys_of = [](const SweepContext& context) {
    std::set<std::string> keys;
    for (size_t i = 0; i < context.spec.configurations.size(); ++i) keys.insert(screen_key(context, i));
    return keys;
  };
  const SweepContext fused = sweep("fused", ""), unfused = sweep("unfused", ""), full = sweep("fused", R"(, "recompute": true)");
  EXPECT_EQ(keys_of(fused).size(), 1u);
  EXPECT_EQ(keys_of(unfused).size(), 2u);
  EXPECT_EQ(keys_of(full).size(), 2u);
  std::vector<size_t> all(fused.spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<ScreenedConfiguration> rows = screen_configurations(fused, all);
  ASSERT_EQ(rows.size(), 4u);  // 2 node counts x selective recomputation off and on
  std::set<double> hardware;
  for (const ScreenedConfiguration& screen : rows) {
    const SweepRow closed_form = evaluate_configuration(fused, screen.row.index, Tier::kAnalytical);
    ASSERT_EQ(screen.row.status, RowStatus::kOk) << screen.row.reason;
    EXPECT_EQ(screen.cell_from, rows.front().cell_from);
    EXPECT_EQ(screen.row.tasks, closed_form.tasks) << screen.row.index;
    EXPECT_EQ(screen.row.model_flops_per_sample, closed_form.model_flops_per_sample) << screen.row.index;
    EXPECT_EQ(screen.row.hardware_flops_per_sample, closed_form.hardware_flops_per_sample) << screen.row.index;
    hardware.insert(screen.row.hardware_flops_per_sample);
    if (fused.spec.configurations[screen.row.index].nodes == fused.spec.configurations[screen.cell_from].nodes) {
      EXPECT_EQ(screen.row.step_seconds, closed_form.step_seconds) << screen.row.index;
      EXPECT_EQ(screen.row.peak_memory_bytes, closed_form.peak_memory_bytes) << screen.row.index;
    }
  }
  // With and without the recomputed attention: 4 L H Q T more per token with it (PaLM's count).
  ASSERT_EQ(hardware.size(), 2u);
  EXPECT_DOUBLE_EQ(*hardware.rbegin() - *hardware.begin(), 4.0 * 4 * 256 * 128 * 128);
}

TEST(SweepScreen, TheAnalyticalTierSharesTheCellOfFusedAttentionWithAndWithoutSelectiveRecomputation) {
  // The analytical tier's groups (cell_key) follow the screen's: a configuration with selective
  // recomputation that selects nothing is evaluated beside the one without, from one cell, and
  // each keeps its own hardware FLOPs; evaluated alone, each row is the same.
  auto sweep = [](const std::string& attention) {
    return screen_context(R"({
      "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000,
                                             "attention": ")" + attention + R"("}},
      "cluster": {"template": "dgx_a100"}, "run": {"steps": 1, "optimizer": "adam", "precision": "fp16"},
      "sweep": {"nodes": [2], "fabric": ["ib_hdr"], "batch_size": [64],
                "strategies": [{"parallelism": {"pipeline": 2, "tensor": 2, "selective_recompute": [false, true],
                                                "stage_split": "layers"}}]}})");
  };
  const SweepContext fused = sweep("fused"), unfused = sweep("unfused");
  ASSERT_EQ(fused.spec.configurations.size(), 2u);
  EXPECT_EQ(fused.cell_keys[0], fused.cell_keys[1]);
  EXPECT_EQ(configurations_sharing_cells(fused, 0, Tier::kAnalytical), (std::vector<size_t>{0, 1}));
  EXPECT_NE(unfused.cell_keys[0], unfused.cell_keys[1]);
  EXPECT_EQ(configurations_sharing_cells(unfused, 1, Tier::kAnalytical), (std::vector<size_t>{1}));
  const std::vector<SweepRow> together = evaluate_configurations(fused, {0, 1}, Tier::kAnalytical);
  ASSERT_EQ(together.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const SweepRow alone = evaluate_configuration(fused, i, Tier::kAnalytical);
    ASSERT_EQ(together[i].status, RowStatus::kOk) << together[i].reason;
    EXPECT_EQ(together[i].step_seconds, alone.step_seconds) << i;
    EXPECT_EQ(together[i].peak_memory_bytes, alone.peak_memory_bytes) << i;
    EXPECT_EQ(together[i].single_replica_samples_per_second, alone.single_replica_samples_per_second) << i;
    EXPECT_EQ(together[i].hardware_flops_per_sample, alone.hardware_flops_per_sample) << i;
  }
  EXPECT_GT(together[1].hardware_flops_per_sample, together[0].hardware_flops_per_sample);  // the recomputed attention
}

}  // namespace
}  // namespace placesim
