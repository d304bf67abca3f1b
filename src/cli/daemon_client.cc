#include "cli/daemon_client.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/command.h"

namespace hetsched::cli {
namespace {

using nlohmann::json;

// The file the daemon writes its generated admin token to, beside its database; the client
// looks for it in the folder it runs in.
constexpr const char* kTokenFileName = "hetsched.token";

std::string ServerUrl(const ClientFlags& f) {
  std::string url = "http://127.0.0.1:8080";
  if (!f.server.empty()) {
    url = f.server;
  } else if (const char* env = std::getenv("HETSCHED_SERVER"); env != nullptr && *env != '\0') {
    url = env;
  }
  // `hetsched serve` prints its URL with a trailing slash; httplib wants scheme://host:port
  // (with the slash it cannot connect).
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  return url;
}

// The first line of the token file `path` (`origin` says how it was named, for the messages).
util::Result<std::string> TokenInFile(const std::string& path, const std::string& origin) {
  std::ifstream in(path);
  if (!in) {
    return util::Status::InvalidArgument(
        fmt::format("{}: cannot read the token ({}); the daemon writes its admin token to "
                    "hetsched.token beside its database (`hetsched serve` prints where): pass "
                    "that file with --token-file, as a user who may read it",
                    origin, std::strerror(errno)));
  }
  std::string token;
  std::getline(in, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) {
    return util::Status::InvalidArgument(fmt::format(
        "{}: no token on its first line; the daemon writes its admin token to hetsched.token "
        "beside its database: pass that file with --token-file",
        origin));
  }
  return token;
}

struct FoundToken {
  std::string token;   // empty: none (reads may go without one)
  std::string origin;  // where it came from, as the messages say it
};

// --token, else --token-file, else HETSCHED_TOKEN, else ./hetsched.token when it exists.
util::Result<FoundToken> FindToken(const ClientFlags& f) {
  if (!f.token.empty() && !f.token_file.empty()) {
    return util::Status::InvalidArgument("--token and --token-file: give one of them");
  }
  if (!f.token.empty()) return FoundToken{f.token, "--token"};
  if (!f.token_file.empty()) {
    const std::string origin = "--token-file " + f.token_file;
    ASSIGN_OR_RETURN(std::string token, TokenInFile(f.token_file, origin));
    return FoundToken{token, origin};
  }
  if (const char* env = std::getenv("HETSCHED_TOKEN"); env != nullptr && *env != '\0') {
    return FoundToken{env, "the HETSCHED_TOKEN environment variable"};
  }
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::absolute(kTokenFileName, ec);
  if (!std::filesystem::exists(here, ec)) return FoundToken{};
  const std::string origin = fmt::format("{} (the default: ./{})", here.string(), kTokenFileName);
  ASSIGN_OR_RETURN(std::string token, TokenInFile(here.string(), origin));
  return FoundToken{token, origin};
}

// What to do about a 401 or a 403, after the daemon's own message.
std::string TokenAdvice(const Reply& r) {
  if (r.status == 403) {
    return fmt::format(
        "the token from {} is valid but its role is lower; use a token with that role (the "
        "daemon's generated hetsched.token is an admin token; the tokens: of its config each "
        "have a role)",
        r.token_origin);
  }
  if (!r.token_origin.empty()) {
    return fmt::format(
        "the token sent came from {}; the daemon accepts the tokens: of its config, or without "
        "them the admin token in hetsched.token beside its database (`hetsched serve` prints "
        "where): pass it with --token-file FILE, --token or HETSCHED_TOKEN",
        r.token_origin);
  }
  std::error_code ec;
  return fmt::format(
      "no token was sent: none of --token, --token-file or HETSCHED_TOKEN was given, and there is "
      "no {} in {}; pass the daemon's token file with --token-file (hetsched.token beside its "
      "database) or set HETSCHED_TOKEN",
      kTokenFileName, std::filesystem::current_path(ec).string());
}

}  // namespace

void AddConnectionFlags(CLI::App* cmd, ClientFlags& f) {
  cmd->add_option("--server", f.server,
                  "daemon URL (default: $HETSCHED_SERVER, else http://127.0.0.1:8080)");
  cmd->add_option("--token", f.token,
                  "bearer token (default: $HETSCHED_TOKEN, else ./hetsched.token if it exists)");
  cmd->add_option("--token-file", f.token_file,
                  "file whose first line is the token, e.g. the hetsched.token the daemon wrote "
                  "beside its database");
}

util::Result<Reply> Call(const ClientFlags& f, const std::string& method, const std::string& path,
                         const std::string& body, const httplib::Headers& extra) {
  const std::string url = ServerUrl(f);
  httplib::Client client(url);
  if (!client.is_valid()) {
    return util::Status::InvalidArgument(
        fmt::format("server '{}' is not a URL (expected http://HOST:PORT)", url));
  }
  ASSIGN_OR_RETURN(FoundToken token, FindToken(f));
  client.set_connection_timeout(5);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(30);
  httplib::Headers headers = extra;
  if (!token.token.empty()) headers.emplace("Authorization", "Bearer " + token.token);
  httplib::Result res = method == "GET"      ? client.Get(path, headers)
                        : method == "DELETE" ? client.Delete(path, headers)
                                             : client.Post(path, headers, body, "application/json");
  if (!res) {
    return util::Status::IoError(
        fmt::format("cannot reach the daemon at {} ({}); is `hetsched "
                    "serve` running? (--server or HETSCHED_SERVER)",
                    url, httplib::to_string(res.error())));
  }
  Reply r;
  r.status = res->status;
  r.token_origin = token.origin;
  r.body = json::parse(res->body, nullptr, false);
  if (r.body.is_discarded()) {
    return util::Status::IoError(
        fmt::format("{} {}: the reply (HTTP {}) is not JSON", method, path, res->status));
  }
  return r;
}

int ReportHttpError(const Reply& r) {
  std::string message = "HTTP " + std::to_string(r.status);
  if (r.body.contains("error") && r.body["error"].is_object()) {
    message = r.body["error"].value("message", message);
  }
  if (r.status == 401 || r.status == 403) message += "; " + TokenAdvice(r);
  std::fprintf(stderr, "hetsched: %s\n", message.c_str());
  return r.status >= 400 && r.status < 500 ? kExitBadInput : kExitFailure;
}

std::string Text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string UrlEscape(const std::string& s) {
  // Job and node names are [A-Za-z0-9._-]; anything else is escaped so the URL stays whole.
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace hetsched::cli
