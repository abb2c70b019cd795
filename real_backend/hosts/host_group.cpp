#include "real_backend/hosts/host_group.h"

#include <cstdlib>

namespace placesim::real {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name)) return true;
  }
  return false;
}

}  // namespace placesim::real
