// Running `hetsched serve` and the client commands as child processes from tests: a daemon
// that is always stopped (its destructor sends SIGTERM, then SIGKILL), a client runner with a
// deadline, and a temporary folder per test. Needs HETSCHED_BINARY (the built hetsched).
//
// Children are started with fork and execve, everything they need prepared before the fork,
// so starting one is safe while other threads of the test run.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "testing/build_paths.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace hetsched::testing {

inline std::string ReadFileText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace internal {

// argv or envp for execve: pointers into `strings`, null-terminated.
inline std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// This process's environment with `extra` ("NAME=VALUE") set over it.
inline std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& x : extra) {
      const size_t eq = x.find('=');
      if (entry.compare(0, eq + 1, x, 0, eq + 1) == 0) replaced = true;
    }
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Forks and runs `argv` in `dir` (empty: this one) with `env`; its stdout goes to `out_fd`,
// its stderr to `err_fd`, stdin is /dev/null. -1 when the fork failed.
inline pid_t Spawn(std::vector<std::string> argv, std::vector<std::string> env,
                   const std::string& dir, int out_fd, int err_fd) {
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  const char* cdir = dir.empty() ? nullptr : dir.c_str();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: async-signal-safe calls only (the test may have threads).
  if (cdir != nullptr && chdir(cdir) != 0) _exit(126);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  execve(cargv[0], cargv.data(), cenv.data());
  _exit(127);
}

// Waits up to `seconds` for `pid` to end; its wait status, or nullopt when it runs still.
inline std::optional<int> WaitPid(pid_t pid, double seconds) {
  const auto deadline = DeadlineIn(seconds);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;  // not our child (anymore)
    if (SteadyClock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace internal

// What a finished command left.
struct CommandResult {
  int status = -1;  // exit status; -1 when it did not exit normally (signal, deadline)
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) with `env_extra` ("NAME=VALUE") added to the environment, and
// returns its exit status, stdout and stderr. Killed (SIGKILL) after `timeout_s`.
inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env_extra = {},
                                double timeout_s = 60, const std::string& dir = "") {
  CommandResult r;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return r;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return r;
  }
  const pid_t pid =
      internal::Spawn(argv, internal::EnvironmentWith(env_extra), dir, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return r;
  }
  const auto deadline = DeadlineIn(timeout_s);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const double left = SecondsLeft(deadline);
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  if (r.timed_out) kill(pid, SIGKILL);
  std::optional<int> status = internal::WaitPid(pid, r.timed_out ? 5 : timeout_s);
  if (!status) {
    kill(pid, SIGKILL);
    status = internal::WaitPid(pid, 5);
  }
  if (status && !r.timed_out && WIFEXITED(*status)) r.status = WEXITSTATUS(*status);
  return r;
}

// A `hetsched serve` child process: started in its own folder (where the local backend keeps
// its state and where jobs start), its stdout read until it says it listens. The destructor
// stops it: SIGTERM, then SIGKILL after 5 s.
class Daemon {
 public:
  struct Options {
    std::filesystem::path dir;      // its working directory; the database is dir/h.db
    std::vector<std::string> args;  // after `serve --listen 127.0.0.1:0 --db dir/h.db`
    double ready_timeout_s = 20;
    std::vector<std::string> env = {};  // "NAME=VALUE" set over the test's environment
  };

  // Starts the daemon and waits until it listens. nullptr with `*error` saying why (the
  // daemon's stderr included) when it did not; a daemon that did not get ready is killed.
  static std::unique_ptr<Daemon> Start(const Options& options, std::string* error) {
    auto d = std::unique_ptr<Daemon>(new Daemon(options));
    if (auto why = d->Launch(); !why.empty()) {
      d->Kill();
      *error = why + "\n--- daemon stderr ---\n" + d->Stderr();
      return nullptr;
    }
    return d;
  }

  ~Daemon() { Terminate(SIGTERM, 5); }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  pid_t pid() const { return pid_; }
  // The daemon's threads other than the main one (which sigwaits for them) that leave SIGINT
  // or SIGTERM unblocked: such a thread could take the signal and end the daemon without its
  // shutdown. Read from /proc (SigBlk, a hex mask of signal n at bit n - 1).
  std::vector<std::string> ThreadsTakingStopSignals() const {
    std::vector<std::string> out;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid_) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      const std::string tid = task.path().filename().string();
      if (tid == std::to_string(pid_)) continue;
      std::ifstream status(task.path() / "status");
      for (std::string line; std::getline(status, line);) {
        if (line.rfind("SigBlk:", 0) != 0) continue;
        const uint64_t blocked = std::stoull(line.substr(7), nullptr, 16);
        const uint64_t stop = (uint64_t{1} << (SIGINT - 1)) | (uint64_t{1} << (SIGTERM - 1));
        if ((blocked & stop) != stop) out.push_back(tid + " (" + line + ")");
      }
    }
    return out;
  }
  // Whether it runs still; when it ended on its own (or by someone else's signal),
  // ended_how() says how.
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    ended_how_ = WIFEXITED(status)     ? "exited with status " + std::to_string(WEXITSTATUS(status))
                 : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                       : "ended";
    pid_ = 0;
    StopReader();
    return false;
  }
  const std::string& ended_how() const { return ended_how_; }
  // http://127.0.0.1:PORT, no trailing slash (what httplib::Client takes).
  const std::string& url() const { return url_; }
  // As the daemon printed it: http://127.0.0.1:PORT/.
  const std::string& printed_url() const { return printed_url_; }
  int port() const { return port_; }
  const std::filesystem::path& dir() const { return options_.dir; }
  std::string db() const { return (options_.dir / "h.db").string(); }
  std::filesystem::path token_path() const { return options_.dir / "hetsched.token"; }
  std::string token() const {
    std::ifstream in(token_path());
    std::string t;
    std::getline(in, t);
    return t;
  }
  // Everything the daemon (all its starts in this folder) wrote to stderr.
  std::string Stderr() const { return ReadFileText(options_.dir / "daemon.stderr"); }
  std::string Stdout() {
    std::lock_guard lock(out_mu_);
    return out_;
  }

  // Sends `signal` and waits up to `wait_s` for the daemon to exit; SIGKILL if it did not.
  // Its exit status; 128 + the signal when one ended it (as a shell says), -1 when it was not
  // running, -2 when it had to be killed.
  int Terminate(int signal, double wait_s) {
    if (pid_ <= 0) return -1;
    kill(pid_, signal);
    std::optional<int> status = internal::WaitPid(pid_, wait_s);
    int result = -1;
    if (!status) {
      kill(pid_, SIGKILL);
      internal::WaitPid(pid_, 10);
      result = -2;
    } else if (WIFEXITED(*status)) {
      result = WEXITSTATUS(*status);
    } else if (WIFSIGNALED(*status)) {
      result = 128 + WTERMSIG(*status);
    }
    pid_ = 0;
    StopReader();
    return result;
  }

  // SIGKILL: the daemon gets no chance to clean up.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    internal::WaitPid(pid_, 10);
    pid_ = 0;
    StopReader();
  }

  // Runs `hetsched ARGS...` as a client of this daemon (HETSCHED_SERVER and HETSCHED_TOKEN
  // set), from the daemon's folder.
  CommandResult Client(const std::vector<std::string>& args, double timeout_s = 60) const {
    std::vector<std::string> argv = {HETSCHED_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {"HETSCHED_SERVER=" + url_, "HETSCHED_TOKEN=" + token()}, timeout_s,
                      options_.dir.string());
  }

 private:
  explicit Daemon(Options options) : options_(std::move(options)) {}

  // Empty on success, else why the daemon is not ready.
  std::string Launch() {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    const std::string err_path = (options_.dir / "daemon.stderr").string();
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err_fd < 0) {
      close(out[0]);
      close(out[1]);
      return "cannot open " + err_path + ": " + std::strerror(errno);
    }
    std::vector<std::string> argv = {HETSCHED_BINARY, "serve", "--listen",
                                     "127.0.0.1:0",   "--db",  db()};
    argv.insert(argv.end(), options_.args.begin(), options_.args.end());
    pid_ = internal::Spawn(argv, internal::EnvironmentWith(options_.env), options_.dir.string(),
                           out[1], err_fd);
    close(out[1]);
    close(err_fd);
    if (pid_ < 0) {
      pid_ = 0;
      close(out[0]);
      return std::string("fork: ") + std::strerror(errno);
    }
    out_fd_ = out[0];
    // Read until the "listening on" line, the end of its stdout, or the deadline.
    const std::regex listening(R"(listening on (http://127\.0\.0\.1:([0-9]+))/)");
    const auto deadline = DeadlineIn(options_.ready_timeout_s);
    for (;;) {
      std::smatch m;
      if (std::regex_search(out_, m, listening)) {
        url_ = m[1];
        printed_url_ = url_ + "/";
        port_ = std::stoi(m[2]);
        break;
      }
      const double left = SecondsLeft(deadline);
      if (left <= 0) {
        return "the daemon did not say 'listening on' within " +
               std::to_string(options_.ready_timeout_s) + " s; its stdout: " + out_;
      }
      pollfd p = {out_fd_, POLLIN, 0};
      const int n = poll(&p, 1, static_cast<int>(left * 1000) + 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) continue;
      char buf[4096];
      const ssize_t got = read(out_fd_, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        std::optional<int> status = internal::WaitPid(pid_, 5);
        const std::string how =
            !status                ? "closed its stdout"
            : WIFEXITED(*status)   ? "exited with status " + std::to_string(WEXITSTATUS(*status))
            : WIFSIGNALED(*status) ? "was killed by signal " + std::to_string(WTERMSIG(*status))
                                   : "ended";
        if (status) pid_ = 0;
        return "the daemon " + how + " before it listened; its stdout: " + out_;
      }
      out_.append(buf, static_cast<size_t>(got));
    }
    // Keep reading its stdout so the daemon never blocks on a full pipe.
    reader_ = std::thread([this] {
      while (!stop_reader_) {
        pollfd p = {out_fd_, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) continue;
        char buf[4096];
        const ssize_t got = read(out_fd_, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        std::lock_guard lock(out_mu_);
        out_.append(buf, static_cast<size_t>(got));
      }
    });
    return "";
  }

  void StopReader() {
    stop_reader_ = true;
    if (reader_.joinable()) reader_.join();
    if (out_fd_ >= 0) close(out_fd_);
    out_fd_ = -1;
  }

  Options options_;
  pid_t pid_ = 0;
  int out_fd_ = -1;
  std::string url_, printed_url_;
  int port_ = 0;
  std::string ended_how_;
  std::mutex out_mu_;
  std::string out_;  // its stdout so far
  std::atomic<bool> stop_reader_{false};
  std::thread reader_;
};

}  // namespace hetsched::testing
