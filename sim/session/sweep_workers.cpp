#include "sim/session/sweep_workers.h"

namespace placesim {

void LocalProcesses::run(const std::vector<size_t>& items, int tier, const OnResult& on_result) {
  if (!pool_) pool_.emplace(jobs_, work_);
  pool_->run(items, tier, on_result);
}

void LocalProcesses::finish() { pool_.reset(); }

std::string LocalProcesses::description() const { return std::to_string(jobs_) + " processes"; }

}  // namespace placesim
