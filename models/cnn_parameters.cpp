#include "models/cnn_parameters.h"

namespace placesim {

CnnParameters read_cnn_parameters(const JsonReader& parameters, int64_t default_image_size) {
  parameters.reject_unknown_keys({"image_size", "num_classes"});
  CnnParameters result;
  result.image_size = parameters.integer_or("image_size", default_image_size, 1, kMaxImageSize);
  result.num_classes = parameters.integer_or("num_classes", 1000, 1, kMaxClasses);
  return result;
}

}  // namespace placesim
