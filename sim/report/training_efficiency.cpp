#include "sim/report/training_efficiency.h"

#include "sim/core/units_format.h"

namespace placesim {

double TrainingEfficiency::model_flops_per_second_per_device() const {
  return devices > 0 ? samples_per_second * model_flops_per_sample / static_cast<double>(devices) : 0.0;
}

double TrainingEfficiency::mfu() const {
  return peak_flops_per_second > 0 ? samples_per_second * model_flops_per_sample / peak_flops_per_second : 0.0;
}

double TrainingEfficiency::hfu() const {
  return peak_flops_per_second > 0 ? samples_per_second * hardware_flops_per_sample / peak_flops_per_second : 0.0;
}

std::string efficiency_text(const TrainingEfficiency& e) {
  const BatchSizes& b = e.batch;
  std::string out = "Global batch: " + std::to_string(b.global()) + " samples (" + std::to_string(b.per_replica) +
                    " per replica x " + std::to_string(b.replicas) + (b.replicas == 1 ? " replica" : " replicas");
  if (b.micro_batches > 1) {
    out += "; micro-batch " + format_number(b.micro(), "%g") + " x " + std::to_string(b.micro_batches) + " per replica";
  }
  out += ")";
  if (e.language_model()) {
    out += " = " + format_number(static_cast<double>(b.global()) * e.tokens_per_sample, "%.0f") + " tokens";
  }
  out += "\n";
  if (e.language_model()) {
    out += "Tokens: " + format_rate(e.tokens_per_second(), "tokens") + ", " +
           format_number(e.tokens_per_day() / 1e9, "%.3f") + " billion tokens/day (" +
           format_number(e.tokens_per_sample, "%.0f") + " tokens per sample)\n";
  }
  out += "Model FLOPs: " + format_number(e.model_flops_per_second_per_device() / 1e12, "%.1f") + " TFLOP/s per device; MFU " +
         format_percent(e.mfu()) + ", HFU " + format_percent(e.hfu()) + " of the " + std::to_string(e.devices) +
         " devices' " + (e.peak_precision == "fp8" ? "dense fp8 peak, not bf16's" : "peak") + " (" +
         format_number(e.peak_flops_per_second / static_cast<double>(e.devices > 0 ? e.devices : 1) / 1e12, "%.1f") +
         " TFLOP/s each; " + (e.language_model() ? "6N + 12 L H Q T per token, PaLM" : "the graph's FLOPs") +
         ", docs/llm-planning.md)\n";
  out += mfu_above_peak_note(e.mfu());
  return out;
}

std::string mfu_above_peak_note(double mfu) {
  if (!(mfu > 1)) return "";
  return "MFU above 100%: convolutions run as Winograd or FFT do fewer multiplications than the direct-convolution\n"
         "FLOPs MFU counts (docs/llm-planning.md, \"Model FLOPs and MFU\")\n";
}

Json efficiency_json(const TrainingEfficiency& e) {
  Json json = {{"per_replica_batch", e.batch.per_replica},
               {"micro_batch", e.batch.micro()},
               {"micro_batches", e.batch.micro_batches},
               {"replicas", e.batch.replicas},
               {"global_batch", e.batch.global()},
               {"devices", e.devices},
               {"peak_flops_per_second", e.peak_flops_per_second},
               {"peak_precision", e.peak_precision},
               {"samples_per_second", e.samples_per_second},
               {"model_flops_per_sample", e.model_flops_per_sample},
               {"hardware_flops_per_sample", e.hardware_flops_per_sample},
               {"model_flops_per_second_per_device", e.model_flops_per_second_per_device()},
               {"mfu", e.mfu()},
               {"hfu", e.hfu()}};
  if (e.language_model()) {
    json["tokens_per_sample"] = e.tokens_per_sample;
    json["global_batch_tokens"] = static_cast<double>(e.batch.global()) * e.tokens_per_sample;
    json["tokens_per_second"] = e.tokens_per_second();
    json["tokens_per_day"] = e.tokens_per_day();
  }
  return json;
}

}  // namespace placesim
