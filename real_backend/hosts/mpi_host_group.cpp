// HostGroup over MPI (Open MPI from Debian). MPI is initialised with MPI_THREAD_MULTIPLE because
// each copy channel of the CPU executor sends or receives on its own thread.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "real_backend/hosts/host_group.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// MPI counts are ints: larger messages go in chunks of 1 GiB.
constexpr size_t kChunkBytes = size_t(1) << 30;

class MpiHostGroup final : public HostGroup {
 public:
  MpiHostGroup() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_MULTIPLE) {
      MPI_Finalize();
      throw InputError("mpirun", "", "this MPI library does not support MPI_THREAD_MULTIPLE, which the "
                                     "multi-host executor needs (one thread per copy channel)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    int* upper = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
    max_tag_ = found && upper ? *upper : 32767;  // the standard's guaranteed minimum
  }
  ~MpiHostGroup() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return max_tag_; }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  void send(int to_rank, int tag, const void* data, size_t bytes) override {
    const char* cursor = static_cast<const char*>(data);
    do {
      size_t chunk = std::min(bytes, kChunkBytes);
      check(MPI_Send(cursor, int(chunk), MPI_BYTE, to_rank, tag, MPI_COMM_WORLD), "MPI_Send");
      cursor += chunk;
      bytes -= chunk;
    } while (bytes > 0);
  }

  void receive(int from_rank, int tag, void* data, size_t bytes) override {
    char* cursor = static_cast<char*>(data);
    do {
      size_t chunk = std::min(bytes, kChunkBytes);
      check(MPI_Recv(cursor, int(chunk), MPI_BYTE, from_rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      cursor += chunk;
      bytes -= chunk;
    } while (bytes > 0);
  }

  int probe_any(int tag) override {
    int waiting = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &waiting, &status), "MPI_Iprobe");
    return waiting ? status.MPI_SOURCE : -1;
  }

  int wait_any(int tag) override {
    MPI_Status status;
    check(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &status), "MPI_Probe");
    return status.MPI_SOURCE;
  }

  std::vector<double> gather_to_root(const std::vector<double>& values) override {
    std::vector<double> all(rank_ == 0 ? values.size() * size_t(size_) : 0);
    check(MPI_Gather(values.data(), int(values.size()), MPI_DOUBLE, all.data(), int(values.size()), MPI_DOUBLE, 0,
                     MPI_COMM_WORLD),
          "MPI_Gather");
    return all;
  }

 private:
  int rank_ = 0, size_ = 1, max_tag_ = 32767;
};

}  // namespace

HostGroup* host_group() {
  if (!launched_by_mpirun()) return nullptr;
  static MpiHostGroup* group = [] {
    auto* created = new MpiHostGroup();
    std::atexit([] { delete host_group(); });
    return created;
  }();
  return group;
}

bool built_with_mpi() { return true; }

}  // namespace placesim::real
