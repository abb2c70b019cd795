// MachineSpeed: the probe kernels' rates against a profile's, and which drifted beyond the tolerance.
#include "real_backend/runtime/speed_probe.h"

#include <gtest/gtest.h>

namespace placesim::real {
namespace {

MachineSpeed speed(double gemm_gflops, double loop_gflops, double triad_gbps) {
  return MachineSpeed{gemm_gflops * 1e9, loop_gflops * 1e9, triad_gbps * 1e9};
}

TEST(SpeedProbe, TheProfilePredictsEachKernelFromItsPeakAndEfficiencies) {
  DeviceSpec cpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.peak_flops_per_second[Precision::kFp32] = 100e9;
  cpu.compute_efficiency[OpKind::kMatMul] = 0.9;
  cpu.default_compute_efficiency = 0.3;
  cpu.memory_bandwidth_bytes_per_second = 20e9;
  cpu.memory_efficiency = 0.8;
  MachineSpeed predicted = profile_speed(cpu);
  EXPECT_DOUBLE_EQ(predicted.gemm_flops_per_second, 90e9);        // 100 x 0.9
  EXPECT_DOUBLE_EQ(predicted.arithmetic_flops_per_second, 30e9);  // 100 x 0.3
  EXPECT_DOUBLE_EQ(predicted.stream_bytes_per_second, 16e9);      // 20 x 0.8
  // A GEMM curve prices the probe's 2 x 256^3 = 33,554,432 FLOPs: halfway in log(FLOPs) between
  // 2^24 and 2^26 FLOPs is 2^25, so the efficiency is halfway between 0.5 and 0.7.
  cpu.gemm_efficiency_by_flops = {{16777216.0, 0.5}, {67108864.0, 0.7}};
  EXPECT_NEAR(profile_speed(cpu).gemm_flops_per_second, 60e9, 1e3);
}

TEST(SpeedProbe, NamesTheKernelsMoreThanTheToleranceAwayInAnyProbe) {
  // The CI machine of 2026-12-01: calibrated at 100 / 29.2 / 16.07, then the loop and the triad
  // ran at half that before the runs and recovered after them.
  const MachineSpeed profile = speed(100, 29.2, 16.07);
  const std::string drift = speed_drift({speed(101, 15.2, 8.57), speed(99, 29.0, 16.0)}, profile);
  EXPECT_EQ(drift,
            "multiply-add loop 15.2 GFLOP/s then 29.0 GFLOP/s (profile 29.2 GFLOP/s); "
            "triad 8.6 GB/s then 16.0 GB/s (profile 16.1 GB/s)");
  // 14% slower and 14% faster are within 15%; 16% slower is not, and is named alone.
  EXPECT_EQ(speed_drift({speed(86, 33.3, 16.07)}, profile), "");
  EXPECT_EQ(speed_drift({speed(84, 29.2, 16.07)}, profile), "sgemm 256^3 84.0 GFLOP/s (profile 100.0 GFLOP/s)");
  // A rate the profile does not give (zero) cannot drift.
  EXPECT_EQ(speed_drift({speed(1, 1, 1)}, speed(0, 0, 0)), "");
}

TEST(SpeedProbe, MeasuresPositiveRatesOnThisMachine) {
  MachineSpeed now = probe_machine_speed(0.001);
  EXPECT_GT(now.gemm_flops_per_second, 1e8);
  EXPECT_GT(now.arithmetic_flops_per_second, 1e8);
  EXPECT_GT(now.stream_bytes_per_second, 1e8);
}

}  // namespace
}  // namespace placesim::real
