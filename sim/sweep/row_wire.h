// The rows a sweep worker (a forked process or an MPI rank) sends back to the parent, in a
// compact binary form decoded bit for bit: parsing one JSON line per row took 3% of the search's
// CPU in the parent while the workers wanted every core (docs/performance.md, session 38).
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/sweep_row.h"

namespace placesim {

/// `rows` as bytes: a tag, the row count, then each row's fields (integers little-endian,
/// doubles as their IEEE-754 bits, the reason length-prefixed). What row_json writes, no more.
std::string encode_rows(const std::vector<SweepRow>& rows);

/// The rows encode_rows wrote, equal field for field. Throws std::runtime_error ("malformed
/// sweep result: ...") on anything else: a wrong tag, a short or over-long buffer, an unknown
/// tier or status.
std::vector<SweepRow> decode_rows(const std::string& bytes);

}  // namespace placesim
