// Reads the rows of a Chrome trace (sim/timeline/chrome_trace.h) back, for the trace tests: the
// complete ("X") events of each (pid, tid) and the slices that a viewer cannot draw on one row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/json_reader.h"

namespace placesim::testing {

struct TraceSlice {
  std::string name;
  double start_microseconds = 0;
  double end_microseconds = 0;
};

using TraceRow = std::pair<int64_t, int64_t>;  ///< (pid, tid)

/// The "X" events of a trace, by row, in file order.
inline std::map<TraceRow, std::vector<TraceSlice>> trace_rows(const Json& trace) {
  std::map<TraceRow, std::vector<TraceSlice>> rows;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    const double ts = event.at("ts").get<double>();
    rows[{event.at("pid").get<int64_t>(), event.at("tid").get<int64_t>()}].push_back(
        {event.at("name").get<std::string>(), ts, ts + event.at("dur").get<double>()});
  }
  return rows;
}

/// One line per slice that starts inside another slice of its row and ends after it: a viewer
/// draws a row as a stack of properly nested (or disjoint) slices, so such a pair is drawn wrongly.
/// Ends and starts closer than `tolerance_microseconds` count as equal (the microseconds are
/// seconds times 1e6, rounded).
inline std::vector<std::string> improperly_nested_slices(const Json& trace, double tolerance_microseconds = 1e-6) {
  std::vector<std::string> problems;
  for (auto& [row, slices] : trace_rows(trace)) {
    // Sorted by start, the longer first, each slice must end before the slice it starts in ends.
    std::sort(slices.begin(), slices.end(), [](const TraceSlice& a, const TraceSlice& b) {
      if (a.start_microseconds != b.start_microseconds) return a.start_microseconds < b.start_microseconds;
      return a.end_microseconds > b.end_microseconds;
    });
    std::vector<const TraceSlice*> open;
    for (const TraceSlice& slice : slices) {
      while (!open.empty() && open.back()->end_microseconds <= slice.start_microseconds + tolerance_microseconds) {
        open.pop_back();
      }
      if (!open.empty() && slice.end_microseconds > open.back()->end_microseconds + tolerance_microseconds) {
        problems.push_back("pid " + std::to_string(row.first) + " tid " + std::to_string(row.second) + ": " +
                           slice.name + " starts inside " + open.back()->name + " and ends after it");
      }
      open.push_back(&slice);
    }
  }
  return problems;
}

}  // namespace placesim::testing
