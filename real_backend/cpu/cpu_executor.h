// The CPU executor: every CPU device of the plan is a worker thread (pinned to its own core)
// running the task's real work single-threaded (real_backend/runtime/cpu_kernels.h); every pair of
// devices that exchanges data gets a copy thread that memcpys the transfer's bytes. A collective
// runs its all-reduce schedule's steps on those copy threads: each copies a chunk of the sender's
// buffer, and reduce steps add it into the receiver's. Runs on any Linux machine, CI included. A
// plan spanning several hosts runs as one MPI rank per host (`mpirun -np N`, rank r = node r):
// cross-host transfers and collective steps are MPI messages.
#pragma once

#include <memory>

#include "real_backend/runtime/executor.h"

namespace placesim::real {

std::unique_ptr<Executor> make_cpu_executor(ExecutionOptions options);

}  // namespace placesim::real
