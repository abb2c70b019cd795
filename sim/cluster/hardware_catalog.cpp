#include "sim/cluster/hardware_catalog.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unistd.h>

#include "sim/cluster/kernel_model_json.h"
#include "sim/core/precision_values_json.h"

#ifndef PLACESIM_SOURCE_DIR
#define PLACESIM_SOURCE_DIR "."
#endif

namespace placesim {
namespace {

std::vector<std::string> json_stems(const std::filesystem::path& directory) {
  std::vector<std::string> stems;
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) return stems;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".json") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::string list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

[[noreturn]] void unknown(const JsonReader& where, const std::string& what, const std::string& name,
                          const std::vector<std::string>& known) {
  std::string suggestion = did_you_mean(name, known);
  where.fail("unknown " + what + " \"" + name + "\"" +
             (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)") + "; known: " + list(known));
}

void require_sources(const JsonReader& profile, const std::vector<std::string>& cited_fields) {
  JsonReader sources = profile.at("sources");
  sources.expect_object();
  for (const auto& field : cited_fields) {
    if (!profile.has(field)) continue;
    auto source = sources.find(field);
    if (!source || source->as_string().empty()) {
      sources.fail("every number needs a cited source: no entry for \"" + field + "\"");
    }
  }
}

// Fails at `where` when the profile directory itself is missing (the "known" list would be empty
// and say nothing useful), or when no file `path` exists. A file that is there but cannot be
// read (a symbolic-link loop, a FIFO) is left to parse_json_file, which says what is wrong with it.
void require_profile_file(const JsonReader& where, const std::filesystem::path& root, const std::filesystem::path& path,
                          const std::string& what, const std::string& id, const std::vector<std::string>& known) {
  std::error_code error;
  if (!std::filesystem::is_directory(root, error)) {
    where.fail("cannot look up " + what + " \"" + shown_word(id) + "\": the hardware profile directory \"" +
               root.string() + "\" does not exist (set by --profiles or $PLACESIM_PROFILES)");
  }
  if (id.find('/') != std::string::npos || id.empty() || !std::filesystem::exists(std::filesystem::symlink_status(path, error))) {
    unknown(where, what, shown_word(id), known);
  }
}

/// Matmul rates measured on the device, per precision (a ceiling, a burst: `what`): each positive
/// and at most the profile's peak for a precision it lists there.
std::map<Precision, double> read_rates_under_peak(const JsonReader& rates, const DeviceSpec& spec, const std::string& what) {
  return read_precision_values(rates, [&spec, &what](Precision precision, const JsonReader& rate) {
    const std::string name = to_string(precision);
    if (!spec.has_peak(precision)) rate.fail("the profile has no " + name + " peak in peak_flops_per_second for this " + what + " to be under");
    const double flops = rate.as_positive_number();
    if (flops > spec.peak_for(precision)) {
      rate.fail("a measured " + what + " of " + brief(rate.value()) + " FLOP/s is above the profile's " + name + " peak of " +
                brief(Json(spec.peak_for(precision))) + " (peak_flops_per_second/" + name + ")");
    }
    return flops;
  });
}

}  // namespace

DeviceSpec read_device_profile(const JsonReader& profile) {
  profile.reject_unknown_keys({"id", "name", "kind", "peak_flops_per_second", "memory_bytes",
                               "memory_bandwidth_bytes_per_second", "kernel_launch_overhead_seconds",
                               "compute_efficiency", "gemm_efficiency_by_flops", "memory_efficiency", "reduction_memory_efficiency", "compute_capability", "pci_bus_id",
                               "kernel_model", "sm_count", "sources", "description", "price_per_hour_usd",
                               "step_validation", "max_achievable_matmul", "sustained_matmul", "gpu_to_gpu_spread"});
  DeviceSpec spec;
  spec.id = profile.string_at("id");
  spec.name = profile.string_at("name");
  std::string kind = profile.choice_at("kind", {"cpu", "gpu", "tpu"});
  spec.kind = *parse_device_kind(kind);
  JsonReader peaks = profile.at("peak_flops_per_second");
  spec.peak_flops_per_second = read_precision_values(peaks, [](Precision, const JsonReader& peak) {
    return peak.at_most(peak.as_positive_number(), kMaxPlausibleFlopsPerSecond);
  });
  if (!spec.peak_flops_per_second.count(Precision::kFp32)) peaks.fail("missing required key \"fp32\"");
  spec.memory_bytes = profile.at("memory_bytes").at_most(profile.positive_at("memory_bytes"), kMaxPlausibleBytes);
  spec.memory_bandwidth_bytes_per_second = profile.at("memory_bandwidth_bytes_per_second")
                                               .at_most(profile.positive_at("memory_bandwidth_bytes_per_second"),
                                                        kMaxPlausibleBytesPerSecond);
  spec.kernel_launch_overhead_seconds = profile.at("kernel_launch_overhead_seconds").as_non_negative_number();
  if (spec.kernel_launch_overhead_seconds > 1.0) {
    profile.at("kernel_launch_overhead_seconds").fail("a launch overhead above 1 s is not plausible, got " +
                                                      brief(profile.at("kernel_launch_overhead_seconds").value()));
  }
  auto read_fraction = [](const JsonReader& value) {
    double fraction = value.as_positive_number();
    if (fraction > 1.0) value.fail("expected a fraction in (0, 1], got " + brief(value.value()));
    return fraction;
  };
  JsonReader efficiency = profile.at("compute_efficiency");
  std::vector<std::string> allowed = op_kind_names();
  allowed.push_back("default");
  efficiency.reject_unknown_keys(allowed);
  spec.default_compute_efficiency = read_fraction(efficiency.at("default"));
  for (const auto& key : efficiency.keys()) {
    if (key != "default") spec.compute_efficiency[*parse_op_kind(key)] = read_fraction(efficiency.at(key));
  }
  if (profile.has("gemm_efficiency_by_flops")) {
    JsonReader curve = profile.at("gemm_efficiency_by_flops");
    for (const JsonReader& point : curve.elements()) {
      point.expect_array();
      if (point.size() != 2) point.fail("expected [flops, efficiency], got " + brief(point.value()));
      double flops = point.at_index(0).at_most(point.at_index(0).as_positive_number(), kMaxPlausibleFlops);
      if (!spec.gemm_efficiency_by_flops.empty() && flops <= spec.gemm_efficiency_by_flops.back().first) {
        point.at_index(0).fail("FLOPs must increase along the curve, got " + brief(point.at_index(0).value()) +
                               " after " + brief(Json(spec.gemm_efficiency_by_flops.back().first)));
      }
      spec.gemm_efficiency_by_flops.emplace_back(flops, read_fraction(point.at_index(1)));
    }
  }
  spec.memory_efficiency = read_fraction(profile.at("memory_efficiency"));
  if (auto reduction = profile.find("reduction_memory_efficiency")) spec.reduction_memory_efficiency = read_fraction(*reduction);
  spec.compute_capability = profile.string_or("compute_capability", "");
  spec.pci_bus_id = profile.string_or("pci_bus_id", "");
  spec.sm_count = profile.integer_or("sm_count", 0, 1, 100'000);
  if (auto kernel_model = profile.find("kernel_model")) {
    spec.kernel_model = std::make_shared<const KernelModel>(read_kernel_model(*kernel_model));
  }
  if (auto ceiling = profile.find("max_achievable_matmul")) {
    ceiling->reject_unknown_keys({"flops_per_second", "source"});
    JsonReader rates = ceiling->at("flops_per_second");
    MatmulCeiling measured;
    // Measured below the datasheet's peak: a ceiling above it would bound nothing.
    measured.flops_per_second = read_rates_under_peak(rates, spec, "ceiling");
    if (measured.flops_per_second.empty()) rates.fail("a ceiling names at least one precision");
    measured.source = ceiling->string_at("source");
    if (measured.source.empty()) ceiling->at("source").fail("a ceiling names the measurement it comes from");
    spec.max_achievable_matmul = std::make_shared<const MatmulCeiling>(std::move(measured));
  }
  if (auto sustained = profile.find("sustained_matmul")) {
    sustained->reject_unknown_keys({"sustained_flops_per_second", "burst_flops_per_second", "source"});
    // It corrects rates fitted on burst-timed kernels; a roofline's efficiencies are estimates of a step's.
    if (!spec.kernel_model) {
      sustained->fail("a sustained matmul rate corrects a kernel model's burst-timed rates, and this profile has no "
                      "kernel_model (a roofline profile's compute_efficiency is what a step reaches)");
    }
    SustainedMatmul measured;
    // A burst is the same kernel before the board reaches its power limit: at most the peak.
    JsonReader bursts = sustained->at("burst_flops_per_second");
    measured.burst_flops_per_second = read_rates_under_peak(bursts, spec, "burst");
    if (measured.burst_flops_per_second.empty()) bursts.fail("a sustained rate names at least one precision");
    JsonReader rates = sustained->at("sustained_flops_per_second");
    measured.sustained_flops_per_second = read_precision_values(rates, [&measured](Precision precision, const JsonReader& rate) {
      const std::string name = to_string(precision);
      auto burst = measured.burst_flops_per_second.find(precision);
      if (burst == measured.burst_flops_per_second.end()) {
        rate.fail("a sustained " + name + " rate needs the burst rate measured beside it (burst_flops_per_second/" + name + ")");
      }
      const double flops = rate.as_positive_number();
      if (flops > burst->second) {
        rate.fail("a sustained rate of " + brief(rate.value()) + " FLOP/s is above its burst of " + brief(Json(burst->second)) +
                  " (burst_flops_per_second/" + name + ")");
      }
      return flops;
    });
    for (const auto& [precision, flops] : measured.burst_flops_per_second) {
      if (!measured.sustained_flops_per_second.count(precision)) {
        rates.fail("the burst rate for " + to_string(precision) + " has no sustained rate beside it");
      }
    }
    measured.source = sustained->string_at("source");
    if (measured.source.empty()) sustained->at("source").fail("a sustained rate names the measurement it comes from");
    spec.sustained_matmul = std::make_shared<const SustainedMatmul>(std::move(measured));
  }
  if (auto spread = profile.find("gpu_to_gpu_spread")) {
    spread->reject_unknown_keys({"gemm_time_log_sigma", "source"});
    if (spec.kind != DeviceKind::kGpu) spread->fail("only a GPU profile has a spread of GPU speeds");
    GemmTimeSpread measured;
    const JsonReader sigma = spread->at("gemm_time_log_sigma");
    measured.log_sigma = sigma.as_non_negative_number();
    // 0.5 would put one GPU in six at 1.65x the median's time: a broken fleet, not a spread.
    if (measured.log_sigma > 0.5) sigma.fail("a spread of GEMM times above 0.5 (log) is not plausible, got " + brief(sigma.value()));
    measured.source = spread->string_at("source");
    if (measured.source.empty()) spread->at("source").fail("a spread names the measurement it comes from");
    spec.gemm_time_spread = std::make_shared<const GemmTimeSpread>(std::move(measured));
  }
  if (auto validated = profile.find("step_validation")) {
    validated->reject_unknown_keys({"cases", "mape_percent", "date"});
    StepValidation step;
    step.cases = validated->at("cases").as_integer(1, 1'000'000);
    const JsonReader mape = validated->at("mape_percent");
    step.mape_percent = mape.at_most(mape.as_non_negative_number(), 1e6);
    step.date = validated->string_at("date");
    spec.step_validation = step;
  }
  require_sources(profile, {"peak_flops_per_second", "memory_bytes", "memory_bandwidth_bytes_per_second",
                            "kernel_launch_overhead_seconds", "compute_efficiency", "gemm_efficiency_by_flops",
                            "memory_efficiency", "reduction_memory_efficiency", "sm_count", "kernel_model"});
  return spec;
}

LinkSpec read_link_spec(const std::string& type, const JsonReader& entry) {
  entry.reject_unknown_keys({"bandwidth_bytes_per_second", "latency_seconds", "description", "sources"});
  LinkSpec spec;
  spec.type = type;
  spec.bandwidth_bytes_per_second = entry.at("bandwidth_bytes_per_second")
                                        .at_most(entry.positive_at("bandwidth_bytes_per_second"),
                                                 kMaxPlausibleBytesPerSecond);
  spec.latency_seconds = entry.at("latency_seconds").as_non_negative_number();
  if (spec.latency_seconds > 10.0) {
    entry.at("latency_seconds").fail("a link latency above 10 s is not plausible, got " +
                                     brief(entry.at("latency_seconds").value()));
  }
  if (entry.has("sources")) require_sources(entry, {"bandwidth_bytes_per_second", "latency_seconds"});
  return spec;
}

HardwareCatalog::HardwareCatalog(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path HardwareCatalog::default_root() {
  if (const char* from_env = std::getenv("PLACESIM_PROFILES"); from_env && *from_env) return from_env;
  std::error_code error;
  auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    auto installed = executable.parent_path() / ".." / "share" / "placesim" / "hardware_profiles";
    if (std::filesystem::is_directory(installed, error)) return installed;
  }
  return std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles";
}

const DeviceSpec& HardwareCatalog::device(const std::string& id, const JsonReader& where) const {
  auto it = devices_.find(id);
  if (it != devices_.end()) return it->second;
  auto path = root_ / "devices" / (id + ".json");
  std::error_code error;
  if (id.find('/') != std::string::npos || id.empty() || !std::filesystem::is_regular_file(path, error)) {
    require_profile_file(where, root_, path, "device profile", id, device_ids());
  }
  Json document = parse_json_file(path);
  DeviceSpec spec = read_device_profile(JsonReader(document, path.string()));
  if (spec.id != id) {
    throw InputError(path.string(), "/id", "profile id \"" + spec.id + "\" does not match its file name \"" + id + "\"");
  }
  return devices_.emplace(id, std::move(spec)).first->second;
}

void HardwareCatalog::load_links() const {
  if (links_loaded_) return;
  auto path = root_ / "links.json";
  Json document = parse_json_file(path);
  JsonReader links(document, path.string());
  for (const auto& type : links.keys()) links_.emplace(type, read_link_spec(type, links.at(type)));
  links_loaded_ = true;
}

const LinkSpec& HardwareCatalog::link(const std::string& type, const JsonReader& where) const {
  load_links();
  auto it = links_.find(type);
  if (it == links_.end()) unknown(where, "link type", type, link_types());
  return it->second;
}

std::filesystem::path HardwareCatalog::cluster_template(const std::string& id, const JsonReader& where) const {
  auto path = root_ / "clusters" / (id + ".json");
  std::error_code error;
  if (id.find('/') != std::string::npos || id.empty() || !std::filesystem::is_regular_file(path, error)) {
    require_profile_file(where, root_, path, "cluster template", id, cluster_template_ids());
  }
  return path;
}

std::vector<std::string> HardwareCatalog::device_ids() const { return json_stems(root_ / "devices"); }

std::vector<std::string> HardwareCatalog::link_types() const {
  load_links();
  std::vector<std::string> types;
  for (const auto& [type, spec] : links_) types.push_back(type);
  return types;
}

std::vector<std::string> HardwareCatalog::cluster_template_ids() const { return json_stems(root_ / "clusters"); }

}  // namespace placesim
