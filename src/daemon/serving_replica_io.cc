#include "daemon/serving_replica_io.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "obs/prometheus_text.h"

namespace hetsched::svc {

namespace {

// Largest /metrics page read (a model server's is tens of KB).
constexpr size_t kMaxMetricsBytes = 4u << 20;

}  // namespace

util::Result<int> FreePort(const std::string& host) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return util::Status::InvalidArgument(fmt::format("{}: not an IPv4 address", host));
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return util::Status::IoError("socket: " + std::string(strerror(errno)));
  socklen_t len = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int error = errno;
  close(fd);
  if (!ok) return util::Status::IoError(fmt::format("bind {}:0: {}", host, strerror(error)));
  return static_cast<int>(ntohs(addr.sin_port));
}

util::Result<ServerLoad> Scrape(const std::string& host, int port) {
  const std::string url = fmt::format("http://{}:{}/metrics", host, port);
  httplib::Client client(host, port);
  client.set_connection_timeout(1);
  client.set_read_timeout(2);
  std::string body;
  bool too_big = false;
  auto res = client.Get("/metrics", [&](const char* data, size_t n) {
    too_big = body.size() + n > kMaxMetricsBytes;
    if (!too_big) body.append(data, n);
    return !too_big;
  });
  if (too_big) {
    return util::Status::InvalidArgument(fmt::format(
        "GET {}: more than {} bytes (expected a model server's metrics)", url, kMaxMetricsBytes));
  }
  if (!res) {
    return util::Status::Unavailable(
        fmt::format("GET {}: no answer ({})", url, httplib::to_string(res.error())));
  }
  if (res->status != 200) {
    return util::Status::Unavailable(fmt::format("GET {}: HTTP {}", url, res->status));
  }
  auto samples = ParsePrometheusText(body);
  if (!samples.ok()) {
    return util::Status::InvalidArgument(
        fmt::format("GET {}: {}", url, samples.status().message()));
  }
  auto load = ReadServerLoad(*samples);
  if (!load.ok()) {
    return util::Status::InvalidArgument(fmt::format("GET {}: {}", url, load.status().message()));
  }
  return load;
}

std::vector<std::string> FilledCommand(const std::vector<std::string>& command, int port,
                                       int32_t tp, const std::string& model) {
  const std::pair<std::string, std::string> fills[] = {
      {"{port}", std::to_string(port)}, {"{tp}", std::to_string(tp)}, {"{model}", model}};
  std::vector<std::string> out;
  for (std::string arg : command) {
    for (const auto& [key, value] : fills) {
      for (size_t at = 0; (at = arg.find(key, at)) != std::string::npos; at += value.size()) {
        arg.replace(at, key.size(), value);
      }
    }
    out.push_back(std::move(arg));
  }
  return out;
}

}  // namespace hetsched::svc
