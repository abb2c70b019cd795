// A specification that cannot be planned on its graph and cluster (a pipeline stage that gets no
// op, a tensor group that does not divide a layer's heads, no device with room for an op): what
// the planners and placers throw. It names the option at fault in the specification's own terms;
// the code that read the specification says where the user wrote it (the scenario loader: a JSON
// path, sim/scenario/spec_error_location.h). Planners never speak the input file's language.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace placesim {

class SpecError : public std::runtime_error {
 public:
  enum class Scope {
    kStrategy,  ///< `option`: a key path in the strategy ("parallelism/tensor", "placement/auto",
                ///< "placement/rules/2/device")
    kRun,       ///< `option`: a key path in the run or simulation options ("simulation/symmetry")
    kOpDevice,  ///< op `op`'s own requested device, from the model
  };

  static SpecError strategy(std::string option, const std::string& message) {
    return SpecError(Scope::kStrategy, std::move(option), 0, message);
  }
  static SpecError run(std::string option, const std::string& message) {
    return SpecError(Scope::kRun, std::move(option), 0, message);
  }
  static SpecError op_device(std::size_t op, const std::string& message) { return SpecError(Scope::kOpDevice, "", op, message); }

  Scope scope() const { return scope_; }
  const std::string& option() const { return option_; }
  std::size_t op() const { return op_; }  ///< an OpId
  const std::string& message() const { return message_; }

 private:
  SpecError(Scope scope, std::string option, std::size_t op, const std::string& message)
      : std::runtime_error((option.empty() ? std::string() : option + ": ") + message),
        scope_(scope),
        option_(std::move(option)),
        op_(op),
        message_(message) {}

  Scope scope_;
  std::string option_;
  std::size_t op_ = 0;
  std::string message_;
};

}  // namespace placesim
