#include "sim/spec/tier.h"

namespace placesim {

std::string to_string(Tier tier) {
  switch (tier) {
    case Tier::kAnalytical: return "analytical";
    case Tier::kSimulated: return "simulated";
    case Tier::kClosedForm: return "closed-form";
    case Tier::kSearch: return "search";
  }
  return "simulated";
}

std::optional<Tier> parse_tier(const std::string& text) {
  for (Tier tier : {Tier::kAnalytical, Tier::kSimulated, Tier::kClosedForm}) {
    if (text == to_string(tier)) return tier;
  }
  return std::nullopt;
}

}  // namespace placesim
