// build_report: loads the selection, dispatches to the kind, and says plainly when there is
// nothing to report.

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/grammar.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports {

namespace detail {

std::string sizes_text(const std::set<std::uint64_t>& sizes, std::size_t max) {
  std::string s;
  std::size_t i = 0;
  for (std::uint64_t n : sizes) {
    if (i == max) {
      s += fmt::format(", … (+{} more)", sizes.size() - max);
      break;
    }
    if (i++) s += ", ";
    s += size_text(n);
  }
  return s;
}

std::string sizes_value(const std::set<std::uint64_t>& sizes) {
  std::string s;
  for (std::uint64_t n : sizes) {
    if (!s.empty()) s += ' ';
    s += std::to_string(n);
  }
  return s;
}

void add_device_key(const Data& d, std::int64_t device, Section& s) {
  const auto& dev = d.device(device);
  s.key.emplace_back("device", dev.fingerprint.name);
  s.key.emplace_back("fingerprint", dev.key);
}

Column col(std::string id, std::string label, bool numeric, std::string unit, Show show) {
  Column c;
  c.id = std::move(id);
  c.label = std::move(label);
  c.numeric = numeric;
  c.unit = std::move(unit);
  c.show = show;
  return c;
}

std::string ratio_text(double r) { return "×" + fixed(r, 2); }

}  // namespace detail

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

constexpr auto kind_titles = enum_names<Kind>({
    {Kind::best, "Winners: the tuned kernel per device, type, operator and size"},
    {Kind::variants, "Variants: the best of every family at every size"},
    {Kind::ladder, "Ladder: the seeds' progression, step by step"},
    {Kind::heatmap, "Heatmap: block size × unroll factor"},
    {Kind::compare, "Compare: the same keys across devices"},
    {Kind::bench, "Bench: the tuned reduction against cub::DeviceReduce and Thrust"},
    {Kind::coverage, "Coverage: what is tuned, what is stale, what failed"},
    {Kind::segmented, "Segmented: the winner per segment size × segment count"},
});
static_assert(kind_titles.lists_all_through(Kind::segmented));

}  // namespace

Report build_report(db::Database& db, const ReportOptions& options) {
  ReportOptions o = options;
  for (std::string& f : o.families) f = family_from_text(f);  // unknown names: usage error
  for (std::string& l : o.layouts) l = layout_from_text(l);
  if (o.n) grammar::check_count("--n", *o.n);  // the CLI's limits

  detail::Data d = detail::load_data(db, o);
  Report r;
  r.kind = o.kind;
  r.title = kind_titles.to_name(o.kind, "");
  r.database = d.path;
  r.filters.emplace_back("device", o.devices.empty() ? "all" : join(o.devices));
  std::vector<std::string> dtype_names, op_names;
  for (DType t : o.dtypes) dtype_names.push_back(dtype_name(t));
  for (Op op : o.ops) op_names.push_back(op_name(op));
  r.filters.emplace_back("dtype", dtype_names.empty() ? "all" : join(dtype_names));
  r.filters.emplace_back("op", op_names.empty() ? "all" : join(op_names));
  if (o.kind == Kind::variants || o.kind == Kind::heatmap)
    r.filters.emplace_back("family", o.families.empty() ? "all" : join(o.families));
  if (o.kind == Kind::ladder || o.kind == Kind::heatmap)
    r.filters.emplace_back("n", std::to_string(o.n.value_or(default_n)));
  if (o.kind == Kind::segmented)
    r.filters.emplace_back("layout", o.layouts.empty() ? "all" : join(o.layouts));
  // best lists the winners of both L2 modes unless --l2 picks one; coverage always both.
  // best and bench list both L2 modes unless --l2 picks one; coverage always both.
  if (o.kind != Kind::coverage && ((o.kind != Kind::best && o.kind != Kind::bench) || o.l2))
    r.filters.emplace_back("l2", db::l2_mode_name(d.l2));

  if (d.counts.devices == 0 && d.counts.runs == 0 && d.counts.measurements == 0 &&
      d.bench_runs.empty()) {
    r.empty =
        "the database is empty: no devices, runs or measurements yet (tunedreduce tune "
        "records them)";
    return r;
  }
  if (d.both_l2_modes && o.kind != Kind::coverage && o.kind != Kind::best && o.kind != Kind::bench)
    r.notes.push_back(std::string("The selection has cold- and warm-L2 measurements; this report "
                                  "shows the ") +
                      db::l2_mode_name(d.l2) + " ones (--l2 picks).");

  switch (o.kind) {
    case Kind::best:
      detail::build_best(d, o, r);
      break;
    case Kind::variants:
      detail::build_variants(d, o, r);
      break;
    case Kind::ladder:
      detail::build_ladder(d, o, r);
      break;
    case Kind::heatmap:
      detail::build_heatmap(d, o, r);
      break;
    case Kind::compare:
      detail::build_compare(d, o, r);
      break;
    case Kind::bench:
      detail::build_bench(d, o, r);
      break;
    case Kind::coverage:
      detail::build_coverage(db, d, o, r);
      break;
    case Kind::segmented:
      detail::build_segmented(d, o, r);
      break;
  }
  if (r.sections.empty() && !r.empty) {
    // Only what was asked for narrows the selection: defaults (n, the L2 mode) are not named.
    std::string sel;
    auto add = [&](const std::string& k, const std::vector<std::string>& v) {
      if (!v.empty()) sel += (sel.empty() ? "" : ", ") + k + " " + join(v);
    };
    add("device", o.devices);
    add("dtype", dtype_names);
    add("op", op_names);
    add("family", o.families);
    if (o.kind == Kind::segmented) add("layout", o.layouts);
    if (o.n) add("n", {std::to_string(*o.n)});
    if (o.l2) add("l2", {db::l2_mode_name(*o.l2)});
    auto many = [](std::int64_t k, const char* what) {
      return fmt::format("{} {}{}", k, what, k == 1 ? "" : "s");
    };
    r.empty = fmt::format("nothing matches the selection{}: the database has {}, {} and {} in all",
                          sel.empty() ? std::string() : " (" + sel + ")",
                          many(d.counts.devices, "device"),
                          many(d.counts.measurements, "measurement"),
                          many(d.counts.winners, "winner"));
  }
  if (r.empty) r.sections.clear();
  return r;
}

}  // namespace tunedreduce::reports
