#include "sim/session/sweep_workers.h"

#include "sim/sweep/process_pool.h"

namespace placesim {

void LocalProcesses::run(const std::vector<size_t>& items, int, const Work& work, const OnResult& on_result) {
  run_in_processes(items, jobs_, work, on_result);
}

std::string LocalProcesses::description() const { return std::to_string(jobs_) + " processes"; }

}  // namespace placesim
