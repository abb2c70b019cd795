#include "real_backend/runtime/machine_load.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "real_backend/runtime/cpu_kernels.h"

namespace placesim::real {
namespace {

std::string read_text(const char* path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The CPU ids this process may run on (sched_getaffinity); empty when unknown.
std::vector<int> usable_cpu_ids() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return ids;
  for (int id = 0; id < CPU_SETSIZE; ++id) {
    if (CPU_ISSET(id, &allowed)) ids.push_back(id);
  }
  return ids;
}

}  // namespace

MachineLoad::Ticks parse_proc_stat(const std::string& text, const std::vector<int>& cpus) {
  MachineLoad::Ticks ticks;
  if (cpus.empty()) return ticks;
  std::istringstream lines(text);
  std::string line;
  size_t found = 0;
  while (std::getline(lines, line)) {
    int id = -1;
    if (std::sscanf(line.c_str(), "cpu%d", &id) != 1 || std::find(cpus.begin(), cpus.end(), id) == cpus.end()) continue;
    std::istringstream fields(line);
    std::string name;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> name >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
    if (!fields) continue;
    fields >> steal;  // absent before Linux 2.6.11
    const double busy = user + nice + system + irq + softirq + steal;  // guest time is inside user
    ticks.cpus_busy += busy;
    ticks.cpus_total += busy + idle + iowait;
    ++found;
  }
  ticks.known = found == cpus.size();
  return ticks;
}

double parse_own_ticks(const std::string& text) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  double utime = -1, stime = -1;
  for (int number = 3; number <= 15 && fields >> field; ++number) {
    if (number == 14) utime = std::stod(field);
    if (number == 15) stime = std::stod(field);
  }
  return utime < 0 || stime < 0 ? -1 : utime + stime;
}

MachineLoad::Ticks MachineLoad::read_ticks() {
  Ticks ticks = parse_proc_stat(read_text("/proc/stat"), usable_cpu_ids());
  ticks.own = parse_own_ticks(read_text("/proc/self/stat"));
  ticks.known = ticks.known && ticks.own >= 0;
  return ticks;
}

double MachineLoad::others_share(const Ticks& start, const Ticks& end) {
  const double total = end.cpus_total - start.cpus_total;
  if (!start.known || !end.known || !(total > 0)) return -1;
  const double others = (end.cpus_busy - start.cpus_busy) - (end.own - start.own);
  return std::clamp(others / total, 0.0, 1.0);
}

MachineLoad::MachineLoad() : start_(read_ticks()) {}

double MachineLoad::others_share() const { return others_share(start_, read_ticks()); }

std::string MachineLoad::busy_warning(double threshold) const {
  const double share = others_share();
  if (!(share > threshold)) return "";
  char text[240];
  std::snprintf(text, sizeof text,
                "warning: this machine was busy during the measurement: other processes (or the hypervisor) took "
                "%.0f%% of its %u usable CPUs' time; the timings include their interference",
                100 * share, usable_cpus());
  return text;
}

}  // namespace placesim::real
