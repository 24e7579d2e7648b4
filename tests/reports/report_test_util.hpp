#pragma once
// Small helpers shared by the report tests.

#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

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

}  // namespace tunedreduce::reports::test
