// Where the API server is and how to authenticate to it: a kubeconfig file, or the service
// account a pod runs as (LoadKubeconfig, InClusterConfig in k8s/client.h).
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "k8s/client.h"
#include "model/io/document.h"
#include "util/file.h"

namespace hetsched::svc::k8s {

namespace {

// Standard base64 (RFC 4648) as kubeconfig's -data fields hold it; blanks are skipped and the
// '=' padding may be left out. nullopt with `*problem` when it is not base64.
std::optional<std::string> DecodeBase64(std::string_view in, std::string* problem) {
  const auto value = [](char ch) -> int {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t bits = 0;
  int nbits = 0;
  size_t digits = 0;
  bool padding = false;
  for (size_t i = 0; i < in.size(); ++i) {
    const char ch = in[i];
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') continue;
    if (ch == '=') {
      padding = true;
      continue;
    }
    const int v = value(ch);
    if (v < 0 || padding) {
      *problem = v < 0 ? fmt::format("character '{}' at offset {} is not base64", ch, i)
                       : fmt::format("text after the '=' padding at offset {}", i);
      return std::nullopt;
    }
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    ++digits;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (digits % 4 == 1) {
    *problem = "it is cut short (one base64 digit too many or too few)";
    return std::nullopt;
  }
  return out;
}

using model::io::DocReader;
using model::io::DocValue;

struct Entry {
  // The entry's cluster/context/user mapping, or a null value when it is empty.
  const DocValue* body;
  std::string at;  // its field path, like "clusters[1].cluster"
};

// DocReader's typed reads, and those only a kubeconfig has: paths relative to its folder, PEM
// fields and entries found by name.
class KubeconfigReader : public DocReader {
 public:
  explicit KubeconfigReader(const std::string& path)
      : DocReader(path), dir_(std::filesystem::path(path).parent_path().string()) {}

  // A path in the kubeconfig, relative to its folder.
  util::Result<std::string> Path(const DocValue& v, const std::string& field) const {
    ASSIGN_OR_RETURN(std::string p, String(v, field));
    if (p.empty()) return Error(v, field, "is empty", "a file path");
    if (dir_.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(dir_) / p).string();
  }

  // The PEM text of a certificate (`key` false) or private key field: `-data` fields in
  // base64, the others naming a file.
  util::Result<std::string> Pem(const DocValue& v, const std::string& field, bool key) const {
    std::string pem;
    if (field.ends_with("-data")) {
      ASSIGN_OR_RETURN(std::string text, String(v, field));
      std::string problem;
      std::optional<std::string> decoded = DecodeBase64(text, &problem);
      if (!decoded) return Error(v, field, problem, "base64 of PEM text");
      pem = std::move(*decoded);
    } else {
      ASSIGN_OR_RETURN(std::string file, Path(v, field));
      auto text = util::ReadFile(file);
      if (!text.ok()) return Error(v, field, text.status().message());
      pem = std::move(text).value();
    }
    const bool looks_right = key ? pem.find("PRIVATE KEY-----") != std::string::npos
                                 : pem.find("-----BEGIN CERTIFICATE-----") != std::string::npos;
    if (!looks_right) {
      return Error(v, field, key ? "holds no PEM private key" : "holds no PEM certificate",
                   key ? "-----BEGIN PRIVATE KEY----- (or EC/RSA PRIVATE KEY)"
                       : "-----BEGIN CERTIFICATE-----");
    }
    return pem;
  }

  // The entry named `name` in the list `list` ("contexts"), each {name, `inner`: {...}}.
  // `named_at` and `named_field` are where the name came from, for the error.
  util::Result<Entry> Find(const DocValue& root, const std::string& list, const std::string& inner,
                           const std::string& name, const DocValue& named_at,
                           const std::string& named_field) const {
    const DocValue& entries = root[list];
    if (entries.IsMissing() || entries.IsNull()) {
      return Error(named_at, named_field,
                   fmt::format("no {} named '{}': the kubeconfig has no {}", inner, name, list));
    }
    if (!entries.IsList()) {
      return Error(entries, list, "is not a list",
                   fmt::format("entries {{name: NAME, {}: {{...}}}}", inner));
    }
    std::string names;
    for (size_t i = 0; i < entries.size(); ++i) {
      const DocValue& e = entries[i];
      const std::string at = fmt::format("{}[{}]", list, i);
      RETURN_IF_ERROR(Mapping(e, at, fmt::format("{{name: NAME, {}: {{...}}}}", inner)));
      if (!e.Has("name")) return Error(e, at + ".name", "is missing");
      ASSIGN_OR_RETURN(std::string entry_name, String(e["name"], at + ".name"));
      if (entry_name == name) {
        const DocValue& body = e[inner];
        if (!body.IsMap() && !body.IsNull()) {
          return Error(e, at + "." + inner, "is missing or not a mapping");
        }
        return Entry{&body, at + "." + inner};
      }
      names += (names.empty() ? "" : ", ") + entry_name;
    }
    return Error(named_at, named_field, fmt::format("no {} named '{}'", inner, name),
                 names.empty() ? "" : "one of: " + names);
  }

 private:
  std::string dir_;
};

util::Status ReadCluster(const KubeconfigReader& r, const Entry& e, ApiConfig* c) {
  std::string ca_data, ca_file;
  for (const DocValue::Field& f : e.body->fields) {
    const std::string at = e.at + "." + f.key;
    if (f.key == "server") {
      ASSIGN_OR_RETURN(c->server, r.String(f.value, at));
    } else if (f.key == "certificate-authority-data") {
      ASSIGN_OR_RETURN(ca_data, r.Pem(f.value, at, /*key=*/false));
    } else if (f.key == "certificate-authority") {
      ASSIGN_OR_RETURN(ca_file, r.Pem(f.value, at, /*key=*/false));
    } else if (f.key == "insecure-skip-tls-verify") {
      ASSIGN_OR_RETURN(c->insecure_skip_tls_verify, r.Bool(f.value, at));
    } else if (f.key == "tls-server-name" || f.key == "proxy-url") {
      return r.Error(f, at, "is not supported by hetsched",
                     f.key == "proxy-url" ? "a server the extender reaches directly"
                                          : "a server URL whose host the certificate names");
    }
    // The rest (extensions, disable-compression, ...) changes nothing hetsched does.
  }
  if (c->server.empty()) {
    return r.Error(*e.body, e.at + ".server", "is missing or empty",
                   "the API server's URL, like https://10.0.0.1:6443");
  }
  c->ca_pem = !ca_data.empty() ? ca_data : ca_file;
  if (c->insecure_skip_tls_verify && !c->ca_pem.empty()) {
    return r.Error(*e.body, e.at, "insecure-skip-tls-verify together with a certificate authority",
                   "one of them, as kubectl does");
  }
  return util::Status::Ok();
}

// The error for a user field that asks for what hetsched does not do, or Ok.
util::Status Unsupported(const KubeconfigReader& r, const DocValue::Field& f, const std::string& at,
                         const std::string& name) {
  const std::string instead =
      "a token, tokenFile or client-certificate and client-key in the kubeconfig, or in a pod "
      "its service account";
  const auto refuse = [&](std::string_view what, const std::string& expected) {
    return r.Error(f, at, fmt::format("user '{}' {}", name, what), expected);
  };
  if (f.key == "exec") {
    return refuse("gets its credentials from an exec plugin, which hetsched does not run", instead);
  }
  if (f.key == "auth-provider") {
    return refuse("uses an auth-provider plugin, which hetsched does not support", instead);
  }
  if (f.key == "username" || f.key == "password") {
    return refuse("logs in with a username and password, which hetsched does not support", instead);
  }
  if (f.key == "as" || f.key == "as-uid" || f.key == "as-groups" || f.key == "as-user-extra") {
    return refuse("impersonates another, which hetsched does not support",
                  "the credentials of the account to act as");
  }
  return util::Status::Ok();
}

util::Status ReadUser(const KubeconfigReader& r, const Entry& e, const std::string& name,
                      ApiConfig* c) {
  std::string cert_data, cert_file, key_data, key_file;
  for (const DocValue::Field& f : e.body->fields) {
    const std::string at = e.at + "." + f.key;
    if (f.key == "token") {
      ASSIGN_OR_RETURN(c->token, r.String(f.value, at));
    } else if (f.key == "tokenFile") {
      ASSIGN_OR_RETURN(c->token_file, r.Path(f.value, at));
      if (access(c->token_file.c_str(), R_OK) != 0) {
        return r.Error(f.value, at,
                       fmt::format("cannot read '{}': {}", c->token_file, std::strerror(errno)));
      }
    } else if (f.key == "client-certificate-data") {
      ASSIGN_OR_RETURN(cert_data, r.Pem(f.value, at, /*key=*/false));
    } else if (f.key == "client-certificate") {
      ASSIGN_OR_RETURN(cert_file, r.Pem(f.value, at, /*key=*/false));
    } else if (f.key == "client-key-data") {
      ASSIGN_OR_RETURN(key_data, r.Pem(f.value, at, /*key=*/true));
    } else if (f.key == "client-key") {
      ASSIGN_OR_RETURN(key_file, r.Pem(f.value, at, /*key=*/true));
    } else {
      // The rest (extensions, ...) changes nothing hetsched does, unless it is refused here.
      RETURN_IF_ERROR(Unsupported(r, f, at, name));
    }
  }
  c->client_cert_pem = !cert_data.empty() ? cert_data : cert_file;
  c->client_key_pem = !key_data.empty() ? key_data : key_file;
  if (c->client_cert_pem.empty() != c->client_key_pem.empty()) {
    return r.Error(*e.body, e.at,
                   c->client_key_pem.empty() ? "has a client certificate but no client key"
                                             : "has a client key but no client certificate",
                   "both client-certificate(-data) and client-key(-data)");
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<ApiConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  ASSIGN_OR_RETURN(const DocValue root, model::io::ParseYamlDocument(text, path));
  const KubeconfigReader r(path);
  RETURN_IF_ERROR(
      r.Mapping(root, "", "a kubeconfig: clusters, users, contexts and current-context"));
  std::string name = context;
  const DocValue* named_at = &root;
  std::string named_field = "contexts";
  if (name.empty()) {
    const DocValue& current = root["current-context"];
    if (current.IsMissing() || current.IsNull() || (current.IsScalar() && current.text.empty())) {
      return r.Error(root, "current-context", "is missing or empty",
                     "the name of a context, or a context chosen explicitly");
    }
    ASSIGN_OR_RETURN(name, r.String(current, "current-context"));
    named_at = &current;
    named_field = "current-context";
  } else if (root.Has("contexts")) {
    named_at = &root["contexts"];
  }
  ASSIGN_OR_RETURN(Entry ctx, r.Find(root, "contexts", "context", name, *named_at, named_field));
  const DocValue& cluster_name = (*ctx.body)["cluster"];
  if (cluster_name.IsMissing()) {
    return r.Error(*ctx.body, ctx.at + ".cluster", "is missing", "the name of a cluster");
  }
  ASSIGN_OR_RETURN(std::string cluster, r.String(cluster_name, ctx.at + ".cluster"));
  ASSIGN_OR_RETURN(Entry cluster_entry,
                   r.Find(root, "clusters", "cluster", cluster, cluster_name, ctx.at + ".cluster"));
  ApiConfig config;
  config.source = fmt::format("kubeconfig {}, context {}", path, name);
  RETURN_IF_ERROR(ReadCluster(r, cluster_entry, &config));
  const DocValue& user_name = (*ctx.body)["user"];
  if (!user_name.IsMissing() && !user_name.IsNull()) {
    ASSIGN_OR_RETURN(std::string user, r.String(user_name, ctx.at + ".user"));
    if (!user.empty()) {
      ASSIGN_OR_RETURN(Entry user_entry,
                       r.Find(root, "users", "user", user, user_name, ctx.at + ".user"));
      RETURN_IF_ERROR(ReadUser(r, user_entry, user, &config));
    }
  }
  return config;
}

util::Result<ApiConfig> InClusterConfig(const std::string& account_dir) {
  const auto missing = [](const std::string& what) {
    return util::Status::NotFound(fmt::format(
        "in-cluster config: {} (expected to run in a pod; outside one, use a kubeconfig)", what));
  };
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0') return missing("KUBERNETES_SERVICE_HOST is not set");
  if (port == nullptr || *port == '\0') return missing("KUBERNETES_SERVICE_PORT is not set");
  const std::string token_file = account_dir + "/token";
  if (access(token_file.c_str(), R_OK) != 0) {
    return missing(fmt::format("cannot read the service account token {}: {}", token_file,
                               std::strerror(errno)));
  }
  auto ca = util::ReadFile(account_dir + "/ca.crt");
  if (!ca.ok()) return missing("the service account's CA: " + ca.status().message());
  ApiConfig config;
  const std::string h = host;
  config.server =
      fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port);
  config.ca_pem = std::move(ca).value();
  config.token_file = token_file;
  config.source = "in-cluster";
  return config;
}

}  // namespace hetsched::svc::k8s
