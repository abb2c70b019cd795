// What placesim reads and writes when the files around it are hostile or odd (issue 23): outputs
// never follow or replace a link, device or FIFO; a planted temporary name is never followed;
// inputs are refused up front when they are not regular files or too large; JSON with a key twice
// is refused; messages cannot carry control bytes or grow without bound; values of any size format
// without being cut. Special files are made by the test (mkfifo, symlink) in a temp directory.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/core/units_format.h"
#include "sim/sweep/result_store.h"
#include "sim/sweep/sweep_format.h"

namespace placesim {
namespace {

namespace fs = std::filesystem;

class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = (fs::temp_directory_path() / "placesim_safety_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDirectory() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

size_t entries_in(const fs::path& directory) {
  size_t count = 0;
  for (auto it = fs::directory_iterator(directory); it != fs::directory_iterator(); ++it) ++count;
  return count;
}

TEST(AtomicFile, RefusesToReplaceASymbolicLinkAndLeavesItsTargetAlone) {
  TempDirectory dir;
  write_text(dir.path() / "victim", "precious\n");
  fs::create_symlink(dir.path() / "victim", dir.path() / "report.json");
  std::string error = error_of([&] { write_file_atomically(dir.path() / "report.json", "{}\n"); });
  EXPECT_NE(error.find("report.json: is a symbolic link, not a regular file: refusing to replace it"), std::string::npos)
      << error;
  EXPECT_TRUE(fs::is_symlink(dir.path() / "report.json"));
  EXPECT_EQ(read_text(dir.path() / "victim"), "precious\n");
  EXPECT_EQ(entries_in(dir.path()), 2u) << "no temporary file is left";
}

TEST(AtomicFile, RefusesAFifoAndADirectory) {
  TempDirectory dir;
  ASSERT_EQ(::mkfifo((dir.path() / "pipe").c_str(), 0600), 0);
  fs::create_directory(dir.path() / "folder");
  EXPECT_NE(error_of([&] { write_file_atomically(dir.path() / "pipe", "x"); }).find("is a named pipe (FIFO)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { write_file_atomically(dir.path() / "folder", "x"); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(output_path_problem(dir.path() / "pipe").find("refusing to replace it"), std::string::npos);
  EXPECT_EQ(output_path_problem(dir.path() / "new.json"), "");
  EXPECT_EQ(output_path_problem("-"), "");
  EXPECT_EQ(output_path_problem("/dev/stdout"), "");
}

TEST(AtomicFile, NeverFollowsALinkPlantedAtTheOldPredictableTemporaryName) {
  // Before issue 23 the temporary was NAME.tmpPID, opened with truncation: a link planted there
  // sent the output to any file the user can write. The name now has a counter and is opened
  // O_EXCL | O_NOFOLLOW; a planted link at the old name is neither followed nor removed.
  TempDirectory dir;
  write_text(dir.path() / "victim", "precious\n");
  fs::path planted = dir.path() / ("out.json.tmp" + std::to_string(::getpid()));
  fs::create_symlink(dir.path() / "victim", planted);
  write_file_atomically(dir.path() / "out.json", "{\"ok\": true}\n");
  EXPECT_EQ(read_text(dir.path() / "out.json"), "{\"ok\": true}\n");
  EXPECT_EQ(read_text(dir.path() / "victim"), "precious\n");
  EXPECT_TRUE(fs::is_symlink(planted));
}

TEST(AtomicFile, ReadOnlyDirectoryNamesThePathAndTheReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TempDirectory dir;
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  std::string error = error_of([&] { write_file_atomically(dir.path() / "report.json", "{}\n"); });
  EXPECT_NE(error.find("report.json: cannot write the file: cannot write into directory"), std::string::npos) << error;
  EXPECT_NE(error.find("Permission denied"), std::string::npos) << error;
  EXPECT_EQ(error.find("does the directory exist"), std::string::npos) << error;
}

TEST(AtomicFile, RemovesOnlyTheTemporariesOfWritersThatAreGone) {
  TempDirectory dir;
  // PIDs above the kernel's pid_max (4194304 at most) belong to no process.
  write_text(dir.path() / "results.csv.tmp99999999.1", "cut sho");
  write_text(dir.path() / "results.csv.tmp99999998", "older naming");
  write_text(dir.path() / ("results.csv.tmp" + std::to_string(::getppid()) + ".1"), "a live writer's");
  write_text(dir.path() / "results.csv.tmpfoo", "not ours");
  EXPECT_EQ(remove_stale_temporaries(dir.path() / "results.csv"), 2u);
  EXPECT_FALSE(fs::exists(dir.path() / "results.csv.tmp99999999.1"));
  EXPECT_FALSE(fs::exists(dir.path() / "results.csv.tmp99999998"));
  EXPECT_EQ(entries_in(dir.path()), 2u);
}

TEST(ResultStoreAppend, AFullDiskNamesTheReasonAndKeepsNoPartialLine) {
  // A file-size limit stands in for a full disk: write() fails with EFBIG past it (SIGXFSZ ignored).
  TempDirectory dir;
  fs::path path = dir.path() / "results.jsonl";
  ResultStore store(path, "fingerprint");
  size_t header_bytes = fs::file_size(path);
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit previous;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  struct rlimit limit = previous;
  limit.rlim_cur = header_bytes + 300;  // room for one row and part of the next
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string error;
  SweepRow row;
  for (size_t i = 0; i < 10 && error.empty(); ++i) {
    row.index = i;
    row.reason = std::string(150, 'r');
    error = error_of([&] { store.append(row); });
  }
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_NE(error.find("results.jsonl: cannot append a result: File too large"), std::string::npos) << error;
  std::string text = read_text(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "a partial line was kept";
  EXPECT_LE(text.size(), header_bytes + 300);
}

TEST(ResultStoreAppend, AGroupThatCannotBeWrittenWholeKeepsNoneOfItsRows) {
  TempDirectory dir;
  fs::path path = dir.path() / "results.jsonl";
  ResultStore store(path, "fingerprint");
  SweepRow first;
  first.reason = std::string(150, 'r');
  store.append(first);
  const size_t kept_bytes = fs::file_size(path);
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit previous;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  struct rlimit limit = previous;
  limit.rlim_cur = kept_bytes + 300;  // room for one more row of the group and part of the next
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::vector<SweepRow> group(3, first);
  for (size_t i = 0; i < group.size(); ++i) group[i].index = i + 1;
  std::string error = error_of([&] { store.append(group); });
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_NE(error.find("results.jsonl: cannot append a result: File too large"), std::string::npos) << error;
  EXPECT_EQ(fs::file_size(path), kept_bytes) << "a row of the group, or part of one, was kept";
  EXPECT_EQ(store.rows().size(), 1u);
  EXPECT_FALSE(store.has(1, Tier::kAnalytical));
}

TEST(InputFile, RefusesAFifoWithoutBlockingAndADevice) {
  TempDirectory dir;
  fs::path pipe = dir.path() / "scenario.json";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);  // no writer: a plain open for reading would block forever
  auto start = std::chrono::steady_clock::now();
  std::string error = error_of([&] { parse_json_file(pipe); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(error.find("scenario.json: is a named pipe (FIFO), not a regular file"), std::string::npos) << error;
  // /dev/null: harmless to stat, and a character device like /dev/zero (which grew past 4 GB).
  EXPECT_NE(error_of([] { parse_json_file("/dev/null"); }).find("/dev/null: is a character device"), std::string::npos);
}

TEST(InputFile, ReportsALinkLoopAndADanglingLink) {
  TempDirectory dir;
  fs::create_symlink(dir.path() / "b.json", dir.path() / "a.json");
  fs::create_symlink(dir.path() / "a.json", dir.path() / "b.json");
  fs::create_symlink(dir.path() / "missing.json", dir.path() / "dangling.json");
  EXPECT_NE(error_of([&] { parse_json_file(dir.path() / "a.json"); }).find("is a symbolic link loop"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_json_file(dir.path() / "dangling.json"); }).find("is a symbolic link to a missing file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_json_file(dir.path() / "none.json"); }).find("none.json: no such file"), std::string::npos);
}

TEST(InputFile, SizeLimitIsCheckedBeforeReadingAndCanBeRaised) {
  TempDirectory dir;
  fs::path file = dir.path() / "big.json";
  write_text(file, "{\"a\": \"" + std::string(1000, 'x') + "\"}");  // 1,009 bytes
  set_input_size_limit(1000);
  std::string error = error_of([&] { parse_json_file(file); });
  EXPECT_NE(error.find("big.json: is 1009 bytes, above the input size limit of 1000 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("--max-input-bytes"), std::string::npos);
  set_input_size_limit(1009);
  EXPECT_EQ(parse_json_file(file)["a"].get<std::string>().size(), 1000u);
  set_input_size_limit(kDefaultInputSizeLimitBytes);
  EXPECT_EQ(kDefaultInputSizeLimitBytes, 268435456u);  // 256 MiB, as documented
}

TEST(JsonText, RefusesADuplicateKeyNamingItsPathAndBothMembers) {
  std::string error = error_of([] {
    parse_json_text(R"({"run": {"steps": 2, "batch_size": 8, "steps": 3}, "list": [{}, {"a": 1}]})", "s.json");
  });
  EXPECT_NE(error.find("s.json: /run/steps: duplicate key \"steps\": /run/steps is member 1 and member 3 of the "
                       "object at /run"),
            std::string::npos)
      << error;
  error = error_of([] { parse_json_text(R"({"x": [0, {"k": 1, "k": 2}]})", "m.json"); });
  EXPECT_NE(error.find("m.json: /x/1/k: duplicate key"), std::string::npos) << error;
  error = error_of([] { parse_json_text(R"({"k": 1, "k": 2})", "t.json"); });
  EXPECT_NE(error.find("t.json: /k: duplicate key \"k\": /k is member 1 and member 2 of the top-level object"),
            std::string::npos)
      << error;
  // Past 32 keys a hash map finds the first one: k5 is member 6, its repeat member 41.
  std::string wide = "{";
  for (int k = 0; k < 40; ++k) wide += "\"k" + std::to_string(k) + "\": " + std::to_string(k) + ", ";
  error = error_of([&] { parse_json_text(wide + "\"k5\": 0}", "w.json"); });
  EXPECT_NE(error.find("w.json: /k5: duplicate key \"k5\": /k5 is member 6 and member 41"), std::string::npos) << error;
  // The same key in different objects is fine.
  EXPECT_EQ(parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})", "ok.json")["c"][1]["k"], 4);
}

TEST(InputErrorText, ControlBytesAreEscapedAndHugeMessagesCut) {
  InputError error("s.json", "/run/\x1b[2J", "unknown key \"\x1b[31mred\x07\"");
  EXPECT_EQ(std::string(error.what()), "s.json: /run/\\x1b[2J: unknown key \"\\x1b[31mred\\x07\"");
  EXPECT_EQ(error.message(), "unknown key \"\\x1b[31mred\\x07\"");
  InputError huge("f", "", std::string(1 << 20, 'k'));
  EXPECT_LT(std::string(huge.what()).size(), InputError::kMaxMessageBytes + 100);
  EXPECT_NE(std::string(huge.what()).find("more bytes not shown"), std::string::npos);
}

TEST(JsonReaderKeys, AHugeUnknownKeyIsNotComparedNorEchoedWhole) {
  // Was 75 s and a 200 MB message for a 100 MB key; the edit distance of a word to a candidate is
  // at least their difference in length, so a word far longer than every candidate is skipped.
  Json document = Json::object();
  document[std::string(10 << 20, 'q')] = 1;  // 10 MiB key
  JsonReader reader(document, "s.json");
  auto start = std::chrono::steady_clock::now();
  std::string error = error_of([&] { reader.reject_unknown_keys({"name", "model", "cluster"}); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(error.find("... (10485760 bytes)"), std::string::npos);
  EXPECT_LT(error.size(), 1000u);
  EXPECT_EQ(did_you_mean(std::string(1 << 20, 'm'), {"model"}), "");
  EXPECT_EQ(did_you_mean("modle", {"model", "name"}), "model");  // suggestions are unchanged
}

TEST(JsonReaderLimits, AtMostNamesTheValueAndTheLimit) {
  Json document = {{"bytes", 1e308}};
  JsonReader reader(document, "p.json");
  JsonReader bytes = reader.at("bytes");
  EXPECT_NE(error_of([&] { bytes.at_most(bytes.as_number(), kMaxPlausibleBytes); })
                .find("p.json: /bytes: value 1e+308 is implausibly large (limit 1e+16)"),
            std::string::npos);
}

TEST(UnitsFormat, AnyFiniteValuePrintsWholeWithItsUnit) {
  // 1e308 bytes: 1e308 / 1024^6 = 8.67e289 EiB; beyond 1024 EiB the bytes print in scientific notation.
  EXPECT_EQ(format_bytes(1e308), "1.000e+308 B");
  EXPECT_EQ(format_bytes(1024.0 * 1024 * 1024 * 1024 * 1024 * 1024), "1.0 EiB");
  EXPECT_EQ(format_bytes(8.0 * 1024 * 1024), "8.0 MiB");  // as before
  EXPECT_EQ(format_seconds(1e308), "1.000e+308 s");
  EXPECT_EQ(format_seconds(12.5), "12.500 s");  // as before
  EXPECT_EQ(format_seconds(0.0015), "1.500 ms");
  EXPECT_EQ(format_bytes(INFINITY), "inf");
  EXPECT_EQ(format_seconds(NAN), "NaN");
  EXPECT_EQ(format_number(1e308, "%.3f").size(), 313u);  // 309 digits, '.', 3 decimals: not cut at 63
  EXPECT_EQ(format_usd(1e300), "$1.000e+300");
  EXPECT_EQ(format_usd(1234567), "$1,234,567");
}

}  // namespace
}  // namespace placesim
