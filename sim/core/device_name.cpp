#include "sim/core/device_name.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace placesim {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::optional<int> parse_index(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == separator) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
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

std::optional<DeviceKind> parse_device_kind(std::string text) {
  text = lower(text);
  if (text == "cpu") return DeviceKind::kCpu;
  if (text == "gpu") return DeviceKind::kGpu;
  if (text == "tpu") return DeviceKind::kTpu;
  return std::nullopt;
}

std::optional<DeviceName> DeviceName::parse(const std::string& text, std::string* error) {
  auto reject = [&](const std::string& why) -> std::optional<DeviceName> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (text.empty()) return reject("empty device name");
  DeviceName name;
  std::string body = text;
  if (body.front() == '/') body = body.substr(1);
  if (body.empty()) return reject("empty device name");
  for (const std::string& part : split(body, '/')) {
    auto fields = split(part, ':');
    std::string key = lower(fields[0]);
    if (key == "job" && fields.size() == 2 && !fields[1].empty()) {
      name.job = fields[1];
    } else if (key == "replica" && fields.size() == 2) {
      name.replica = parse_index(fields[1]);
      if (!name.replica) return reject("bad replica number in \"" + part + "\"");
    } else if (key == "task" && fields.size() == 2) {
      name.task = parse_index(fields[1]);
      if (!name.task) return reject("bad task number in \"" + part + "\"");
    } else if (key == "device" && fields.size() == 3) {
      name.kind = parse_device_kind(fields[1]);
      name.index = parse_index(fields[2]);
      if (!name.kind) return reject("unknown device type \"" + fields[1] + "\" (expected CPU, GPU or TPU)");
      if (!name.index && fields[2] != "*") return reject("bad device index in \"" + part + "\"");
    } else if (fields.size() == 2 && parse_device_kind(fields[0])) {
      name.kind = parse_device_kind(fields[0]);
      name.index = parse_index(fields[1]);
      if (!name.index && fields[1] != "*") return reject("bad device index in \"" + part + "\"");
    } else if (fields.size() == 1 && parse_device_kind(fields[0])) {
      name.kind = parse_device_kind(fields[0]);
    } else {
      return reject("cannot parse \"" + part + "\" (expected job:NAME, replica:N, task:N, device:TYPE:N or TYPE:N)");
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
