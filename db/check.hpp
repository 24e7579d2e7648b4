#pragma once
// `db check`: is the file sound, and can this binary use every row in it?

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/row_rules.hpp"

namespace tunedreduce::db {

struct CheckReport {
  std::vector<std::string> integrity;  // quick_check (or integrity_check) lines; {"ok"} if sound
  int schema_version = 0;              // of the file
  std::int64_t foreign_key_violations = 0;
  std::map<std::string, std::int64_t> unknown_kernel_ids;  // id -> rows (measurements + winners)
  std::int64_t overlapping_winners = 0;  // pairs overlapping within one L2 mode, both modes
  /// The same, per L2 mode (indexed by static_cast<int>(L2Mode)): a cold and a warm winner of
  /// the same sizes do not overlap.
  std::array<std::int64_t, 2> overlapping_by_mode{};
  /// Evidence missing, not ok, or not of the winner's kernel, device, dtype, op and L2 mode.
  std::int64_t winners_without_ok_evidence = 0;
  /// Schema version 5's references (0 in older files, which have none): measurements whose GPU
  /// is a card of another device (model) than theirs — a GPU that does not exist at all is a
  /// foreign key violation — and runs whose configuration text does not hash to their
  /// config_hash.
  std::int64_t measurements_on_another_models_gpu = 0;
  std::int64_t runs_with_foreign_config_text = 0;
  /// Schema version 12's segmented winners (0 in older files, which have none): pairs whose
  /// rectangles overlap within one (device, dtype, op, layout, L2 mode), per L2 mode as above;
  /// and winners whose evidence is missing or is not an ok segmented measurement of their
  /// kernel, device, dtype, op and L2 mode, or whose runner-up measurement is not an ok
  /// segmented measurement of their device, dtype, op and L2 mode with a kernel of their layout.
  std::int64_t overlapping_segmented_winners = 0;
  std::array<std::int64_t, 2> overlapping_segmented_by_mode{};
  std::int64_t segmented_winners_without_ok_evidence = 0;
  /// The ids of the segmented winners counted in the two counts above (the first
  /// max_row_findings), for `db check` to name them.
  std::vector<std::int64_t> bad_segmented_winner_ids;
  /// Rows that break the row rules (db/row_rules.hpp), every table, named: the first
  /// max_row_findings of them.
  std::vector<RowFinding> row_findings;
  static constexpr std::size_t max_row_findings = 1000;

  bool sound() const { return integrity.size() == 1 && integrity[0] == "ok"; }
  /// Sound, consistent, and every kernel id known.
  bool ok() const {
    return sound() && foreign_key_violations == 0 && unknown_kernel_ids.empty() &&
           overlapping_winners == 0 && winners_without_ok_evidence == 0 &&
           measurements_on_another_models_gpu == 0 && runs_with_foreign_config_text == 0 &&
           overlapping_segmented_winners == 0 && segmented_winners_without_ok_evidence == 0 &&
           row_findings.empty();
  }
};

/// Runs PRAGMA quick_check (integrity_check when \p full), the foreign-key check, and looks for
/// rows naming kernel ids outside \p known_ids (the registries of the calling binary, the
/// segmented one's included) and for winners and segmented winners that overlap (within their
/// L2 mode) or lack ok evidence of their mode, and checks schema version 5's GPU and
/// configuration references. Reads only.
CheckReport check_database(Database& db, const std::set<std::string>& known_ids, bool full);

}  // namespace tunedreduce::db
