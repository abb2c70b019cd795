// Tier: what computes a step — the SimGrid engine, the analytical list scheduler or the
// closed-form recurrence, or a sweep's search screen. A scenario's "simulation": {"tier": ...}, a
// sweep's "fidelity" and each sweep row name one; make_engine (sim/engine/engine_factory.h) gives
// the engine of a tier.
#pragma once

#include <optional>
#include <string>

namespace placesim {

/// The order sorts sweep rows (sim/sweep/result_store.h): analytical before simulated, search last.
enum class Tier {
  kAnalytical,  ///< the plan list-scheduled without contention (sim/analytical/analytical_engine.h)
  kSimulated,   ///< the SimGrid engine, contention included
  kClosedForm,  ///< 3D strategies: one micro-batch's cells, no plan of the step (pipeline_closed_form.h)
  /// Sweeps of 3D strategies only: one cell per layout serves every data width and GPipe/1F1B
  /// schedule of it, each configuration costing its recurrence (sim/session/sweep_screen.h).
  kSearch,
};

std::string to_string(Tier tier);  ///< "analytical", "simulated", "closed-form", "search"
/// A scenario's tier: "analytical", "simulated" or "closed-form" (the search tier is a sweep's).
std::optional<Tier> parse_tier(const std::string& text);

}  // namespace placesim
