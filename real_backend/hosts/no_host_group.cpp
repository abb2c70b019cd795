// HostGroup in a build without MPI: there is none, so multi-host plans are refused.
#include <cstdlib>

#include "real_backend/hosts/host_group.h"

namespace placesim::real {

HostGroup* host_group() { return nullptr; }

bool built_with_mpi() { return false; }

}  // namespace placesim::real
