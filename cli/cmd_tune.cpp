// tunedreduce tune: search the kernel space for the fastest kernel per (dtype, op, size interval)
// and store the winners. tune.toml and the flags: docs/tuning.md.

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/exit_codes.hpp"
#include "common/json.hpp"
#include "common/grammar.hpp"
#include "common/names.hpp"
#include "common/paths.hpp"
#include "common/printable.hpp"
#include "db/database.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tuner/config.hpp"
#include "tuner/devices.hpp"
#include "tuner/driver.hpp"
#include "tuner/estimate.hpp"
#include "tuner/gpu_runner.hpp"
#include "tuner/progress.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/session.hpp"
#include "tuner/winners_table.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

constexpr const char* usage_text =
    "tunedreduce tune [--config FILE] [--dry-run | --replay DB] [--devices LIST|all] [--retune]\n"
    "                 [--json] [overrides of tune.toml keys ...]\n\n"
    "Searches the kernel space of tune.toml on the GPU(s), records every measurement in the\n"
    "tuning database and stores the winners as size intervals. --dry-run prints the plan and an\n"
    "estimate without a GPU; --replay DB runs the search over a database's measurements;\n"
    "--json prints the plan or the winners as JSON (the progress stays on stderr).\n"
    "Ctrl-C (SIGINT) or SIGTERM stops after the candidate in flight, commits what finished and\n"
    "exits 130; a second signal more than a second later ends it at once.\n\n"
    "List overrides (--families, --blocks, --dtypes, --sizes, ...) are comma-separated and may\n"
    "be repeated; --sizes takes element counts: 2^20, 16Mi, 2^10..2^30*2 (docs/cli.md).\n"
    "Segmented keys ([segmented], --seg-keys f32.sum,...) are tuned after the others, over\n"
    "segment sizes x counts (--seg-sizes, --seg-counts), into rectangles of that plane.";

// Set by SIGINT or SIGTERM (common/interrupt.hpp); the driver and the GPU runner poll it.
std::atomic<bool> g_cancel{false};
static_assert(std::atomic<bool>::is_always_lock_free);

struct Options {
  CommonOptions common;
  std::string config = "tune.toml";
  bool config_given = false;
  bool dry_run = false;
  bool json = false;  // the plan (--dry-run) or the winners as JSON
  std::optional<std::string> replay;
  std::optional<std::string> replay_device;
  std::string devices = "0";
  bool retune = false;
  std::string progress = "auto";
  tuner::ConfigOverrides overrides;
};

std::string help_of(std::string_view key) {
  for (const tuner::KeySpec& k : tuner::config_keys())
    if (k.path == key) return std::string(k.help) + " (" + std::string(key) + ")";
  return std::string(key);
}

tuner::KeyKind kind_of(std::string_view key) {
  for (const tuner::KeySpec& k : tuner::config_keys())
    if (k.path == key) return k.kind;
  return tuner::KeyKind::string;
}

/// What --help shows after the flag: the choices where there are few, else the kind of value.
std::string value_name_of(std::string_view key, tuner::KeyKind kind) {
  using K = tuner::KeyKind;
  if (key == "strategy.name") {
    std::string names;
    for (const tuner::StrategyInfo& st : tuner::strategies())
      names += (names.empty() ? "" : "|") + std::string(st.name);
    return names;
  }
  if (key == "measure.l2") return "cold|warm";
  static constexpr auto value_names = enum_names<K>({
      {K::integer, "N"},
      {K::number, "X"},
      {K::boolean, "on|off"},
      {K::string, "NAME"},
      {K::string_list, "LIST"},
      {K::integer_list, "LIST"},
      {K::sizes, "COUNTS"},
  });
  static_assert(value_names.lists_all_through(K::sizes));
  return value_names.to_name(kind, "arg");
}

void add_override_options(po::options_description& desc, tuner::ConfigOverrides& o) {
  std::set<std::string> seen;
  for (const tuner::OverrideSpec& spec : tuner::override_specs()) {
    const std::string flag(spec.flag);
    if (!seen.insert(flag).second) continue;
    std::optional<std::string> tuner::ConfigOverrides::*member = spec.member;
    const tuner::KeyKind kind = kind_of(spec.key);
    std::string help = help_of(spec.key);
    if (flag == "repeats") help = "sets min_repeats and max_repeats";
    if (flag == "sizes" || flag == "seg-sizes" || flag == "seg-counts")
      help +=
          "; N, B^E or N with Ki/Mi/Gi/Ti, comma-separated, ranges FROM..TO*FACTOR or "
          "FROM..TO+STEP";
    if (flag == "seg-keys") help += ", as f32.sum,bf16.wide_sum; 'all'; '' for none";
    if (flag == "bisect") help += "; on or off";
    if (flag == "ops") help += ": " + op_choices();
    const std::string value_name = value_name_of(spec.key, kind);
    if (kind == tuner::KeyKind::string_list || kind == tuner::KeyKind::integer_list ||
        kind == tuner::KeyKind::sizes) {
      // The one list syntax: comma-separated and repeatable; the repeats are joined with commas
      // and read as one value of the key.
      help += "; repeatable";
      desc.add_options()(flag.c_str(),
                         po::value<std::vector<std::string>>()
                             ->value_name(value_name)
                             ->notifier([&o, member](const std::vector<std::string>& v) {
                               std::string joined;
                               for (const std::string& x : v)
                                 joined += (joined.empty() ? "" : ",") + x;
                               o.*member = joined;
                             }),
                         help.c_str());
      continue;
    }
    desc.add_options()(flag.c_str(),
                       po::value<std::string>()
                           ->value_name(value_name)
                           ->notifier([&o, member](const std::string& v) { o.*member = v; }),
                       help.c_str());
  }
}

std::size_t count_devices_for_plan(const std::string& text) {
  if (text == "all") return 1;
  std::size_t n = 1;
  for (char c : text) n += c == ',';
  return n;
}

bool progress_on_terminal(const std::string& mode) {
  if (mode == "bar") return true;
  if (mode == "lines" || mode == "off") return false;
  return isatty(STDERR_FILENO) != 0;
}

tuner::ProgressFn progress_fn(const std::string& mode, tuner::ProgressPrinter& printer) {
  if (mode == "off") return {};
  return [&printer](const tuner::ProgressEvent& e) { printer(e); };
}

/// `tune --dry-run --json`: the plan's facts as the text form gives them, estimates in seconds.
Json plan_json(const tuner::Plan& plan, const tuner::TuneConfig& cfg) {
  const auto& p = cfg.measure;
  Json out = Json::object();
  out.set("configuration", cfg.source);
  out.set("config_hash", tuner::config_hash(cfg));
  out.set("strategy", cfg.strategy.name);
  out.set("l2_mode", db::l2_mode_name(p.l2));
  const auto u = [](std::uint64_t v) { return Json(static_cast<std::int64_t>(v)); };
  const auto count = [](double v) { return Json(static_cast<std::int64_t>(std::llround(v))); };
  out.set("warmup", static_cast<std::int64_t>(p.warmup));
  out.set("min_repeats", static_cast<std::int64_t>(p.min_repeats));
  out.set("max_repeats", static_cast<std::int64_t>(p.max_repeats));
  out.set("budget_ms", p.budget_ms);
  out.set("bisection_depth",
          cfg.bisect.enabled ? Json(static_cast<std::int64_t>(cfg.bisect.max_depth)) : Json());
  out.set("devices", u(plan.devices));
  Json keys = Json::array();
  std::uint64_t candidates = 0;
  for (const tuner::KeyPlan& k : plan.keys) {
    keys.push_back(Json(Json::Object{{"dtype", Json(dtype_name(k.dtype))},
                                     {"op", Json(op_name(k.op))},
                                     {"candidates", u(k.candidates)},
                                     {"sizes", u(k.sizes)},
                                     {"measurements", count(k.measurements)},
                                     {"bisection_measurements", count(k.bisect_measurements)},
                                     {"estimate_s", Json(k.seconds())}}));
    candidates += k.candidates;
  }
  out.set("keys", std::move(keys));
  Json seg = Json::array();
  std::uint64_t points = 0, point_candidates = 0;
  for (const tuner::SegKeyPlan& k : plan.segmented) {
    seg.push_back(Json(Json::Object{{"dtype", Json(dtype_name(k.dtype))},
                                    {"op", Json(op_name(k.op))},
                                    {"layout", Json(kernels::segmented::seg_layout_name(k.layout))},
                                    {"configurations", u(k.candidates)},
                                    {"points", u(k.points)},
                                    {"candidates", u(k.point_candidates)},
                                    {"measurements", count(k.measurements)},
                                    {"bisection_measurements", count(k.bisect_measurements)},
                                    {"estimate_s", Json(k.seconds())}}));
    points += k.points;
    point_candidates += k.point_candidates;
  }
  out.set("segmented", std::move(seg));
  out.set("total", Json(Json::Object{{"keys", u(plan.keys.size())},
                                     {"candidates", u(candidates)},
                                     {"segmented_keys", u(plan.segmented.size())},
                                     {"segmented_points", u(points)},
                                     {"segmented_candidates", u(point_candidates)},
                                     {"measurements", count(plan.measurements())},
                                     {"estimate_s", Json(plan.seconds())}}));
  return out;
}

int dry_run(const Options& o, const tuner::TuneConfig& cfg) {
  const tuner::Plan plan = tuner::make_plan(cfg, {}, count_devices_for_plan(o.devices));
  if (o.json) {
    std::cout << plan_json(plan, cfg).dump(2) << "\n";
    return exit_code::ok;
  }
  std::cout << "configuration: " << cfg.source << " (config hash " << tuner::config_hash(cfg)
            << ")\n";
  tuner::print_plan(std::cout, plan, cfg);
  return exit_code::ok;
}

int replay(const Options& o, const tuner::TuneConfig& cfg) {
  db::Database database = db::Database::open_reader(*o.replay);
  const db::DeviceRecord device = tuner::choose_replay_device(database, o.replay_device);
  tuner::ReplayOptions ro;
  ro.device_id = device.id;
  ro.policy = cfg.measure;
  tuner::ReplayRunner runner(database, ro);
  std::cerr << "replaying " << runner.recorded() << " measurements (L2 "
            << db::l2_mode_name(cfg.measure.l2) << ") of " << device.fingerprint.name << " ("
            << device.key << ") from '" << *o.replay << "'\n";
  InterruptGuard interrupt(g_cancel);
  tuner::ProgressPrinter printer(std::cerr, progress_on_terminal(o.progress));
  tuner::DriverOptions dopt;
  dopt.progress = progress_fn(o.progress, printer);
  dopt.cancel = &g_cancel;
  const tuner::TuneOutcome out = tuner::run_tuning(cfg, runner, dopt);
  printer.finish();
  const std::string label = device.fingerprint.name + " (" + device.key + ", replayed)";
  // --json: an array of one device's winners (a run's has one a device model).
  const auto print = [&] {
    if (o.json) std::cout << Json(Json::Array{tuner::winners_json(out, label)}).dump(2) << "\n";
    else tuner::print_winners(std::cout, out, label);
  };
  if (out.cancelled) {
    print();
    std::cerr << "tunedreduce tune: interrupted; nothing was written (replay)\n";
    return exit_code::interrupted;
  }
  // Nothing replayed is no answer: the database has none of the configuration's measurements
  // (another space, sizes or L2 mode), and an empty winners table would read as a result.
  if (runner.answered() == 0 && runner.missing() > 0)
    throw Error(fmt::format("--replay '{}': none of the {} requests of this configuration has a "
                            "recorded measurement (the file holds {} of {} ({}) with L2 {}); "
                            "replay the configuration that recorded them, in their L2 mode",
                            printable(*o.replay, 4096), runner.missing(), runner.recorded(),
                            printable(device.fingerprint.name), device.key,
                            db::l2_mode_name(cfg.measure.l2)),
                exit_code::failure);
  if (runner.missing())
    std::cerr << "tunedreduce tune: warning: " << runner.missing() << " of "
              << runner.missing() + runner.answered()
              << " requests had no recorded measurement (treated as failed)\n";
  print();
  return exit_code::ok;
}

struct DeviceRun {
  int ordinal = 0;  // the model's first selected GPU: it begins the run and records the bandwidth
  DeviceFingerprint fingerprint;
  std::vector<int> sharing;  // the model's other selected GPUs: each measures a share of the work
  std::vector<std::unique_ptr<tuner::Runner>> runners;  // ordinal's first, then sharing's
  tuner::TuneOutcome outcome;
  std::exception_ptr error;

  std::string gpus() const {  // "GPU 0", "GPUs 0,1"
    return fmt::format("{} {}{}{}", sharing.empty() ? "GPU" : "GPUs", ordinal,
                       sharing.empty() ? "" : ",", fmt::join(sharing, ","));
  }
};

int real_run(const Options& o, const tuner::TuneConfig& cfg) {
  const DbLocation loc = resolve_db_path(o.common.db);
  create_data_folder(loc);
  // Devices first (a worker process answers; no GPU work), so that a machine without a GPU gets
  // no database file; then the database must be usable before any GPU work (and a problem with
  // it is its exit code).
  const tuner::DeviceChoice choice =
      tuner::one_per_model(tuner::select_devices(o.devices, tuner::probe_devices()));
  const auto& devices = choice.tuned;
  // Runs a killed tuner left `running` (on this host, their lease released by its death).
  const tuner::TuningSession session(loc.path);
  for (std::int64_t id : session.settle_abandoned_runs())
    spdlog::warn("run {} was left running by a tuner that is gone; marked interrupted", id);

  const std::string hash = tuner::config_hash(cfg);
  // Stored with each run (GpuRunnerOptions::config_text): the coverage report reads it.
  const std::string config_text = tuner::canonical_text(cfg);
  spdlog::info("tuning {} device model(s) into '{}' (from {}), config hash {}", devices.size(),
               loc.path.string(), loc.source, hash);
  for (const auto& [other, first] : choice.same_model)
    spdlog::info(
        "GPU {} is the same model as GPU {}: it measures a share of that model's sizes "
        "into the same device row and run",
        other, first);

  InterruptGuard interrupt(g_cancel);
  tuner::ProgressPrinter printer(std::cerr,
                                 progress_on_terminal(o.progress) && devices.size() == 1);
  std::vector<DeviceRun> runs(devices.size());
  try {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      DeviceRun& run = runs[i];
      run.ordinal = devices[i].first;
      run.fingerprint = devices[i].second;
      for (const auto& [other, first] : choice.same_model)
        if (first == run.ordinal) run.sharing.push_back(other);
      tuner::GpuRunnerOptions g;
      g.device = run.ordinal;
      g.policy = cfg.measure;
      g.retune = o.retune;
      g.db_path = loc.path;
      g.config_hash = hash;
      g.config_text = config_text;
      g.cancel = &g_cancel;
      run.runners.push_back(tuner::make_gpu_runner(g));
      for (int other : run.sharing) {
        tuner::GpuRunnerOptions share = g;
        share.device = other;
        share.measure_bandwidth = false;
        share.join = tuner::GpuRunnerOptions::Join{*run.runners.front()->recording(),
                                                   run.fingerprint.key(),
                                                   run.runners.front()->attainable_gbps()};
        run.runners.push_back(tuner::make_gpu_runner(share));
      }
    }
  } catch (...) {
    // The runs begun so far would stay `running`.
    std::vector<tuner::Recording> begun;
    for (DeviceRun& run : runs)
      if (!run.runners.empty())
        if (auto rec = run.runners.front()->recording()) begun.push_back(*rec);
    session.end_failed(begun);
    throw;
  }
  // One driver per model, in parallel; each model gets winners of its own, and the GPUs of one
  // model share its work (tuner::run_tuning with several runners).
  std::vector<std::thread> threads;
  for (DeviceRun& run : runs)
    threads.emplace_back([&run, &cfg, &printer, &o, many = runs.size() > 1] {
      try {
        tuner::DriverOptions dopt;
        if (many) dopt.device_label = run.gpus();
        dopt.progress = progress_fn(o.progress, printer);
        dopt.cancel = &g_cancel;
        std::vector<tuner::Runner*> runners;
        for (auto& r : run.runners) runners.push_back(r.get());
        run.outcome = tuner::run_tuning(cfg, runners, dopt);
      } catch (...) {
        run.error = std::current_exception();
        g_cancel.store(true);  // stop the other devices too
      }
    });
  for (std::thread& t : threads) t.join();
  printer.finish();

  // Winners of the complete keys, then the run's end, per device.
  bool cancelled = false;
  std::exception_ptr first_error;
  Json winners = Json::array();  // --json: one object a device model, printed after the loop
  for (DeviceRun& run : runs) {
    const auto rec = run.runners.front()->recording();
    if (!rec) throw Error("the GPU runner did not say where it recorded (no run or device row)");
    if (run.error) {
      session.end_failed(*rec);
      if (!first_error) first_error = run.error;
      continue;
    }
    const tuner::RunEnded ended = session.end(*rec, run.outcome);
    cancelled |= run.outcome.cancelled;
    const std::string label =
        run.fingerprint.name + " (" + run.gpus() + ", " + run.fingerprint.key() + ")";
    if (o.json) winners.push_back(tuner::winners_json(run.outcome, label));
    else tuner::print_winners(std::cout, run.outcome, label);
    std::cerr << run.gpus() << ": winners of " << ended.keys_stored << " keys"
              << (ended.segmented_stored ? " and " + std::to_string(ended.segmented_stored) +
                                               " segmented keys and layouts"
                                         : std::string())
              << " stored in '" << loc.path.string() << "' (run " << rec->run_id << ", "
              << run.outcome.requests << " requests)\n";
  }
  if (o.json) std::cout << winners.dump(2) << "\n";
  if (first_error) std::rethrow_exception(first_error);
  if (cancelled || g_cancel.load()) {
    std::cerr << "tunedreduce tune: interrupted; finished measurements and the winners of "
                 "complete keys were committed\n";
    return exit_code::interrupted;
  }
  return exit_code::ok;
}

}  // namespace

/// Without --config: ./tune.toml, else the one installed beside this executable
/// (BIN/../share/tunedreduce/tune.toml, as `cmake --install` lays it out), else an error naming
/// both places.
std::string default_config_path() {
  namespace fs = std::filesystem;
  if (fs::exists("tune.toml")) return "tune.toml";
  const fs::path exe = this_executable();
  const fs::path installed =
      exe.empty() ? fs::path()
                  : exe.parent_path().parent_path() / "share" / "tunedreduce" / "tune.toml";
  std::error_code ec;
  if (!installed.empty() && fs::exists(installed, ec)) return installed.string();
  throw Error("no tune.toml in the current folder" +
                  (installed.empty() ? std::string()
                                     : " nor at " + installed.string() + " (the installed one)") +
                  ": name one with --config",
              exit_code::usage);
}

int cmd_tune(int argc, char** argv) {
  Options o;
  po::options_description desc("options");
  add_common_options(desc, o.common);
  desc.add_options()("config",
                     po::value<std::string>()->value_name("FILE")->notifier(
                         [&o](const std::string& v) {
                           o.config = v;
                           o.config_given = true;
                         }),
                     "tune.toml to read (default: ./tune.toml, else the installed "
                     "BIN/../share/tunedreduce/tune.toml)")(
      "dry-run", po::bool_switch(&o.dry_run),
      "print the candidates per key and an estimated time; needs no GPU")(
      "json", po::bool_switch(&o.json),
      "print the plan (--dry-run) as one JSON object, or the winners as a JSON array of one "
      "object a device model")(
      "replay", po::value<std::string>()->value_name("DB")->notifier([&o](const std::string& v) {
        o.replay = v;
      }),
      "measure nothing: answer from this database's measurements, print the winners")(
      "replay-device",
      po::value<std::string>()->value_name("DEVICE")->notifier(
          [&o](const std::string& v) { o.replay_device = v; }),
      "the device of the replay database (id, fingerprint key or part of the name)")(
      "devices",
      po::value<std::vector<std::string>>()
          ->value_name("LIST|all")
          ->notifier([&o](const std::vector<std::string>& v) {
            // The list syntax (trimmed items, no empty one) and each item's form, checked before
            // any device is probed; which ordinals exist, after (tuner::select_devices).
            const std::vector<std::string> items = grammar::split_list("--devices", v);
            o.devices.clear();
            for (const std::string& x : items) {
              if (x == "all" && items.size() == 1) {
                o.devices = x;
                break;
              }
              if (x.empty() || x.size() > 6 ||
                  x.find_first_not_of("0123456789") != std::string::npos)
                throw Error("--devices: '" + x + "' is not a device ordinal" +
                                (x == "all" ? " ('all' stands alone)" : " or 'all'"),
                            exit_code::usage);
              o.devices += (o.devices.empty() ? "" : ",") + x;
            }
          }),
      "GPU ordinals to tune, comma-separated and repeatable, or 'all' (one worker each, in "
      "parallel; default 0)")(
      "retune", po::bool_switch(&o.retune),
      "measure again candidates the database already has final measurements of")(
      "progress",
      po::value<std::string>(&o.progress)->default_value("auto")->value_name("auto|bar|lines|off"),
      "auto (a bar on a terminal, lines otherwise), bar, lines or off");
  po::options_description overrides("overrides of tune.toml (docs/tuning.md)");
  add_override_options(overrides, o.overrides);
  desc.add(overrides);
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, nullptr, vm, o.common, usage_text)) return exit_code::ok;

  if (o.dry_run && o.replay)
    throw Error("--dry-run and --replay exclude each other", exit_code::usage);
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" && o.progress != "off")
    throw Error("--progress: '" + o.progress + "' is not auto, bar, lines or off",
                exit_code::usage);
  if (o.replay_device && !o.replay)
    throw Error("--replay-device needs --replay DB", exit_code::usage);

  if (!o.config_given) o.config = default_config_path();
  tuner::RawConfig raw = tuner::parse_config_file(o.config);
  tuner::apply_overrides(raw, o.overrides);
  const tuner::TuneConfig cfg = tuner::validate_config(raw);
  spdlog::info("configuration {}: strategy {}, {} sizes, config hash {}", cfg.source,
               cfg.strategy.name, cfg.space.sizes.size(), tuner::config_hash(cfg));

  if (o.dry_run) return dry_run(o, cfg);
  if (o.replay) return replay(o, cfg);
  return real_run(o, cfg);
}

}  // namespace tunedreduce::cli
