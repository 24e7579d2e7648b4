// The HTML report in a real browser: headless Chromium renders it, and the DOM it built must
// hold the charts (an SVG per section, a line and a legend entry per series, log2 tick labels)
// and no element made from the database's strings; a screenshot must not be blank and a print to
// PDF must work. Skipped, with the reason, where Chromium is not installed.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

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
    argv.insert(argv.end(), {*chromium_, "--headless", "--no-sandbox", "--disable-gpu",
                             "--disable-quic", "--no-first-run", "--disable-background-networking",
                             "--disable-component-update", "--disable-sync",
                             "--user-data-dir=" + profile.path().string()});
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
  // One line chart per device section.
  EXPECT_EQ(count(dom, "<svg class=\"chart line-chart\""), 2u);
  // A line and a legend entry per family, in both charts; the hostile family is a line too.
  for (const char* family : {"neighbored", "neighbored_less", "interleaved", "unroll", "unroll_warps",
                             "complete_unroll", "smem", "warp_shuffle", "vectorized", "tiled",
                             "streaming"}) {
    const std::string attr = std::string("data-series=\"") + family + "\"";
    EXPECT_EQ(count(dom, "<g class=\"series\" " + attr), 2u) << family;
    EXPECT_EQ(count(dom, "<g class=\"legend-item\" " + attr), 2u) << family;
  }
  EXPECT_EQ(count(dom, "<path class=\"line\" d=\"M"), 23u);  // 11 + 11 + the hostile family
  EXPECT_GE(count(dom, "<circle class=\"point\""), 23u * 5);
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
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) throw std::runtime_error("not a PNG");
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
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
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
      const int a = x >= bpp ? out[x - bpp] : 0, b = up ? up[x] : 0, c = (up && x >= bpp) ? up[x - bpp] : 0;
      int v = in[x];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          v += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: throw std::runtime_error("bad PNG filter");
      }
      out[x] = static_cast<unsigned char>(v);
    }
  }
  return img;
}
#endif

TEST_F(Browser, AScreenshotIsNotBlankAndShowsTheColouredLines) {
  const fs::path shot = dir_->path() / "shot.png";
  const ProcessResult r = chromium({"--window-size=1280,1000", "--hide-scrollbars", "--screenshot=" + shot.string()});
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
    if (b8 > r8 + 60 && b8 > g8 + 20) ++blue;      // the first series, #1f5fa8
    if (r8 > b8 + 100 && r8 > g8 + 60) ++orange;   // the second, #d9541e
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

}  // namespace
}  // namespace tunedreduce::reports
