// m-ETF (Baechi, Jeon et al. 2020, section 4.2): Earliest Task First list scheduling, restricted
// at every step to the devices whose memory still has room for the op.
#include "sim/auto_placement/auto_placer.h"
#include "sim/auto_placement/list_scheduler.h"

namespace placesim {

AutoPlacement place_m_etf(const PlacementProblem& problem) { return list_schedule(problem, "m-ETF"); }

}  // namespace placesim
