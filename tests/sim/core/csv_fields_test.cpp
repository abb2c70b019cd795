// CSV cells of placesim's outputs: what a spreadsheet would run as a formula gets a leading '
// (OWASP, "CSV Injection"), plain numbers stay numbers, and RFC 4180 quoting.
#include <gtest/gtest.h>

#include "sim/core/csv_fields.h"

namespace placesim {
namespace {

TEST(CsvCell, FormulaStartsAreNeutralised) {
  EXPECT_EQ(csv_cell("=1+2"), "'=1+2");
  EXPECT_EQ(csv_cell("+cmd"), "'+cmd");
  EXPECT_EQ(csv_cell("-cmd"), "'-cmd");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_cell("\t=1"), "'\t=1");
}

TEST(CsvCell, PlainTextAndNumbersStayAsTheyAre) {
  EXPECT_EQ(csv_cell("resnet50"), "resnet50");
  EXPECT_EQ(csv_cell("-2"), "-2");
  EXPECT_EQ(csv_cell("+1.5e3"), "+1.5e3");
  EXPECT_EQ(csv_cell(""), "");
}

TEST(CsvCell, CommasQuotesAndLineBreaksAreQuotedAfterNeutralising) {
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("=HYPERLINK(\"x\",\"y\")"), "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_cell("\r=1"), "\"'\r=1\"");
}

}  // namespace
}  // namespace placesim
