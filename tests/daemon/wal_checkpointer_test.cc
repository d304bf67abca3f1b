#include "daemon/wal_checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

using hetsched::testing::TempDir;

// A database in WAL mode with one table, open on one connection (the writer). Like the store's,
// the writer waits for a lock the checkpointer's connection holds for a moment (SQLite can
// answer a commit SQLITE_BUSY while a checkpoint runs, even a passive one).
struct WalDatabase {
  explicit WalDatabase(const std::string& path) : path(path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    Exec("PRAGMA journal_mode = WAL");
    Exec("PRAGMA synchronous = NORMAL");
    Exec("CREATE TABLE t (v TEXT)");
  }
  ~WalDatabase() { sqlite3_close(db); }
  void Exec(const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  // `n` commits of one 4 KiB row each: about a WAL page or two per commit.
  void Commits(int n) {
    for (int i = 0; i < n; ++i) Exec("INSERT INTO t VALUES (randomblob(4000))");
  }
  // Bytes of the database file itself (not its WAL): what checkpoints have copied there.
  uintmax_t MainFileBytes() const { return std::filesystem::file_size(path); }

  std::string path;
  sqlite3* db = nullptr;
};

TEST(WalCheckpointerTest, CheckpointsOnItsThreadOnceTheWalReachesItsSize) {
  TempDir dir;
  WalDatabase w((dir.path() / "t.db").string());
  const uintmax_t before = w.MainFileBytes();
  auto c = WalCheckpointer::Start(w.db, w.path, "NORMAL", /*pages=*/20);
  ASSERT_TRUE(c.ok()) << c.status().message();
  w.Commits(5);  // under 20 pages: nothing due
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ((*c)->checkpoints(), 0);
  w.Commits(40);
  for (int i = 0; i < 500 && (*c)->checkpoints() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT((*c)->checkpoints(), 0);
  EXPECT_GT(w.MainFileBytes(), before);
}

TEST(WalCheckpointerTest, TheWalStartsOverUnderASteadyStreamOfCommits) {
  TempDir dir;
  WalDatabase w((dir.path() / "t.db").string());
  auto c = WalCheckpointer::Start(w.db, w.path, "NORMAL", /*pages=*/20);
  ASSERT_TRUE(c.ok()) << c.status().message();
  constexpr int kCommits = 2000;
  w.Commits(kCommits);
  // The writer copied the rest at the bound, and the WAL started over. (How large it grew
  // meanwhile depends on how long one of the thread's checkpoints took.)
  EXPECT_GT((*c)->bound_checkpoints(), 0);
  EXPECT_GT((*c)->restarts(), 0);
}

TEST(WalCheckpointerTest, TheWritersCommitsNoLongerCheckpoint) {
  TempDir dir;
  WalDatabase w((dir.path() / "t.db").string());
  const uintmax_t before = w.MainFileBytes();
  {
    // A size never reached: only SQLite's automatic checkpoint (after 1,000 pages) could copy.
    auto c = WalCheckpointer::Start(w.db, w.path, "NORMAL", /*pages=*/1'000'000);
    ASSERT_TRUE(c.ok()) << c.status().message();
    w.Commits(1200);
    EXPECT_EQ(w.MainFileBytes(), before);
    EXPECT_EQ((*c)->checkpoints(), 0);
  }
  // Once it is gone the writer checkpoints by itself again.
  w.Commits(1);
  EXPECT_GT(w.MainFileBytes(), before);
}

TEST(WalCheckpointerTest, ADatabaseThatCannotBeOpenedIsAnError) {
  TempDir dir;
  WalDatabase w((dir.path() / "t.db").string());
  auto c = WalCheckpointer::Start(w.db, (dir.path() / "missing" / "t.db").string(), "NORMAL");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("WAL checkpoints"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::svc
