#include "sim/scenario/perturbations.h"

#include "sim/core/glob.h"
#include "sim/core/input_error.h"

namespace placesim {

Perturbations read_perturbations(const JsonReader& perturbations) {
  perturbations.reject_unknown_keys({"device_speed", "jitter", "links"});
  Perturbations result;
  result.file = perturbations.file();
  if (auto speeds = perturbations.find("device_speed")) {
    for (const auto& entry : speeds->elements()) {
      entry.reject_unknown_keys({"device", "factor"});
      double factor = entry.positive_at("factor");
      if (factor > 1000) entry.at("factor").fail("implausible speed factor " + brief(entry.at("factor").value()));
      std::string text = entry.string_at("device");
      std::string error;
      auto spec = DeviceName::parse(text, &error);
      if (!spec) entry.at("device").fail("bad device name \"" + text + "\": " + error);
      result.device_speeds.push_back({*spec, text, factor, entry.at("device").path()});
    }
  }
  if (auto jitter = perturbations.find("jitter")) {
    jitter->reject_unknown_keys({"sigma", "distribution"});
    jitter->choice_or("distribution", {"lognormal"}, "lognormal");
    result.jitter_sigma = jitter->at("sigma").as_non_negative_number();
    if (*result.jitter_sigma > 5) jitter->at("sigma").fail("a log-normal sigma above 5 is not plausible");
  }
  if (auto links = perturbations.find("links")) {
    for (const auto& entry : links->elements()) {
      entry.reject_unknown_keys({"match", "bandwidth_factor"});
      std::string pattern = entry.string_at("match");
      double factor = entry.positive_at("bandwidth_factor");
      if (factor > 1000) entry.at("bandwidth_factor").fail("implausible factor " + brief(entry.at("bandwidth_factor").value()));
      result.links.push_back({pattern, factor, entry.at("match").path()});
    }
  }
  return result;
}

void apply_perturbations(const Perturbations& perturbations, Cluster* cluster, RunOptions* run) {
  for (const Perturbations::DeviceSpeed& speed : perturbations.device_speeds) {
    auto matches = cluster->match(speed.device);
    if (matches.empty()) {
      throw InputError(perturbations.file, speed.json_path, "no device of the cluster matches \"" + speed.text + "\"");
    }
    for (DeviceId id : matches) cluster->devices()[id].speed_factor = speed.factor;
  }
  if (perturbations.jitter_sigma) run->jitter_sigma = *perturbations.jitter_sigma;
  for (const Perturbations::LinkBandwidth& link : perturbations.links) {
    size_t matched = 0;
    for (LinkId l = 0; l < cluster->links().size(); ++l) {
      if (glob_match(link.match, cluster->links()[l].name) || glob_match(link.match, cluster->links()[l].spec.type)) {
        cluster->scale_link_bandwidth(l, link.factor);
        ++matched;
      }
    }
    if (matched == 0) {
      throw InputError(perturbations.file, link.json_path,
                       "matches no link (links are named like \"task:0/GPU:0<->PCIe:0\")");
    }
  }
}

}  // namespace placesim
