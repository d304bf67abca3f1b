// Load on a running daemon from a second process: starts `hetsched serve` (virtual backend) on
// a loopback port, submits jobs from client threads for a while, and reports acknowledged
// submissions per second, their latency (median, p99, max), the daemon's decision latency
// (from /metrics) and peak memory. Optionally fills the queue first and times a restart.
//   serve_load_bench [--seconds 60] [--clients 4] [--cluster SPEC] [--queue N] [--restart]
//                    [--job-seconds 60]
// Not a Google Benchmark: it measures a service from outside, as docs/benchmarks.md describes.
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  double seconds = 60;
  int clients = 4;
  std::string cluster = "v100=64:per_node=8,k80=64:per_node=8";
  long queue = 0;  // jobs submitted (and kept queued) before the timed load
  bool restart = false;
  double job_seconds = 60;  // modeled length of each job of the timed load
  std::string binary = "./build/hetsched";
};

struct Daemon {
  pid_t pid = -1;
  int port = 0;
};

// Starts the daemon and reads its stdout until it says where it listens.
Daemon Start(const Options& o, const std::string& dir) {
  int out[2];
  if (pipe(out) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    const std::string log = dir + "/daemon.log";
    FILE* err = std::fopen(log.c_str(), "a");
    if (err != nullptr) dup2(fileno(err), 2);
    execl(o.binary.c_str(), o.binary.c_str(), "serve", "--listen", "127.0.0.1:0", "--db",
          (dir + "/h.db").c_str(), "--cluster", o.cluster.c_str(), "--time-scale", "1", "--policy",
          "default", "--log-level", "warn", nullptr);
    _exit(127);
  }
  close(out[1]);
  Daemon d;
  d.pid = pid;
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) {
    text.append(buf, n);
    const size_t at = text.find("listening on http://127.0.0.1:");
    if (at != std::string::npos && text.find('/', at + 30) != std::string::npos) {
      d.port = std::stoi(text.substr(at + 30));
      break;
    }
  }
  close(out[0]);
  if (d.port == 0) {
    std::fprintf(stderr, "the daemon did not start; see %s/daemon.log\n", dir.c_str());
    std::exit(1);
  }
  return d;
}

long PeakRssKb(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

std::string Body(const std::string& name, double seconds) {
  return fmt::format(R"({{"name":"{}","stacks":["cuda"],"gang_size":1,"work":{}}})", name, seconds);
}

// Submits `count` jobs (or until `stop`), one client per thread; latencies in seconds.
struct Load {
  std::vector<std::vector<double>> latency;
  std::atomic<long> acked{0}, errors{0};
};

void Submit(int port, const std::string& token, const std::string& prefix, int clients, long count,
            double seconds, double job_seconds, Load& load) {
  load.latency.assign(clients, {});
  std::atomic<long> next{0};
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      const httplib::Headers headers = {{"Authorization", "Bearer " + token}};
      while (Clock::now() < deadline) {
        const long i = next++;
        if (count > 0 && i >= count) break;
        const std::string name = fmt::format("{}{}", prefix, i);
        const auto t0 = Clock::now();
        auto res = client.Post("/v1/jobs", headers, Body(name, job_seconds), "application/json");
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (res && (res->status == 201 || res->status == 200)) {
          load.latency[c].push_back(dt);
          ++load.acked;
        } else {
          ++load.errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

// p99 of the daemon's decision histogram, as the upper bound of the bucket holding it.
std::string DecisionP99(int port) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/metrics");
  if (!res) return "?";
  std::vector<std::pair<double, double>> buckets;  // le, cumulative count
  std::istringstream in(res->body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("hetsched_decision_seconds_bucket{le=\"", 0) != 0) continue;
    const size_t q = line.find('"', 37);
    const std::string le = line.substr(37, q - 37);
    const double count = std::stod(line.substr(line.rfind(' ') + 1));
    buckets.push_back({le == "+Inf" ? 1e300 : std::stod(le), count});
  }
  if (buckets.empty() || buckets.back().second == 0) return "no decisions";
  const double total = buckets.back().second;
  for (const auto& [le, count] : buckets) {
    if (count >= 0.99 * total) {
      return fmt::format("<= {:.3g} ms over {:.0f} decisions", le * 1e3, total);
    }
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--seconds")
      o.seconds = std::stod(value());
    else if (a == "--clients")
      o.clients = std::stoi(value());
    else if (a == "--cluster")
      o.cluster = value();
    else if (a == "--queue")
      o.queue = std::stol(value());
    else if (a == "--restart")
      o.restart = true;
    else if (a == "--binary")
      o.binary = value();
    else if (a == "--job-seconds")
      o.job_seconds = std::stod(value());
    else {
      std::fprintf(stderr,
                   "usage: serve_load_bench [--seconds S] [--clients N] [--cluster SPEC] "
                   "[--queue N] [--restart] [--job-seconds S] [--binary PATH]\n");
      return 2;
    }
  }
  char tmpl[] = "/tmp/hetsched-load-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Daemon d = Start(o, dir);
  std::string token;
  std::ifstream(dir + "/hetsched.token") >> token;
  std::printf("daemon pid %d on port %d, cluster %s, %d client thread(s)\n", d.pid, d.port,
              o.cluster.c_str(), o.clients);
  if (o.queue > 0) {
    // Jobs far too long to finish: they stay queued behind the running ones.
    Load fill;
    const auto t0 = Clock::now();
    Submit(d.port, token, "q", o.clients, o.queue, 1e9, 1e8, fill);
    std::printf("queued %ld jobs in %.1f s (%ld errors)\n", fill.acked.load(),
                std::chrono::duration<double>(Clock::now() - t0).count(), fill.errors.load());
  }
  Load load;
  const auto t0 = Clock::now();
  // Short jobs (60 s each by default): completions keep the scheduler deciding during the load.
  Submit(d.port, token, "j", o.clients, 0, o.seconds, o.job_seconds, load);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> all;
  for (const auto& v : load.latency) all.insert(all.end(), v.begin(), v.end());
  std::printf(
      "acknowledged %ld submissions in %.1f s: %.0f/s; latency median %.2f ms, p99 %.2f "
      "ms, max %.2f ms; %ld errors\n",
      load.acked.load(), wall, load.acked / wall, Percentile(all, 0.5) * 1e3,
      Percentile(all, 0.99) * 1e3, Percentile(all, 1.0) * 1e3, load.errors.load());
  std::printf("decision latency p99 %s\n", DecisionP99(d.port).c_str());
  std::printf("daemon peak RSS %.1f MiB\n", PeakRssKb(d.pid) / 1024.0);
  kill(d.pid, SIGTERM);
  waitpid(d.pid, nullptr, 0);
  if (o.restart) {
    const auto r0 = Clock::now();
    Daemon again = Start(o, dir);
    // Ready when it listens: Start() returns once the service has recovered.
    const double recovery = std::chrono::duration<double>(Clock::now() - r0).count();
    httplib::Client client("127.0.0.1", again.port);
    auto health = client.Get("/healthz");
    std::printf("restart: serving again after %.2f s (healthz %d), peak RSS %.1f MiB\n", recovery,
                health ? health->status : -1, PeakRssKb(again.pid) / 1024.0);
    kill(again.pid, SIGTERM);
    waitpid(again.pid, nullptr, 0);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
