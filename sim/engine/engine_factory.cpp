#include "sim/engine/engine_factory.h"

#include <stdexcept>

#include "sim/analytical/analytical_engine.h"
#include "sim/engine/simgrid_engine.h"

namespace placesim {
namespace {

class AnalyticalEngine : public PlanEngine {
 public:
  Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) override {
    return estimate_step(plan, cluster).timeline;
  }
};

}  // namespace

std::unique_ptr<PlanEngine> make_engine(Tier tier) {
  switch (tier) {
    case Tier::kSimulated: return make_simgrid_engine();
    case Tier::kAnalytical: return std::make_unique<AnalyticalEngine>();
    case Tier::kClosedForm:
    case Tier::kSearch: break;
  }
  throw std::invalid_argument("the " + to_string(tier) + " tier has no engine: it builds no plan of the step");
}

}  // namespace placesim
