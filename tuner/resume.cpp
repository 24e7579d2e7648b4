#include "tuner/resume.hpp"

#include "common/error.hpp"
#include "kernels/manifest.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::tuner {

namespace {

Result from_record(const db::MeasurementRecord& m) {
  Result r;
  static_cast<db::Measurement&>(r) = m;
  r.measurement_id = m.id;
  r.reused = true;
  return r;
}

}  // namespace

ResumeRunner::ResumeRunner(std::unique_ptr<Runner> inner, ResumeOptions options)
    : inner_(std::move(inner)), options_(std::move(options)) {
  const std::optional<Recording> rec = inner_->recording();
  if (!rec)
    throw Error("resume needs a runner that records into '" + options_.db_path.string() +
                "': this one records nothing");
  device_id_ = rec->device_id;
  if (options_.retune) return;
  // A writer's patience: other GPUs' runners commit into the same file meanwhile.
  db::ReaderOptions ro;
  ro.busy_timeout = db::WriterOptions{}.busy_timeout;
  db_.emplace(db::Database::open_reader(options_.db_path, ro));
}

std::vector<Result> ResumeRunner::measure(std::span<const Request> requests) {
  if (options_.retune) return inner_->measure(requests);
  std::vector<std::optional<Result>> results(requests.size());
  std::vector<Request> rest;
  std::vector<std::size_t> rest_at;  // each one's index in requests
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if ((results[i] = answer(requests[i]))) continue;
    rest.push_back(requests[i]);
    rest_at.push_back(i);
  }
  if (!rest.empty()) {
    std::vector<Result> measured = inner_->measure(rest);
    if (measured.size() > rest.size())
      throw Error("the wrapped runner gave " + std::to_string(measured.size()) + " results for " +
                  std::to_string(rest.size()) + " requests");
    remember(measured);
    for (std::size_t k = 0; k < measured.size(); ++k) results[rest_at[k]] = std::move(measured[k]);
  }
  std::vector<Result> out;
  out.reserve(requests.size());
  for (std::optional<Result>& r : results) {
    if (!r) break;  // cancelled: the wrapped runner stopped before this request
    out.push_back(std::move(*r));
  }
  return out;
}

const ResumeRunner::Finals& ResumeRunner::finals(DType dtype, Op op) {
  const auto key = std::make_pair(dtype, op);
  if (auto it = finals_.find(key); it != finals_.end()) return it->second;
  Finals m;
  db::MeasurementFilter f;
  f.device_id = device_id_;
  f.dtype = dtype;
  f.op = op;
  for (db::MeasurementRecord& r : db_->measurements(f)) {
    if (!db::is_final(r.outcome) || r.l2_mode != options_.policy.l2) continue;
    m[{r.kernel_id, r.n, r.segment_size.value_or(0)}].push_back(std::move(r));
  }
  return finals_.emplace(key, std::move(m)).first->second;
}

std::optional<Result> ResumeRunner::answer(const Request& req) {
  std::optional<std::pair<DType, Op>> key;
  if (const kernels::ManifestEntry* m = kernels::manifest_find(req.kernel_id))
    key = {m->params.dtype, m->params.op};
  else if (const auto s = kernels::segmented::parse_seg_id(req.kernel_id)) key = {s->dtype, s->op};
  if (!key) return std::nullopt;
  const Finals& done = finals(key->first, key->second);
  auto it = done.find({req.kernel_id, req.n, req.segment_size.value_or(0)});
  if (it == done.end() || it->second.empty()) return std::nullopt;
  const MeasurePolicy policy = policy_for(options_.policy, req);
  const db::MeasurementRecord* best = nullptr;
  if (policy.min_repeats == policy.max_repeats)
    for (const db::MeasurementRecord& r : it->second)
      if (r.outcome == db::Outcome::ok && r.repeats == policy.min_repeats) best = &r;
  if (!best)
    for (const db::MeasurementRecord& r : it->second)
      if (!best || r.repeats >= best->repeats) best = &r;
  if (best->outcome == db::Outcome::ok && best->repeats < policy.min_repeats) return std::nullopt;
  return from_record(*best);
}

/// The final results the wrapped runner recorded join the cache of their (dtype, op), in the
/// order stored, so that a repeat of their request in this run is answered from them. A (dtype,
/// op) not cached yet reads them from the database when it is.
void ResumeRunner::remember(const std::vector<Result>& measured) {
  for (const Result& r : measured) {
    if (!r.measurement_id || !db::is_final(r.outcome) || r.l2_mode != options_.policy.l2) continue;
    auto it = finals_.find({r.dtype, r.op});
    if (it == finals_.end()) continue;
    db::MeasurementRecord rec;
    static_cast<db::Measurement&>(rec) = r;
    rec.id = *r.measurement_id;
    it->second[{r.kernel_id, r.n, r.segment_size.value_or(0)}].push_back(std::move(rec));
  }
}

}  // namespace tunedreduce::tuner
