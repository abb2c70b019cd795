// Each device profile's `step_validation` block (what `run` prints as the profile's published
// step-time error) is what `placesim validate scenarios/validation/` gives today: a model change
// that moves a device's error fails here until the profile says the new figure.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "sim/cluster/hardware_catalog.h"
#include "sim/session/published_validation.h"

namespace placesim {
namespace {

TEST(StepValidation, EveryProfileStatesItsErrorOnTheOpenValidationSet) {
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const std::vector<PublishedCase> cases =
      validate_published({std::string(PLACESIM_SOURCE_DIR) + "/scenarios/validation"}, catalog, false);
  std::map<std::string, std::vector<PublishedCase>> by_profile;
  for (const PublishedCase& c : cases) by_profile[c.device_profile].push_back(c);
  const JsonReader nowhere(Json::object(), "test");
  for (const std::string& id : catalog.device_ids()) {
    SCOPED_TRACE("hardware_profiles/devices/" + id + ".json");
    const DeviceSpec& spec = catalog.device(id, nowhere);
    auto found = by_profile.find(id);
    if (found == by_profile.end()) {
      EXPECT_FALSE(spec.step_validation) << "no published case uses this profile: remove its step_validation";
      continue;
    }
    const double mape = mean_absolute_percentage_error(found->second);
    if (!spec.step_validation) {
      ADD_FAILURE() << "add \"step_validation\": {\"cases\": " << found->second.size() << ", \"mape_percent\": "
                    << std::round(mape * 100) / 100 << ", \"date\": ...}";
      continue;
    }
    EXPECT_EQ(spec.step_validation->cases, static_cast<int64_t>(found->second.size()));
    EXPECT_NEAR(spec.step_validation->mape_percent, mape, 0.05) << "today: " << mape;
  }
}

}  // namespace
}  // namespace placesim
