#pragma once
// One table per enum of the text each enumerator is written as: its name in ids, the database and
// on the command line, or a phrase of a message. The table gives the name of an enumerator, the
// enumerator of a name, and the names that an error message offers or a did-you-mean searches,
// so each enum's names are written once.
//
//   constexpr auto finish_names = enum_names<Finish>({{Finish::two_pass, "two_pass"},
//                                                     {Finish::single_pass, "single_pass"}});
//   finish_names.to_name(Finish::two_pass)       // "two_pass"
//   finish_names.from_name("single_pass")        // Finish::single_pass; nullopt for unknown text
//   finish_names.joined()                        // "two_pass, single_pass"
//
// Where a name function exists already (dtype_name in the public header), enum_names_of builds
// the table from it rather than writing the names again.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunedreduce {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, std::size_t N>
class EnumNames {
 public:
  constexpr explicit EnumNames(const std::array<EnumName<E>, N>& entries) : entries_(entries) {}

  /// The name of \p e; \p unknown for a value the table does not have (an out-of-range cast).
  constexpr const char* to_name(E e, const char* unknown = "?") const noexcept {
    for (const EnumName<E>& x : entries_)
      if (x.value == e) return x.name;
    return unknown;
  }

  /// The enumerator named exactly \p name (case-sensitive), or nullopt.
  constexpr std::optional<E> from_name(std::string_view name) const noexcept {
    for (const EnumName<E>& x : entries_)
      if (name == x.name) return x.value;
    return std::nullopt;
  }

  /// The names in table order, separated by \p sep, the last two by \p last_sep:
  /// "cold, dirty, warm" or, with last_sep " or ", "cold, dirty or warm".
  std::string joined(std::string_view sep = ", ", std::string_view last_sep = {}) const {
    if (last_sep.empty()) last_sep = sep;
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i) out += i + 1 == N ? last_sep : sep;
      out += entries_[i].name;
    }
    return out;
  }

  /// The names in table order (for did-you-mean suggestions and completion word lists).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(N);
    for (const EnumName<E>& x : entries_) out.emplace_back(x.name);
    return out;
  }

  /// The enumerators in table order.
  constexpr std::array<E, N> values() const noexcept {
    std::array<E, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = entries_[i].value;
    return out;
  }

  static constexpr std::size_t size() noexcept { return N; }
  constexpr auto begin() const noexcept { return entries_.begin(); }
  constexpr auto end() const noexcept { return entries_.end(); }

  /// True when the table lists the enumerators 0, 1, ..., \p last in order, each once: the check
  /// a switch's -Wswitch gave, for an enum whose last enumerator is \p last
  /// (static_assert(names.lists_all_through(Kind::coverage))).
  constexpr bool lists_all_through(E last) const noexcept {
    if (static_cast<std::size_t>(last) + 1 != N) return false;
    for (std::size_t i = 0; i < N; ++i)
      if (static_cast<std::size_t>(entries_[i].value) != i) return false;
    return true;
  }

 private:
  std::array<EnumName<E>, N> entries_;
};

/// The table of \p entries, written as a braced list: enum_names<Op>({{Op::sum, "sum"}, ...}).
template <class E, std::size_t N>
constexpr EnumNames<E, N> enum_names(const EnumName<E> (&entries)[N]) {
  std::array<EnumName<E>, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = entries[i];
  return EnumNames<E, N>(a);
}

/// The table of \p values named by an existing function (constexpr where \p name is).
template <class E, std::size_t N, class Name>
constexpr EnumNames<E, N> enum_names_of(const E (&values)[N], Name name) {
  std::array<EnumName<E>, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = {values[i], name(values[i])};
  return EnumNames<E, N>(a);
}

}  // namespace tunedreduce
