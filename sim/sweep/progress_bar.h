// The sweep's progress on the terminal: a bar redrawn in place with the count, the rate and the
// time left when the stream is a terminal (at most ten times a second, and at the end);
// otherwise a plain line every tenth of the work.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace placesim {

class ProgressBar {
 public:
  /// `interactive`: redraw one line in place (a terminal) rather than print lines.
  ProgressBar(std::ostream& out, std::string label, size_t total, bool interactive);
  /// One more item finished.
  void advance();
  /// Ends the bar's line.
  void finish();

  /// "[##########          ] 12/24  3.1/s  ETA 4s" for `done` of `total` after `elapsed_seconds`.
  static std::string render(const std::string& label, size_t done, size_t total, double elapsed_seconds);

 private:
  std::ostream& out_;
  std::string label_;
  size_t total_;
  size_t done_ = 0;
  bool interactive_;
  size_t last_tenth_ = 0;
  static constexpr double kRedrawSeconds = 0.1;
  double last_redraw_seconds_ = -kRedrawSeconds;  ///< since start_; the first advance redraws
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace placesim
