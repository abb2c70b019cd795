// MachineLoad: others' share of the usable CPUs' time, from /proc/stat and /proc/self/stat.
#include "real_backend/runtime/machine_load.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "real_backend/runtime/cpu_kernels.h"

namespace placesim::real {
namespace {

constexpr const char* kProcStat =
    "cpu  900 9 90 9000 90 9 9 90 0 0\n"
    "cpu0 100 1 10 1000 10 1 1 10 0 0\n"
    "cpu1 300 3 30 3000 30 3 3 30 0 0\n"
    "cpu2 500 5 50 5000 50 5 5 50 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

TEST(MachineLoad, SumsBusyAndTotalTicksOverTheUsableCpusOnly) {
  MachineLoad::Ticks ticks = parse_proc_stat(kProcStat, {0, 2});
  ASSERT_TRUE(ticks.known);
  // busy = user + nice + system + irq + softirq + steal: cpu0 100+1+10+1+1+10 = 123, cpu2 5 x 123
  EXPECT_DOUBLE_EQ(ticks.cpus_busy, 123 + 615);
  // total = busy + idle + iowait: cpu0 123 + 1010, cpu2 615 + 5050
  EXPECT_DOUBLE_EQ(ticks.cpus_total, 1133 + 5665);
  EXPECT_FALSE(parse_proc_stat(kProcStat, {0, 7}).known) << "cpu7 has no line";
  EXPECT_FALSE(parse_proc_stat(kProcStat, {}).known);
}

TEST(MachineLoad, ReadsUtimePlusStimeAfterTheCommandNameWhateverItHolds) {
  // Fields 14 and 15; the command name (field 2) may hold spaces and parentheses.
  EXPECT_DOUBLE_EQ(parse_own_ticks("42 (a b) (c)) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3"), 325);
  EXPECT_LT(parse_own_ticks("42 (short) S 1 2"), 0);
  EXPECT_LT(parse_own_ticks("garbage"), 0);
}

TEST(MachineLoad, OthersShareIsBusyTicksNotOursOverTotalTicks) {
  MachineLoad::Ticks start{1000, 4000, 300, true}, end{1600, 5000, 500, true};
  // (600 busy - 200 ours) / 1000 ticks
  EXPECT_DOUBLE_EQ(MachineLoad::others_share(start, end), 0.4);
  MachineLoad::Ticks idle_end{1200, 5000, 500, true};  // only our own work: never negative
  EXPECT_DOUBLE_EQ(MachineLoad::others_share(start, idle_end), 0.0);
  EXPECT_LT(MachineLoad::others_share(start, start), 0) << "no tick passed";
  MachineLoad::Ticks unknown;
  EXPECT_LT(MachineLoad::others_share(unknown, end), 0);
}

TEST(MachineLoad, SeesChildProcessesSpinningOnEveryUsableCpu) {
  MachineLoad load;
  const unsigned spinners = std::min(64u, usable_cpus());
  std::vector<pid_t> children;
  for (unsigned i = 0; i < spinners; ++i) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
      volatile unsigned long spins = 0;
      while (std::chrono::steady_clock::now() < end) spins = spins + 1;
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) waitpid(child, nullptr, 0);
  // Other processes kept every usable CPU busy while this one slept in waitpid.
  EXPECT_GT(load.others_share(), 0.5);
  EXPECT_NE(load.busy_warning().find("warning: this machine was busy"), std::string::npos) << load.busy_warning();
}

}  // namespace
}  // namespace placesim::real
