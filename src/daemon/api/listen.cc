#include "daemon/api/listen.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace hetsched::svc {

int BindServer(httplib::Server& server, const std::string& host, int port, Logger* logger) {
  // The socket options are set on each socket httplib tries: the one bound last listens. The
  // callback outlives this call (httplib keeps it), hence the shared slot.
  auto listening = std::make_shared<socket_t>(INVALID_SOCKET);
  server.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    *listening = sock;
  });
  const int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) return -1;
  // httplib's library was built to listen with a backlog of 5; listening again sets it.
  if (::listen(*listening, SOMAXCONN) != 0) {
    logger->Warn("the API's listen backlog stays at httplib's 5",
                 {{"error", std::strerror(errno)}});
  }
  return bound;
}

}  // namespace hetsched::svc
