#pragma once
// One timing of a reduction, as the tuner records it: the statistics of its timed repeats, the
// bandwidth they give and the clocks it ran at (CUTLASS's profiler has PerformanceResult for the
// same purpose). Defined once, with its one JSON mapping, for everything that handles a
// measurement: db/ (measurements rows, export and import), the tuner, its supervisor and worker,
// and the CLI. It lives in tr_common, not in measure/: measure/ is the CUDA module that makes
// timings, and db/ and the supervisor must build and run without CUDA.
//
// The records that carry a timing derive from it (db::Measurement, and through it tuner::Result),
// so their readers keep writing m.median_us while copies, JSON and SQL handle the record whole.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tunedreduce {

class Json;

/// The SM and memory clocks (MHz) of the device while it was measured, read through NVML;
/// empty where NVML is not there. Measurements carry one each, a bench run one for the run.
struct ClockReading {
  std::optional<int> sm_clock_mhz, mem_clock_mhz;
};

/// The statistics of a call's timed runs: microseconds of GPU time (CUDA events) per call over
/// `repeats` runs. Empty times and 0 repeats where nothing was timed (it failed before). A
/// `tunedreduce bench` result is these (db::BenchResult); a tuner's measurement adds the rest of
/// Timing.
struct RepeatStats {
  std::optional<double> median_us, p10_us, p90_us;
  int repeats = 0;
};

/// One timed measurement of a candidate: its repeats' statistics, the bandwidth they give and
/// the clocks it ran at.
struct Timing : RepeatStats, ClockReading {
  /// Bytes read / median: set from gbps_of() where the timing is made, and stored with it (the
  /// database has the column, and rows imported from other files keep the value they had).
  std::optional<double> gbps;
};

/// GB/s of reading \p bytes in \p median_us microseconds: bytes / (median_us x 1000). Nothing
/// without a positive median.
std::optional<double> gbps_of(std::uint64_t bytes, std::optional<double> median_us);

/// The median's relative standard error, estimated from the p10-p90 spread of the repeats: 0.48898
/// (1.2533 / 2.5631: the median's standard error per sigma over the p10-p90 span per sigma) x
/// (p90 - p10) / median / sqrt(repeats); the relative spread itself with 0 repeats; 0 where a
/// time is missing or the median is not positive. The one noise model of the tuner's tie rule,
/// the merge's conflict rule and the reports' "within noise".
double relative_median_error(const RepeatStats& s);

/// Two medians are within noise when they differ by less than twice the standard error of their
/// difference, 2 x sqrt(ea^2 + eb^2) of their relative_median_error()s, clamped to
/// [\p floor, \p ceiling]: the band.
double noise_band(const RepeatStats& a, const RepeatStats& b, double floor, double ceiling);

/// A member that a reader below refused: missing, of another type, or out of range. The JSON
/// readers of the protocol and of the export catch it and name the message or the file.
class RecordMemberError : public std::runtime_error {
 public:
  /// \p problem empty: the member is missing.
  RecordMemberError(const char* member, std::string problem);
  const char* member() const noexcept { return member_; }
  /// "expected a number", "must be at least 0", ...; empty when the member is missing.
  const std::string& problem() const noexcept { return problem_; }
  bool missing() const noexcept { return problem_.empty(); }

 private:
  const char* member_;
  std::string problem_;
};

/// Appends the timing's members to the JSON object \p j, in the order of the worker protocol's
/// result and of the export's measurement (docs/database.md): median_us, p10_us, p90_us, repeats,
/// gbps, sm_clock_mhz, mem_clock_mhz; null where unknown.
void append_timing(Json& j, const Timing& t);
/// Reads them from the object \p j: every member must be there (null where unknown), the times
/// and GB/s numbers, repeats an integer of at least 0, the clocks integers. Throws
/// RecordMemberError.
Timing timing_from_json(const Json& j);

/// The parts alone, as above. The repeats' statistics: median_us, p10_us, p90_us, repeats (a
/// bench result's); the clocks: sm_clock_mhz, mem_clock_mhz (a bench run's).
void append_repeat_stats(Json& j, const RepeatStats& s);
RepeatStats repeat_stats_from_json(const Json& j);
void append_clocks(Json& j, const ClockReading& c);
ClockReading clocks_from_json(const Json& j);

}  // namespace tunedreduce
