// The hosts a multi-host execution spans (one process per host, launched by mpirun): this
// process's rank, and the point-to-point messages and gathers the executors need. The MPI
// implementation is the only one; a build without MPI, or a process not started by mpirun, has
// no group and runs single-host plans only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace placesim::real {

class HostGroup {
 public:
  virtual ~HostGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  /// Blocking, thread-safe: several threads may send and receive at once.
  virtual void send(int to_rank, int tag, const void* data, size_t bytes) = 0;
  virtual void receive(int from_rank, int tag, void* data, size_t bytes) = 0;
  /// Every rank's `values` (all of one length), concatenated in rank order, on rank 0; empty elsewhere.
  virtual std::vector<double> gather_to_root(const std::vector<double>& values) = 0;
  /// The largest tag send/receive accept.
  virtual int max_tag() const = 0;
  /// The rank of a message with `tag` waiting from anyone, or -1 when none is (does not block).
  virtual int probe_any(int tag) = 0;
  /// Blocks until a message with `tag` from anyone is waiting; returns its sender's rank.
  virtual int wait_any(int tag) = 0;
};

/// True when this process was started by mpirun (Open MPI, MPICH/PMI environment variables).
bool launched_by_mpirun();

/// The process's group, initialising MPI on first use (finalised at exit); null when MPI is not
/// built in or the process was not started by mpirun. Throws InputError when MPI cannot give the
/// thread support the executors need.
HostGroup* host_group();

/// True when placesim was built with MPI (Debian's Open MPI, libopenmpi-dev).
bool built_with_mpi();

}  // namespace placesim::real
