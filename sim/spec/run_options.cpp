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

std::optional<Optimizer> parse_optimizer(const std::string& text) {
  for (Optimizer optimizer : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kLamb}) {
    if (to_string(optimizer) == text) return optimizer;
  }
  return std::nullopt;
}

std::vector<std::string> optimizer_names() { return {"sgd", "momentum", "adam", "lamb"}; }

}  // namespace placesim
