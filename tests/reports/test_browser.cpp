// The HTML report in a real browser: headless Chromium renders it, and the DOM it built must
// hold the charts (an SVG per view of each section, a line and a legend entry per series, log2
// tick labels) and no element made from the database's strings; a screenshot must not be blank
// and a print to PDF must work. Every kind, rendered at a laptop's width (1366 px), must fit it:
// no table wider than its container, nothing past the page's right edge, one view shown per
// figure, every legend inside its chart (a script added to a copy of the report measures the
// layout and writes it into the DOM that Chromium dumps). Skipped, with the reason, where
// Chromium is not installed (a ctest "Skipped").

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "common/json.hpp"
#include "db/bench.hpp"
#include "demo_db.hpp"
#include "reports/reports.hpp"
#include "test_util.hpp"

#ifdef TR_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tunedreduce::reports {
namespace {

namespace fs = std::filesystem;
using db::test::ProcessResult;
using db::test::TempDir;

std::optional<std::string> on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

// $TR_CHROMIUM, else Debian's chromium (or another name for the same browser) on PATH.
std::optional<std::string> find_chromium() {
  if (const char* e = std::getenv("TR_CHROMIUM"); e && *e) return std::string(e);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (auto p = on_path(name)) return p;
  return std::nullopt;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

class Browser : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db::Database d = db::Database::create_in_memory();
    test::DemoOptions o;
    o.hostile = true;  // the H200's name is hostile: it heads a section and names a line
    o.log2_step = 2;
    o.config_stride = 3;
    o.f32_sum = false;
    test::build_demo(d, o);
    ReportOptions ro;
    ro.kind = Kind::variants;
    ro.dtypes = {DType::i32};
    ro.ops = {Op::sum};
    html_ = new fs::path(dir_->path() / "variants.html");
    db::test::write_file(*html_, render(build_report(d, ro), Format::html));
  }
  static void TearDownTestSuite() {
    delete html_;
    delete dir_;
  }
  void SetUp() override {
    chromium_ = find_chromium();
    if (!chromium_)
      GTEST_SKIP() << "chromium is not installed: the HTML report was not rendered in a browser "
                      "(apt-get install chromium, or run scripts/install-deps.sh with "
                      "TUNEDREDUCE_WITH_CHROMIUM=1; TR_CHROMIUM names another binary)";
  }

  // Runs headless Chromium on the report with \p args; a hang is cut off after 90 s.
  ProcessResult chromium(const std::vector<std::string>& args) {
    TempDir profile;
    std::vector<std::string> argv;
    if (auto t = on_path("timeout")) argv = {*t, "90"};
    argv.insert(argv.end(),
                {*chromium_, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--user-data-dir=" + profile.path().string()});
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(html_->string());
    return db::test::run_process(argv, {"HOME=" + profile.path().string()});
  }

  std::optional<std::string> chromium_;
  static TempDir* dir_;
  static fs::path* html_;
};
TempDir* Browser::dir_ = nullptr;
fs::path* Browser::html_ = nullptr;

TEST_F(Browser, TheRenderedDomHoldsTheChartsAndNoInjectedElement) {
  const ProcessResult r = chromium({"--dump-dom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& dom = r.out;
  ASSERT_NE(dom.find("</html>"), std::string::npos) << dom.substr(0, 500);
  // Per device section a figure with two views: GB/s (linear) and µs (log), a tab each.
  EXPECT_EQ(count(dom, "<svg class=\"chart line-chart\""), 2u);
  EXPECT_EQ(count(dom, "<svg class=\"chart line-chart log-y\""), 2u);
  EXPECT_EQ(count(dom, "<figure class=\"views\">"), 2u);
  EXPECT_EQ(count(dom, "<input type=\"radio\""), 4u);
  // A line and a legend entry per family, in all four charts; the hostile family is a line too.
  for (const char* family :
       {"neighbored", "neighbored_less", "interleaved", "unroll", "unroll_warps", "complete_unroll",
        "smem", "warp_shuffle", "vectorized", "tiled", "streaming"}) {
    const std::string attr = std::string("data-series=\"") + family + "\"";
    EXPECT_EQ(count(dom, "<g class=\"series\" " + attr), 4u) << family;
    EXPECT_EQ(count(dom, "<g class=\"legend-item\" " + attr), 4u) << family;
  }
  EXPECT_EQ(count(dom, "<path class=\"line\" d=\"M"), 46u);  // (11 + 11 + the hostile one) × 2
  EXPECT_GE(count(dom, "class=\"point\""), 46u * 5);
  // The GB/s view draws the device's theoretical and attainable bandwidth.
  EXPECT_EQ(count(dom, "<g class=\"reference\""), 4u);
  // Axes: log2 ticks from 2^10 to 2^30.
  EXPECT_NE(dom.find("2<tspan dy=\"-6\" font-size=\"9\">10</tspan>"), std::string::npos);
  EXPECT_NE(dom.find("2<tspan dy=\"-6\" font-size=\"9\">30</tspan>"), std::string::npos);
  EXPECT_NE(dom.find("n (elements, log scale)"), std::string::npos);
  // The hostile strings are text, not elements.
  EXPECT_EQ(lower(dom).find("<script"), std::string::npos);
  EXPECT_EQ(lower(dom).find("<i>x</i>"), std::string::npos);
  EXPECT_NE(dom.find("&lt;script&gt;alert('x')&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"num mark\""), std::string::npos);
}

#ifdef TR_HAVE_ZLIB
std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t(static_cast<unsigned char>(s[at])) << 24) |
         (std::uint32_t(static_cast<unsigned char>(s[at + 1])) << 16) |
         (std::uint32_t(static_cast<unsigned char>(s[at + 2])) << 8) |
         std::uint32_t(static_cast<unsigned char>(s[at + 3]));
}

struct Image {
  std::uint32_t width = 0, height = 0, channels = 0;
  std::vector<unsigned char> pixels;  // rows of width * channels bytes
};

// Decodes the 8-bit RGB/RGBA, non-interlaced PNGs that Chromium writes.
Image decode_png(const std::string& png) {
  Image img;
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    throw std::runtime_error("not a PNG");
  std::string idat;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    const std::uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(png, at + 8);
      img.height = be32(png, at + 12);
      const int depth = png[at + 16], colour = png[at + 17], interlace = png[at + 20];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        throw std::runtime_error("unexpected PNG format");
      img.channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  const std::size_t stride = std::size_t{img.width} * img.channels;
  std::vector<unsigned char> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size())
    throw std::runtime_error("bad PNG data");
  img.pixels.resize(stride * img.height);
  const std::size_t bpp = img.channels;
  for (std::size_t y = 0; y < img.height; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* in = &raw[y * (stride + 1) + 1];
    unsigned char* out = &img.pixels[y * stride];
    const unsigned char* up = y ? &img.pixels[(y - 1) * stride] : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? out[x - bpp] : 0, b = up ? up[x] : 0,
                c = (up && x >= bpp) ? up[x - bpp] : 0;
      int v = in[x];
      switch (filter) {
        case 0:
          break;
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          v += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          throw std::runtime_error("bad PNG filter");
      }
      out[x] = static_cast<unsigned char>(v);
    }
  }
  return img;
}
#endif

TEST_F(Browser, AScreenshotIsNotBlankAndShowsTheColouredLines) {
  const fs::path shot = dir_->path() / "shot.png";
  const ProcessResult r =
      chromium({"--window-size=1280,1000", "--hide-scrollbars", "--screenshot=" + shot.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(shot)) << r.err;
  const std::string png = db::test::read_file(shot);
#ifdef TR_HAVE_ZLIB
  const Image img = decode_png(png);
  ASSERT_EQ(img.width, 1280u);
  ASSERT_EQ(img.height, 1000u);
  std::size_t ink = 0, blue = 0, orange = 0;
  for (std::size_t i = 0; i + 2 < img.pixels.size(); i += img.channels) {
    const int r8 = img.pixels[i], g8 = img.pixels[i + 1], b8 = img.pixels[i + 2];
    if (r8 < 200 || g8 < 200 || b8 < 200) ++ink;
    if (b8 > r8 + 60 && b8 > g8 + 20) ++blue;     // the first series, #1f5fa8
    if (r8 > b8 + 100 && r8 > g8 + 60) ++orange;  // the second, #d9541e
  }
  const double total = double(img.width) * img.height;
  EXPECT_GT(ink / total, 0.02) << "the screenshot is (nearly) blank";
  EXPECT_GT(blue, 200u);
  EXPECT_GT(orange, 100u);
#else
  // Without zlib the pixels cannot be read: a blank page compresses to a few kilobytes.
  EXPECT_GT(png.size(), 40000u);
#endif
}

TEST_F(Browser, ItPrintsToPdf) {
  const fs::path pdf = dir_->path() / "report.pdf";
  const ProcessResult r = chromium({"--no-pdf-header-footer", "--print-to-pdf=" + pdf.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = db::test::read_file(pdf);
  EXPECT_TRUE(bytes.starts_with("%PDF-"));
  EXPECT_GT(bytes.size(), 20000u);
}

// --- layout at a laptop's width
// -------------------------------------------------------------------

// Measures the rendered page and writes the figures as JSON into <pre id="layout">.
constexpr const char* layout_script = R"js(
<script>
(function () {
  const out = {};
  const main = document.querySelector('main');
  const edge = main.getBoundingClientRect().right;
  out.viewport = document.documentElement.clientWidth;
  out.page_width = document.documentElement.scrollWidth;
  out.tables = [...document.querySelectorAll('.table-wrap')].map(w => ({
    table: w.firstElementChild.dataset.table, scroll: w.scrollWidth, client: w.clientWidth}));
  // Elements whose right edge lies past main's (tables are measured above, inside their wrap).
  out.past_edge = [];
  for (const el of main.querySelectorAll('*')) {
    if (el.closest('.table-wrap')) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 1)
      out.past_edge.push(el.tagName + '.' + (el.getAttribute('class') || '') + ' ' + Math.round(r.right));
  }
  // Per figure with views: how many of its views are displayed.
  out.views_shown = [...document.querySelectorAll('figure.views')].map(f =>
    [...f.querySelectorAll(':scope > div.view')].filter(v => getComputedStyle(v).display !== 'none').length);
  out.views = [...document.querySelectorAll('figure.views')].map(f =>
    f.querySelectorAll(':scope > div.view').length);
  // Legend texts outside their chart (too many series, too long names).
  out.legend_outside = 0;
  for (const t of document.querySelectorAll('svg.chart .legend-item text')) {
    const svg = t.closest('svg').getBoundingClientRect(), r = t.getBoundingClientRect();
    if (r.right > svg.right + 1 || r.bottom > svg.bottom + 1) out.legend_outside++;
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
)js";

struct LayoutCase {
  Kind kind;
  bool sample;  // tests/data/h100-sample.db (real) rather than the demo database with bench runs
};

void PrintTo(const LayoutCase& c, std::ostream* os) {
  *os << kind_name(c.kind) << (c.sample ? " of the H100 sample" : " of the demo");
}

std::string case_name(const ::testing::TestParamInfo<LayoutCase>& i) {
  return std::string(kind_name(i.param.kind)) + (i.param.sample ? "_H100Sample" : "_Demo");
}

class Layout : public ::testing::TestWithParam<LayoutCase> {
 protected:
  static void SetUpTestSuite() { dir_ = new TempDir(); }
  // Built on first use: each test runs in a process of its own under ctest.
  static db::Database& demo() {
    if (!demo_) {
      // Two devices, two keys, bench runs on the H100 (CUB columns, the bench kind), segmented
      // f32 sum on both (the segmented kind; the other kinds leave it out).
      demo_ = new db::Database(db::Database::create_in_memory());
      test::DemoOptions o;
      o.log2_step = 2;
      o.config_stride = 3;
      o.bench = true;
      o.segmented = true;
      test::build_demo(*demo_, o);
    }
    return *demo_;
  }
  // The real H100 sample, copied (a WAL file) and opened as a writer would (migrated to the
  // current schema), or null when it is missing.
  static db::Database* sample() {
    const fs::path data = TR_REPORT_TEST_DATA;
    if (!sample_ && fs::exists(data / "h100-sample.db")) {
      for (const char* ext : {"", "-wal", "-shm"})
        if (fs::exists(data / (std::string("h100-sample.db") + ext)))
          fs::copy_file(data / (std::string("h100-sample.db") + ext),
                        dir_->path() / (std::string("h100-sample.db") + ext));
      sample_ = new db::Database(db::Database::open_writer(dir_->path() / "h100-sample.db"));
    }
    return sample_;
  }
  static void TearDownTestSuite() {
    delete sample_;
    delete demo_;
    delete dir_;
  }
  void SetUp() override {
    chromium_ = find_chromium();
    if (!chromium_)
      GTEST_SKIP() << "chromium is not installed: the HTML reports' layout was not checked in a "
                      "browser (apt-get install chromium; TR_CHROMIUM names another binary)";
    if (GetParam().sample && !sample()) GTEST_SKIP() << "tests/data/h100-sample.db is missing";
  }

  // The report as HTML with the layout script, allowed by the page's policy, before </body>.
  fs::path instrumented(const std::string& html, const std::string& name) {
    std::string page = html;
    const std::string csp = "default-src 'none'; style-src 'unsafe-inline'";
    const auto at = page.find(csp);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) page.replace(at, csp.size(), csp + "; script-src 'unsafe-inline'");
    page.insert(page.rfind("</body>"), layout_script);
    const fs::path p = dir_->path() / (name + ".html");
    db::test::write_file(p, page);
    return p;
  }

  static Json measure_failed() { return Json::object(); }

  Json measure(const fs::path& page) {
    TempDir profile;
    std::vector<std::string> argv;
    if (auto t = on_path("timeout")) argv = {*t, "90"};
    argv.insert(argv.end(),
                {*chromium_, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--hide-scrollbars", "--window-size=1366,900",
                 "--user-data-dir=" + profile.path().string(), "--dump-dom", page.string()});
    const ProcessResult r = db::test::run_process(argv, {"HOME=" + profile.path().string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string open = "<pre id=\"layout\">";
    const auto a = r.out.find(open);
    const auto b = r.out.find("</pre>", a);
    if (a == std::string::npos || b == std::string::npos) {
      ADD_FAILURE() << "the layout script did not run:\n" << r.out.substr(0, 2000) << r.err;
      return measure_failed();
    }
    std::string text = r.out.substr(a + open.size(), b - a - open.size());
    for (const auto& [ref, ch] :
         {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
      for (std::size_t p = text.find(ref); p != std::string::npos; p = text.find(ref, p))
        text.replace(p, ref.size(), ch);
    return Json::parse(text);
  }

  std::optional<std::string> chromium_;
  static TempDir* dir_;
  static db::Database* demo_;
  static db::Database* sample_;
};
TempDir* Layout::dir_ = nullptr;
db::Database* Layout::demo_ = nullptr;
db::Database* Layout::sample_ = nullptr;

TEST_P(Layout, EveryReportFitsALaptopsWidth) {
  const LayoutCase c = GetParam();
  ReportOptions o;
  o.kind = c.kind;
  const Report report = build_report(c.sample ? *sample() : demo(), o);
  ASSERT_FALSE(report.empty) << *report.empty;
  const std::string name = std::string(kind_name(c.kind)) + (c.sample ? "-sample" : "-demo");
  const Json m = measure(instrumented(render(report, Format::html), name));
  auto at = [](const Json& j, const char* key) -> const Json& {
    static const Json null;
    const Json* v = j.find(key);
    if (!v) ADD_FAILURE() << "no member " << key;
    return v ? *v : null;
  };
  if (!m.find("viewport")) return;
  EXPECT_EQ(at(m, "viewport").as_int(), 1366);
  EXPECT_LE(at(m, "page_width").as_int(), at(m, "viewport").as_int())
      << "the page scrolls sideways";
  for (const Json& t : at(m, "tables").as_array())
    EXPECT_LE(at(t, "scroll").as_int(), at(t, "client").as_int())
        << "table '" << at(t, "table").as_string() << "' is wider than the page ("
        << at(t, "scroll").as_int() << " px in " << at(t, "client").as_int() << " px)";
  EXPECT_TRUE(at(m, "past_edge").as_array().empty()) << at(m, "past_edge").dump();
  const auto& views = at(m, "views").as_array();
  const auto& shown = at(m, "views_shown").as_array();
  ASSERT_EQ(views.size(), shown.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    EXPECT_GE(views[i].as_int(), 2);
    EXPECT_EQ(shown[i].as_int(), 1) << "figure " << i << " shows " << shown[i].as_int() << " views";
  }
  EXPECT_EQ(at(m, "legend_outside").as_int(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Reports, Layout,
    ::testing::Values(LayoutCase{Kind::best, false}, LayoutCase{Kind::variants, false},
                      LayoutCase{Kind::ladder, false}, LayoutCase{Kind::heatmap, false},
                      LayoutCase{Kind::compare, false}, LayoutCase{Kind::bench, false},
                      LayoutCase{Kind::coverage, false}, LayoutCase{Kind::segmented, false},
                      LayoutCase{Kind::best, true}, LayoutCase{Kind::variants, true}),
    case_name);

}  // namespace
}  // namespace tunedreduce::reports
