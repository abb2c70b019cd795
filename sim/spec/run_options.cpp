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

namespace {
constexpr Optimizer kOptimizers[] = {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam, Optimizer::kLamb};
}  // namespace

std::optional<Optimizer> parse_optimizer(const std::string& text) {
  for (Optimizer optimizer : kOptimizers) {
    if (to_string(optimizer) == text) return optimizer;
  }
  return std::nullopt;
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (Optimizer optimizer : kOptimizers) names.push_back(to_string(optimizer));
  return names;
}

}  // namespace placesim
