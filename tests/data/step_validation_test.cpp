// Each device profile's `step_validation` block (what `run` prints as the profile's published
// step-time error) is what `placesim validate scenarios/validation/` gives today: a model change
// that moves a device's error fails here until the profile says the new figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>

#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/session/published_validation.h"

namespace placesim {
namespace {

void expect_every_profile_states_its_error(const HardwareCatalog& catalog, const std::vector<PublishedCase>& cases) {
  std::map<std::string, std::vector<PublishedCase>> by_profile;  // the absolute figures' (a scaling efficiency is relative)
  for (const PublishedCase& c : absolute_cases(cases)) by_profile[c.device_profile].push_back(c);
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

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// The figures README.md and docs/validation.md quote for the open set are today's: the MAPE on
// README's first screen and in validation.md's "Current result" and `validate` transcript, each
// device profile's line of that transcript (its error and case count), and the scaling table's
// mean and largest difference. A model change that
// moves them fails here until the docs say the new figures.
void expect_the_docs_quote_todays_errors(const std::filesystem::path& root, const std::vector<PublishedCase>& cases) {
  const std::string overall = one_decimal(mean_absolute_percentage_error(cases)) + "% over " +
                              std::to_string(absolute_cases(cases).size()) + " cases";
  const std::string readme = read_input_file(root / "README.md");
  const std::string validation = read_input_file(root / "docs/validation.md");
  EXPECT_NE(readme.find("**" + overall + "**"), std::string::npos) << "README.md should say **" << overall << "**";
  EXPECT_NE(validation.find("MAPE " + overall + "**"), std::string::npos) << "docs/validation.md: MAPE " << overall;
  EXPECT_NE(validation.find("    MAPE: " + overall + "\n"), std::string::npos) << "docs/validation.md: MAPE: " << overall;
  // The scaling table's mean and largest difference, as README and validation.md word them
  // (compared with line breaks read as spaces).
  std::smatch scaling;
  const std::string table = scaling_table(cases);
  ASSERT_TRUE(std::regex_search(table, scaling,
                                std::regex(R"(mean \|difference\| ([0-9.]+) points over (\d+) rows \(largest ([0-9.]+)\))")))
      << table;
  auto one_line = [](std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  };
  const std::string points = scaling[1].str(), rows = scaling[2].str(), largest = scaling[3].str();
  EXPECT_NE(one_line(readme).find("off by " + points + " points on average, " + largest + " at worst"), std::string::npos)
      << "README.md: off by " << points << " points on average, " << largest << " at worst";
  EXPECT_NE(one_line(validation).find("|difference| " + points + " points over " + rows + " rows, largest " + largest),
            std::string::npos)
      << "docs/validation.md: |difference| " << points << " points over " << rows << " rows, largest " << largest;
  std::map<std::string, std::vector<PublishedCase>> by_profile;
  for (const PublishedCase& c : absolute_cases(cases)) by_profile[c.device_profile].push_back(c);
  for (const auto& [profile, its_cases] : by_profile) {
    const std::regex line("\\n +" + profile + " +" + std::regex_replace(one_decimal(mean_absolute_percentage_error(its_cases)),
                                                                       std::regex("\\."), "\\.") +
                          "% over +" + std::to_string(its_cases.size()) + " cases ");
    EXPECT_TRUE(std::regex_search(validation, line))
        << "docs/validation.md's validate transcript: " << profile << " "
        << one_decimal(mean_absolute_percentage_error(its_cases)) << "% over " << its_cases.size() << " cases";
  }
}

// One validation of the open set (the suite's slowest computation) serves both checks.
TEST(StepValidation, ProfilesAndDocsStateTodaysErrorsOnTheOpenValidationSet) {
  const std::filesystem::path root(PLACESIM_SOURCE_DIR);
  const HardwareCatalog catalog(root / "hardware_profiles");
  const std::vector<PublishedCase> cases = validate_published({(root / "scenarios/validation").string()}, catalog, false);
  ASSERT_FALSE(cases.empty());
  {
    SCOPED_TRACE("each device profile's step_validation block");
    expect_every_profile_states_its_error(catalog, cases);
  }
  {
    SCOPED_TRACE("README.md and docs/validation.md");
    expect_the_docs_quote_todays_errors(root, cases);
  }
}

}  // namespace
}  // namespace placesim
