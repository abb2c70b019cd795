// DeviceName: a TensorFlow device specification such as
// "/job:worker/replica:0/task:3/device:GPU:1", with the shorthands "/gpu:0", "/cpu:0",
// "/device:GPU:0" and partial specs ("/job:worker/task:1") that match several devices.
#pragma once

#include <optional>
#include <string>

namespace placesim {

/// Device kinds placesim knows; TensorFlow spells them "CPU", "GPU", "TPU".
enum class DeviceKind { kCpu, kGpu, kTpu };

std::string to_string(DeviceKind kind);             ///< "CPU", "GPU", "TPU"
std::optional<DeviceKind> parse_device_kind(std::string text);  ///< case-insensitive

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<DeviceKind> kind;
  std::optional<int> index;

  /// Parses a full or partial spec; returns nullopt (with `error` set) when malformed.
  static std::optional<DeviceName> parse(const std::string& text, std::string* error);

  /// True when every field set in this (partial) spec equals the field of `full`.
  bool matches(const DeviceName& full) const;

  /// Canonical TensorFlow form: "/job:J/replica:R/task:T/device:GPU:I".
  std::string canonical() const;
  /// TensorFlow 1.x log form used by log_device_placement: "/job:J/replica:R/task:T/gpu:I".
  std::string legacy() const;
  /// Short local form: "GPU:1".
  std::string local() const;
};

}  // namespace placesim
