#include "sim/sweep/price_list.h"

namespace placesim {
namespace {

// The dearest device hour of hardware_profiles/prices.json lists at 12.29 USD, a whole 8-GPU
// cloud node at about 100 USD; a hundred to a thousand times that is a typo or another unit.
constexpr double kMaxUsdPerDeviceHour = 1e4;
constexpr double kMaxUsdPerNodeHour = 1e5;

double hourly_price(const JsonReader& value, double limit) { return value.at_most(value.as_non_negative_number(), limit); }

}  // namespace

std::optional<double> PriceList::device_price(const std::string& device_id) const {
  auto it = usd_per_device_hour.find(device_id);
  if (it == usd_per_device_hour.end()) return std::nullopt;
  return it->second;
}

double PriceList::node_price(const std::string& template_id) const {
  auto it = usd_per_node_hour.find(template_id);
  return it == usd_per_node_hour.end() ? 0.0 : it->second;
}

std::optional<double> PriceList::usd_per_hour(const std::string& device_id, const std::string& template_id,
                                              int64_t devices, int64_t nodes) const {
  std::optional<double> device = device_price(device_id);
  if (!device) return std::nullopt;
  return *device * static_cast<double>(devices) + node_price(template_id) * static_cast<double>(nodes);
}

PriceList load_price_list(const std::filesystem::path& profiles_root) {
  std::filesystem::path path = profiles_root / "prices.json";
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return PriceList{};
  return read_price_file(path);
}

PriceList read_price_file(const std::filesystem::path& path) {
  PriceList prices;
  Json document = parse_json_file(path);
  JsonReader reader(document, path.string());
  reader.reject_unknown_keys({"description", "devices", "nodes"});
  for (const char* section : {"devices", "nodes"}) {
    auto entries = reader.find(section);
    if (!entries) continue;
    for (const std::string& id : entries->keys()) {
      JsonReader entry = entries->at(id);
      entry.reject_unknown_keys({std::string(section) == "devices" ? "usd_per_device_hour" : "usd_per_node_hour", "source",
                                 "date"});
      // Every list price says where it comes from and when.
      std::string source = entry.string_at("source") + " (" + entry.string_at("date") + ")";
      if (std::string(section) == "devices") {
        prices.usd_per_device_hour[id] = hourly_price(entry.at("usd_per_device_hour"), kMaxUsdPerDeviceHour);
        prices.device_sources[id] = source;
      } else {
        prices.usd_per_node_hour[id] = hourly_price(entry.at("usd_per_node_hour"), kMaxUsdPerNodeHour);
      }
    }
  }
  return prices;
}

void apply_price_overrides(const JsonReader& overrides, PriceList* prices) {
  overrides.reject_unknown_keys({"devices", "nodes"});
  if (auto devices = overrides.find("devices")) {
    devices->expect_object();
    for (const std::string& id : devices->keys()) {
      prices->usd_per_device_hour[id] = hourly_price(devices->at(id), kMaxUsdPerDeviceHour);
      prices->device_sources[id] = "scenario (" + devices->file() + ")";
    }
  }
  if (auto nodes = overrides.find("nodes")) {
    nodes->expect_object();
    for (const std::string& id : nodes->keys()) prices->usd_per_node_hour[id] = hourly_price(nodes->at(id), kMaxUsdPerNodeHour);
  }
}

}  // namespace placesim
