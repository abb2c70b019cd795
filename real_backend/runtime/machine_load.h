// MachineLoad: how much of this machine's CPU time other processes (and the hypervisor, as steal)
// took while a measurement ran, read from /proc/stat and /proc/self/stat at its start and end.
// Timings taken while others run measure them too; placesim warns, and timing tests skip.
#pragma once

#include <string>
#include <vector>

namespace placesim::real {

class MachineLoad {
 public:
  /// Starts measuring now.
  MachineLoad();
  /// The share (0..1) of the usable CPUs' time since the start that went to other processes or
  /// to steal; negative when unknown (no /proc, or less than one clock tick has passed).
  double others_share() const;
  /// "warning: this machine was busy ..." when others took more than `threshold` of the usable
  /// CPUs' time since the start; empty otherwise or when unknown.
  std::string busy_warning(double threshold = kBusyShare) const;

  /// Others' share above which a measurement is reported busy: a quarter of the usable CPUs'
  /// time (one busy process on a 4-CPU machine, half a core's worth on 2 CPUs).
  static constexpr double kBusyShare = 0.25;

  /// Clock ticks, summed over the usable CPUs (busy: user, nice, system, irq, softirq, steal;
  /// total: busy + idle + iowait), and this process's user + system ticks.
  struct Ticks {
    double cpus_busy = 0;
    double cpus_total = 0;
    double own = 0;
    bool known = false;
  };
  static Ticks read_ticks();
  /// Others' share between two readings: (busy - own) / total, clamped to [0, 1]; negative when
  /// either reading is unknown or no tick passed.
  static double others_share(const Ticks& start, const Ticks& end);

 private:
  Ticks start_;
};

/// Parses /proc/stat's text: per CPU id listed in `cpus`, busy and total ticks (summed).
/// Exposed for tests; unknown when a listed CPU has no line.
MachineLoad::Ticks parse_proc_stat(const std::string& text, const std::vector<int>& cpus);
/// Parses /proc/self/stat's text: utime + stime (fields 14 and 15); negative when malformed.
double parse_own_ticks(const std::string& text);

}  // namespace placesim::real
