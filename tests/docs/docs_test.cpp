// The documentation cannot drift from the code (issue 24):
// - every complete ```json example of README.md and docs/*.md (a scenario, model, cluster, device
//   profile or plan) passes `placesim check`, written under the file name the text gives it;
// - every "$ placesim check NAME" transcript shows exactly what check prints for that example;
// - every placesim command of their shell blocks runs and exits 0 (a few slow ones left out);
// - every output block that follows a shell block of one `placesim run` shows lines run prints;
// - the key tables of docs/scenario-format.md list exactly the keys the loader accepts, read from
//   the loader's own lists (sim/scenario/scenario_keys.h), not from a copy;
// - a measured number in prose next to a placesim command is checked (the bundled sweep's
//   account) or says when it was measured.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/session/check_file.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/scenario/scenario_keys.h"

namespace placesim {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PLACESIM_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// README.md and every docs/*.md, sorted.
std::vector<fs::path> documents() {
  std::vector<fs::path> files = {kRoot / "README.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin() + 1, files.end());
  return files;
}

struct JsonExample {
  fs::path document;
  size_t line = 0;     ///< of the opening ```json
  std::string name;    ///< the `NAME.json` the text before the block gives it, or ""
  std::string text;
};

/// Every ```json block of `document`, with the last `NAME.json` named in the three lines before it.
std::vector<JsonExample> json_examples(const fs::path& document) {
  std::vector<JsonExample> examples;
  std::istringstream lines(read_text(document));
  std::vector<std::string> before;
  std::string line;
  size_t number = 0;
  const std::regex file_name("`([A-Za-z0-9_.-]+\\.json)`");
  while (std::getline(lines, line)) {
    ++number;
    if (line != "```json") {
      before.push_back(line);
      continue;
    }
    JsonExample example{document, number, "", ""};
    for (size_t i = before.size() >= 3 ? before.size() - 3 : 0; i < before.size(); ++i) {
      for (std::sregex_iterator it(before[i].begin(), before[i].end(), file_name), end; it != end; ++it) {
        example.name = (*it)[1];
      }
    }
    while (std::getline(lines, line) && line != "```") {
      ++number;
      example.text += line + "\n";
    }
    ++number;
    before.clear();
    examples.push_back(example);
  }
  return examples;
}

/// The examples that are whole JSON objects (the others are fragments of one: `"strategy": {...}`).
std::vector<JsonExample> whole_examples() {
  std::vector<JsonExample> whole;
  for (const fs::path& document : documents()) {
    for (JsonExample& example : json_examples(document)) {
      try {
        if (parse_json_text(example.text, example.name).is_object()) whole.push_back(example);
      } catch (const InputError&) {
      }
    }
  }
  return whole;
}

std::string where(const JsonExample& example) {
  return fs::relative(example.document, kRoot).string() + ":" + std::to_string(example.line) +
         (example.name.empty() ? "" : " (" + example.name + ")");
}

class DocsExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("placesim_docs_test_" + std::to_string(::getpid()));
    fs::create_directories(directory_);
    // Checked from their directory, as the transcripts run them (outputs print relative paths).
    previous_directory_ = fs::current_path();
    fs::current_path(directory_);
    // Every example first, so that one may use another by its name (a scenario its model file).
    examples_ = whole_examples();
    for (size_t i = 0; i < examples_.size(); ++i) {
      if (examples_[i].name.empty()) examples_[i].name = "example_" + std::to_string(i) + ".json";
      std::ofstream(examples_[i].name) << examples_[i].text;
    }
  }
  void TearDown() override {
    fs::current_path(previous_directory_);
    fs::remove_all(directory_);
  }

  /// What `placesim check NAME` prints for an example: "NAME: OK: SUMMARY" or "error: ...".
  std::string check(const JsonExample& example) const {
    try {
      return example.name + ": OK: " + check_file(example.name, "auto", catalog_);
    } catch (const InputError& error) {
      return std::string("error: ") + error.what();
    }
  }

  fs::path directory_;
  fs::path previous_directory_;
  std::vector<JsonExample> examples_;
  HardwareCatalog catalog_{kRoot / "hardware_profiles"};
};

TEST_F(DocsExamples, EveryWholeJsonExamplePassesCheck) {
  // Today: 9 in docs/scenario-format.md (minimal, zoo_gpt, tiny_model, from_file, dgx_x4,
  // my_cluster, from_cluster_file, my-gpu, full) and a plan in docs/report-format.md.
  ASSERT_GE(examples_.size(), 10u) << "the extraction found fewer examples than the docs hold";
  std::set<std::string> names;
  for (const JsonExample& example : examples_) {
    SCOPED_TRACE(where(example));
    EXPECT_TRUE(names.insert(example.name).second) << "two examples are called " << example.name;
    const std::string result = check(example);
    EXPECT_EQ(result.rfind(example.name + ": OK: ", 0), 0u) << result;
  }
  EXPECT_TRUE(names.count("full.json")) << "docs/scenario-format.md's complete example was not found";
  EXPECT_TRUE(names.count("minimal.json")) << "docs/scenario-format.md's smallest scenario was not found";
}

// A transcript "$ placesim check NAME" followed by its output line, in a ``` block.
TEST_F(DocsExamples, CheckTranscriptsShowWhatCheckPrints) {
  size_t transcripts = 0;
  const std::regex command(R"(^\$ placesim check ([A-Za-z0-9_.-]+\.json)$)");
  for (const fs::path& document : documents()) {
    std::istringstream lines(read_text(document));
    std::string line;
    size_t number = 0;
    while (std::getline(lines, line)) {
      ++number;
      std::smatch match;
      if (!std::regex_match(line, match, command)) continue;
      std::string printed;
      std::getline(lines, printed);
      auto example = std::find_if(examples_.begin(), examples_.end(), [&](const JsonExample& e) { return e.name == match[1]; });
      if (example == examples_.end()) continue;  // a file the docs do not show
      SCOPED_TRACE(fs::relative(document, kRoot).string() + ":" + std::to_string(number));
      ++transcripts;
      EXPECT_EQ(printed, check(*example));
    }
  }
  EXPECT_GE(transcripts, 2u) << "full.json's and hand_plan.json's transcripts were not found";
}

/// The placesim command lines of a document's shell blocks (```, ```sh, ```bash; a leading "$ "
/// and a trailing "# comment" removed), in order.
std::vector<std::string> documented_commands(const fs::path& document) {
  std::vector<std::string> commands;
  std::istringstream lines(read_text(document));
  std::string line;
  bool in_block = false, in_shell = false;
  const std::regex command(R"(^(\$ )?(\./)?(build/cli/)?placesim( .*)$)");
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      in_shell = !in_block && (line == "```" || line == "```sh" || line == "```bash");
      in_block = !in_block;
      continue;
    }
    std::smatch match;
    if (!in_shell || !std::regex_match(line, match, command)) continue;
    std::string arguments = match[4];
    if (size_t comment = arguments.find("  #"); comment != std::string::npos) arguments.resize(comment);
    commands.push_back(arguments);
  }
  return commands;
}

// Every placesim command of the docs' shell blocks runs and exits 0, from a directory that has the
// bundled folders and the docs' named JSON examples (so `placesim check full.json` finds it), in
// the order each document gives them (docs/real-backend.md calibrates into measured/ and then
// uses it). Left out, and counted: synopses with [optional] parts or a placeholder file
// (model.onnx), and `validate --backend` lines, which time real work for minutes.
TEST_F(DocsExamples, TheDocumentedCommandsRunAndExitZero) {
  for (const char* folder : {"scenarios", "bench", "hardware_profiles", "real_backend", "models"}) {
    fs::create_directory_symlink(kRoot / folder, directory_ / folder);
  }
  size_t ran = 0, left_out = 0;
  for (const fs::path& document : documents()) {
    for (const std::string& arguments : documented_commands(document)) {
      SCOPED_TRACE(fs::relative(document, kRoot).string() + ": placesim" + arguments);
      if (arguments.find('[') != std::string::npos || arguments.find("model.onnx") != std::string::npos ||
          (arguments.find(" validate ") != std::string::npos && arguments.find("--backend") != std::string::npos)) {
        ++left_out;
        continue;
      }
      const std::string command = "cd '" + directory_.string() + "' && '" + PLACESIM_BINARY + "'" + arguments +
                                  " >output.txt 2>&1 </dev/null";
      const int status = std::system(command.c_str());
      ++ran;
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_text(directory_ / "output.txt");
    }
  }
  // Today: 15 run (README's two runs, the sweeps, converge, the ONNX exports, the real backend's
  // calibrate, run, execute and compare, report-format's four, scenario-format's check), 4 left out.
  EXPECT_GE(ran, 15u);
  EXPECT_LE(left_out, 4u) << "more documented commands are left out than the four known";
}

struct RunTranscript {
  fs::path document;
  size_t line = 0;                  ///< of the shell block's command
  std::string arguments;            ///< after "placesim"
  std::vector<std::string> output;  ///< the next block's lines, "..." (elided) and blank ones dropped
};

/// A shell block holding one `placesim run ...` command followed (blank lines apart) by a ```,
/// ```text or ```console block: what the document says that command prints.
std::vector<RunTranscript> run_transcripts(const fs::path& document) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(document));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::regex command(R"(^(\$ )?(\./)?(build/cli/)?placesim( run .*)$)");
  std::vector<RunTranscript> transcripts;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "```sh" && lines[i] != "```bash") continue;
    size_t end = i + 1;
    std::vector<std::pair<size_t, std::string>> commands;
    for (; end < lines.size() && lines[end].rfind("```", 0) != 0; ++end) {
      std::smatch match;
      if (std::regex_match(lines[end], match, command)) commands.emplace_back(end + 1, match[4]);
    }
    size_t next = end + 1;
    while (next < lines.size() && lines[next].empty()) ++next;
    if (commands.size() != 1 || next >= lines.size() ||
        (lines[next] != "```" && lines[next] != "```text" && lines[next] != "```console")) {
      i = end;
      continue;
    }
    RunTranscript transcript{document, commands[0].first, commands[0].second, {}};
    for (size_t k = next + 1; k < lines.size() && lines[k].rfind("```", 0) != 0; ++k) {
      if (!lines[k].empty() && lines[k] != "...") transcript.output.push_back(lines[k]);
    }
    transcripts.push_back(std::move(transcript));
    i = next;
  }
  return transcripts;
}

// Numbers quoted as a command's output cannot drift: each line of a `placesim run` transcript
// (all but "..." elisions) is a line that run prints today, from the repository's root.
TEST(DocsTranscripts, RunTranscriptsShowLinesRunPrints) {
  size_t checked = 0;
  for (const fs::path& document : documents()) {
    for (const RunTranscript& transcript : run_transcripts(document)) {
      SCOPED_TRACE(fs::relative(document, kRoot).string() + ":" + std::to_string(transcript.line) + ": placesim" +
                   transcript.arguments);
      const fs::path output = fs::temp_directory_path() / ("placesim_transcript_" + std::to_string(::getpid()));
      const std::string command = "cd '" + kRoot.string() + "' && '" + PLACESIM_BINARY + "'" + transcript.arguments +
                                  " >'" + output.string() + "' 2>&1 </dev/null";
      const int status = std::system(command.c_str());
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      std::set<std::string> printed;
      std::istringstream lines(read_text(output));
      for (std::string line; std::getline(lines, line);) printed.insert(line);
      fs::remove(output);
      for (const std::string& line : transcript.output) EXPECT_TRUE(printed.count(line)) << "not printed: " << line;
      ++checked;
    }
  }
  // Today: docs/llm-planning.md's interleaved 1F1B table.
  EXPECT_GE(checked, 1u);
}

/// `number` with a comma between each group of three digits (31604 -> "31,604"), as the docs write it.
std::string with_thousands(const std::string& number) {
  std::string grouped;
  for (size_t i = 0; i < number.size(); ++i) {
    if (i > 0 && (number.size() - i) % 3 == 0) grouped += ',';
    grouped += number[i];
  }
  return grouped;
}

// Prose numbers next to a command cannot drift either: docs/capacity-planning.md's account of
// the bundled sweep (its recommendation's configuration, samples/s and cost to train, and the
// analytical vs simulated step of each re-checked configuration) is what `placesim sweep` writes
// today in summary.md. (It had drifted for two days before this test.)
TEST(DocsProse, TheBundledSweepsRecommendationIsWhatSweepWrites) {
  const fs::path output = fs::temp_directory_path() / ("placesim_sweep_doc_" + std::to_string(::getpid()));
  const std::string command = "cd '" + kRoot.string() + "' && '" + PLACESIM_BINARY +
                              "' sweep scenarios/sweep_resnet50_capacity.json -j 1 -o '" + output.string() +
                              "' >/dev/null 2>&1 </dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string summary = read_text(output / "summary.md");
  fs::remove_all(output);
  const std::string document = read_text(kRoot / "docs/capacity-planning.md");
  std::smatch match;
  const std::regex recommendation(R"(\nconfiguration (\d+) \(.*? for \$([0-9.]+) \((\d+) samples/s at \$([0-9.]+)/h)");
  ASSERT_TRUE(std::regex_search(summary, match, recommendation)) << summary;
  EXPECT_NE(document.find("configuration " + match[1].str() + ","), std::string::npos) << match[1];
  EXPECT_NE(document.find(with_thousands(match[3].str()) + " samples/s (simulated)"), std::string::npos) << match[3];
  EXPECT_NE(document.find("for $" + match[2].str() + " at $" + match[4].str() + "/h"), std::string::npos)
      << match[2] << " " << match[4];
  const size_t table = summary.find("## Analytical tier vs simulation");
  ASSERT_NE(table, std::string::npos) << summary;
  const std::string rows = summary.substr(table);
  const std::regex steps(R"(\| ([0-9.]+ ms) \| ([0-9.]+ ms) \|)");
  size_t checked = 0;
  for (std::sregex_iterator it(rows.begin(), rows.end(), steps), end; it != end; ++it) {
    const std::string pair = "| " + (*it)[1].str() + " | " + (*it)[2].str() + " |";
    EXPECT_NE(document.find(pair), std::string::npos) << "not in docs/capacity-planning.md: " << pair;
    ++checked;
  }
  EXPECT_GE(checked, 4u) << rows;  // fidelity analytical+recheck 4: the best four, re-checked again when they reorder
}

/// A paragraph of prose (outside code blocks and tables) with the line it starts on and whether
/// it or its nearest heading carries a date.
struct ProseParagraph {
  size_t line = 0;
  std::string text;
  bool dated = false;
};

std::vector<ProseParagraph> prose_paragraphs(const std::string& document) {
  static const std::regex kDate(R"(20\d\d-\d\d-\d\d)");
  std::vector<ProseParagraph> paragraphs;
  ProseParagraph current;
  bool in_code = false, heading_dated = false;
  auto close = [&] {
    current.dated = current.dated || std::regex_search(current.text, kDate);
    if (!current.text.empty() && current.text[0] != '|') paragraphs.push_back(current);
    current = ProseParagraph{};
  };
  std::istringstream lines(document);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      close();
      in_code = !in_code;
      continue;
    }
    if (in_code) continue;
    if (line.rfind("#", 0) == 0) {
      close();
      heading_dated = std::regex_search(line, kDate);
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) {
      close();
      continue;
    }
    if (current.text.empty()) {
      current.line = number;
      current.dated = heading_dated;
    } else {
      current.text += ' ';
    }
    current.text += line;
  }
  close();
  return paragraphs;
}

// The other way prose numbers cannot drift (issue 24): a time, a percentage or a throughput
// quoted in a paragraph that names a placesim command is either checked by a test (the
// transcripts, the bundled sweep above, StepValidation's figures) or says when it was measured:
// a date in the paragraph or in its section's heading. Not a measurement, and so exempt: the
// zoo's test tolerances, the loader's limits, and the tail of a dated paragraph that a table cut.
TEST(DocsProse, MeasuredNumbersNextToACommandSayWhenTheyWereMeasured) {
  static const std::regex kMeasured(R"(\b\d[\d,.]*\s?(ms|us|µs|s\b|%|samples/s|TFLOP/s))");
  const std::vector<std::pair<std::string, std::string>> exempt = {
      {"model-graphs.md", "\"GMACs\" counts the multiply-accumulates"},
      {"reliability.md", "- The scenario loader estimates each strategy's plan"},
      {"reliability.md", "(`cluster_builder.cpp`: 27.3 s at `-O1`"}};
  size_t paragraphs = 0;
  for (const fs::path& document : documents()) {
    for (const ProseParagraph& paragraph : prose_paragraphs(read_text(document))) {
      if (paragraph.text.find("placesim") == std::string::npos) continue;
      if (!std::regex_search(paragraph.text, kMeasured)) continue;
      ++paragraphs;
      if (paragraph.dated) continue;
      const bool exempted = std::any_of(exempt.begin(), exempt.end(), [&](const auto& entry) {
        return document.filename() == entry.first && paragraph.text.rfind(entry.second, 0) == 0;
      });
      if (!exempted) {
        ADD_FAILURE() << document.filename().string() << ":" << paragraph.line
                      << ": a measured number next to a placesim command, with no date in the paragraph or its "
                         "heading: "
                      << paragraph.text.substr(0, 160);
      }
    }
  }
  EXPECT_GT(paragraphs, 40u);  // the check sees the docs' measurements (57 on 2026-12-03), not an empty set
}

/// The keys in the first column of the first table after the heading `heading` of `document`.
std::vector<std::string> table_keys(const std::string& document, const std::string& heading) {
  size_t at = document.find("\n" + heading + "\n");
  if (at == std::string::npos) return {};
  std::istringstream lines(document.substr(at + heading.size() + 2));
  std::vector<std::string> keys;
  std::string line;
  bool in_table = false;
  const std::regex row(R"(^\| `([A-Za-z_][A-Za-z0-9_]*)` \|)");  // a key may hold digits: fp32_gradients
  while (std::getline(lines, line)) {
    if (line.rfind("#", 0) == 0) break;  // the next section
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    std::smatch match;
    if (std::regex_search(line, match, row)) keys.push_back(match[1]);
  }
  return keys;
}

std::vector<std::string> sorted(std::vector<std::string> words) {
  std::sort(words.begin(), words.end());
  return words;
}

TEST(ScenarioFormatDoc, EachKeyTableListsExactlyTheKeysTheLoaderAccepts) {
  const std::string doc = read_text(kRoot / "docs" / "scenario-format.md");
  const std::vector<std::pair<std::string, std::vector<std::string>>> tables = {
      {"## Top level", scenario_keys::kTopLevel}, {"## strategy", scenario_keys::kStrategy},
      {"## run", scenario_keys::kRun},            {"## simulation", scenario_keys::kSimulation},
      {"## outputs", scenario_keys::kOutputs},    {"## published", scenario_keys::kPublished},
      {"## strategy.data_parallel", scenario_keys::kDataParallel},
      {"## Data, tensor and pipeline parallelism", scenario_keys::kParallelism},
  };
  for (const auto& [heading, keys] : tables) {
    SCOPED_TRACE(heading);
    EXPECT_EQ(sorted(table_keys(doc, heading)), sorted(keys));
  }
}

TEST(ScenarioFormatDoc, PublishedConfidenceListsTheValuesTheLoaderAccepts) {
  const std::string doc = read_text(kRoot / "docs" / "scenario-format.md");
  size_t section = doc.find("\n## published\n");
  ASSERT_NE(section, std::string::npos);
  size_t row = doc.find("| `confidence` |", section);
  ASSERT_NE(row, std::string::npos);
  const std::string line = doc.substr(row, doc.find('\n', row) - row);
  for (const std::string& value : scenario_keys::kConfidence) {
    EXPECT_NE(line.find("`\"" + value + "\"`"), std::string::npos) << value << " missing from: " << line;
  }
}

}  // namespace
}  // namespace placesim
