// The API's listening socket: bound as the daemon needs it rather than as httplib's defaults
// leave it.
#pragma once

#include <string>

#include "obs/log.h"

namespace httplib {
class Server;
}

namespace hetsched::svc {

// Binds `server` to `host`:`port` (0: any free port) and returns the port, or -1 when it cannot.
// SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second daemon binds the
// same port and the kernel splits connections between the two. The listen backlog is the
// system's maximum (SOMAXCONN), not httplib's 5: clients that open more connections at once
// than the backlog while the accepting thread waits for a core have their SYN dropped, and
// send it again only a second later (docs/benchmarks.md, "The daemon at scale"). A backlog
// that cannot be raised is logged at warn; the server still listens.
int BindServer(httplib::Server& server, const std::string& host, int port, Logger* logger);

}  // namespace hetsched::svc
