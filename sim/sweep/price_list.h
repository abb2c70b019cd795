// Prices for capacity planning: US dollars per device-hour (by device profile id) and per
// node-hour (by cluster template id), from hardware_profiles/prices.json (list prices with their
// source and date) overridden by a scenario's sweep.prices.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "sim/core/json_reader.h"

namespace placesim {

struct PriceList {
  std::map<std::string, double> usd_per_device_hour;  ///< device profile id -> price
  std::map<std::string, double> usd_per_node_hour;    ///< cluster template id -> price (absent = 0)
  std::map<std::string, std::string> device_sources;  ///< device profile id -> "source (date)" or "scenario"

  std::optional<double> device_price(const std::string& device_id) const;
  double node_price(const std::string& template_id) const;
  /// Dollars per hour of `devices` devices spread over `nodes` nodes; nullopt without a device price.
  std::optional<double> usd_per_hour(const std::string& device_id, const std::string& template_id, int64_t devices,
                                     int64_t nodes) const;
};

/// Reads <profiles>/prices.json; a missing file gives an empty list.
PriceList load_price_list(const std::filesystem::path& profiles_root);
/// Reads one price file (the format of hardware_profiles/prices.json); InputError when malformed.
PriceList read_price_file(const std::filesystem::path& path);
/// Applies {"devices": {ID: USD}, "nodes": {ID: USD}} from a scenario on top of `prices`.
void apply_price_overrides(const JsonReader& overrides, PriceList* prices);

}  // namespace placesim
