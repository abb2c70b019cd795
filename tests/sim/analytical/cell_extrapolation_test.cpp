// A cell drawn out from two shallower cells (sim/analytical/cell_extrapolation.h): every number
// on the line through the two at its layer count, and no cell where the two differ in shape.
#include <gtest/gtest.h>

#include "sim/analytical/cell_extrapolation.h"

namespace placesim {
namespace {

/// A two-stage cell whose numbers grow by `per_layer` times fixed steps for each of `layers`
/// layers per stage: what one layer adds to a slot (0.25 s forward, 0.5 s backward), to a delay
/// (0.05 s), to a stage's memory (1,000 bytes of parameters, 4,000 of activations) and to the
/// cell plan's tasks (7).
ClosedFormCell two_stage_cell(double layers) {
  ClosedFormCell cell;
  cell.stages = 2;
  cell.cell_plan_tasks = static_cast<size_t>(10 + 7 * layers);
  cell.cell_schedule = {{PipelineSlot(true, 0), PipelineSlot(false, 0)}, {PipelineSlot(true, 0), PipelineSlot(false, 0)}};
  for (size_t s = 0; s < 2; ++s) {
    cell.forward.push_back({0.1 + 0.25 * layers, {}});
    cell.backward.push_back({0.2 + 0.5 * layers, {}});
    cell.last.push_back({0.3 + 0.5 * layers, {}});
    cell.finish.push_back({0.4 + 0.6 * layers, {}});
    MemoryBreakdown memory;
    memory.parameter_bytes = 500 + 1000 * layers;
    memory.workspace_bytes = 64;  // the largest GEMM's: the same at any depth
    cell.static_memory.push_back(memory);
    cell.expert_static_memory.push_back(MemoryBreakdown{});
    cell.cell_peak_bytes.push_back(100 + 4000 * layers);
    cell.workspace_bytes.push_back(64);
    cell.capacity_bytes.push_back(80e9);
    cell.kept_bytes.push_back({2000 * layers});
  }
  // Stage 1's forward waits for stage 0's: its transfer (-0.01 s: it starts before the slot's end)
  // then the slot; stage 0's backward for stage 1's.
  cell.forward[1].delay_seconds = {{0, -0.01 + 0.05 * layers}};
  cell.backward[0].delay_seconds = {{1, 0.02 + 0.05 * layers}};
  cell.forward_inputs = {{}, {{0, 0.001, 4096}}};
  cell.backward_inputs = {{{1, 0.001, 4096}}, {}};
  // Interleaved cells' slot peaks: (forward, chunk 0) peaks 0.05 s per layer before its end.
  cell.slot_peaks.resize(2);
  for (size_t s = 0; s < 2; ++s) cell.slot_peaks[s][{true, 0}] = {300 + 4000 * layers, 0.05 * layers, {0}};
  return cell;
}

TEST(CellExtrapolation, AtLayersReadsTheLineThroughTwoDepths) {
  // 10 at 4 layers, 14 at 6: 2 per layer, so 10 + (32 - 4) x 2 = 66 at 32 and 6 at 2.
  EXPECT_DOUBLE_EQ(at_layers(10, 4, 14, 6, 32), 66);
  EXPECT_DOUBLE_EQ(at_layers(10, 4, 14, 6, 2), 6);
  EXPECT_DOUBLE_EQ(at_layers(-0.02, 4, -0.03, 6, 32), -0.16);
}

TEST(CellExtrapolation, EveryNumberIsOnTheLineThroughTheTwoCellsAtTheLayerCount) {
  // Probes at 2 and 3 layers per stage (4 and 6 in all), drawn out to 16 per stage (32 in all):
  // the slope (32 - 4) / (6 - 4) = 14 steps of one layer per stage from the shallow cell.
  const std::optional<ClosedFormCell> cell = extrapolate_cell(two_stage_cell(2), 4, two_stage_cell(3), 6, 32);
  ASSERT_TRUE(cell.has_value());
  const ClosedFormCell expected = two_stage_cell(16);
  EXPECT_EQ(cell->cell_plan_tasks, 10u + 7u * 16u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_NEAR(cell->forward[s].alone_seconds, 0.1 + 0.25 * 16, 1e-12);
    EXPECT_NEAR(cell->backward[s].alone_seconds, 0.2 + 0.5 * 16, 1e-12);
    EXPECT_NEAR(cell->last[s].alone_seconds, expected.last[s].alone_seconds, 1e-12);
    EXPECT_NEAR(cell->finish[s].alone_seconds, 0.4 + 0.6 * 16, 1e-12);
    EXPECT_NEAR(cell->static_memory[s].parameter_bytes, 500 + 1000 * 16, 1e-6);
    EXPECT_DOUBLE_EQ(cell->static_memory[s].workspace_bytes, 64);
    EXPECT_NEAR(cell->cell_peak_bytes[s], 100 + 4000 * 16, 1e-6);
    EXPECT_NEAR(cell->kept_bytes[s][0], 2000 * 16, 1e-6);
    EXPECT_DOUBLE_EQ(cell->capacity_bytes[s], 80e9);
    const ClosedFormCell::SlotPeak& peak = cell->slot_peaks[s].at({true, 0});
    EXPECT_NEAR(peak.peak_bytes, 300 + 4000 * 16, 1e-6);
    EXPECT_NEAR(peak.peak_before_end_seconds, 0.05 * 16, 1e-12);
    EXPECT_EQ(peak.open, std::vector<int64_t>{0});
  }
  ASSERT_EQ(cell->forward[1].delay_seconds.size(), 1u);
  EXPECT_EQ(cell->forward[1].delay_seconds[0].first, 0u);
  EXPECT_NEAR(cell->forward[1].delay_seconds[0].second, -0.01 + 0.05 * 16, 1e-12);
  EXPECT_NEAR(cell->backward[0].delay_seconds[0].second, 0.02 + 0.05 * 16, 1e-12);
  EXPECT_EQ(cell->forward_inputs[1][0].from, 0u);
  EXPECT_DOUBLE_EQ(cell->forward_inputs[1][0].bytes, 4096);
}

TEST(CellExtrapolation, ANegativeDelayMayStayNegativeButNoByteCountMayTurnNegative) {
  // A delay negative in both cells is a transfer starting before its sender's slot ends: kept.
  ClosedFormCell shallow = two_stage_cell(2), deep = two_stage_cell(3);
  shallow.forward[1].delay_seconds[0].second = -0.02;
  deep.forward[1].delay_seconds[0].second = -0.03;
  const std::optional<ClosedFormCell> cell = extrapolate_cell(shallow, 4, deep, 6, 32);
  ASSERT_TRUE(cell.has_value());
  EXPECT_NEAR(cell->forward[1].delay_seconds[0].second, -0.02 - 0.01 * 14, 1e-12);
  // Bytes that shrink with depth would be negative at 32 layers (4,096 - 14 x 1,000): no cell.
  deep = two_stage_cell(3);
  deep.forward_inputs[1][0].bytes = 3096;
  EXPECT_FALSE(extrapolate_cell(two_stage_cell(2), 4, deep, 6, 32).has_value());
}

TEST(CellExtrapolation, CellsOfDifferentShapesOrDevicesGiveNoCell) {
  const ClosedFormCell shallow = two_stage_cell(2);
  ClosedFormCell other_sender = two_stage_cell(3);
  other_sender.forward[1].delay_seconds[0].first = 1;
  EXPECT_FALSE(extrapolate_cell(shallow, 4, other_sender, 6, 32).has_value());
  ClosedFormCell more_stages = two_stage_cell(3);
  more_stages.stages = 3;
  EXPECT_FALSE(extrapolate_cell(shallow, 4, more_stages, 6, 32).has_value());
  ClosedFormCell other_schedule = two_stage_cell(3);
  other_schedule.cell_schedule[1] = {PipelineSlot(true, 0)};
  EXPECT_FALSE(extrapolate_cell(shallow, 4, other_schedule, 6, 32).has_value());
  ClosedFormCell other_capacity = two_stage_cell(3);
  other_capacity.capacity_bytes[0] = 40e9;
  EXPECT_FALSE(extrapolate_cell(shallow, 4, other_capacity, 6, 32).has_value());
  ClosedFormCell other_pace = two_stage_cell(3);
  other_pace.lockstep_gemm_factor = 1.02;
  EXPECT_FALSE(extrapolate_cell(shallow, 4, other_pace, 6, 32).has_value());
  ClosedFormCell other_peaks = two_stage_cell(3);
  other_peaks.slot_peaks[0][{false, 0}] = {};
  EXPECT_FALSE(extrapolate_cell(shallow, 4, other_peaks, 6, 32).has_value());
  ClosedFormCell fewer_inputs = two_stage_cell(3);
  fewer_inputs.forward_inputs[1].clear();
  EXPECT_FALSE(extrapolate_cell(shallow, 4, fewer_inputs, 6, 32).has_value());
  EXPECT_FALSE(extrapolate_cell(shallow, 6, two_stage_cell(3), 6, 32).has_value());  // no line through one depth
}

}  // namespace
}  // namespace placesim
