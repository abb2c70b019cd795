// Order statistics of measured samples: the q-quantile with linear interpolation between the two
// nearest ranks (numpy's default), and the median (q = 0.5: the middle value, or the mean of the
// two middle values). Used by the kernel fit's error summaries, the trace reader and the real
// backend's timings.
#pragma once

#include <vector>

namespace placesim {

/// 0 for no values; q in [0, 1].
double quantile(std::vector<double> values, double q);
double median(std::vector<double> values);

}  // namespace placesim
