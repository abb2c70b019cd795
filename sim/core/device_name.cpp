#include "sim/core/device_name.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <vector>

namespace placesim {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

/// Whether `text` is `lower_word` in any case.
bool equals_in_any_case(std::string_view text, std::string_view lower_word) {
  return text.size() == lower_word.size() &&
         std::equal(text.begin(), text.end(), lower_word.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

std::optional<DeviceKind> device_kind_of(std::string_view text) {
  if (equals_in_any_case(text, "cpu")) return DeviceKind::kCpu;
  if (equals_in_any_case(text, "gpu")) return DeviceKind::kGpu;
  if (equals_in_any_case(text, "tpu")) return DeviceKind::kTpu;
  return std::nullopt;
}

std::optional<int> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

/// `text`'s pieces between separators, as views into it (a name is parsed for every device of
/// every configuration a sweep builds).
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  for (size_t end = text.find(separator); end != std::string_view::npos; end = text.find(separator, begin)) {
    parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

}  // namespace

std::string to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return "CPU";
    case DeviceKind::kGpu: return "GPU";
    case DeviceKind::kTpu: return "TPU";
  }
  return "?";
}

std::optional<DeviceKind> parse_device_kind(std::string text) { return device_kind_of(text); }

std::optional<DeviceName> DeviceName::parse(const std::string& text, std::string* error) {
  auto reject = [&](const std::string& why) -> std::optional<DeviceName> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (text.empty()) return reject("empty device name");
  DeviceName name;
  std::string_view body = text;
  if (body.front() == '/') body.remove_prefix(1);
  if (body.empty()) return reject("empty device name");
  for (const std::string_view part : split(body, '/')) {
    const std::vector<std::string_view> fields = split(part, ':');
    const std::string_view key = fields[0];
    auto quoted = [part] { return "\"" + std::string(part) + "\""; };
    if (equals_in_any_case(key, "job") && fields.size() == 2 && !fields[1].empty()) {
      name.job = std::string(fields[1]);
    } else if (equals_in_any_case(key, "replica") && fields.size() == 2) {
      name.replica = parse_index(fields[1]);
      if (!name.replica) return reject("bad replica number in " + quoted());
    } else if (equals_in_any_case(key, "task") && fields.size() == 2) {
      name.task = parse_index(fields[1]);
      if (!name.task) return reject("bad task number in " + quoted());
    } else if (equals_in_any_case(key, "device") && fields.size() == 3) {
      name.kind = device_kind_of(fields[1]);
      name.index = parse_index(fields[2]);
      if (!name.kind) return reject("unknown device type \"" + std::string(fields[1]) + "\" (expected CPU, GPU or TPU)");
      if (!name.index && fields[2] != "*") return reject("bad device index in " + quoted());
    } else if (fields.size() == 2 && device_kind_of(fields[0])) {
      name.kind = device_kind_of(fields[0]);
      name.index = parse_index(fields[1]);
      if (!name.index && fields[1] != "*") return reject("bad device index in " + quoted());
    } else if (fields.size() == 1 && device_kind_of(fields[0])) {
      name.kind = device_kind_of(fields[0]);
    } else {
      return reject("cannot parse " + quoted() + " (expected job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)");
    }
  }
  return name;
}

bool DeviceName::matches(const DeviceName& full) const {
  if (job && *job != full.job) return false;
  if (replica && replica != full.replica) return false;
  if (task && task != full.task) return false;
  if (kind && kind != full.kind) return false;
  if (index && index != full.index) return false;
  return true;
}

std::string DeviceName::canonical() const {
  return "/job:" + job.value_or("localhost") + "/replica:" + std::to_string(replica.value_or(0)) +
         "/task:" + std::to_string(task.value_or(0)) + "/device:" + local();
}

std::string DeviceName::legacy() const {
  return "/job:" + job.value_or("localhost") + "/replica:" + std::to_string(replica.value_or(0)) +
         "/task:" + std::to_string(task.value_or(0)) + "/" + lower(to_string(kind.value_or(DeviceKind::kCpu))) +
         ":" + std::to_string(index.value_or(0));
}

std::string DeviceName::local() const {
  return to_string(kind.value_or(DeviceKind::kCpu)) + ":" + std::to_string(index.value_or(0));
}

}  // namespace placesim
