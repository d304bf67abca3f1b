#include "backends/local/run_records.h"

#include <gtest/gtest.h>

#include <string>

namespace hetsched::svc::local {
namespace {

constexpr char kRecord[] =
    "boot_id 1234\njob train.v2\nattempt 3\npid 4100\npgid 4100\nstart_time 777\n"
    "monitor_pid 4099\nmonitor_start_time 776\n";

TEST(RunRecords, JobNamesAreSafeInFileNames) {
  EXPECT_TRUE(ValidJobName("a"));
  EXPECT_TRUE(ValidJobName("Train_1.v2-b"));
  EXPECT_TRUE(ValidJobName(std::string(128, 'x')));
  EXPECT_FALSE(ValidJobName(std::string(129, 'x')));
  EXPECT_FALSE(ValidJobName(""));
  EXPECT_FALSE(ValidJobName(".hidden"));
  EXPECT_FALSE(ValidJobName("-flag"));
  EXPECT_FALSE(ValidJobName("a/b"));
  EXPECT_FALSE(ValidJobName("a b"));
}

TEST(RunRecords, ReadsAMonitorsRecord) {
  auto r = ParseRecord(kRecord);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->boot_id, "1234");
  EXPECT_EQ(r->job, "train.v2");
  EXPECT_EQ(r->attempt, 3);
  EXPECT_EQ(r->pid, 4100);
  EXPECT_EQ(r->start_time, 777u);
  EXPECT_EQ(r->monitor_pid, 4099);
  EXPECT_EQ(r->monitor_start_time, 776u);
  EXPECT_FALSE(r->stop_requested);

  auto stopped = ParseRecord(std::string(kRecord) + "stop_requested 1\nkill_at_unix_ms 99\n");
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(stopped->stop_requested);
  EXPECT_EQ(stopped->kill_at_unix_ms, 99);
}

TEST(RunRecords, RefusesIncompleteOrBrokenRecords) {
  const std::string full = kRecord;
  auto without = [&](const std::string& line) {
    std::string text = full;
    text.erase(text.find(line), line.size());
    return text;
  };
  EXPECT_FALSE(ParseRecord(without("pid 4100\n")).has_value());
  EXPECT_FALSE(ParseRecord(without("start_time 777\n")).has_value());
  EXPECT_FALSE(ParseRecord(without("monitor_pid 4099\n")).has_value());
  EXPECT_FALSE(ParseRecord(without("monitor_start_time 776\n")).has_value());
  EXPECT_FALSE(ParseRecord(without("job train.v2\n")).has_value());
  EXPECT_FALSE(ParseRecord(without("attempt 3\n")).has_value());
  EXPECT_FALSE(ParseRecord(full + "attempt x\n").has_value());
  EXPECT_FALSE(ParseRecord(full + "nospace\n").has_value());
  EXPECT_FALSE(ParseRecord(full + "pid 1\n").has_value());  // never init (or 0: every process)
  EXPECT_FALSE(ParseRecord(full + "pid 4294967296\n").has_value());
  EXPECT_TRUE(ParseRecord(full + "future_key anything\n").has_value());
}

TEST(RunRecords, ReadsExitFiles) {
  int status = 0;
  std::string message;
  ASSERT_TRUE(ParseOutcome("exit 3\n", status, message));
  EXPECT_EQ(status, 3);
  EXPECT_EQ(message, "exited with status 3");
  ASSERT_TRUE(ParseOutcome("signal 9\n", status, message));
  EXPECT_EQ(status, 128 + 9);
  EXPECT_EQ(message, "killed by signal 9");
  EXPECT_FALSE(ParseOutcome("exit 256", status, message));
  EXPECT_FALSE(ParseOutcome("signal 0", status, message));
  EXPECT_FALSE(ParseOutcome("exit", status, message));
  EXPECT_FALSE(ParseOutcome("", status, message));
}

}  // namespace
}  // namespace hetsched::svc::local
