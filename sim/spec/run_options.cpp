#include "sim/spec/run_options.h"

namespace placesim {

std::string to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kMomentum: return "momentum";
    case Optimizer::kAdam: return "adam";
    case Optimizer::kLamb: return "lamb";
  }
  return "sgd";
}

}  // namespace placesim
