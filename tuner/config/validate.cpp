#include "tuner/config/validate.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/grammar.hpp"
#include "common/names.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry_names.hpp"
#include "kernels/segmented/segmented.hpp"
#include "kernels/segmented/space.hpp"
#include "kernels/space.hpp"
#include "tuner/config/diagnostics.hpp"
#include "tuner/config/seg_names.hpp"
#include "tuner/config/schema.hpp"
#include "tuner/config/suggest.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {

namespace {

using detail::Diagnostics;
using detail::join;
using kernels::Family;
using kernels::Finish;
using kernels::SmemMode;

class Validator {
 public:
  Validator(const RawConfig& raw, const ValidationLimits& limits, Diagnostics& diag)
      : raw_(raw), limits_(limits), diag_(diag) {}

  // Section by section, in the order of the messages: [space]; [measure] (its bounded keys, l2,
  // then the rules across keys); [strategy] (the name, the seed, then each strategy's options
  // and its rule); [bisect]; [segmented].
  TuneConfig run() {
    TuneConfig c = default_config();
    c.source = raw_.file;
    space(c.space);
    fields("measure.", c);
    measure(c.measure);
    strategy(c);
    fields("bisect.", c);
    segmented(c);
    return c;
  }

 private:
  const Located<RawValue>* get(std::string_view path) const {
    auto it = raw_.values.find(std::string(path));
    return it == raw_.values.end() ? nullptr : &it->second;
  }

  template <class T>
  std::optional<Located<T>> scalar(std::string_view path) const {
    const Located<RawValue>* v = get(path);
    if (!v) return std::nullopt;
    if (const T* x = std::get_if<T>(&v->value)) return Located<T>{*x, v->where};
    throw std::logic_error("tune.toml key " + std::string(path) + " holds the wrong type");
  }

  // A list key: its items, or nullopt for "every compiled value" (absent or "all").
  template <class T>
  std::optional<std::vector<Located<T>>> list(std::string_view path, std::string& where) const {
    const Located<RawValue>* v = get(path);
    where = v ? v->where : std::string(path);
    if (!v || std::holds_alternative<std::string>(v->value)) return std::nullopt;
    return std::get<std::vector<Located<T>>>(v->value);
  }

  // A list key of names: every item one of \p all (read with \p parse, which may take aliases
  // of the names of \p table), or the choices and a did-you-mean. "all" gives \p all; an absent
  // key gives \p absent where that is not empty (the families and operators: all but the exact
  // ones, as default_config() and the repository's tune.toml have it), else \p all.
  template <class E, std::size_t N, class Parse>
  std::vector<E> names(std::string_view path, const EnumNames<E, N>& table,
                       std::type_identity_t<std::span<const E>> all, Parse parse,
                       std::string_view what,
                       std::type_identity_t<std::span<const E>> absent = {}) {
    std::string where;
    auto items = list<std::string>(path, where);
    if (!items && !get(path) && !absent.empty()) return {absent.begin(), absent.end()};
    if (!items) return {all.begin(), all.end()};
    if (items->empty()) diag_.add(where, "is empty: nothing to tune");
    std::vector<std::string> choices;
    for (E e : all) choices.emplace_back(table.to_name(e));
    std::vector<E> out;
    for (const auto& item : *items) {
      std::optional<E> e = parse(item.value);
      if (e && std::find(all.begin(), all.end(), *e) == all.end()) e.reset();
      if (!e) {
        std::string msg = fmt::format("unknown {} '{}'", what, item.value) +
                          did_you_mean(item.value, choices) + "; choices: " + join(choices);
        diag_.add(item.where, msg);
        continue;
      }
      if (std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
    }
    return out;
  }

  static std::vector<int> compiled_unrolls(Family f) {
    for (const auto& fam : kernels::space::families)
      if (fam.family == f) {
        std::vector<int> out;
        for (int u : fam.unrolls)
          if (u) out.push_back(u);
        return out;
      }
    return {};
  }
  static std::vector<int> blocks_of(Family f) {
    std::vector<int> out;
    for (int b : kernels::space::blocks)
      if (kernels::space::has_block(f, b)) out.push_back(b);
    return out;
  }
  static bool has_unroll_axis(Family f) { return compiled_unrolls(f) != std::vector<int>{1}; }
  static bool has_smem_axis(Family f) { return f == Family::smem; }

  // The families that implement (t, o), "vectorized, streaming and single_tile", and their
  // finishes, "two_pass and single_pass": for an operator only some families have (wide_sum,
  // argmin, argmax).
  static std::string implementing(DType t, Op o) {
    std::vector<std::string> finishes;
    for (Family f : kernels::all_families) {
      if (!kernels::space::family_applies(f, t, o)) continue;
      for (Finish fin : kernels::all_finishes)
        if (kernels::space::has_finish(f, fin, t, o) &&
            std::find(finishes.begin(), finishes.end(), kernels::finish_name(fin)) ==
                finishes.end())
          finishes.emplace_back(kernels::finish_name(fin));
    }
    return fmt::format("only the families {} implement it, with finishes {}",
                       implementing_families(t, o), and_join(finishes));
  }
  // "exact, exact_wide and exact_registers": the families that implement (t, o).
  static std::string implementing_families(DType t, Op o) {
    std::vector<std::string> families;
    for (Family f : kernels::all_families)
      if (kernels::space::family_applies(f, t, o)) families.emplace_back(kernels::family_name(f));
    return and_join(families);
  }
  static std::string and_join(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return out;
  }

  void space(SpaceConfig& s) {
    const std::size_t errors_before = diag_.size();
    s.blocks.clear();
    s.unrolls.clear();
    std::string families_where, blocks_where, unrolls_where;
    auto fam_items = list<std::string>("space.families", families_where);
    const SpaceConfig defaults = default_config().space;
    s.families = names("space.families", kernels::family_names, kernels::all_families,
                       kernels::parse_family, "family", defaults.families);
    static constexpr SmemMode modes[] = {SmemMode::static_, SmemMode::dynamic};  // not none
    s.smem = names("space.smem", kernels::smem_mode_names, modes, kernels::parse_smem_mode,
                   "shared-memory mode");
    s.finishes = names("space.finishes", kernels::finish_names, kernels::all_finishes,
                       kernels::parse_finish, "finishing strategy");
    s.dtypes = names("space.dtypes", dtype_names, all_dtypes, parse_dtype, "element type");
    s.ops = names("space.ops", op_names, all_ops, parse_op, "operator", defaults.ops);

    // Blocks: CUDA's rules first, then the registry's.
    std::vector<int> compiled_blocks(std::begin(kernels::space::blocks),
                                     std::end(kernels::space::blocks));
    if (auto items = list<std::int64_t>("space.blocks", blocks_where)) {
      if (items->empty()) diag_.add(blocks_where, "is empty: nothing to tune");
      for (const auto& item : *items) {
        const std::int64_t b = item.value;
        if (b <= 0) diag_.add(item.where, fmt::format("block size {} must be positive", b));
        else if (b % 32 != 0)
          diag_.add(item.where,
                    fmt::format("block size {} is not a multiple of 32 (the warp size)", b));
        else if (b > 1024)
          diag_.add(item.where, fmt::format("block size {} is above 1024, the most threads a CUDA "
                                            "block can have",
                                            b));
        else if (limits_.max_threads_per_block && b > *limits_.max_threads_per_block)
          diag_.add(item.where,
                    fmt::format("block size {} is above this device's limit of {} threads", b,
                                *limits_.max_threads_per_block));
        else if (std::find(compiled_blocks.begin(), compiled_blocks.end(), b) ==
                 compiled_blocks.end())
          diag_.add(item.where, fmt::format("block size {} is not in the registry (compiled block "
                                            "sizes: {})",
                                            b, join(compiled_blocks)));
        else if (std::find(s.blocks.begin(), s.blocks.end(), b) == s.blocks.end())
          s.blocks.push_back(static_cast<int>(b));
      }
    } else {
      for (int b : compiled_blocks)
        if (!limits_.max_threads_per_block || b <= *limits_.max_threads_per_block)
          s.blocks.push_back(b);
    }

    // Unrolls: compiled by some family, and by a selected family that has an unroll factor.
    std::set<int> all_unrolls;
    for (const auto& fam : kernels::space::families)
      for (int u : fam.unrolls)
        if (u) all_unrolls.insert(u);
    std::vector<Family> with_unroll;
    for (Family f : s.families)
      if (has_unroll_axis(f)) with_unroll.push_back(f);
    if (auto items = list<std::int64_t>("space.unrolls", unrolls_where)) {
      if (items->empty()) diag_.add(unrolls_where, "is empty: nothing to tune");
      for (const auto& item : *items) {
        const std::int64_t u = item.value;
        if (u < 1) {
          diag_.add(item.where, fmt::format("unroll factor {} must be at least 1", u));
          continue;
        }
        if (!all_unrolls.count(static_cast<int>(std::min<std::int64_t>(u, 1 << 20)))) {
          diag_.add(item.where, fmt::format("unroll {} is not in the registry for any family "
                                            "(compiled unroll factors: {})",
                                            u, join(all_unrolls)));
          continue;
        }
        bool somewhere = with_unroll.empty();
        std::vector<std::string> per_family;
        for (Family f : with_unroll) {
          auto us_f = compiled_unrolls(f);
          somewhere |= std::find(us_f.begin(), us_f.end(), u) != us_f.end();
          per_family.push_back(fmt::format("{}: {}", kernels::family_name(f), join(us_f)));
        }
        if (!somewhere) {
          diag_.add(item.where, fmt::format("unroll {} is not in the registry for the selected "
                                            "families with an unroll factor ({})",
                                            u, join(per_family, "; ")));
          continue;
        }
        if (std::find(s.unrolls.begin(), s.unrolls.end(), u) == s.unrolls.end())
          s.unrolls.push_back(static_cast<int>(u));
      }
    } else {
      s.unrolls.assign(all_unrolls.begin(), all_unrolls.end());
    }

    // Whether a compiled configuration lies on the selected blocks, unrolls, modes and finishes.
    auto axes_selected = [&](const kernels::KernelParams& p) {
      return contains(s.blocks, p.block) &&
             (!has_unroll_axis(p.family) || contains(s.unrolls, p.unroll)) &&
             (!has_smem_axis(p.family) || contains(s.smem, p.smem)) &&
             contains(s.finishes, p.finish);
    };

    // A selected family whose axes leave no compiled entry: reported at the family.
    if (diag_.size() == errors_before) {
      for (std::size_t i = 0; i < s.families.size(); ++i) {
        const Family f = s.families[i];
        // A family that implements none of the selected operators (an exact family when
        // exact_sum is not asked for) has nothing to report.
        if (!kernels::space::implements_any(f, s.ops)) continue;
        std::size_t count = 0;
        for (DType t : all_dtypes)
          for (Op o : all_ops)
            kernels::space::for_each_config(t, o, [&](const kernels::KernelParams& p) {
              count += p.family == f && axes_selected(p);
            });
        if (count) continue;
        std::string where = families_where;
        if (fam_items)
          for (const auto& item : *fam_items)
            if (kernels::parse_family(item.value) == f) {
              where = item.where;
              break;
            }
        std::string why;
        if (f == Family::single_tile && !contains(s.finishes, kernels::Finish::single_pass))
          why = "its one block has nothing to finish: it compiles finish single_pass only";
        else if (blocks_of(f).size() != std::size(kernels::space::blocks))
          why = fmt::format("it compiles blocks {} and unroll {}", join(blocks_of(f)),
                            join(compiled_unrolls(f)));
        else if (has_unroll_axis(f))
          why = fmt::format("it compiles unroll {}; space.unrolls selects {}",
                            join(compiled_unrolls(f)), join(s.unrolls));
        diag_.add(where, fmt::format("family '{}' has no compiled entry with the selected axes{}",
                                     kernels::family_name(f),
                                     why.empty() ? std::string() : " (" + why + ")"));
      }
    }
    // exact_sum is defined for f32, f64, f16 and bf16 only, wide_sum for i32, u32, f32, f16 and
    // bf16, sum, min, max, argmin and argmax for the 4- and 8-byte types (op_applies): the other
    // types' keys are left out (as a finish a family lacks is), but an operator asked for with
    // none of its types tunes nothing ("operator 'argmin' is defined for i32, u32, i64, u64,
    // f32 and f64 only; space.dtypes selects f16"). Operators nobody asked for (the default's
    // wide_sum, argmin and argmax) are left out silently, where their types or families are not
    // selected.
    const bool ops_given = get("space.ops") != nullptr;
    for (Op o : s.ops) {
      if (!ops_given || s.dtypes.empty() ||
          std::any_of(s.dtypes.begin(), s.dtypes.end(), [o](DType t) { return op_applies(t, o); }))
        continue;
      std::vector<std::string> types;
      for (DType t : s.dtypes) types.emplace_back(dtype_name(t));
      diag_.add(get("space.ops") ? get("space.ops")->where : "space.ops",
                fmt::format("operator '{}' is defined for {} only; space.dtypes selects {}",
                            op_name(o), op_dtypes(o), join(types)));
    }
    // A selected (dtype, op) left with no entry (only `packed`, which exists for i32/u32 sum; the
    // exact families, which alone implement exact_sum; none of the 16-byte-load families that
    // alone implement wide_sum, argmin and argmax).
    if (diag_.size() == errors_before) {
      for (DType t : s.dtypes)
        for (Op o : s.ops) {
          if (!op_applies(t, o)) continue;
          std::size_t count = 0;
          kernels::space::for_each_config(t, o, [&](const kernels::KernelParams& p) {
            count += contains(s.families, p.family) && axes_selected(p);
          });
          if (count == 0 && !ops_given) continue;  // the default's wide_sum, argmin, argmax: no key
          if (count == 0 && o == Op::exact_sum)
            diag_.add(get("space.families") ? get("space.families")->where : "space.families",
                      fmt::format("selects no compiled entry for {} exact_sum (only the families "
                                  "{} implement it, with blocks 128, 256, 512, unroll 1, 2, 4 and "
                                  "finishes two_pass, single_pass)",
                                  dtype_name(t), implementing_families(t, o)));
          else if (count == 0 && (o == Op::wide_sum || o == Op::absmax || is_arg_op(o)))
            diag_.add(get("space.families") ? get("space.families")->where : "space.families",
                      fmt::format("selects no compiled entry for {} {} ({})", dtype_name(t),
                                  op_name(o), implementing(t, o)));
          else if (count == 0)
            diag_.add(get("space.finishes") ? get("space.finishes")->where : "space.finishes",
                      fmt::format("selects no compiled entry for {} {} (finish 'packed' exists "
                                  "for i32 and u32 sum only)",
                                  dtype_name(t), op_name(o)));
        }
    }
    grid("space.sizes", s.sizes, kernels::max_elements, "the largest n a kernel accepts");
  }

  template <class V, class T>
  static bool contains(const V& v, const T& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  // A key of sizes (space.sizes, segmented.segment_sizes, segmented.segment_counts): a list or a
  // range of values in [1, max] (2^40 for each), where \p limit says what max is.
  void grid(std::string_view path, std::vector<std::uint64_t>& out, std::uint64_t max,
            std::string_view limit) {
    const Located<RawValue>* v = get(path);
    if (!v) return;  // the default
    out.clear();
    const RawSizes& r = std::get<RawSizes>(v->value);
    const auto max_n = static_cast<std::int64_t>(max);
    auto check_n = [&](const Located<std::int64_t>& x, const char* what) {
      if (x.value < 1) {
        diag_.add(x.where, fmt::format("{}{} is below 1", what, x.value));
        return false;
      }
      if (x.value > max_n) {
        diag_.add(x.where,
                  fmt::format("{}{} is above {}, {}", what, x.value,
                              max == kernels::max_elements ? std::string("2^40 = 1099511627776")
                                                           : std::to_string(max),
                              limit));
        return false;
      }
      return true;
    };
    if (!r.is_range) {
      if (r.list.empty()) diag_.add(v->where, "is empty: nothing to tune");
      for (const auto& x : r.list)
        if (check_n(x, "size ")) out.push_back(static_cast<std::uint64_t>(x.value));
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      if (out.size() > max_grid_sizes)
        diag_.add(v->where,
                  fmt::format("has {} sizes; at most {} are allowed", out.size(), max_grid_sizes));
      return;
    }
    bool ok = true;
    if (!r.from) diag_.add(v->where, "a range needs 'from'"), ok = false;
    if (!r.to) diag_.add(v->where, "a range needs 'to'"), ok = false;
    if (r.step && r.factor)
      diag_.add(r.factor->where, "give either 'step' (additive) or 'factor' (geometric), not both"),
          ok = false;
    if (!r.step && !r.factor)
      diag_.add(v->where, "a range needs 'step' (additive) or 'factor' (geometric)"), ok = false;
    if (r.from && !check_n(*r.from, "from = ")) ok = false;
    if (r.to && !check_n(*r.to, "to = ")) ok = false;
    if (r.from && r.to && r.from->value > r.to->value) {
      diag_.add(v->where,
                fmt::format("from ({}) is greater than to ({})", r.from->value, r.to->value));
      ok = false;
    }
    if (r.step && r.step->value < 1) {
      diag_.add(r.step->where, fmt::format("step {} does not advance the range (it must be at "
                                           "least 1)",
                                           r.step->value));
      ok = false;
    }
    if (r.factor && !(r.factor->value > 1)) {
      diag_.add(r.factor->where, fmt::format("factor {:g} does not advance the range (it must be "
                                             "greater than 1)",
                                             r.factor->value));
      ok = false;
    }
    if (!ok) return;
    try {
      out = expand_range(static_cast<std::uint64_t>(r.from->value),
                         static_cast<std::uint64_t>(r.to->value),
                         r.step ? std::optional<std::uint64_t>(r.step->value) : std::nullopt,
                         r.factor ? std::optional<double>(r.factor->value) : std::nullopt,
                         v->where);
    } catch (const Error& e) {
      diag_.add("", e.what());
    }
  }

  // A scalar key of the schema: its value checked against its bounds and stored in its field.
  void store(const KeySpec& key, TuneConfig& c) {
    const Located<RawValue>* v = get(key.path);
    if (!v) return;
    std::visit(
        [&](auto at) {
          if constexpr (std::is_same_v<decltype(at), std::monostate>) {
            throw std::logic_error("tune.toml key " + std::string(key.path) + " has no field");
          } else {
            auto& field = at(c);
            using T = std::decay_t<decltype(field)>;
            if constexpr (std::is_same_v<T, bool>) {
              field = std::get<bool>(v->value);
            } else if constexpr (std::is_same_v<T, double> ||
                                 std::is_same_v<T, std::optional<double>>) {
              const double x = std::get<double>(v->value);
              if (admitted(key, *v, x, fmt::format("{:g}", x))) field = x;
            } else {
              const std::int64_t x = std::get<std::int64_t>(v->value);
              if (!admitted(key, *v, static_cast<double>(x), std::to_string(x))) return;
              if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) field = x;
              else field = static_cast<T>(x);  // within the bounds, so within T
            }
          }
        },
        key.field);
  }

  bool admitted(const KeySpec& key, const Located<RawValue>& v, double x, const std::string& text) {
    if (!key.bounds || key.bounds->admits(x)) return true;
    diag_.add(v.where, fmt::format(fmt::runtime(key.bounds->message), text));
    return false;
  }

  // Every key with a field under \p prefix ("measure."), in schema order.
  void fields(std::string_view prefix, TuneConfig& c) {
    for (const KeySpec& k : config_keys())
      if (k.path.starts_with(prefix) && !std::holds_alternative<std::monostate>(k.field))
        store(k, c);
  }

  void measure(MeasurePolicy& m) {
    if (auto l2 = scalar<std::string>("measure.l2")) {
      if (auto mode = db::parse_l2_mode(l2->value)) m.l2 = *mode;
      else diag_.add(l2->where, "unknown L2 mode '" + l2->value + "'; choices: cold, warm");
    }
    if (m.max_repeats < m.min_repeats) {
      auto where = get("measure.max_repeats") ? get("measure.max_repeats")->where
                                              : get("measure.min_repeats")->where;
      diag_.add(where, fmt::format("max_repeats ({}) is less than min_repeats ({})", m.max_repeats,
                                   m.min_repeats));
    }
    if (m.timeout_s * 1000 <= m.budget_ms) {
      auto* v = get("measure.timeout_s") ? get("measure.timeout_s") : get("measure.budget_ms");
      diag_.add(v ? v->where : "measure",
                fmt::format("timeout_s ({:g} s) must exceed budget_ms ({:g} ms): every candidate "
                            "would time out",
                            m.timeout_s, m.budget_ms));
    }
  }

  void strategy(TuneConfig& c) {
    StrategyConfig& s = c.strategy;
    std::string name_where = "strategy.name";
    if (auto name = scalar<std::string>("strategy.name")) {
      name_where = name->where;
      if (!find_strategy(name->value)) {
        std::vector<std::string> choices;
        for (const StrategyInfo& i : strategies()) choices.emplace_back(i.name);
        diag_.add(name->where, fmt::format("unknown strategy '{}'", name->value) +
                                   did_you_mean(name->value, choices) +
                                   "; choices: " + join(choices));
      } else {
        s.name = name->value;
      }
    }
    store(*find_key("strategy.seed"), c);
    // Each strategy's options, then its rule across them where it is the one chosen.
    for (const StrategyInfo& info : strategies()) {
      for (const KeySpec& k : info.options) store(k, c);
      if (info.check && s.name == info.name) {
        const std::string problem =
            info.check([&](std::string_view key) { return get(key) != nullptr; });
        if (!problem.empty()) diag_.add(name_where, problem);
      }
    }
  }

  // [segmented]: the keys ("f32.sum"), their families and layouts, the grid and its bound.
  void segmented(TuneConfig& c) {
    namespace seg = kernels::segmented;
    SegmentedConfig& g = c.segmented;
    const SegmentedConfig defaults = default_config().segmented;
    const std::size_t errors_before = diag_.size();
    g.keys = seg_keys();
    g.families = names(
        "segmented.families", seg_family_names, seg::all_seg_families,
        [](std::string_view s) { return seg_family_names.from_name(s); }, "segmented family");
    g.layouts = names(
        "segmented.layouts", seg_layout_names, seg::all_seg_layouts,
        [](std::string_view s) { return seg_layout_names.from_name(s); }, "segment layout",
        defaults.layouts);
    grid("segmented.segment_sizes", g.segment_sizes, kernels::max_elements,
         "the largest segment size the tuner takes");
    grid("segmented.segment_counts", g.segment_counts, seg::max_segments,
         "the most segments a segmented kernel takes");
    fields("segmented.", c);
    if (g.keys.empty() || diag_.size() != errors_before) return;

    // A grid left empty by max_total, or too large to measure.
    auto where = [&](std::string_view path) {
      const Located<RawValue>* v = get(path);
      return v ? v->where : std::string(path);
    };
    const std::size_t points = seg_grid(g).size();
    if (points == 0) {
      diag_.add(where("segmented.max_total"),
                fmt::format("leaves no grid point: the smallest, {} elements x {} segments, is "
                            "more than max_total = {} elements",
                            g.segment_sizes.front(), g.segment_counts.front(), g.max_total));
      return;
    }
    if (points > max_seg_grid_points) {
      diag_.add(where("segmented.segment_sizes"),
                fmt::format("with segmented.segment_counts gives {} grid points within max_total; "
                            "at most {} are allowed",
                            points, max_seg_grid_points));
      return;
    }
    // Each key and layout: a selected family with that layout, and a grid point it can run.
    for (const SegKey& k : g.keys)
      for (seg::SegLayout l : g.layouts) {
        const std::vector<seg::SegParams> configs = seg_configs(g, k.dtype, k.op, l);
        const std::string label = fmt::format("{} {} with layout {}", dtype_name(k.dtype),
                                              op_name(k.op), seg_layout_names.to_name(l));
        if (configs.empty()) {
          std::vector<std::string> with_layout;
          for (seg::SegFamily f : seg::all_seg_families) {
            bool compiled = false;
            seg::space::for_each_config(k.dtype, k.op, [&](const seg::SegParams& p) {
              compiled = compiled || (p.family == f && p.layout == l);
            });
            if (compiled) with_layout.emplace_back(seg_family_names.to_name(f));
          }
          diag_.add(where("segmented.families"),
                    fmt::format("selects no compiled segmented entry for {} (the families {} "
                                "have it)",
                                label, and_join(with_layout)));
          continue;
        }
        const bool runs_somewhere = std::any_of(configs.begin(), configs.end(), [&](auto& p) {
          for (std::uint64_t s : g.segment_counts)
            for (std::uint64_t n : g.segment_sizes)
              if (seg_within_total(n, s, g.max_total) && seg_runs_rows_of(p, n)) return true;
          return false;
        });
        if (!runs_somewhere)
          diag_.add(where("segmented.segment_sizes"),
                    fmt::format("no grid point has a candidate for {}: the selected families "
                                "take none of these segment sizes (tile takes rows whose length "
                                "divides a 16-byte vector, {} elements of {})",
                                label, seg::vector_elements(k.dtype), dtype_name(k.dtype)));
      }
  }

  // segmented.keys: "DTYPE.OP" items of keys with segmented kernels; absent: none; "all": every
  // such key.
  std::vector<SegKey> seg_keys() {
    std::vector<SegKey> all;
    for (DType t : all_dtypes)
      for (Op o : all_ops)
        if (kernels::segmented::seg_op_applies(t, o)) all.push_back({t, o});
    std::string where;
    auto items = list<std::string>("segmented.keys", where);
    if (!get("segmented.keys")) return {};
    if (!items) return all;
    std::vector<std::string> choices;
    for (const SegKey& k : all) choices.push_back(seg_key_name(k));
    std::vector<SegKey> out;
    for (const auto& item : *items) {
      const std::string& text = item.value;
      const std::size_t dot = text.find('.');
      std::optional<DType> t;
      std::optional<Op> o;
      std::string msg;
      if (dot == std::string::npos) {
        msg = fmt::format("'{}' is not a segmented key: write DTYPE.OP, as \"f32.sum\"", text);
      } else {
        t = parse_dtype(text.substr(0, dot));
        o = parse_op(text.substr(dot + 1));
        if (!t)
          msg = fmt::format("unknown element type '{}' in segmented key '{}' (element types: {})",
                            text.substr(0, dot), text, dtype_choices());
        else if (!o)
          msg = fmt::format("unknown operator '{}' in segmented key '{}' (operators: {})",
                            text.substr(dot + 1), text, op_choices());
        else if (*o == Op::exact_sum)
          msg = fmt::format(
              "'{}' has no segmented kernels: exact_sum has none (its accumulator "
              "does not fit a lane per segment)",
              text);
        else if (!op_applies(*t, *o))
          msg = fmt::format("'{}' has no segmented kernels: operator '{}' is defined for {} only",
                            text, op_name(*o), op_dtypes(*o));
      }
      if (!msg.empty()) {
        if (t && o) {
          // A type and an operator without segmented kernels: the keys this type has.
          std::vector<std::string> of_type;
          for (const SegKey& k : all)
            if (k.dtype == *t) of_type.push_back(seg_key_name(k));
          msg += fmt::format("; the segmented keys of {}: {}", dtype_name(*t), join(of_type));
        } else if (auto near = nearest(text, choices)) {
          msg += fmt::format(" (did you mean '{}'?)", *near);
        }
        diag_.add(item.where, msg);
        continue;
      }
      const SegKey k{*t, *o};
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
    return out;
  }

  const RawConfig& raw_;
  const ValidationLimits& limits_;
  Diagnostics& diag_;
};

}  // namespace

TuneConfig validate_config(const RawConfig& raw, const ValidationLimits& limits) {
  Diagnostics diag;
  TuneConfig c = Validator(raw, limits, diag).run();
  diag.throw_if_any();
  return c;
}

std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor, const std::string& where) {
  return grammar::expand_range(from, to, step, factor, where, max_grid_sizes);
}

}  // namespace tunedreduce::tuner
