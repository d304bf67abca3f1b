#include "daemon/wal_checkpointer.h"

#include <fmt/format.h>
#include <sqlite3.h>

namespace hetsched::svc {

util::Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(sqlite3* writer,
                                                                      const std::string& path,
                                                                      const char* synchronous,
                                                                      int pages) {
  sqlite3* db = nullptr;
  // Used by the thread only: no mutex of SQLite's needed (multi-thread mode, as the writer's).
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  const std::string pragma = fmt::format("PRAGMA synchronous = {}", synchronous);
  if (rc != SQLITE_OK || sqlite3_exec(db, pragma.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    const std::string message = fmt::format("{}: opening a connection for WAL checkpoints: {}",
                                            path, db != nullptr ? sqlite3_errmsg(db) : "no memory");
    sqlite3_close(db);
    return util::Status::IoError(message);
  }
  auto c = std::unique_ptr<WalCheckpointer>(new WalCheckpointer(writer, db, pages));
  // Replaces the writer's automatic checkpoints (SQLite implements them with this hook).
  sqlite3_wal_hook(writer, &WalCheckpointer::OnCommit, c.get());
  c->thread_ = std::thread([p = c.get()] { p->Run(); });
  return c;
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_wal_autocheckpoint(writer_, kPages);
  sqlite3_close(db_);
}

int WalCheckpointer::checkpoints() const {
  std::lock_guard lock(mu_);
  return checkpoints_;
}

int WalCheckpointer::OnCommit(void* self, sqlite3* writer, const char*, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  if (pages < c->last_pages_) ++c->restarts_;
  c->last_pages_ = pages;
  if (pages >= kBoundFactor * c->pages_) {
    // Passive as well: while the thread checkpoints this is SQLITE_BUSY at once, and the next
    // commit tries again.
    if (sqlite3_wal_checkpoint_v2(writer, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr) ==
        SQLITE_OK) {
      ++c->bound_checkpoints_;
    }
  } else if (pages >= c->pages_) {
    {
      std::lock_guard lock(c->mu_);
      c->due_ = true;
    }
    c->wake_.notify_one();
  }
  return SQLITE_OK;
}

void WalCheckpointer::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || due_; });
    if (stop_) return;
    due_ = false;
    lock.unlock();
    // Passive: copies what no reader still needs and never waits for a lock. One that does
    // not finish (SQLITE_BUSY) is retried after the next commit past the size; an I/O error
    // here is one the writer meets too, and reports.
    sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
    ++checkpoints_;
  }
}

}  // namespace hetsched::svc
