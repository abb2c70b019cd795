// A 3D (`parallelism`) strategy on a cluster of CPUs only, as the real backend's measured-cpu
// template is: its devices default to the CPUs, tensor groups are counted against the node's
// CPUs, and asking for more devices than there are names CPUs, not GPUs.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/input_error.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

std::string on_three_cpus(const std::string& parallelism) {
  return R"({"model": {"zoo": "mlp", "parameters": {"input": 16, "hidden": [32], "output": 4}},
    "cluster": {"node": {"devices": [{"name": "CPU:0", "profile": "x86-server-cpu"},
                                     {"name": "CPU:1", "profile": "x86-server-cpu"},
                                     {"name": "CPU:2", "profile": "x86-server-cpu"}],
                          "links": [{"endpoints": ["CPU:0", "CPU:1"], "type": "qpi"},
                                    {"endpoints": ["CPU:1", "CPU:2"], "type": "qpi"}]}},
    "strategy": {"parallelism": )" +
         parallelism + R"(},
    "run": {"batch_size": 4, "precision": "fp32", "optimizer": "sgd", "steps": 1}})";
}

TEST(CpuOnlyParallelism, TakesTheClustersCpusInOrder) {
  const Scenario scenario = testing::scenario_from_text(on_three_cpus(R"({"data": 2})"));
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  ASSERT_EQ(p.devices.size(), 2u);
  EXPECT_EQ(scenario.cluster.device(p.devices[0]).name.kind, DeviceKind::kCpu);
  EXPECT_EQ(scenario.cluster.device(p.devices[0]).name.index, 0);
  EXPECT_EQ(scenario.cluster.device(p.devices[1]).name.index, 1);
  // Tensor groups inside the node: 3 CPUs hold a group of 2 (with data 1).
  EXPECT_NO_THROW(testing::scenario_from_text(on_three_cpus(R"({"tensor": 2})")));
}

TEST(CpuOnlyParallelism, MoreDevicesThanCpusNamesTheCpus) {
  try {
    testing::scenario_from_text(on_three_cpus(R"({"data": 4})"));
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/strategy/parallelism"), std::string::npos) << message;
    EXPECT_NE(message.find("but the cluster has 3 CPUs and no GPUs"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace placesim
