// The API's listening socket queues every connection a burst of clients opens, however late
// the accepting thread gets to them.
#include "daemon/api/listen.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace hetsched::svc {
namespace {

// Closes what it holds however the test ends, so a failed assertion leaks no socket.
struct OpenSockets {
  std::vector<int> fds;
  ~OpenSockets() {
    for (const int fd : fds) ::close(fd);
  }
};

TEST(BindServer, ConnectionsOpenedAtOnceWaitInTheQueueRatherThanBeDropped) {
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  httplib::Server server;
  const int port = BindServer(server, "127.0.0.1", 0, &logger);
  ASSERT_GT(port, 0);
  // The server is bound but not started: nothing accepts, so each connection stays in the
  // listen queue. With httplib's backlog of 5 the seventh one's SYN would be dropped.
  OpenSockets sockets;
  for (int i = 0; i < 32; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    sockets.fds.push_back(fd);
    const timeval limit{0, 300'000};  // a dropped SYN is sent again after 1 s
    ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)), 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)), 0)
        << "connection " << i + 1 << ": " << std::strerror(errno);
  }
}

TEST(BindServer, APortInUseIsRefused) {
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  httplib::Server first, second;
  const int port = BindServer(first, "127.0.0.1", 0, &logger);
  ASSERT_GT(port, 0);
  EXPECT_EQ(BindServer(second, "127.0.0.1", port, &logger), -1);
}

}  // namespace
}  // namespace hetsched::svc
