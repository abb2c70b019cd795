#include "sim/session/sweep_screen.h"

#include <chrono>
#include <exception>
#include <map>
#include <string>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

/// A layout's cell and the options and run of the configuration that analysed it.
struct LayoutCell {
  size_t index = 0;
  ClosedFormCell cell;
  ParallelismOptions options;
  RunOptions run;
};

}  // namespace

std::string screen_key(const SweepContext& context, size_t index) {
  const SweepConfiguration& c = context.spec.configurations.at(index);
  const StrategyVariant& variant = context.spec.strategies.at(c.strategy);
  const std::string& layout = context.layouts.at(c.strategy).text;
  if (layout.empty() || variant.sets_micro_batches) return "";
  // Whose slots move with the data width: ZeRO 3 gathers parameters over it, experts exchange
  // tokens over it, and with the stages outermost replica 0's stages sit elsewhere.
  const Json& options = variant.strategy.at("parallelism");
  const auto zero = options.find("zero");
  const auto expert = options.find("expert");
  if ((zero != options.end() && zero->is_number() && zero->get<double>() >= 3) || options.contains("fsdp") ||
      (expert != options.end() && *expert != Json(1)) || options.contains("device_order")) {
    return "";
  }
  return std::to_string(c.node_type) + "|" + std::to_string(c.devices_per_node) + "|" +
         (c.nodes > 1 ? c.fabric : std::string("one node")) + "|" + c.precision + "|" +
         std::to_string(variant.micro_batch_size) + "|" + (variant.sets_algorithm ? "a" : "") + "|" + layout;
}

std::vector<ScreenedConfiguration> screen_configurations(const SweepContext& context,
                                                         const std::vector<size_t>& indices, double* cell_seconds) {
  std::vector<ScreenedConfiguration> screened;
  if (cell_seconds) *cell_seconds = 0;
  std::map<std::string, LayoutCell> cells;
  for (size_t index : indices) {
    const std::string key = screen_key(context, index);
    if (key.empty()) continue;
    const SweepConfiguration& configuration = context.spec.configurations.at(index);
    const StrategyVariant& variant = context.spec.strategies.at(configuration.strategy);
    try {
      auto layout = cells.find(key);
      if (layout == cells.end()) {
        const auto start = std::chrono::steady_clock::now();
        const Scenario scenario = configuration_scenario(context, index);
        const Strategy& strategy = scenario.strategies.front();
        layout = cells
                     .emplace(key, LayoutCell{index,
                                              analyse_3d_cell(scenario.graph, scenario.cluster_for(strategy),
                                                              scenario.run, *strategy.parallelism),
                                              *strategy.parallelism, scenario.run})
                     .first;
        if (cell_seconds) *cell_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      const LayoutCell& cell = layout->second;
      ParallelismOptions options = cell.options;
      RunOptions run = cell.run;
      options.schedule = context.layouts[configuration.strategy].schedule;
      size_parallelism(variant, configuration, true, &options, &run);
      if (!cell_fits(cell.cell, options)) continue;
      const ClosedFormStepEstimate estimate = estimate_3d_step_from_cell(cell.cell, options);
      ScreenedConfiguration row;
      row.index = index;
      row.cell_from = cell.index;
      row.step_seconds = estimate.step_seconds;
      row.samples_per_second = static_cast<double>(run.batch_size * options.data) / estimate.step_seconds;
      // ZeRO 1 and 2 divide each op's optimizer state (and gradients) by the shard group, the
      // configuration's own, not the cell's (parallel_3d_builder.cpp); the rest of the memory is
      // the cell's.
      const double reshard =
          static_cast<double>(cell.options.zero_shards()) / static_cast<double>(options.zero_shards());
      for (size_t s = 0; s < estimate.stage_peak_memory.size(); ++s) {
        MemoryBreakdown memory = estimate.stage_peak_memory[s];
        if (options.zero_stage >= 1) memory.optimizer_state_bytes *= reshard;
        if (options.zero_stage >= 2) memory.gradient_bytes *= reshard;
        if (memory.total() > row.peak_memory_bytes) {
          row.peak_memory_bytes = memory.total();
          row.memory_capacity_bytes = estimate.stage_memory_capacity_bytes[s];
        }
      }
      screened.push_back(row);
    } catch (const std::exception&) {
      // Cannot be built or sized (InputError, SpecError, a collective that does not fit): the
      // closed form refuses it too; nothing to screen.
    }
  }
  return screened;
}

}  // namespace placesim
