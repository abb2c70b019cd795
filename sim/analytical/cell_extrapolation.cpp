#include "sim/analytical/cell_extrapolation.h"

#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace placesim {
namespace {

/// The line through (shallow_layers, a) and (deep_layers, b) read at `layers`, and whether every
/// reading and every shape compared so far allowed it.
class LayerLine {
 public:
  LayerLine(int64_t shallow_layers, int64_t deep_layers, int64_t layers)
      : shallow_layers_(shallow_layers), deep_layers_(deep_layers), layers_(layers) {}

  bool ok() const { return ok_; }
  void require(bool condition) { ok_ = ok_ && condition; }

  double at(double a, double b) {
    const double value = at_layers(a, shallow_layers_, b, deep_layers_, layers_);
    require(std::isfinite(value) && (value >= 0 || a < 0 || b < 0));  // delays may be negative
    return value;
  }
  void fill(const std::vector<double>& a, const std::vector<double>& b, std::vector<double>* out) {
    require(a.size() == b.size());
    if (!ok_) return;
    out->resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) (*out)[i] = at(a[i], b[i]);
  }
  void fill(const MemoryBreakdown& a, const MemoryBreakdown& b, MemoryBreakdown* out) {
    out->parameter_bytes = at(a.parameter_bytes, b.parameter_bytes);
    out->gradient_bytes = at(a.gradient_bytes, b.gradient_bytes);
    out->optimizer_state_bytes = at(a.optimizer_state_bytes, b.optimizer_state_bytes);
    out->activation_bytes = at(a.activation_bytes, b.activation_bytes);
    out->workspace_bytes = at(a.workspace_bytes, b.workspace_bytes);
  }
  void fill(const ClosedFormSlot& a, const ClosedFormSlot& b, ClosedFormSlot* out) {
    out->alone_seconds = at(a.alone_seconds, b.alone_seconds);
    require(a.delay_seconds.size() == b.delay_seconds.size());
    if (!ok_) return;
    out->delay_seconds.resize(a.delay_seconds.size());
    for (size_t i = 0; i < a.delay_seconds.size(); ++i) {
      require(a.delay_seconds[i].first == b.delay_seconds[i].first);
      out->delay_seconds[i] = {a.delay_seconds[i].first, at(a.delay_seconds[i].second, b.delay_seconds[i].second)};
    }
  }
  void fill(const ClosedFormCell::Input& a, const ClosedFormCell::Input& b, ClosedFormCell::Input* out) {
    require(a.from == b.from);
    out->from = a.from;
    out->offset_seconds = at(a.offset_seconds, b.offset_seconds);
    out->bytes = at(a.bytes, b.bytes);
  }
  void fill(const ClosedFormCell::SlotPeak& a, const ClosedFormCell::SlotPeak& b, ClosedFormCell::SlotPeak* out) {
    require(a.open == b.open);
    out->open = a.open;
    out->peak_bytes = at(a.peak_bytes, b.peak_bytes);
    out->peak_before_end_seconds = at(a.peak_before_end_seconds, b.peak_before_end_seconds);
  }
  template <typename Key, typename Value>
  void fill(const std::map<Key, Value>& a, const std::map<Key, Value>& b, std::map<Key, Value>* out) {
    require(a.size() == b.size());
    out->clear();
    for (auto i = a.begin(), j = b.begin(); ok_ && i != a.end(); ++i, ++j) {
      require(i->first == j->first);
      fill(i->second, j->second, &(*out)[i->first]);
    }
  }
  template <typename Value>
  void fill(const std::vector<Value>& a, const std::vector<Value>& b, std::vector<Value>* out) {
    require(a.size() == b.size());
    if (!ok_) return;
    out->resize(a.size());
    for (size_t i = 0; ok_ && i < a.size(); ++i) fill(a[i], b[i], &(*out)[i]);
  }

 private:
  int64_t shallow_layers_, deep_layers_, layers_;
  bool ok_ = true;
};

}  // namespace

double at_layers(double shallow_value, int64_t shallow_layers, double deep_value, int64_t deep_layers, int64_t layers) {
  const double slope = static_cast<double>(layers - shallow_layers) / static_cast<double>(deep_layers - shallow_layers);
  return shallow_value + slope * (deep_value - shallow_value);
}

std::optional<ClosedFormCell> extrapolate_cell(const ClosedFormCell& shallow, int64_t shallow_layers,
                                               const ClosedFormCell& deep, int64_t deep_layers, int64_t layers) {
  if (shallow_layers <= 0 || deep_layers <= shallow_layers) return std::nullopt;
  LayerLine line(shallow_layers, deep_layers, layers);
  line.require(shallow.stages == deep.stages && shallow.chunks == deep.chunks && shallow.training == deep.training &&
               shallow.backward_slots == deep.backward_slots && shallow.cell_schedule == deep.cell_schedule &&
               shallow.lockstep_gemm_factor == deep.lockstep_gemm_factor &&
               shallow.lockstep_gpus == deep.lockstep_gpus && shallow.capacity_bytes == deep.capacity_bytes);
  if (!line.ok()) return std::nullopt;
  ClosedFormCell cell = shallow;
  cell.cell_plan_tasks = static_cast<size_t>(std::llround(line.at(static_cast<double>(shallow.cell_plan_tasks),
                                                                  static_cast<double>(deep.cell_plan_tasks))));
  line.fill(shallow.forward, deep.forward, &cell.forward);
  line.fill(shallow.backward, deep.backward, &cell.backward);
  line.fill(shallow.last, deep.last, &cell.last);
  line.fill(shallow.finish, deep.finish, &cell.finish);
  line.fill(shallow.forward_inputs, deep.forward_inputs, &cell.forward_inputs);
  line.fill(shallow.backward_inputs, deep.backward_inputs, &cell.backward_inputs);
  line.fill(shallow.cell_peak_bytes, deep.cell_peak_bytes, &cell.cell_peak_bytes);
  line.fill(shallow.workspace_bytes, deep.workspace_bytes, &cell.workspace_bytes);
  line.fill(shallow.static_memory, deep.static_memory, &cell.static_memory);
  line.fill(shallow.expert_static_memory, deep.expert_static_memory, &cell.expert_static_memory);
  line.fill(shallow.kept_bytes, deep.kept_bytes, &cell.kept_bytes);
  line.fill(shallow.slot_peaks, deep.slot_peaks, &cell.slot_peaks);
  if (!line.ok()) return std::nullopt;
  return cell;
}

}  // namespace placesim
