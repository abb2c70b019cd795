// The plan-size guard's count of an all-reduce's transfers (sim/plan/plan_size.h), by hand.
#include <gtest/gtest.h>

#include "sim/plan/plan_size.h"

namespace placesim {
namespace {

// 8 GPUs. A ring per round: 2 N (N-1) = 112 transfers, per phase N = 8; over NCCL's 4 channels
// (a DGX-1 P100) 448 and 32; NCCL 1.x's ring in rank order stays one ring. Hierarchical over 2
// machines of 4 per round: 2 N (L-1) + 2 N (M-1) = 48 + 16 = 64, per phase 3 N = 24; over 2
// channels a machine 128 and 48. NCCL's trees per round: 4 (N-1) per chunk, up to 64 chunks,
// 1,792; per phase 8 (N-1) = 56. Auto: the fewest, halving-doubling's 2 N log2 N = 48 per round,
// the 4 channels' 32 per phase.
TEST(PlanSize, NcclsChannelsMultiplyTheirAlgorithmsTransfers) {
  const auto round = CollectiveFidelity::kPerRound, phase = CollectiveFidelity::kPerPhase;
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, round), 112);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, round, 4), 448);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRing, 8, 8, phase, 4), 32);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kRingInRankOrder, 8, 8, round, 4), 112);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, round), 64);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, round, 1, 2), 128);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kHierarchical, 8, 4, phase, 1, 2), 48);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kDoubleBinaryTree, 8, 4, round), 1792);
  EXPECT_DOUBLE_EQ(allreduce_transfers(CollectiveAlgorithm::kDoubleBinaryTree, 8, 4, phase), 56);
  EXPECT_DOUBLE_EQ(allreduce_transfers(std::nullopt, 8, 4, round, 4, 2), 48);
  EXPECT_DOUBLE_EQ(allreduce_transfers(std::nullopt, 8, 4, phase, 4, 2), 32);
}

}  // namespace
}  // namespace placesim
