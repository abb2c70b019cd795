// The rows a sweep worker sends back (row_wire.h): every field comes back bit for bit, the bytes
// are the count worked out by hand, and anything else is refused, never read past its end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/sweep/row_wire.h"

namespace placesim {
namespace {

SweepRow full_row() {
  SweepRow row;
  row.index = 20735;
  row.tier = Tier::kSearch;
  row.status = RowStatus::kOutOfMemory;
  row.reason = std::string("stage 3 needs 92.1 GiB,\nhas 80.0 GiB\0 and more", 44);  // a newline and a zero byte
  row.step_seconds = 0.1;                                                            // not exact in binary
  row.samples_per_second = 1.0 / 3.0;
  row.single_replica_samples_per_second = std::numeric_limits<double>::denorm_min();
  row.replicas = -1;  // stored as its two's complement and read back
  row.compute_seconds = -0.0;
  row.exposed_communication_seconds = 1e-300;
  row.bubble_seconds = 1e300;
  row.straggler_seconds = std::nextafter(1.0, 2.0);
  row.other_seconds = 2.5;
  row.peak_memory_bytes = 9.21e10;
  row.memory_capacity_bytes = 85899345920.0;
  row.tasks = 123456789;
  row.model_flops_per_sample = 2.1e15;
  row.hardware_flops_per_sample = 2.8e15;
  row.tokens_per_sample = 2048;
  row.peak_flops_per_second = 312e12 * 2048;
  return row;
}

/// Every real-valued field of a row, listed here independently of row_wire.cpp's own list.
std::vector<double> reals(const SweepRow& r) {
  return {r.step_seconds,      r.samples_per_second,    r.single_replica_samples_per_second,
          r.compute_seconds,   r.exposed_communication_seconds, r.bubble_seconds,
          r.straggler_seconds, r.other_seconds,         r.peak_memory_bytes,
          r.memory_capacity_bytes, r.model_flops_per_sample, r.hardware_flops_per_sample,
          r.tokens_per_sample, r.peak_flops_per_second};
}

void expect_same(const SweepRow& a, const SweepRow& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.tier, b.tier);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.replicas, b.replicas);
  EXPECT_EQ(a.tasks, b.tasks);
  const std::vector<double> first = reals(a), second = reals(b);
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(std::memcmp(&first[i], &second[i], sizeof(double)), 0) << "field " << i << " not bit for bit";
  }
}

TEST(RowWire, EveryFieldComesBackBitForBit) {
  SweepRow ok;
  ok.index = 7;
  ok.samples_per_second = 16271.25;
  const std::vector<SweepRow> rows = {full_row(), ok};
  const std::vector<SweepRow> back = decode_rows(encode_rows(rows));
  ASSERT_EQ(back.size(), 2u);
  expect_same(back[0], rows[0]);
  expect_same(back[1], rows[1]);
  EXPECT_TRUE(std::signbit(back[0].compute_seconds));  // -0.0 stays negative
}

TEST(RowWire, BytesAreTheTagTheCountAndEachRowsFields) {
  // Tag "placesim-rows-1" with its zero: 16 bytes; the count: 8. A row: index, tier, status,
  // the reason's length, replicas and tasks as 8 bytes each (48), the reason's bytes, and 14
  // doubles (112).
  EXPECT_EQ(encode_rows({}).size(), 16u + 8u);
  SweepRow row;
  row.reason = "oom";
  EXPECT_EQ(encode_rows({row}).size(), 16u + 8u + 48u + 3u + 112u);
  EXPECT_EQ(encode_rows({row, row}).size(), 16u + 8u + 2 * (48u + 3u + 112u));
  EXPECT_TRUE(decode_rows(encode_rows({})).empty());
}

TEST(RowWire, RefusesWhatNoWorkerWrote) {
  const std::string good = encode_rows({full_row()});
  auto refused = [](const std::string& bytes, const std::string& why) {
    try {
      decode_rows(bytes);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("malformed sweep result: " + why), std::string::npos) << error.what();
    }
  };
  refused("", "not a worker's rows");
  refused("{\"index\": 0}", "not a worker's rows");  // a JSON line, as workers sent before
  for (size_t cut : {size_t{16}, size_t{20}, size_t{24 + 20}, good.size() - 1}) {
    refused(good.substr(0, cut), "the rows end early");
  }
  refused(good + "x", "bytes after the last row");
  std::string huge_count = good;
  huge_count[16] = '\x7f';  // claims far more rows than the bytes hold
  refused(huge_count, "the rows end early");
  std::string huge_reason = good;
  huge_reason[16 + 8 + 24 + 7] = '\x7f';  // the reason's length, its most significant byte
  refused(huge_reason, "the rows end early");
  std::string tier = good;
  tier[16 + 8 + 8] = 9;
  refused(tier, "unknown tier 9");
  std::string status = good;
  status[16 + 8 + 16] = 5;
  refused(status, "unknown status 5");
}

}  // namespace
}  // namespace placesim
