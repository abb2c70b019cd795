// Every malformed input in tests/bad_inputs/ is rejected the way users are promised: exit status
// 2, one "error: FILE: /json/path: message" line naming the JSON path and the bad value, no crash,
// no internal error, and no output file left behind. The cases are listed in
// tests/bad_inputs/cases.json: {"file", "command" (run | check | simulate | sweep | inspect |
// export-onnx), "path" (the JSON
// pointer the message must name, "" for malformed JSON), "contains" (text the message must
// include), and "error_file" when the error is in a file the input refers to}.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_placesim.h"
#include "sim/graph/onnx/onnx_model.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

const std::filesystem::path kCorpus = std::filesystem::path(PLACESIM_SOURCE_DIR) / "tests" / "bad_inputs";

struct BadInput {
  std::string file;        ///< relative to kCorpus
  std::string command;     ///< run | check | simulate | sweep | inspect | export-onnx
  std::string path;        ///< JSON pointer the message names; "" when the file is not JSON at all
  std::string contains;    ///< text the message must include
  std::string error_file;  ///< the file the message names (default: `file`)
};

void PrintTo(const BadInput& input, std::ostream* out) { *out << input.command << " " << input.file; }

// Read at static-initialization time (the cases become test instances), so a broken cases.json
// must not throw here: it yields no cases and CorpusTest.HasAtLeastFortyCases fails.
std::vector<BadInput> load_cases() {
  std::vector<BadInput> cases;
  try {
    std::ifstream in(kCorpus / "cases.json");
    nlohmann::json list = nlohmann::json::parse(in);
    for (const auto& entry : list) {
      BadInput input{entry.at("file"), entry.at("command"), entry.at("path"), entry.at("contains"), ""};
      input.error_file = entry.value("error_file", input.file);
      cases.push_back(input);
    }
  } catch (const std::exception&) {
    cases.clear();
  }
  return cases;
}

const std::vector<BadInput>& all_cases() {
  static const std::vector<BadInput> cases = load_cases();
  return cases;
}

// "scenario/negative_batch_size.json" -> "scenario_negative_batch_size".
std::string test_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name = info.param.file;
  if (name.size() > 5 && name.substr(name.size() - 5) == ".json") name.resize(name.size() - 5);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, IsReportedWithItsJsonPathAndExitStatus2) {
  const BadInput& input = GetParam();
  if (input.file.find("onnx") != std::string::npos && !onnx_support_available()) {
    GTEST_SKIP() << "built without ONNX support (libonnx-dev)";
  }
  std::vector<std::string> arguments{input.command, input.file};
  std::filesystem::path outputs = make_temp_directory();
  if (input.command == "run" || input.command == "simulate") {
    for (const char* flag : {"report", "trace"}) {
      arguments.push_back(std::string("--") + flag);
      arguments.push_back((outputs / (std::string(flag) + ".json")).string());
    }
  }
  if (input.command == "sweep") {  // docs/capacity-planning.md: nothing is created before the input is valid
    arguments.push_back("-o");
    arguments.push_back((outputs / "sweep").string());
  }
  if (input.command == "export-onnx") {
    arguments.push_back("-o");
    arguments.push_back((outputs / "model.onnx").string());
  }
  auto result = run_placesim(arguments, kCorpus);
  const std::string& output = result.output;
  SCOPED_TRACE("placesim " + input.command + " " + input.file + " printed:\n" + output);

  EXPECT_EQ(result.exit_status, 2);
  // The promised shape: "error: FILE: /json/path: message" (no path for malformed JSON).
  std::string prefix = "error: " + input.error_file + ": ";
  EXPECT_NE(output.find(prefix), std::string::npos) << "expected " << prefix;
  if (!input.path.empty()) {
    EXPECT_NE(output.find(prefix + input.path + ": "), std::string::npos) << "expected the JSON path " << input.path;
  }
  EXPECT_NE(output.find(input.contains), std::string::npos) << "expected the text " << input.contains;
  for (const char* symptom : {"internal error", "terminate", "Aborted", "what():", "Segmentation"}) {
    EXPECT_EQ(output.find(symptom), std::string::npos) << "a crash or internal error: " << symptom;
  }
  EXPECT_TRUE(std::filesystem::is_empty(outputs)) << "a partial output was left in " << outputs;
  std::filesystem::remove_all(outputs);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BadInputTest);
INSTANTIATE_TEST_SUITE_P(Corpus, BadInputTest, ::testing::ValuesIn(all_cases()), test_name);

// `check` reads a scenario's sweep block as `placesim sweep` does: every sweep case of the corpus
// whose fault is in the sweep block is refused by `check` too, at the same JSON path.
TEST(CorpusTest, CheckRefusesTheSweepBlocksSweepRefuses) {
  size_t checked = 0;
  for (const BadInput& input : all_cases()) {
    if (input.command != "sweep" || input.path.rfind("/sweep", 0) != 0) continue;
    SCOPED_TRACE("placesim check " + input.file);
    auto result = run_placesim({"check", input.file}, kCorpus);
    EXPECT_EQ(result.exit_status, 2) << result.output;
    EXPECT_NE(result.output.find("error: " + input.error_file + ": " + input.path + ": "), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find(input.contains), std::string::npos) << result.output;
    ++checked;
  }
  EXPECT_GE(checked, 10u);
}

TEST(CorpusTest, HasAtLeastFortyCases) {
  EXPECT_GE(all_cases().size(), 40u) << "tests/bad_inputs/cases.json is missing, malformed or too short";
}

TEST(CorpusTest, CasesAreWellFormed) {
  std::set<std::string> files;
  for (const auto& input : all_cases()) {
    SCOPED_TRACE(input.file);
    EXPECT_TRUE(files.insert(input.file).second) << "listed twice";
    EXPECT_TRUE(std::filesystem::is_regular_file(kCorpus / input.file));
    EXPECT_TRUE(std::filesystem::is_regular_file(kCorpus / input.error_file));
    EXPECT_TRUE(input.command == "run" || input.command == "check" || input.command == "simulate" ||
                input.command == "sweep" || input.command == "inspect" || input.command == "export-onnx")
        << input.command;
    EXPECT_FALSE(input.contains.empty());
    // Without a JSON path, the message must locate the problem some other way.
    if (input.path.empty()) {
      bool located = input.contains.find("line ") != std::string::npos || input.contains.find("empty") != std::string::npos;
      EXPECT_TRUE(located) << "an error without a JSON path must be checked for its line and column";
    } else {
      EXPECT_EQ(input.path.front(), '/') << "a JSON pointer starts with /";
    }
  }
}

// Nobody adds a bad input without saying what error it must give.
TEST(CorpusTest, EveryFileIsListed) {
  std::set<std::string> listed;
  for (const auto& input : all_cases()) {
    listed.insert(input.file);
    listed.insert(input.error_file);
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kCorpus)) {
    if (!entry.is_regular_file()) continue;
    std::string relative = std::filesystem::relative(entry.path(), kCorpus).generic_string();
    if (relative == "cases.json") continue;
    EXPECT_TRUE(listed.count(relative)) << relative << " is not listed in tests/bad_inputs/cases.json";
  }
}

}  // namespace
}  // namespace placesim
