// An open-loop load generator for a running `hetsched serve`: submits jobs over keep-alive HTTP
// connections at a fixed rate for a fixed time (or a fixed count), and reports acknowledged
// submissions, their latency and the rate achieved. scripts/daemon-scale.sh drives it against a
// daemon it starts; docs/benchmarks.md ("The daemon at scale") has the numbers.
//   daemon_load_bench --port P --token-file F [--rate 100] [--seconds 5] [--count N]
//                     [--connections 8] [--prefix j] [--gang 1] [--work-min 60]
//                     [--work-max 60] [--seed 1]
//   daemon_load_bench --port P --wait-ready SECONDS   (polls /healthz until it answers 200)
// Submission i is due at start + i / rate; a connection that is late sends at once. Latency is
// from sending to the acknowledgement (a 201: the daemon has stored the job); "from due" also
// counts the time a request waited for a free connection, which a fixed-rate client would see.
// --rate 0 (with --count) sends as fast as the connections allow. Exit status 1 when any
// submission was not acknowledged. Not a Google Benchmark: it measures a service from outside.
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

struct Options {
  int port = 0;
  std::string token_file;
  double rate = 100;    // submissions per second; 0: as fast as the connections allow
  double seconds = 5;   // stop sending after this long
  long count = 0;       // stop after this many submissions (0: only the time bounds it)
  int connections = 8;  // the daemon serves 8 requests at a time (HttpApiOptions::threads)
  std::string prefix = "j";
  int gang = 1;
  double work_min = 60;  // each job's modeled seconds, uniform in [work_min, work_max]
  double work_max = 60;
  unsigned seed = 1;
  double wait_ready = 0;  // > 0: only wait up to this long for /healthz to answer 200
};

// One submission's outcome, kept per connection.
struct Sample {
  double latency_s = 0;   // send to acknowledgement
  double from_due_s = 0;  // due time to acknowledgement
  double sent_s = 0;      // when it was sent, from the start
  // The first request on its connection, which opens it: its latency includes the TCP
  // handshake (a SYN the listener's full queue dropped is sent again after 1 s).
  bool opened = false;
};

struct Tally {
  std::vector<Sample> acked;
  long errors = 0;
  std::string first_error;
};

// Every job's body, made before the clock starts: the generator's own work stays off the
// measured path.
std::vector<std::string> Bodies(const Options& o, long n) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> work(o.work_min, o.work_max);
  std::vector<std::string> out;
  out.reserve(n);
  for (long i = 0; i < n; ++i) {
    out.push_back(fmt::format(R"({{"name":"{}{}","stacks":["cuda"],"gang_size":{},"work":{:.1f}}})",
                              o.prefix, i, o.gang, work(rng)));
  }
  return out;
}

// Sends bodies[i] at its due time from `connections` threads, each with one keep-alive
// connection, until the bodies or the time run out.
std::vector<Tally> Send(const Options& o, const std::vector<std::string>& bodies, double* wall_s) {
  std::string token;
  std::ifstream(o.token_file) >> token;
  const httplib::Headers headers = {{"Authorization", "Bearer " + token}};
  std::vector<Tally> tallies(o.connections);
  std::atomic<long> next{0};
  const auto start = Clock::now();
  const auto deadline = start + Seconds(o.seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < o.connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", o.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(30);
      Tally& t = tallies[c];
      for (long i = next++; i < static_cast<long>(bodies.size()); i = next++) {
        const auto due = o.rate > 0 ? start + Seconds(i / o.rate) : Clock::now();
        if (due >= deadline) break;
        std::this_thread::sleep_until(due);
        const auto sent = Clock::now();
        auto res = client.Post("/v1/jobs", headers, bodies[i], "application/json");
        const auto acked = Clock::now();
        if (res && res->status == 201) {
          t.acked.push_back({Seconds(acked - sent).count(), Seconds(acked - due).count(),
                             Seconds(sent - start).count(), t.acked.empty() && t.errors == 0});
          continue;
        }
        if (t.errors++ == 0) {
          t.first_error = res ? fmt::format("HTTP {}: {}", res->status, res->body)
                              : httplib::to_string(res.error());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  *wall_s = Seconds(Clock::now() - start).count();
  return tallies;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// One line a script can read (key=value) after one a person can; returns the errors.
long Report(const std::vector<Tally>& tallies, double wall_s) {
  std::vector<double> latency, from_due;
  long errors = 0;
  std::string first_error;
  Sample slowest;
  for (const Tally& t : tallies) {
    for (const Sample& s : t.acked) {
      latency.push_back(s.latency_s * 1e3);
      from_due.push_back(s.from_due_s * 1e3);
      if (s.from_due_s > slowest.from_due_s) slowest = s;
    }
    errors += t.errors;
    if (first_error.empty()) first_error = t.first_error;
  }
  const double rate = wall_s > 0 ? latency.size() / wall_s : 0;
  std::printf(
      "acknowledged %zu in %.1f s (%.0f/s), %ld errors; latency ms: p50 %.2f p99 %.2f max %.2f; "
      "from due: p99 %.2f max %.2f\n",
      latency.size(), wall_s, rate, errors, Percentile(latency, 0.5), Percentile(latency, 0.99),
      Percentile(latency, 1), Percentile(from_due, 0.99), Percentile(from_due, 1));
  std::printf("slowest from due: %.2f ms, sent %.3f s after the start%s\n",
              slowest.from_due_s * 1e3, slowest.sent_s,
              slowest.opened ? ", the first request of its connection (it opened it)" : "");
  if (!first_error.empty()) std::printf("first error: %s\n", first_error.c_str());
  std::printf(
      "acked=%zu seconds=%.2f rate=%.1f errors=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f "
      "due_p99_ms=%.3f due_max_ms=%.3f slowest_sent_s=%.3f slowest_opened=%d\n",
      latency.size(), wall_s, rate, errors, Percentile(latency, 0.5), Percentile(latency, 0.99),
      Percentile(latency, 1), Percentile(from_due, 0.99), Percentile(from_due, 1), slowest.sent_s,
      slowest.opened ? 1 : 0);
  return errors;
}

// Polls /healthz every 5 ms until it answers 200 (the daemon has recovered its state); prints
// how long that took from this call. Exit status 1 when it did not within `limit_s`.
int WaitReady(int port, double limit_s) {
  const auto start = Clock::now();
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(0, 100'000);
  while (Seconds(Clock::now() - start).count() < limit_s) {
    auto res = client.Get("/healthz");
    if (res && res->status == 200) {
      std::printf("ready_s=%.3f\n", Seconds(Clock::now() - start).count());
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::fprintf(stderr, "daemon_load_bench: /healthz not 200 within %.0f s\n", limit_s);
  return 1;
}

// Reads all of `text` as a number into `out`; false (out unchanged) for anything else.
template <typename T>
bool ReadNumber(const std::string& text, T& out) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: daemon_load_bench --port P --token-file F [--rate R] [--seconds S] "
               "[--count N] [--connections C] [--prefix P] [--gang G] [--work-min S] "
               "[--work-max S] [--seed N]\n"
               "       daemon_load_bench --port P --wait-ready SECONDS\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    const std::string v = argv[++i];
    bool number = true;
    if (a == "--port")
      number = ReadNumber(v, o.port);
    else if (a == "--token-file")
      o.token_file = v;
    else if (a == "--rate")
      number = ReadNumber(v, o.rate);
    else if (a == "--seconds")
      number = ReadNumber(v, o.seconds);
    else if (a == "--count")
      number = ReadNumber(v, o.count);
    else if (a == "--connections")
      number = ReadNumber(v, o.connections);
    else if (a == "--prefix")
      o.prefix = v;
    else if (a == "--gang")
      number = ReadNumber(v, o.gang);
    else if (a == "--work-min")
      number = ReadNumber(v, o.work_min);
    else if (a == "--work-max")
      number = ReadNumber(v, o.work_max);
    else if (a == "--seed")
      number = ReadNumber(v, o.seed);
    else if (a == "--wait-ready")
      number = ReadNumber(v, o.wait_ready);
    else
      return Usage();
    if (!number) {
      std::fprintf(stderr, "daemon_load_bench: %s: '%s' is not a number of that kind\n", a.c_str(),
                   v.c_str());
      return 2;
    }
  }
  if (o.port <= 0) return Usage();
  if (o.wait_ready > 0) return WaitReady(o.port, o.wait_ready);
  if (o.token_file.empty() || o.connections < 1 || o.rate < 0 || !(o.seconds > 0) ||
      o.work_max < o.work_min || (o.rate == 0 && o.count == 0)) {
    return Usage();
  }
  // Bounded by the count, else by what the rate can send in the time.
  const long n = o.count > 0 ? o.count : static_cast<long>(o.rate * o.seconds) + 1;
  const std::vector<std::string> bodies = Bodies(o, n);
  double wall_s = 0;
  const std::vector<Tally> tallies = Send(o, bodies, &wall_s);
  return Report(tallies, wall_s) > 0 ? 1 : 0;
}
