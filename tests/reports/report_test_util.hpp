#pragma once
// Small helpers shared by the report tests.

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "reports/model.hpp"

namespace tunedreduce::reports::test {

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// RFC 4180: records end with CRLF; fields are plain or quoted ("" for a quote inside).
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '"') {
      ++i;
      while (true) {
        if (i >= text.size()) throw std::runtime_error("unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
        if (text[i] == '"') throw std::runtime_error("quote inside an unquoted field");
        field += text[i++];
      }
    }
    if (i < text.size() && text[i] == ',') {
      record.push_back(std::move(field));
      field.clear();
      ++i;
    } else if (i + 1 < text.size() && text[i] == '\r' && text[i + 1] == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      i += 2;
    } else {
      throw std::runtime_error("bad character after a field at byte " + std::to_string(i));
    }
  }
  if (!record.empty() || !field.empty()) throw std::runtime_error("last record without CRLF");
  return records;
}

/// The index of the column \p id of a section's table (a test failure when there is none).
inline std::size_t col(const Section& s, const std::string& id) {
  for (std::size_t i = 0; i < s.columns.size(); ++i)
    if (s.columns[i].id == id) return i;
  ADD_FAILURE() << "no column " << id;
  return 0;
}

inline const Cell& cell(const Section& s, std::size_t row, const std::string& id) {
  return s.rows.at(row).at(col(s, id));
}

/// A cell's number (a test failure, and NaN, when it holds none).
inline double num(const Cell& c) {
  if (auto* v = std::get_if<double>(&c.value)) return *v;
  if (auto* i = std::get_if<std::int64_t>(&c.value)) return static_cast<double>(*i);
  ADD_FAILURE() << "not a number: '" << c.text << "'";
  return NAN;
}

inline std::string str(const Cell& c) {
  auto* s = std::get_if<std::string>(&c.value);
  return s ? *s : "<not a string: " + c.text + ">";
}

}  // namespace tunedreduce::reports::test
