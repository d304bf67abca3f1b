// WalCheckpointer: an SQLite database's WAL checkpoints on a thread of their own. SQLite's
// automatic checkpoint runs inside the commit that fills the WAL, copying its pages into the
// database file and syncing both: on a busy disk that commit (and every daemon reply waiting
// on it) takes tens to hundreds of milliseconds. Here the writer only signals, and a second
// connection checkpoints while the writer goes on appending to the WAL. Under a steady stream
// of commits such a checkpoint seldom catches up with the end of the WAL, and SQLite starts the
// WAL over only once everything in it has been copied (in the daemon at 2,000 submissions/s
// the WAL grew to 256 MB): so when the WAL reaches a bound, the writer itself copies what the
// thread has not yet (little, as the thread copied the rest) and the WAL starts over at its
// next transaction.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "util/status.h"

struct sqlite3;

namespace hetsched::svc {

class WalCheckpointer {
 public:
  // SQLite's default automatic checkpoint size (pages of the WAL after a commit).
  static constexpr int kPages = 1000;
  // Pages of `pages` after which the writer checkpoints too (the WAL's bound, about 16 MiB).
  static constexpr int kBoundFactor = 4;

  // Opens a second connection to `path` (a database in WAL mode, with `writer` open on it) and
  // takes over `writer`'s checkpoints: after a commit that leaves `pages` or more in the WAL,
  // a passive checkpoint (one that never blocks the writer) runs on the thread; after one that
  // leaves kBoundFactor * `pages` or more, the writer runs one itself instead. `synchronous` is the
  // writer's PRAGMA synchronous, which also rules how a checkpoint syncs.
  static util::Result<std::unique_ptr<WalCheckpointer>> Start(sqlite3* writer,
                                                              const std::string& path,
                                                              const char* synchronous,
                                                              int pages = kPages);
  // Waits for a checkpoint under way, closes the second connection and gives `writer` back
  // its automatic checkpoints.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Checkpoints run so far on the thread, by the writer at the bound, and the times the WAL
  // started over (for tests; the last two on the writer's thread).
  int checkpoints() const;
  int bound_checkpoints() const { return bound_checkpoints_; }
  int restarts() const { return restarts_; }

 private:
  WalCheckpointer(sqlite3* writer, sqlite3* db, int pages)
      : writer_(writer), db_(db), pages_(pages) {}
  // sqlite3_wal_hook's callback on the writer's thread: signals the thread when due, or
  // checkpoints at the bound.
  static int OnCommit(void* self, sqlite3* db, const char* name, int pages);
  void Run();

  sqlite3* writer_;
  sqlite3* db_;  // the thread's connection
  const int pages_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool due_ = false;
  bool stop_ = false;
  int checkpoints_ = 0;
  // The writer's thread only:
  int bound_checkpoints_ = 0;
  int restarts_ = 0;
  int last_pages_ = 0;  // in the WAL after the last commit
  std::thread thread_;
};

}  // namespace hetsched::svc
