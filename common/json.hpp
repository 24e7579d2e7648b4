#pragma once
// A small JSON value with a strict parser and a writer: enough for export files and --json
// output. Objects keep their insertion order so that written files are deterministic.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tunedreduce {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // insertion order, unique keys

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<std::int64_t>(i)) {}
  Json(std::int64_t i) : v_(i) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}
  template <class T>
  Json(const std::optional<T>& o) {
    if (o) *this = Json(*o);
  }

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_number() const { return is_int() || std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }

  /// Accessors throw std::runtime_error naming the expected type on a mismatch.
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_double() const;  // ints convert
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;

  /// Object member or nullptr.
  const Json* find(std::string_view key) const;
  /// Appends (or replaces) an object member; *this must be an object.
  Json& set(std::string key, Json value);
  /// Appends to an array; *this must be an array.
  void push_back(Json value);

  /// indent < 0: one line; otherwise pretty-printed with that many spaces. Doubles are written
  /// in the shortest form that reads back to the same value; non-finite doubles as null.
  std::string dump(int indent = -1) const;

  /// Strict RFC 8259 parse of a whole document. Throws std::runtime_error with line:column.
  static Json parse(std::string_view text);

  friend bool operator==(const Json&, const Json&) = default;

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Object> v_;
};

/// Appends \p s to \p out as a JSON string literal (quotes included).
void json_escape(std::string& out, std::string_view s);

}  // namespace tunedreduce
