#include "util/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace hetsched::util {
namespace {

void KillAndReap(pid_t pid) {
  kill(-pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// This process's environment with `overrides` replacing or adding variables.
std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (overrides.count(name) == 0) env.emplace_back(entry);
  }
  for (const auto& [name, value] : overrides) env.push_back(name + "=" + value);
  return env;
}

using Clock = std::chrono::steady_clock;

// The read ends of the program's stdout and stderr pipes; -1 once closed (or never opened:
// stderr when it is not captured). Closed on destruction, whatever path RunCommand leaves by.
struct OutputPipes {
  int fds[2] = {-1, -1};  // stdout, stderr
  OutputPipes() = default;
  OutputPipes(const OutputPipes&) = delete;
  OutputPipes& operator=(const OutputPipes&) = delete;
  ~OutputPipes() { CloseAll(); }
  bool open() const { return fds[0] >= 0 || fds[1] >= 0; }
  void CloseAll() {
    for (int& fd : fds) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
};

// Starts `path args...` in its own process group, stdin from /dev/null, stdout (and stderr when
// captured, else /dev/null) on new pipes whose read ends go to `pipes`. Returns its pid.
Result<pid_t> Spawn(const std::string& path, const std::vector<std::string>& args,
                    const CommandOptions& options, OutputPipes& pipes) {
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || (options.capture_stderr && pipe2(err, O_CLOEXEC) != 0)) {
    const int e = errno;
    for (int fd : {out[0], out[1]}) {
      if (fd >= 0) close(fd);
    }
    return Status::IoError(fmt::format("cannot create a pipe: {}", std::strerror(e)));
  }
  pipes.fds[0] = out[0];
  pipes.fds[1] = err[0];
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (options.capture_stderr) {
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> argv_strings = {path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (!options.env.empty()) {
    env_strings = MergedEnvironment(options.env);
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(),
                                  envp.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  if (err[1] >= 0) close(err[1]);
  if (spawned != 0) {
    pipes.CloseAll();
    return Status::IoError(fmt::format("cannot run {}: {}", path, std::strerror(spawned)));
  }
  return pid;
}

// Reads the program's output into `run` until both pipes are closed. Past the deadline, on a
// poll error or on more output than options.max_output, the pipes are closed, the program's
// group is killed and reaped, and the error returned.
Status ReadUntilClosed(pid_t pid, Clock::time_point deadline, const CommandOptions& options,
                       OutputPipes& pipes, CommandResult& run) {
  const auto fail = [&](Status why) {
    pipes.CloseAll();
    KillAndReap(pid);
    return why;
  };
  char buf[65536];
  while (pipes.open()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return fail(Status::IoError(fmt::format("timed out after {} s", options.timeout_s)));
    }
    pollfd p[2] = {{pipes.fds[0], POLLIN, 0}, {pipes.fds[1], POLLIN, 0}};
    const int ready = poll(p, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      const int e = errno;
      return fail(Status::IoError(fmt::format("poll: {}", std::strerror(e))));
    }
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      int& fd = pipes.fds[i];
      if (fd < 0 || p[i].revents == 0) continue;
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // EOF (or an error: what was read is all there is)
        close(fd);
        fd = -1;
        continue;
      }
      if (run.out.size() + run.err.size() + static_cast<size_t>(n) > options.max_output) {
        return fail(Status::IoError(fmt::format("printed more than {} bytes", options.max_output)));
      }
      (i == 0 ? run.out : run.err).append(buf, static_cast<size_t>(n));
    }
  }
  return Status::Ok();
}

// With its output closed the program should be exiting: waits out the rest of the deadline for
// it (killing its group after that) and stores its waitpid status.
Status WaitForExit(pid_t pid, Clock::time_point deadline, double timeout_s, int& status) {
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return Status::Ok();
    if (r < 0 && errno != EINTR) {
      return Status::IoError(fmt::format("waitpid: {}", std::strerror(errno)));
    }
    if (Clock::now() >= deadline) {
      KillAndReap(pid);
      return Status::IoError(fmt::format("timed out after {} s", timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

bool CommandResult::succeeded() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string CommandResult::Failure() const {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  std::string said = FirstLine(err);
  if (said.empty()) said = FirstLine(out);
  return fmt::format("exit status {}{}{}", WEXITSTATUS(status), said.empty() ? "" : ": ", said);
}

Result<CommandResult> RunCommand(const std::string& path, const std::vector<std::string>& args,
                                 const CommandOptions& options) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::clamp(options.timeout_s, 0.0, 1e6)));
  OutputPipes pipes;
  ASSIGN_OR_RETURN(const pid_t pid, Spawn(path, args, options, pipes));
  CommandResult run;
  RETURN_IF_ERROR(ReadUntilClosed(pid, deadline, options, pipes, run));
  RETURN_IF_ERROR(WaitForExit(pid, deadline, options.timeout_s, run.status));
  return run;
}

std::string FindExecutable(const std::string& name, std::string_view search_path) {
  while (!search_path.empty()) {
    const size_t colon = search_path.find(':');
    const std::string_view dir = search_path.substr(0, colon);
    search_path = colon == std::string_view::npos ? "" : search_path.substr(colon + 1);
    if (dir.empty()) continue;  // the current directory is not searched
    const std::string path = std::string(dir) + "/" + name;
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return "";
}

std::string FirstLine(std::string_view text) {
  text = TrimView(text);
  return std::string(TrimView(text.substr(0, text.find('\n'))).substr(0, 200));
}

}  // namespace hetsched::util
