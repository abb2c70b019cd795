#include "sim/timeline/timeline.h"

#include <algorithm>

namespace placesim {

double Timeline::makespan_seconds() const {
  double end = 0;
  for (const auto& interval : tasks) end = std::max(end, interval.end_seconds);
  return end;
}

}  // namespace placesim
