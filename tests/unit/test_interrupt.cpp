// common/interrupt.hpp: SIGINT and SIGTERM set the flag a long command polls; the same stop
// delivered twice is one stop; a second one asked for later ends the process.

#include "common/interrupt.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "common/exit_codes.hpp"

using tunedreduce::install_exit_signals;
using tunedreduce::InterruptGuard;
using tunedreduce::TempFileGuard;
namespace exit_code = tunedreduce::exit_code;

namespace {

void sleep_past_the_grace() {
  usleep(static_cast<useconds_t>(InterruptGuard::repeat_grace.count() * 1000 + 300000));
}

// Outside `tune`, SIGTERM and Ctrl-C ended the CLI with 143 or 130 by the signal and left the
// temporary files of `db export -o` and `db merge` behind (157 MB seen): now every file a
// TempFileGuard holds is removed and the exit code is 130.
TEST(ExitSignalsDeathTest, SigtermRemovesTheTemporaryFilesAndExits130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  char tmpl[] = "/tmp/tr_exit_signals.XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl);
  const auto tmp = dir / "out.json.tmp.1", kept = dir / "kept";
  std::ofstream(kept) << "x";
  EXPECT_EXIT(
      {
        install_exit_signals();
        std::ofstream(tmp) << "half an export";
        TempFileGuard guard(tmp);
        { TempFileGuard released(kept); }  // no longer held: left alone
        raise(SIGTERM);
        std::_Exit(99);
      },
      ::testing::ExitedWithCode(exit_code::interrupted), "");
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove_all(dir);
}

// A closed pipe killed the CLI with SIGPIPE (141, no message): now the write fails with EPIPE,
// which the command reports and exits 10 with.
TEST(ExitSignalsDeathTest, AClosedPipeIsAFailedWriteNotADeath) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_exit_signals();
        int p[2];
        if (::pipe(p) != 0) std::_Exit(98);
        ::close(p[0]);
        const bool epipe = ::write(p[1], "x", 1) < 0 && errno == EPIPE;
        std::_Exit(epipe ? exit_code::io : 97);
      },
      ::testing::ExitedWithCode(exit_code::io), "");
}

}  // namespace

TEST(InterruptGuard, SigtermSetsTheFlagAndTheProcessGoesOn) {
  std::atomic<bool> flag{false};
  InterruptGuard guard(flag);
  EXPECT_EQ(InterruptGuard::received(), 0);
  raise(SIGTERM);
  EXPECT_TRUE(flag.load());
  EXPECT_EQ(InterruptGuard::received(), SIGTERM);
}

TEST(InterruptGuard, TheSameStopDeliveredTwiceIsOneStop) {
  // `timeout -s INT` signals the command, then its process group: two SIGINTs at once.
  std::atomic<bool> flag{false};
  InterruptGuard guard(flag);
  raise(SIGINT);
  raise(SIGINT);
  raise(SIGTERM);
  EXPECT_TRUE(flag.load());
  EXPECT_EQ(InterruptGuard::received(), SIGINT);
}

TEST(InterruptGuardDeathTest, ASecondSignalAfterTheGraceEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atomic<bool> flag{false};
        InterruptGuard guard(flag);
        raise(SIGINT);
        if (!flag.load()) std::_Exit(3);
        sleep_past_the_grace();
        raise(SIGINT);
        std::_Exit(0);  // not reached: the second SIGINT ends the process
      },
      testing::KilledBySignal(SIGINT), "");
}

TEST(InterruptGuardDeathTest, WithoutAGuardSigtermEndsTheProcess) {
  // The guard is what keeps the process alive: the test above could not pass without it.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        {
          std::atomic<bool> flag{false};
          InterruptGuard guard(flag);
        }
        raise(SIGTERM);
        std::_Exit(0);
      },
      testing::KilledBySignal(SIGTERM), "");
}

namespace {
std::atomic<int> g_custom_calls{0};
extern "C" void custom_handler(int) { g_custom_calls.fetch_add(1); }
}  // namespace

TEST(InterruptGuard, TheHandlersThatWereThereComeBack) {
  struct sigaction mine {
  }, old_int{}, old_term{};
  mine.sa_handler = custom_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &old_int), 0);
  ASSERT_EQ(sigaction(SIGTERM, &mine, &old_term), 0);
  {
    std::atomic<bool> flag{false};
    InterruptGuard guard(flag);
    raise(SIGINT);
    EXPECT_TRUE(flag.load());
    EXPECT_EQ(g_custom_calls.load(), 0);
  }
  raise(SIGINT);
  raise(SIGTERM);
  EXPECT_EQ(g_custom_calls.load(), 2);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

TEST(InterruptGuard, OneGuardAtATime) {
  std::atomic<bool> a{false}, b{false};
  InterruptGuard guard(a);
  EXPECT_THROW(InterruptGuard second(b), tunedreduce::Error);
}

TEST(InterruptGuard, EachGuardStartsWithNoSignal) {
  std::atomic<bool> a{false};
  {
    InterruptGuard guard(a);
    raise(SIGTERM);
  }
  std::atomic<bool> b{false};
  InterruptGuard guard(b);
  EXPECT_EQ(InterruptGuard::received(), 0);
  EXPECT_FALSE(b.load());
}
