// Tier: what computes a step — the SimGrid engine, the analytical list scheduler or the
// closed-form recurrence. A scenario's "simulation": {"tier": ...}, a sweep's "fidelity" and each
// sweep row name one; make_engine (sim/engine/engine_factory.h) gives the engine of a tier.
#pragma once

#include <optional>
#include <string>

namespace placesim {

/// The order sorts sweep rows (sim/sweep/result_store.h): analytical before simulated.
enum class Tier {
  kAnalytical,  ///< the plan list-scheduled without contention (sim/analytical/analytical_engine.h)
  kSimulated,   ///< the SimGrid engine, contention included
  kClosedForm,  ///< 3D strategies: one micro-batch's cells, no plan of the step (pipeline_closed_form.h)
};

std::string to_string(Tier tier);  ///< "analytical", "simulated", "closed-form"
std::optional<Tier> parse_tier(const std::string& text);

}  // namespace placesim
