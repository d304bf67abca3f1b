// What the serving loop (daemon/serving_loop.h) does to reach one replica: a port for it to
// listen on, its command with the placeholders filled in, and a read of its metrics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "obs/server_load.h"
#include "util/status.h"

namespace hetsched::svc {

// A port on `host` that nothing listens on now (the kernel's pick), or why none.
util::Result<int> FreePort(const std::string& host);

// Reads a replica's metrics. kUnavailable when it does not answer (yet), kInvalidArgument when
// it answers something that is no model server's metrics; both name the URL.
util::Result<ServerLoad> Scrape(const std::string& host, int port);

// The service's command with {port}, {tp} and {model} filled in, in every argument.
std::vector<std::string> FilledCommand(const std::vector<std::string>& command, int port,
                                       int32_t tp, const std::string& model);

}  // namespace hetsched::svc
