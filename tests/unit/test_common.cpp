// Names, hashes, fingerprints, database location and logging set-up.

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/device_fingerprint.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/hash.hpp"
#include "common/log.hpp"
#include "common/names.hpp"
#include "common/paths.hpp"
#include "common/printable.hpp"
#include "tests/support/env_guard.hpp"
#include "tests/support/fixtures.hpp"

namespace tunedreduce {
namespace {

TEST(Names, ParseShortAndLongTypeNames) {
  EXPECT_EQ(parse_dtype("i32"), DType::i32);
  EXPECT_EQ(parse_dtype("int32"), DType::i32);
  EXPECT_EQ(parse_dtype("float"), DType::f32);
  EXPECT_EQ(parse_dtype("double"), DType::f64);
  EXPECT_EQ(parse_dtype("uint64"), DType::u64);
  EXPECT_FALSE(parse_dtype("int"));
  EXPECT_FALSE(parse_dtype("I32"));
  EXPECT_FALSE(parse_dtype(""));
  for (DType d : all_dtypes) EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  for (Op o : all_ops) EXPECT_EQ(parse_op(op_name(o)), o);
  EXPECT_EQ(parse_op("argmin"), Op::argmin);
  EXPECT_EQ(parse_op("argmax"), Op::argmax);
  EXPECT_STREQ(op_name(Op::argmin), "argmin");
  EXPECT_STREQ(op_name(Op::argmax), "argmax");
  EXPECT_FALSE(parse_op("avg"));
  EXPECT_FALSE(parse_op("arg_min"));
  EXPECT_FALSE(parse_op("ArgMax"));
  EXPECT_EQ(dtype_choices(), "i32, u32, i64, u64, f32, f64, f16, bf16");
  EXPECT_EQ(parse_dtype("half"), DType::f16);
  EXPECT_EQ(parse_dtype("float16"), DType::f16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_FALSE(parse_dtype("bf"));
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::u32), 4u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
}

enum class Colour { red, green, blue };
constexpr auto colour_names =
    enum_names<Colour>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}});

TEST(EnumNames, NameAndEnumeratorBothWays) {
  static_assert(colour_names.to_name(Colour::green) == std::string_view("green"));
  static_assert(colour_names.from_name("blue") == Colour::blue);
  static_assert(colour_names.lists_all_through(Colour::blue));
  static_assert(!colour_names.lists_all_through(Colour::green));  // a table too long
  for (const auto& e : colour_names) EXPECT_EQ(colour_names.from_name(e.name), e.value);
  EXPECT_FALSE(colour_names.from_name("Red"));  // exact, case-sensitive
  EXPECT_FALSE(colour_names.from_name(""));
  EXPECT_STREQ(colour_names.to_name(static_cast<Colour>(7)), "?");
  EXPECT_STREQ(colour_names.to_name(static_cast<Colour>(7), "unknown"), "unknown");
  EXPECT_EQ(colour_names.size(), 3u);
  EXPECT_EQ(colour_names.values()[2], Colour::blue);
}

TEST(EnumNames, ListsTheNamesForMessages) {
  EXPECT_EQ(colour_names.joined(), "red, green, blue");
  EXPECT_EQ(colour_names.joined(", ", " or "), "red, green or blue");
  EXPECT_EQ(colour_names.joined("|"), "red|green|blue");
  EXPECT_EQ(colour_names.names(), (std::vector<std::string>{"red", "green", "blue"}));
  constexpr auto one = enum_names<Colour>({{Colour::red, "red"}});
  EXPECT_EQ(one.joined(", ", " or "), "red");
  static_assert(!one.lists_all_through(Colour::blue));
  // Out of order: not the enum's every enumerator in order.
  constexpr auto swapped = enum_names<Colour>({{Colour::green, "green"}, {Colour::red, "red"}});
  static_assert(!swapped.lists_all_through(Colour::green));
}

TEST(EnumNames, TablesOfThePublicNamesUseThePublicFunctions) {
  static_assert(dtype_names.size() == std::size(all_dtypes));
  for (DType d : all_dtypes) EXPECT_STREQ(dtype_names.to_name(d), dtype_name(d));
  for (Op o : all_ops) EXPECT_STREQ(op_names.to_name(o), op_name(o));
  EXPECT_EQ(op_choices(), "sum, min, max, exact_sum, wide_sum, argmin, argmax, absmax");
  EXPECT_EQ(op_dtypes(Op::wide_sum), "i32, u32, f32, f16 and bf16");
  // The half types: wide_sum and exact_sum, both into a float, and absmax, nothing else.
  for (DType h : {DType::f16, DType::bf16}) {
    EXPECT_TRUE(is_half(h));
    for (Op o : all_ops)
      EXPECT_EQ(op_applies(h, o), o == Op::wide_sum || o == Op::exact_sum || o == Op::absmax)
          << op_name(o);
    EXPECT_EQ(result_dtype(h, Op::wide_sum), DType::f32);
    EXPECT_EQ(result_dtype(h, Op::exact_sum), DType::f32);
    EXPECT_EQ(result_bytes(h, Op::exact_sum), 4u);
  }
  EXPECT_EQ(result_dtype(DType::f64, Op::exact_sum), DType::f64);
  EXPECT_FALSE(is_half(DType::f32));
  EXPECT_EQ(op_dtypes(Op::exact_sum), "f32, f64, f16 and bf16");
  EXPECT_EQ(op_dtypes(Op::sum), "i32, u32, i64, u64, f32 and f64");
  EXPECT_EQ(parse_dtype("float64"), DType::f64);
  // argmin and argmax: the 4- and 8-byte types, an IndexedValue of the element type (16 bytes).
  for (Op o : {Op::argmin, Op::argmax}) {
    EXPECT_TRUE(is_arg_op(o));
    EXPECT_EQ(op_dtypes(o), "i32, u32, i64, u64, f32 and f64") << op_name(o);
    for (DType d : all_dtypes) {
      EXPECT_EQ(op_applies(d, o), !is_half(d)) << dtype_name(d) << " " << op_name(o);
      if (!op_applies(d, o)) continue;
      EXPECT_EQ(result_dtype(d, o), d) << dtype_name(d) << " " << op_name(o);
      EXPECT_EQ(result_bytes(d, o), 16u) << dtype_name(d) << " " << op_name(o);
    }
  }
  for (Op o : all_ops) EXPECT_EQ(is_arg_op(o), o == Op::argmin || o == Op::argmax) << op_name(o);
  EXPECT_EQ(result_bytes(DType::i32, Op::min), 4u);
  EXPECT_EQ(result_bytes(DType::i32, Op::wide_sum), 8u);
  EXPECT_EQ(sizeof(IndexedValue<std::int32_t>), 16u);
  EXPECT_EQ(sizeof(IndexedValue<double>), 16u);
  EXPECT_EQ(parse_dtype("uint32"), DType::u32);
}

TEST(Hash, Fnv1aKnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(hex64(0x0123456789abcdefull), "0123456789abcdef");
  EXPECT_EQ(hex64(0), "0000000000000000");
}

DeviceFingerprint h100() { return test::h100_fingerprint(); }

TEST(Fingerprint, KeyCoversHardAttributesOnly) {
  const DeviceFingerprint a = h100();
  DeviceFingerprint b = a;
  b.driver_version = 12080;
  b.runtime_version = 12080;
  EXPECT_EQ(a.key(), b.key());  // soft attributes do not change identity
  b.sm_count = 114;
  EXPECT_NE(a.key(), b.key());
  b = a;
  b.name = "NVIDIA H100 PCIe";
  EXPECT_NE(a.key(), b.key());
  EXPECT_EQ(a.key().size(), 16u);
  EXPECT_EQ(a.arch(), "sm_90");
  EXPECT_NEAR(a.theoretical_gbps(), 3352.3, 0.1);  // 2619 MHz x 5120 bit x 2
}

using test::EnvGuard;

TEST(Paths, ResolutionOrder) {
  EnvGuard g1("TUNEDREDUCE_DB"), g2("XDG_DATA_HOME"), g3("HOME");
  setenv("TUNEDREDUCE_DB", "/env/tune.db", 1);
  setenv("XDG_DATA_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(resolve_db_path(std::string("/cli.db")).path, "/cli.db");
  EXPECT_EQ(resolve_db_path(std::nullopt).path, "/env/tune.db");
  unsetenv("TUNEDREDUCE_DB");
  EXPECT_EQ(resolve_db_path(std::nullopt).path, "/xdg/tunedreduce/tune.db");
  setenv("XDG_DATA_HOME", "", 1);  // empty counts as unset
  EXPECT_EQ(resolve_db_path(std::nullopt).path, "/home/u/.local/share/tunedreduce/tune.db");
  unsetenv("HOME");
  unsetenv("XDG_DATA_HOME");
  try {
    resolve_db_path(std::nullopt);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("--db"), std::string::npos);
  }
  EXPECT_THROW(resolve_db_path(std::string("")), Error);
}

TEST(Paths, ReadersFallBackToTheSystemsDataFolders) {
  EnvGuard g1("TUNEDREDUCE_DB"), g2("XDG_DATA_HOME"), g3("HOME"), g4("XDG_DATA_DIRS");
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tr_paths_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "sys2" / "tunedreduce");
  std::filesystem::create_directories(root / "home" / ".local" / "share" / "tunedreduce");
  std::ofstream(root / "sys2" / "tunedreduce" / "tune.db") << "x";
  unsetenv("TUNEDREDUCE_DB");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", (root / "home").c_str(), 1);
  setenv("XDG_DATA_DIRS",
         ("relative:" + (root / "sys1").string() + ":" + (root / "sys2").string()).c_str(), 1);
  // The user has none: the first system folder that has one (a relative entry is skipped).
  DbLocation r = resolve_db_path_for_reading(std::nullopt);
  EXPECT_EQ(r.path, root / "sys2" / "tunedreduce" / "tune.db");
  EXPECT_EQ(r.source, "$XDG_DATA_DIRS");
  // Writers never go there.
  EXPECT_EQ(resolve_db_path(std::nullopt).path, root / "home/.local/share/tunedreduce/tune.db");
  // The user's own file comes first once it exists; --db and $TUNEDREDUCE_DB always.
  std::ofstream(root / "home/.local/share/tunedreduce/tune.db") << "x";
  EXPECT_EQ(resolve_db_path_for_reading(std::nullopt).source, "$HOME");
  EXPECT_EQ(resolve_db_path_for_reading(std::string("/cli.db")).path, "/cli.db");
  setenv("TUNEDREDUCE_DB", "/env/tune.db", 1);
  EXPECT_EQ(resolve_db_path_for_reading(std::nullopt).path, "/env/tune.db");
  unsetenv("TUNEDREDUCE_DB");
  // A service without a HOME still finds the system's; with nothing anywhere, the error says
  // where it looked.
  unsetenv("HOME");
  EXPECT_EQ(resolve_db_path_for_reading(std::nullopt).path, root / "sys2/tunedreduce/tune.db");
  setenv("XDG_DATA_DIRS", (root / "sys1").c_str(), 1);
  try {
    resolve_db_path_for_reading(std::nullopt);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("no tunedreduce/tune.db in $XDG_DATA_DIRS"),
              std::string::npos)
        << e.what();
  }
  // With a HOME and no file anywhere: the user's location, so that "missing" names it.
  setenv("HOME", (root / "nohome").c_str(), 1);
  EXPECT_EQ(resolve_db_path_for_reading(std::nullopt).path,
            root / "nohome/.local/share/tunedreduce/tune.db");
  std::filesystem::remove_all(root);
}

TEST(Logging, RejectsUnknownLevels) {
  EXPECT_NO_THROW(init_logging("info"));
  EXPECT_NO_THROW(init_logging("off"));
  EXPECT_NO_THROW(init_logging("debug"));  // twice is fine
  try {
    init_logging("verbose");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("verbose"), std::string::npos);
  }
}

// --- inputs and outputs that are not regular files ---------------------------------------------

struct FifoDir {
  std::filesystem::path dir;
  FifoDir() {
    char tmpl[] = "/tmp/tr_fifo.XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~FifoDir() { std::filesystem::remove_all(dir); }
  std::filesystem::path fifo(const char* name) const {
    const auto p = dir / name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// `--config FIFO` with no writer blocked forever in open(2): now an error after the timeout.
TEST(Files, AFifoNobodyWritesToIsAnErrorAfterTheTimeoutNotAHang) {
  FifoDir d;
  const auto fifo = d.fifo("tune.toml");
  const auto start = std::chrono::steady_clock::now();
  try {
    read_file_limited(fifo, 1024, "a tune.toml", 2, std::chrono::milliseconds(300));
    ADD_FAILURE() << "read a FIFO nobody writes to";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find(": a FIFO that nobody wrote to for 0.3 s (a tune.toml)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(seconds_since(start), 5.0);
}

// A FIFO (`--config <(generate)`) is still read when its writer comes, to its end.
TEST(Files, AFifoIsReadToItsEndWhenItsWriterComes) {
  FifoDir d;
  const auto fifo = d.fifo("in");
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(fifo) << "[tuner]\nrepeats = 5\n";
  });
  EXPECT_EQ(read_file_limited(fifo, 1024, "a tune.toml", 2, std::chrono::milliseconds(5000)),
            "[tuner]\nrepeats = 5\n");
  writer.join();
}

// `db export -o FIFO` with no reader blocked forever in open(2): now an error after the timeout.
TEST(Files, AFifoNobodyReadsIsAnErrorAfterTheTimeoutNotAHang) {
  FifoDir d;
  const auto fifo = d.fifo("out.json");
  const auto start = std::chrono::steady_clock::now();
  try {
    write_file(fifo, "{}\n", std::chrono::milliseconds(300));
    ADD_FAILURE() << "wrote to a FIFO nobody reads";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::io);
    EXPECT_NE(std::string(e.what()).find("a FIFO that nobody opened for reading within 0.3 s"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(seconds_since(start), 5.0);
}

// Text from files and databases reaches the terminal with its control characters escaped.
TEST(Printable, EscapesControlCharactersAndCutsLongText) {
  EXPECT_EQ(printable("GPU \x1b]0;pwned\x07 \n\\ \xc3\xa9"),
            "GPU \\x1b]0;pwned\\x07 \\x0a\\\\ \xc3\xa9");
  EXPECT_EQ(printable(std::string(300, 'k'), 4), "kkkk... (300 bytes)");
  // Error messages keep their lines and tabs; an escape sequence from a file does not get through.
  EXPECT_EQ(printable_message("key '\x1b[2Jx':\n\tbad\r"), "key '\\x1b[2Jx':\n\tbad\\x0d");
}

}  // namespace
}  // namespace tunedreduce
