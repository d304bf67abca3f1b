#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/temp_dir.h"

namespace hetsched::util {
namespace {

// Every test runs /bin/sh with a deadline of a few seconds at most: none can hang.
constexpr double kShortTimeoutS = 5;

Result<CommandResult> Sh(const std::string& script, CommandOptions options = {}) {
  if (options.timeout_s > kShortTimeoutS) options.timeout_s = kShortTimeoutS;
  return RunCommand("/bin/sh", {"-c", script}, options);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(RunCommandTest, CapturesStdoutAndExitStatusZero) {
  auto r = Sh("printf 'hello\\nworld\\n'");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "hello\nworld\n");
  EXPECT_EQ(r->err, "");
  EXPECT_TRUE(r->succeeded());
}

TEST(RunCommandTest, ArgumentsArePassedVerbatimWithoutAShell) {
  // printf is run directly: the spaces and the '$' reach it as written.
  auto r = RunCommand("/usr/bin/printf", {"%s|%s", "a b", "$HOME"}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "a b|$HOME");
}

TEST(RunCommandTest, NonZeroExitIsAResultNotAnError) {
  auto r = Sh("echo partial; echo 'bad flag' >&2; exit 3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->succeeded());
  EXPECT_TRUE(WIFEXITED(r->status));
  EXPECT_EQ(WEXITSTATUS(r->status), 3);
  EXPECT_EQ(r->out, "partial\n");
  // stderr is not captured by default: the failure quotes stdout.
  EXPECT_EQ(r->err, "");
  EXPECT_EQ(r->Failure(), "exit status 3: partial");
}

TEST(RunCommandTest, CapturedStderrIsKeptApartAndQuotedFirst) {
  CommandOptions o;
  o.capture_stderr = true;
  auto r = Sh("echo out; echo '  first err  ' >&2; echo second >&2; exit 2", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "  first err  \nsecond\n");
  EXPECT_EQ(r->Failure(), "exit status 2: first err");
}

TEST(RunCommandTest, SilentFailureSaysOnlyTheStatus) {
  auto r = Sh("exit 1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Failure(), "exit status 1");
}

TEST(RunCommandTest, KilledBySignalIsReportedAsTheSignalNot128PlusN) {
  // The status is waitpid's: a signal shows as WIFSIGNALED, not as the shell's 128 + N.
  auto r = Sh("kill -KILL $$");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(WIFSIGNALED(r->status));
  EXPECT_EQ(WTERMSIG(r->status), SIGKILL);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->Failure(), "killed by signal 9");
}

TEST(RunCommandTest, SignalsBlockedOrIgnoredHereAreAtTheirDefaultsInTheChild) {
  // The daemon blocks SIGTERM in its threads; a child must still die of it. Ignoring SIGTERM
  // here as well checks that dispositions are reset, not only the mask.
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &old_action), 0);
  auto r = Sh("kill -TERM $$; sleep 3");
  sigaction(SIGTERM, &old_action, nullptr);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(WIFSIGNALED(r->status)) << r->Failure();
  EXPECT_EQ(WTERMSIG(r->status), SIGTERM);
}

TEST(RunCommandTest, StdinIsEmpty) {
  auto r = Sh("wc -c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FirstLine(r->out), "0");
}

TEST(RunCommandTest, TimeoutKillsTheWholeProcessGroup) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string marker = dir.File("survived");
  CommandOptions o;
  o.timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  // A grandchild in the background: if only the shell were killed it would write the marker.
  auto r = Sh("(sleep 1; touch " + marker + ") & sleep 2", o);
  const double took = SecondsSince(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("timed out after 0.3 s"), std::string::npos)
      << r.status().message();
  EXPECT_LT(took, 1.0);
  // Past the grandchild's sleep: no marker, since the group was killed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  struct stat st;
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "a process of the group outlived the timeout";
}

TEST(RunCommandTest, TimeoutAppliesAfterOutputIsClosed) {
  // The program closes its stdout but keeps running: the wait for its exit is bounded too.
  CommandOptions o;
  o.timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  auto r = Sh("exec >&-; sleep 2", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().message();
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(RunCommandTest, MissingExecutableIsAnIoError) {
  auto r = RunCommand("/nonexistent/hetsched-no-such-tool", {}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("cannot run /nonexistent/hetsched-no-such-tool"),
            std::string::npos)
      << r.status().message();
}

TEST(RunCommandTest, LargeOutputOnBothPipesDoesNotDeadlock) {
  // 1 MiB on each pipe, far past a pipe's 64 KiB buffer: the reader must drain both at once.
  CommandOptions o;
  o.capture_stderr = true;
  auto r = Sh("head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out.size(), 1048576u);
  EXPECT_EQ(r->err.size(), 1048576u);
  EXPECT_TRUE(r->succeeded());
}

TEST(RunCommandTest, OutputLimitCountsBothPipesAndKillsTheProgram) {
  CommandOptions o;
  o.capture_stderr = true;
  o.max_output = 1000;
  // 600 bytes each: each pipe alone fits, both together do not.
  const auto start = std::chrono::steady_clock::now();
  auto r = Sh("head -c 600 /dev/zero; head -c 600 /dev/zero >&2; sleep 3", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("printed more than 1000 bytes"), std::string::npos)
      << r.status().message();
  EXPECT_LT(SecondsSince(start), 2.0);  // killed, not waited for
}

TEST(RunCommandTest, OutputExactlyAtTheLimitIsAccepted) {
  CommandOptions o;
  o.max_output = 1000;
  auto r = Sh("head -c 1000 /dev/zero", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out.size(), 1000u);
}

TEST(RunCommandTest, EnvironmentOverridesAndAddsVariables) {
  setenv("HETSCHED_SUBPROCESS_KEPT", "inherited", 1);
  setenv("HETSCHED_SUBPROCESS_REPLACED", "old", 1);
  CommandOptions o;
  o.env = {{"HETSCHED_SUBPROCESS_REPLACED", "new"}, {"HETSCHED_SUBPROCESS_ADDED", "a=b"}};
  auto r =
      Sh("echo \"$HETSCHED_SUBPROCESS_KEPT,$HETSCHED_SUBPROCESS_REPLACED,"
         "$HETSCHED_SUBPROCESS_ADDED\"; env | grep -c '^HETSCHED_SUBPROCESS_REPLACED='",
         o);
  unsetenv("HETSCHED_SUBPROCESS_KEPT");
  unsetenv("HETSCHED_SUBPROCESS_REPLACED");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The variable replaced appears once, with its new value.
  EXPECT_EQ(r->out, "inherited,new,a=b\n1\n");
}

TEST(FindExecutableTest, SearchesDirectoriesInOrderForExecutableFiles) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path a = dir.path() / "a", b = dir.path() / "b", c = dir.path() / "c";
  for (const auto& d : {a, b, c}) std::filesystem::create_directory(d);
  std::ofstream(a / "tool") << "not executable\n";
  std::filesystem::create_directory(b / "tool");  // a directory, executable bit and all
  std::ofstream(c / "tool") << "#!/bin/sh\n";
  std::filesystem::permissions(c / "tool", std::filesystem::perms::owner_all);
  const std::string path = a.string() + "::" + b.string() + ":" + c.string();
  EXPECT_EQ(FindExecutable("tool", path), (c / "tool").string());
  EXPECT_EQ(FindExecutable("tool", a.string() + ":" + b.string()), "");
  EXPECT_EQ(FindExecutable("other", path), "");
  EXPECT_EQ(FindExecutable("tool", ""), "");
}

TEST(FindExecutableTest, TheCurrentDirectoryIsNeverSearched) {
  // An empty entry means the current directory to a shell; here it is skipped.
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.path() / "tool") << "#!/bin/sh\n";
  std::filesystem::permissions(dir.path() / "tool", std::filesystem::perms::owner_all);
  const std::filesystem::path old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const std::string found = FindExecutable("tool", ":/nonexistent:");
  std::filesystem::current_path(old_cwd);
  EXPECT_EQ(found, "");
  EXPECT_EQ(FindExecutable("tool", dir.path().string()), (dir.path() / "tool").string());
}

TEST(FirstLineTest, FirstNonEmptyLineTrimmedAndCapped) {
  EXPECT_EQ(FirstLine("\n\n  error: x  \nmore"), "error: x");
  EXPECT_EQ(FirstLine("   \n\t"), "");
  EXPECT_EQ(FirstLine(std::string(300, 'x')).size(), 200u);
  EXPECT_EQ(FirstLine("one"), "one");
}

}  // namespace
}  // namespace hetsched::util
