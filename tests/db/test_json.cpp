// common/json: the export format's reader and writer.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

#include "common/json.hpp"

namespace tunedreduce {
namespace {

TEST(Json, RoundTripsEveryKindOfValue) {
  Json o = Json::object();
  o.set("null", Json());
  o.set("t", true);
  o.set("int", std::int64_t{-9007199254740993});
  o.set("big", std::int64_t{1} << 62);
  o.set("pi", 3.141592653589793);
  o.set("tiny", 5e-324);
  o.set("two", 2.0);
  o.set("s",
        "quote \" backslash \\ newline \n tab \t nul-free \x01 <script> \xc3\xa9 \xf0\x9f\x9a\x80");
  Json a = Json::array();
  a.push_back(1);
  a.push_back(Json::object());
  a.push_back(Json::array());
  o.set("a", a);
  for (int indent : {-1, 0, 2}) {
    Json back = Json::parse(o.dump(indent));
    EXPECT_EQ(back, o) << o.dump(indent);
  }
  EXPECT_TRUE(Json::parse(o.dump()).find("two")->is_number());
  EXPECT_FALSE(Json::parse(o.dump()).find("two")->is_int());
}

TEST(Json, ParsesEscapesAndSurrogatePairs) {
  Json v = Json::parse(R"(["\u00e9\ud83d\ude80\/\b\f", 1e2, -0.5, 12345678901234567890])");
  EXPECT_EQ(v.as_array()[0].as_string(), "\xc3\xa9\xf0\x9f\x9a\x80/\b\f");
  EXPECT_DOUBLE_EQ(v.as_array()[1].as_double(), 100.0);
  EXPECT_DOUBLE_EQ(v.as_array()[2].as_double(), -0.5);
  EXPECT_FALSE(v.as_array()[3].is_int());  // beyond int64: a double
}

TEST(Json, RejectsMalformedInputWithAPosition) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "\"\\x\"", "\"\n\"", "tru",
                          "{\"a\":1 \"b\":2}", "[1] 2", "\"\\ud800\"", "{\"k\":1,\"k\":2}"}) {
    EXPECT_THROW(Json::parse(bad), std::runtime_error) << bad;
  }
  try {
    Json::parse("{\n  \"a\": [1,\n  2,,\n]}");
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 4), "3:5:") << e.what();
  }
}

TEST(Json, NonFiniteDoublesBecomeNull) {
  Json a = Json::array();
  a.push_back(std::nan(""));
  EXPECT_EQ(a.dump(), "[null]");
}

// The parser is linear in the members of one object: 300,000 members (about 4 MB) took minutes
// when each member was looked up among the ones before it; a duplicate is still refused.
TEST(Json, AnObjectOfManyMembersParsesInLinearTime) {
  std::string text = "{";
  constexpr int members = 300000;
  for (int i = 0; i < members; ++i) {
    if (i) text += ',';
    text += "\"k" + std::to_string(i) + "\":" + std::to_string(i);
  }
  text += '}';
  const auto start = std::chrono::steady_clock::now();
  const Json j = Json::parse(text);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(j.as_object().size(), static_cast<std::size_t>(members));
  EXPECT_EQ(j.as_object().back().first, "k299999");
  EXPECT_LT(s, 20.0);
  text.back() = ',';
  text += "\"k17\":1}";
  EXPECT_THROW(Json::parse(text), std::runtime_error);
}

}  // namespace
}  // namespace tunedreduce
