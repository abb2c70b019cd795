#include "sim/cluster/transport_json.h"

namespace placesim {

Json write_transport_json(const Transport& transport) {
  return {{"id", transport.id},
          {"stream_bytes_per_second", transport.stream_bytes_per_second},
          {"wire_efficiency", transport.wire_efficiency},
          {"link_rate_share", transport.link_rate_share},
          {"host_seconds_per_message", transport.host_seconds_per_message},
          {"host_copies_per_side", transport.host_copies_per_side},
          {"gpu_compute_share", transport.gpu_compute_share},
          {"source", transport.source}};
}

Transport read_transport_json(const JsonReader& reader) {
  reader.reject_unknown_keys({"id", "stream_bytes_per_second", "wire_efficiency", "link_rate_share", "host_seconds_per_message",
                              "host_copies_per_side", "gpu_compute_share", "source"});
  Transport transport;
  transport.id = reader.string_at("id");
  if (transport.id.empty()) reader.at("id").fail("a transport needs a non-empty id");
  if (auto bundled = find_transport(transport.id)) transport = *bundled;
  if (auto rate = reader.find("stream_bytes_per_second")) {
    transport.stream_bytes_per_second = rate->at_most(rate->as_non_negative_number(), 1e15);
  }
  if (auto efficiency = reader.find("wire_efficiency")) {
    transport.wire_efficiency = efficiency->at_most(efficiency->as_positive_number(), 1.0);
  }
  if (auto share = reader.find("link_rate_share")) {
    transport.link_rate_share = share->at_most(share->as_positive_number(), 1.0);
  }
  if (auto seconds = reader.find("host_seconds_per_message")) {
    transport.host_seconds_per_message = seconds->at_most(seconds->as_non_negative_number(), 10.0);
  }
  transport.host_copies_per_side =
      static_cast<int>(reader.integer_or("host_copies_per_side", transport.host_copies_per_side, 0, 16));
  if (auto share = reader.find("gpu_compute_share")) {
    transport.gpu_compute_share = share->at_most(share->as_non_negative_number(), 0.95);
  }
  transport.source = reader.string_or("source", transport.source.empty() ? reader.file() : transport.source);
  return transport;
}

}  // namespace placesim
