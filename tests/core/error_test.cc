#include "relay/error.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

TEST(ErrorTest, SummaryWithoutSpanIsPlainError) {
  Error error(ErrorKind::kRuntime, "shape mismatch");
  EXPECT_STREQ(error.what(), "error: shape mismatch");
  EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
  EXPECT_EQ(error.message(), "shape mismatch");
}

TEST(ErrorTest, FileOnlySpanNamesTheFile) {
  Error error(ErrorKind::kLoad, "truncated data", SourceSpan{"weights.npy"});
  EXPECT_STREQ(error.what(), "weights.npy: error: truncated data");
}

TEST(ErrorTest, SpanWithLineAndColumn) {
  Error error(ErrorKind::kType, "mismatch", SourceSpan{"model.relay", 3, 14});
  EXPECT_STREQ(error.what(), "model.relay:3:14: error: mismatch");
}

TEST(ErrorTest, FormatShowsSourceLineAndCaret) {
  Error error(ErrorKind::kParse, "expected ')'", SourceSpan{"a.relay", 2, 5, 2, 8});
  std::string text = "first line\n  %x + %y\nthird\n";
  EXPECT_EQ(error.Format(text), "a.relay:2:5: error: expected ')'\n  %x + %y\n    ^~~");
}

TEST(ErrorTest, FormatKeepsTabsAlignedUnderCaret) {
  Error error(ErrorKind::kParse, "bad", SourceSpan{"t.relay", 1, 3});
  EXPECT_EQ(error.Format("\tab"), "t.relay:1:3: error: bad\n\tab\n\t ^");
}

TEST(ErrorTest, FormatWithoutSourceIsTheSummaryPlusBacktrace) {
  Error error(ErrorKind::kRuntime, "non-exhaustive match", SourceSpan{"m.relay", 7, 3},
              {"@helper (m.relay:7:3)", "@main (m.relay:12:1)"});
  EXPECT_EQ(error.Format(),
            "m.relay:7:3: error: non-exhaustive match\n"
            "  at @helper (m.relay:7:3)\n"
            "  at @main (m.relay:12:1)");
}

TEST(ErrorTest, SpanPastEndOfSourcePrintsOnlySummary) {
  Error error(ErrorKind::kParse, "unexpected end", SourceSpan{"s.relay", 9, 4});
  EXPECT_EQ(error.Format("one line\n"), "s.relay:9:4: error: unexpected end");
}

TEST(ErrorTest, InternalErrorsSayTheyAreBugs) {
  try {
    RELAY_CHECK(1 + 1 == 3, "arithmetic broke");
    FAIL() << "RELAY_CHECK did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    std::string what = error.what();
    EXPECT_EQ(what.rfind("internal error: arithmetic broke", 0), 0u) << what;
    EXPECT_NE(what.find("1 + 1 == 3"), std::string::npos);
    EXPECT_NE(what.find("bug in relay-vm"), std::string::npos);
  }
}

TEST(ErrorTest, KindNames) {
  EXPECT_EQ(ErrorKindName(ErrorKind::kParse), "parse");
  EXPECT_EQ(ErrorKindName(ErrorKind::kDevice), "device");
  EXPECT_EQ(ErrorKindName(ErrorKind::kInternal), "internal");
}

}  // namespace
}  // namespace relay
