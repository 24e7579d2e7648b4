#pragma once
// A deployment's kernel budget (docs/library.md, "A kernel budget"): from the tuning databases of
// a fleet, merged as `db merge` merges them, a small set of kernels that serves every winner row
// within a tolerance of the fastest kernel measured at its sizes, and the winner rows rewritten to
// name only kernels of that set, so that the library built from the set and the database that
// names it stay bound. Host code over db/: no kernels; the caller says what its registry has.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/dataset.hpp"

namespace tunedreduce::deploy {

/// A tolerance as the command line gives it, in percent: "1%", "0.5 %", "2" (also percent).
/// Returns the fraction (0.01 for "1%"). Throws Error(exit_code::usage) naming \p text for
/// anything else, a negative value or more than 100 %.
double parse_tolerance(std::string_view text);

struct BudgetOptions {
  /// A kernel serves a size when its median there is at most (1 + tolerance) x the best median
  /// measured there. A fraction: 0.01 is 1 %.
  double tolerance = 0;
  /// Kernels the library has whatever the winners are (the built-in rules'): they serve rows at
  /// no cost, so they are taken first.
  std::set<std::string> free_kernels;
  /// The largest n the registry's kernel \p id runs (kernels::max_elements_of), or nothing when
  /// the registry has no such kernel: then it is never chosen.
  std::function<std::optional<std::uint64_t>(const std::string& id)> max_elements;
};

/// What the budget did to one winner row of the merged databases.
struct RowChoice {
  db::WinnerRow row;        // as the merged databases have it
  std::string description;  // describe_row(), and the file it came from
  /// The kernel the deployment's row names; nothing when no kernel of the registry serves the
  /// row (its own kernel is unknown to the registry and no other is measured close enough): the
  /// row is left out of the deployment database.
  std::optional<std::string> chosen;
  /// The chosen kernel's measurement at the row's evidence size, where it is not the row's own.
  std::optional<db::MeasurementRef> chosen_evidence;
  /// The sizes it was compared at: its evidence's size and every size of its interval at which
  /// more than two kernels were measured (a bisection measures only the two neighbouring
  /// winners at its midpoints, which compares nothing).
  std::vector<std::uint64_t> points;
  /// Another kernel was measured at every point: there was a choice.
  bool compared = false;
  /// For a row whose kernel changed: the largest (chosen median / own median - 1) over the points
  /// where both were measured (negative: the chosen kernel was measured faster everywhere).
  std::optional<double> slowdown;

  bool changed() const { return !chosen || *chosen != row.w.kernel_id; }
};

/// Per device (model) of the merged databases.
struct DeviceSummary {
  std::string name;  // "NVIDIA H100 80GB HBM3 (09b523d0aee380fb)"
  std::size_t rows = 0, changed = 0, dropped = 0, uncompared = 0;
  /// The largest slowdown of a changed row and that row, "f32 sum [1025, 2048], L2 cold: OLD ->
  /// NEW" (empty: no row changed).
  std::optional<double> worst_slowdown;
  std::string worst_row;
};

struct Budget {
  double tolerance = 0;
  std::vector<RowChoice> rows;  // one per winner row of the merged databases, in their order
  /// Kernels the deployment's winner rows name (free kernels among them where they serve a row).
  std::set<std::string> kernels;
  /// Kernels the merged databases' winner rows name that the registry has: the list without a
  /// budget.
  std::set<std::string> original_kernels;
  std::map<std::string, DeviceSummary> devices;  // by device key
  std::size_t changed = 0, dropped = 0;
};

/// "NVIDIA H100 80GB HBM3 (KEY): f32 sum [1025, 2048], L2 cold, kernel ID" (source: the file).
std::string describe_row(const db::Dataset& d, const db::WinnerRow& w);

/// Chooses the kernels for every winner row of \p merged (`db merge` of the fleet's databases):
/// each row's points are compared with the ok measurements of its device, dtype, op and L2 mode
/// (per kernel and size the most repeated, the latest of equals: the tuner's resume rule); a
/// kernel serves a row when the registry has it, it runs the row's largest size and its median is
/// within the tolerance of the best at every point; the row's own kernel always serves it. Free
/// kernels are taken first; then, greedily, the kernel that serves the most points of rows not yet
/// served (ties: the lower sum of median / best over them, then the smaller id); a chosen kernel
/// whose rows all have another is dropped again (the latest chosen first). Each row then names the
/// serving kernel of the set that is fastest at its evidence's size (ties: its own, then the
/// smaller id). Deterministic: the result depends on \p merged only, never on an order of inputs.
/// Throws Error naming the row when a winner has no ok measurement of its kernel as evidence, and
/// for a tolerance that is negative or not finite.
Budget choose_kernels(const db::Dataset& merged, const BudgetOptions& opt);

/// \p merged with every winner row as \p budget chose it: a changed row names the chosen kernel,
/// its evidence is that kernel's measurement at the row's evidence size, and its runner-up is the
/// row's original winner (kernel and evidence), which the reports then show as what it replaced;
/// rows without a kernel are left out.
db::Dataset apply_budget(const db::Dataset& merged, const Budget& budget);

/// `deploy --tolerance`: checks that every winner of every input has its evidence (an ok
/// measurement of its kernel), merges the inputs as `db merge` does (a scratch file beside
/// \p out, removed), chooses the kernels and writes the deployment database \p out (which must
/// not exist; journal mode DELETE, like a merge). Throws Error / db::DbError naming the file.
Budget deploy_database(const std::vector<std::filesystem::path>& inputs,
                       const std::filesystem::path& out, const BudgetOptions& opt);

/// Reads the databases \p inputs and merges them in memory as `db merge` does (through a scratch
/// file in \p scratch_dir, removed). For the tests and deploy_database.
db::Dataset merge_inputs(const std::vector<std::filesystem::path>& inputs,
                         const std::filesystem::path& scratch_dir);

}  // namespace tunedreduce::deploy
