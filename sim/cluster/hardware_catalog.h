// HardwareCatalog: the device profiles, link types and cluster templates found in a
// hardware_profiles/ directory (devices/*.json, links.json, clusters/*.json), loaded on demand
// and validated field by field. Every numeric field of a profile must cite a source.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/device_spec.h"
#include "sim/cluster/link_spec.h"
#include "sim/core/json_reader.h"

namespace placesim {

/// Reads one device profile object (the format of hardware_profiles/devices/*.json).
DeviceSpec read_device_profile(const JsonReader& profile);
/// Reads one link type entry of links.json.
LinkSpec read_link_spec(const std::string& type, const JsonReader& entry);

class HardwareCatalog {
 public:
  explicit HardwareCatalog(std::filesystem::path root);

  /// The bundled profiles: $PLACESIM_PROFILES, else next to the executable
  /// (../share/placesim/hardware_profiles), else the source tree's hardware_profiles/.
  static std::filesystem::path default_root();

  const std::filesystem::path& root() const { return root_; }
  /// Device profile by id; InputError at `where` when unknown (with a did-you-mean).
  const DeviceSpec& device(const std::string& id, const JsonReader& where) const;
  const LinkSpec& link(const std::string& type, const JsonReader& where) const;
  /// Path of a cluster template by id; InputError at `where` when unknown.
  std::filesystem::path cluster_template(const std::string& id, const JsonReader& where) const;

  std::vector<std::string> device_ids() const;
  std::vector<std::string> link_types() const;
  std::vector<std::string> cluster_template_ids() const;

 private:
  void load_links() const;
  std::filesystem::path root_;
  mutable std::map<std::string, DeviceSpec> devices_;
  mutable std::map<std::string, LinkSpec> links_;
  mutable bool links_loaded_ = false;
};

}  // namespace placesim
