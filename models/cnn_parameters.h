// CnnParameters: the parameters every image classifier of the zoo takes ("image_size",
// "num_classes"), read and checked in one place so the generators agree on names and limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_reader.h"

namespace placesim {

struct CnnParameters {
  int64_t image_size = 224;   ///< square input images, pixels per side
  int64_t num_classes = 1000; ///< ImageNet-1k
};

/// Largest accepted image side and class count: keeps activations and weights far from overflow.
constexpr int64_t kMaxImageSize = 16384;
constexpr int64_t kMaxClasses = 1 << 24;

/// Reads "image_size" (default `default_image_size`) and "num_classes" (default 1000); rejects any
/// other key with an InputError at its path.
CnnParameters read_cnn_parameters(const JsonReader& parameters, int64_t default_image_size);

}  // namespace placesim
