#include "sim/sweep/row_wire.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace placesim {
namespace {

constexpr char kTag[] = "placesim-rows-1";  // with its terminating zero: 16 bytes

class Writer {
 public:
  void u64(uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  void f64(double value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    u64(bits);
  }
  void text(const std::string& value) {
    u64(value.size());
    bytes_ += value;
  }
  void raw(const char* data, size_t size) { bytes_.append(data, size); }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  uint64_t u64() {
    need(8);
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return value;
  }
  double f64() {
    const uint64_t bits = u64();
    double value = 0;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  std::string text() {
    const uint64_t size = u64();
    need(size);
    std::string value = bytes_.substr(at_, size);
    at_ += size;
    return value;
  }
  bool starts_with(const char* data, size_t size) {
    if (bytes_.size() < size || bytes_.compare(0, size, data, size) != 0) return false;
    at_ = size;
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void need(uint64_t size) const {
    if (size > bytes_.size() - at_) throw std::runtime_error("malformed sweep result: the rows end early");
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

uint64_t tier_code(Tier tier) {
  switch (tier) {
    case Tier::kAnalytical: return 0;
    case Tier::kSimulated: return 1;
    case Tier::kSearch: return 2;
    case Tier::kClosedForm: return 3;  // no sweep row is on it: decoded as unknown, as row_from_json refuses it
  }
  throw std::logic_error("a tier without a code");
}

Tier tier_of(uint64_t code) {
  switch (code) {
    case 0: return Tier::kAnalytical;
    case 1: return Tier::kSimulated;
    case 2: return Tier::kSearch;
  }
  throw std::runtime_error("malformed sweep result: unknown tier " + std::to_string(code));
}

uint64_t status_code(RowStatus status) {
  switch (status) {
    case RowStatus::kOk: return 0;
    case RowStatus::kOutOfMemory: return 1;
    case RowStatus::kNotApplicable: return 2;
  }
  throw std::logic_error("a row status without a code");
}

RowStatus status_of(uint64_t code) {
  switch (code) {
    case 0: return RowStatus::kOk;
    case 1: return RowStatus::kOutOfMemory;
    case 2: return RowStatus::kNotApplicable;
  }
  throw std::runtime_error("malformed sweep result: unknown status " + std::to_string(code));
}

/// A row's real-valued fields, in the order the bytes carry them (encode_rows and decode_rows
/// both walk this list, so they cannot disagree). `Row`: SweepRow or const SweepRow.
template <typename Row>
auto real_fields(Row& row) {
  return std::array{&row.step_seconds,      &row.samples_per_second,     &row.single_replica_samples_per_second,
                    &row.compute_seconds,   &row.exposed_communication_seconds, &row.bubble_seconds,
                    &row.straggler_seconds, &row.other_seconds,          &row.peak_memory_bytes,
                    &row.memory_capacity_bytes, &row.model_flops_per_sample, &row.hardware_flops_per_sample,
                    &row.tokens_per_sample, &row.peak_flops_per_second};
}

}  // namespace

std::string encode_rows(const std::vector<SweepRow>& rows) {
  Writer out;
  out.raw(kTag, sizeof kTag);
  out.u64(rows.size());
  for (const SweepRow& row : rows) {
    out.u64(row.index);
    out.u64(tier_code(row.tier));
    out.u64(status_code(row.status));
    out.text(row.reason);
    out.u64(static_cast<uint64_t>(row.replicas));
    out.u64(row.tasks);
    for (const double* value : real_fields(row)) out.f64(*value);
  }
  return out.take();
}

std::vector<SweepRow> decode_rows(const std::string& bytes) {
  Reader in(bytes);
  if (!in.starts_with(kTag, sizeof kTag)) throw std::runtime_error("malformed sweep result: not a worker's rows");
  const uint64_t count = in.u64();
  std::vector<SweepRow> rows;
  for (uint64_t i = 0; i < count; ++i) {
    SweepRow row;
    row.index = static_cast<size_t>(in.u64());
    row.tier = tier_of(in.u64());
    row.status = status_of(in.u64());
    row.reason = in.text();
    row.replicas = static_cast<int64_t>(in.u64());
    row.tasks = static_cast<size_t>(in.u64());
    for (double* value : real_fields(row)) *value = in.f64();
    rows.push_back(std::move(row));
  }
  if (!in.done()) throw std::runtime_error("malformed sweep result: bytes after the last row");
  return rows;
}

}  // namespace placesim
