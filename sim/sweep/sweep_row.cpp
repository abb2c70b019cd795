#include "sim/sweep/sweep_row.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace placesim {

std::string to_string(RowStatus status) {
  switch (status) {
    case RowStatus::kOk: return "ok";
    case RowStatus::kOutOfMemory: return "out_of_memory";
    case RowStatus::kNotApplicable: return "not_applicable";
  }
  return "ok";
}

namespace {

/// `value` as nlohmann's dump writes a double (its shortest round-trip digits, "null" when not
/// finite), so that a line is byte for byte what dumping row_json's object gave.
void append_json_number(double value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  std::array<char, 64> digits;
  out->append(digits.data(), nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), value));
}

template <typename Integer>
void append_json_integer(Integer value, std::string* out) {
  std::array<char, 24> digits;
  out->append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr);
}

}  // namespace

void append_row_json_line(const SweepRow& row, std::string* out) {
  // The keys in the order a Json object (a std::map) keeps them.
  auto number = [out](const char* key, double value) {
    out->append(key);
    append_json_number(value, out);
  };
  number("{\"bubble_seconds\":", row.bubble_seconds);
  number(",\"compute_seconds\":", row.compute_seconds);
  number(",\"exposed_communication_seconds\":", row.exposed_communication_seconds);
  number(",\"hardware_flops_per_sample\":", row.hardware_flops_per_sample);
  out->append(",\"index\":");
  append_json_integer(row.index, out);
  number(",\"memory_capacity_bytes\":", row.memory_capacity_bytes);
  number(",\"model_flops_per_sample\":", row.model_flops_per_sample);
  number(",\"other_seconds\":", row.other_seconds);
  number(",\"peak_flops_per_second\":", row.peak_flops_per_second);
  number(",\"peak_memory_bytes\":", row.peak_memory_bytes);
  out->append(",\"reason\":");
  out->append(row.reason.empty() ? std::string("\"\"") : Json(row.reason).dump());  // escaped as dump escapes it
  out->append(",\"replicas\":");
  append_json_integer(row.replicas, out);
  number(",\"samples_per_second\":", row.samples_per_second);
  number(",\"single_replica_samples_per_second\":", row.single_replica_samples_per_second);
  out->append(",\"status\":\"").append(to_string(row.status));
  number("\",\"step_seconds\":", row.step_seconds);
  number(",\"straggler_seconds\":", row.straggler_seconds);
  out->append(",\"tasks\":");
  append_json_integer(row.tasks, out);
  out->append(",\"tier\":\"").append(to_string(row.tier));
  number("\",\"tokens_per_sample\":", row.tokens_per_sample);
  out->append("}\n");
}

Json row_json(const SweepRow& row) {
  std::string line;
  append_row_json_line(row, &line);
  return Json::parse(line);
}

SweepRow row_from_json(const Json& json) {
  try {
    SweepRow row;
    row.index = json.at("index").get<size_t>();
    std::string tier = json.at("tier").get<std::string>();
    if (tier != "analytical" && tier != "simulated" && tier != "search") throw std::runtime_error("unknown tier " + tier);
    row.tier = tier == "analytical" ? Tier::kAnalytical : tier == "simulated" ? Tier::kSimulated : Tier::kSearch;
    std::string status = json.at("status").get<std::string>();
    if (status == "ok") row.status = RowStatus::kOk;
    else if (status == "out_of_memory") row.status = RowStatus::kOutOfMemory;
    else if (status == "not_applicable") row.status = RowStatus::kNotApplicable;
    else throw std::runtime_error("unknown status " + status);
    row.reason = json.at("reason").get<std::string>();
    row.step_seconds = json.at("step_seconds").get<double>();
    row.samples_per_second = json.at("samples_per_second").get<double>();
    // Results written before 3D rows had a baseline name it after the one device it then was.
    row.single_replica_samples_per_second = json.contains("single_replica_samples_per_second")
                                                ? json.at("single_replica_samples_per_second").get<double>()
                                                : json.at("single_device_samples_per_second").get<double>();
    row.replicas = json.value("replicas", int64_t{0});
    row.compute_seconds = json.at("compute_seconds").get<double>();
    row.exposed_communication_seconds = json.at("exposed_communication_seconds").get<double>();
    row.bubble_seconds = json.at("bubble_seconds").get<double>();
    row.straggler_seconds = json.at("straggler_seconds").get<double>();
    row.other_seconds = json.at("other_seconds").get<double>();
    row.peak_memory_bytes = json.at("peak_memory_bytes").get<double>();
    row.memory_capacity_bytes = json.at("memory_capacity_bytes").get<double>();
    row.tasks = json.at("tasks").get<size_t>();
    // Absent in results written before MFU was reported: 0, and the MFU cells stay empty.
    row.model_flops_per_sample = json.value("model_flops_per_sample", 0.0);
    row.hardware_flops_per_sample = json.value("hardware_flops_per_sample", 0.0);
    row.tokens_per_sample = json.value("tokens_per_sample", 0.0);
    row.peak_flops_per_second = json.value("peak_flops_per_second", 0.0);
    return row;
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(std::string("malformed sweep result: ") + error.what());
  }
}

void split_step_time(double step_seconds, double compute_seconds, double exposed_communication_seconds,
                     double straggler_seconds, double bubble_seconds, SweepRow* row) {
  double left = std::max(0.0, step_seconds - compute_seconds);
  row->compute_seconds = std::min(compute_seconds, step_seconds);
  auto take = [&left](double seconds) {
    double part = std::clamp(seconds, 0.0, left);
    left -= part;
    return part;
  };
  row->exposed_communication_seconds = take(exposed_communication_seconds);
  row->straggler_seconds = take(straggler_seconds);
  row->bubble_seconds = take(bubble_seconds);
  row->other_seconds = left;
}

}  // namespace placesim
