#include "tuner/session.hpp"

#include "db/database.hpp"
#include "tuner/bisect.hpp"
#include "tuner/seg_rectangles.hpp"

namespace tunedreduce::tuner {

std::vector<std::int64_t> TuningSession::settle_abandoned_runs() const {
  db::Database database = db::Database::open_writer(path_);
  return database.settle_abandoned_runs();
}

void TuningSession::end_failed(const std::vector<Recording>& recordings) const {
  if (recordings.empty()) return;
  db::Database database = db::Database::open_writer(path_);
  for (const Recording& rec : recordings) database.end_run(rec.run_id, db::RunStatus::failed);
}

RunEnded TuningSession::end(const Recording& rec, const TuneOutcome& outcome) const {
  db::Database database = db::Database::open_writer(path_);
  RunEnded ended;
  for (const KeyOutcome& k : outcome.keys) {
    if (!k.complete || k.bisect.intervals.empty()) continue;
    database.replace_winners(rec.device_id, k.dtype, k.op,
                             to_db_winners(k.bisect.intervals, k.dtype, k.op, k.l2_mode,
                                           rec.driver_version, rec.runtime_version, rec.run_id),
                             k.l2_mode);
    ++ended.keys_stored;
  }
  for (const SegKeyOutcome& k : outcome.segmented) {
    if (!k.complete || k.rectangles.rectangles.empty()) continue;
    const std::string layout = kseg::seg_layout_name(k.layout);
    database.replace_segmented_winners(rec.device_id, k.dtype, k.op, layout,
                                       to_db_segmented_winners(k.rectangles.rectangles, k.dtype,
                                                               k.op, layout, k.l2_mode,
                                                               rec.driver_version,
                                                               rec.runtime_version, rec.run_id),
                                       k.l2_mode);
    ++ended.segmented_stored;
  }
  ended.status = outcome.cancelled ? db::RunStatus::interrupted : db::RunStatus::finished;
  database.end_run(rec.run_id, ended.status);
  return ended;
}

RunEnded TuningSession::end_failed(const Recording& rec) const {
  db::Database database = db::Database::open_writer(path_);
  database.end_run(rec.run_id, db::RunStatus::failed);
  return {db::RunStatus::failed, 0};
}

}  // namespace tunedreduce::tuner
