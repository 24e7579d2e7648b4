#pragma once
// `tunedreduce report`: what the tuning database knows, as tables and charts
// (docs/reports.md). Host-only: reads the database through db/ and knows the kernel families
// from the manifest; no CUDA and no kernels are linked.
//
//   ReportOptions o;  o.kind = Kind::variants;  o.dtypes = {DType::i32};
//   Report r = build_report(db, o);             // throws Error(usage) for a bad selection
//   std::string html = render(r, Format::html);

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "reports/model.hpp"

namespace tunedreduce::reports {

/// The size the seeds measured at (16 Mi elements): the default n of `ladder` and `heatmap`.
inline constexpr std::uint64_t default_n = std::uint64_t{1} << 24;

struct ReportOptions {
  Kind kind = Kind::best;
  /// --device: names (exact, case-insensitive), fingerprint keys (or a unique prefix of at least
  /// 4 hex digits) or parts of a name; empty: every device. A value matching no device is a
  /// usage error that names it.
  std::vector<std::string> devices;
  std::vector<DType> dtypes;  // empty: every type
  std::vector<Op> ops;        // empty: every operator
  /// --n: the size of `ladder` and `heatmap` (default_n); the nearest measured size is used,
  /// and said so, when it was not measured exactly.
  std::optional<std::uint64_t> n;
  /// --family: the families `variants` and `heatmap` show (empty: every family measured).
  std::vector<std::string> families;
  /// --layouts: the layouts of segments `segmented` shows ("fixed", "offsets32", "offsets64";
  /// empty: every layout measured).
  std::vector<std::string> layouts;
  /// --l2: which measurements count (cold: L2 flushed between repeats). Default: cold where the
  /// selection has cold measurements, else warm; never both mixed in one table.
  std::optional<db::L2Mode> l2;
};

/// Builds the report. Throws Error(usage) for a --device or --family that matches nothing known
/// and db::DbError for database failures. An empty database, or a selection without rows, gives a
/// Report whose `empty` says so.
Report build_report(db::Database& db, const ReportOptions& options);

/// Writes the report in \p format. Deterministic: the same database, options and width give the
/// same bytes. \p width (the table format only): the columns of the terminal it is for, 0 for no
/// limit; a table wider than that comes as groups of its columns that fit, each repeating the
/// row's leading label columns (docs/reports.md, "Formats").
std::string render(const Report& report, Format format, std::size_t width = 0);

// Parsing of the command line's values: each throws Error(usage) naming the value and the
// choices.
Kind kind_from_text(std::string_view s);
Format format_from_text(std::string_view s);
DType dtype_from_text(std::string_view s);
Op op_from_text(std::string_view s);
db::L2Mode l2_from_text(std::string_view s);
/// A family name as in kernel ids ("smem"); unknown names are an error.
std::string family_from_text(std::string_view s);
/// A layout of segments as in segmented kernel ids ("fixed", "offsets32", "offsets64"); unknown
/// names are an error.
std::string layout_from_text(std::string_view s);
/// "16777216", "2^24", "16Mi", "1Gi" (at least 1, at most 2^40).
std::uint64_t size_from_text(std::string_view s);
/// The format a file name asks for by its extension (.html/.htm, .csv, .json, .md/.markdown,
/// .txt), if any.
std::optional<Format> format_for_path(std::string_view path);

}  // namespace tunedreduce::reports
