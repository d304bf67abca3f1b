// What the daemon's client commands share (cli/cmd_client.cc, cli/cmd_operator.cc): the
// connection flags, where the token comes from, one HTTP request, and error replies explained.
#pragma once

#include <httplib.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "util/status.h"

namespace hetsched::cli {

struct ClientFlags {
  std::string server;
  std::string token;
  std::string token_file;
  bool json_out = false;
};

// A reply of the daemon, and where the token sent with it came from ("" when none was sent).
struct Reply {
  int status = 0;
  nlohmann::json body;
  std::string token_origin;
};

// --server, --token and --token-file on `cmd`.
void AddConnectionFlags(CLI::App* cmd, ClientFlags& f);

// One request; a token that cannot be read (kInvalidArgument naming where it was looked for),
// a failure to connect or a reply that is not JSON is an error; an HTTP error status is
// returned for the caller to report with ReportHttpError.
util::Result<Reply> Call(const ClientFlags& f, const std::string& method, const std::string& path,
                         const std::string& body = "", const httplib::Headers& extra = {});

// Prints the daemon's message, with what to do about a 401 (which token was sent, from where)
// or a 403 (the role the request needs). Exit status 2 for a request the daemon refused
// (4xx), 1 otherwise.
int ReportHttpError(const Reply& r);

// A JSON value as table text: "-" for null, strings bare.
std::string Text(const nlohmann::json& v);
// A job or node name as one URL path segment.
std::string UrlEscape(const std::string& s);

}  // namespace hetsched::cli
