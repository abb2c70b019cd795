// The plan-size guard's count of an all-reduce's transfers (sim/plan/plan_size.h), by hand.
#include <gtest/gtest.h>

#include "sim/plan/plan_size.h"

namespace placesim {
namespace {

// 8 GPUs. A ring per round: 2 N (N-1) = 112 transfers, per phase N = 8; over NCCL's 4 channels
// (a DGX-1 P100) 448 and 32; NCCL 1.x's ring in rank order stays one ring. Hierarchical over 2
// machines of 4 per round: 2 N (L-1) + 2 N (M-1) = 48 + 16 = 64, per phase 3 N = 24; over 2
// channels a machine 128 and 48. Auto: the fewest, the tree's 4 (N-1) = 28.
TEST(PlanSize, NcclsChannelsMultiplyTheirAlgorithmsTransfers) {
  const auto round = CollectiveFidelity::kPerRound, phase = CollectiveFidelity::kPerPhase;
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, round), 112);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, round, 4), 448);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, phase, 4), 32);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRingInRankOrder, 8, 8, round, 4), 112);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, round), 64);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, round, 1, 2), 128);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, phase, 1, 2), 48);
  EXPECT_DOUBLE_EQ(allreduce_transfers(std::nullopt, 8, 4, round, 4, 2), 28);
}

}  // namespace
}  // namespace placesim
