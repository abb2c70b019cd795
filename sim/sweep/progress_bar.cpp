#include "sim/sweep/progress_bar.h"

#include <cmath>
#include <cstdio>

namespace placesim {

namespace {
std::string duration_text(double seconds) {
  long long s = std::llround(seconds);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string((s % 3600) / 60) + "m";
}
}  // namespace

ProgressBar::ProgressBar(std::ostream& out, std::string label, size_t total, bool interactive)
    : out_(out), label_(std::move(label)), total_(total), interactive_(interactive) {
  if (interactive_ && total_ > 0) out_ << "\r" << render(label_, 0, total_, 0) << std::flush;
}

std::string ProgressBar::render(const std::string& label, size_t done, size_t total, double elapsed_seconds) {
  constexpr size_t kWidth = 30;
  size_t filled = total ? done * kWidth / total : kWidth;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "]";
  char rate[64] = "";
  std::string eta = "?";
  if (done > 0 && elapsed_seconds > 0) {
    double per_second = static_cast<double>(done) / elapsed_seconds;
    std::snprintf(rate, sizeof rate, "%.1f/s", per_second);
    eta = duration_text(static_cast<double>(total - done) / per_second);
  }
  return label + " " + bar + " " + std::to_string(done) + "/" + std::to_string(total) + "  " + (rate[0] ? rate : "-/s") +
         "  ETA " + (done == total ? std::string("0s") : eta);
}

void ProgressBar::advance() {
  ++done_;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (interactive_) {
    // At most every kRedrawSeconds, and the last: a search's million rows would otherwise
    // redraw the terminal a million times.
    if (done_ == total_ || elapsed - last_redraw_seconds_ >= kRedrawSeconds) {
      last_redraw_seconds_ = elapsed;
      out_ << "\r" << render(label_, done_, total_, elapsed) << std::flush;
    }
    return;
  }
  size_t tenth = total_ ? done_ * 10 / total_ : 10;
  if (tenth > last_tenth_ || done_ == total_) {
    last_tenth_ = tenth;
    out_ << render(label_, done_, total_, elapsed) << "\n" << std::flush;
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (interactive_ && total_ > 0) out_ << "\n" << std::flush;
}

}  // namespace placesim
