#include "k8s/client.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/file.h"
#include "util/source_location.h"
#include "util/subprocess.h"

namespace hetsched::svc::k8s {
namespace {

constexpr size_t kMaxLineBytes = size_t{64} << 20;  // one watch event (a node is ~3 KB)
constexpr size_t kMaxErrorBody = size_t{64} << 10;  // of a non-2xx answer to a watch
// A watch without timeoutSeconds: the API server ends those within 2 x --min-request-timeout
// (1 h by default); this only bounds a connection that died silently. (httplib polls with an
// int of milliseconds: at most 24.8 days.)
constexpr double kWatchWithoutTimeoutS = 24 * 3600;
constexpr char kGonePrefix[] = "410 Gone from ";  // how StatusError starts a 410's message

template <auto Free>
struct OpenSslFree {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;
using StorePtr = std::unique_ptr<X509_STORE, OpenSslFree<X509_STORE_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free>>;

// The reason of the first error on this thread's OpenSSL error queue ("" when none); clears it.
// The first: what failed a handshake comes before the errors of cleaning up after it.
std::string TakeOpenSslError() {
  const unsigned long e = ERR_peek_error();
  ERR_clear_error();
  if (e == 0) return "";
  const char* reason = ERR_reason_error_string(e);
  if (reason != nullptr) return reason;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate in `pem`; `what` names it in errors.
util::Result<std::vector<X509Ptr>> ParseCertificates(const std::string& pem,
                                                     const std::string& what) {
  ERR_clear_error();
  BioPtr bio = MemoryBio(pem);
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  // Reading ends with "no start line" after the last one; any other error is a broken one.
  const unsigned long e = ERR_peek_last_error();
  if (e != 0 && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
    return util::Status::InvalidArgument(fmt::format("{}: certificate {} does not parse: {}", what,
                                                     certs.size() + 1, TakeOpenSslError()));
  }
  ERR_clear_error();
  if (certs.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)", what));
  }
  return certs;
}

util::Result<KeyPtr> ParseKey(const std::string& pem, const std::string& what) {
  ERR_clear_error();
  BioPtr bio = MemoryBio(pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return util::Status::InvalidArgument(
        fmt::format("{}: does not parse: {} (expected an unencrypted PEM private key)", what,
                    TakeOpenSslError()));
  }
  return key;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string NameOf(const X509_NAME* name) {
  char buf[256];
  return name != nullptr && X509_NAME_oneline(name, buf, sizeof(buf)) != nullptr ? buf : "?";
}

// The slot of an SSL_CTX that points at its Connection's verify_failure_.
int VerifyFailureIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// OpenSSL's verify callback: keeps why the server's certificate was refused, for the message
// (httplib only says that the handshake failed).
int RecordVerifyFailure(int preverify_ok, X509_STORE_CTX* store) {
  if (preverify_ok == 1) return 1;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* failure = ssl == nullptr ? nullptr
                                 : static_cast<std::string*>(SSL_CTX_get_ex_data(
                                       SSL_get_SSL_CTX(ssl), VerifyFailureIndex()));
  if (failure != nullptr && failure->empty()) {
    *failure = X509_verify_cert_error_string(X509_STORE_CTX_get_error(store));
    if (X509* cert = X509_STORE_CTX_get_current_cert(store)) {
      *failure += fmt::format(" (certificate {} issued by {})", NameOf(X509_get_subject_name(cert)),
                              NameOf(X509_get_issuer_name(cert)));
    }
  }
  return 0;
}

// A watch's read timeout: the server ends it after the query's timeoutSeconds.
double WatchReadTimeout(const std::string& path, double grace_s) {
  const size_t q = path.find('?');
  if (q == std::string::npos) return kWatchWithoutTimeoutS;
  const std::string_view query = std::string_view(path).substr(q + 1);
  constexpr std::string_view kKey = "timeoutSeconds=";
  for (size_t at = 0; at < query.size();) {
    const size_t end = std::min(query.find('&', at), query.size());
    const std::string_view param = query.substr(at, end - at);
    if (param.substr(0, kKey.size()) == kKey) {
      int64_t n = -1;
      const std::string_view v = param.substr(kKey.size());
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && ptr == v.data() + v.size() && n > 0) {
        return std::min(static_cast<double>(n) + grace_s, kWatchWithoutTimeoutS);
      }
    }
    at = end + 1;
  }
  return kWatchWithoutTimeoutS;
}

httplib::Headers RequestHeaders(const std::string& token) {
  httplib::Headers headers{{"Accept", "application/json"}};
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return headers;
}

// Splits a byte stream into lines for on_line. Linear in the bytes: each is scanned once, and
// only the unfinished line is kept (and moved) between chunks.
class LineSplitter {
 public:
  explicit LineSplitter(const std::function<bool(std::string_view)>& on_line) : on_line_(on_line) {}

  // False when on_line asked to stop or a line grew past kMaxLineBytes.
  bool Feed(std::string_view data) {
    size_t scan = pending_.size();
    pending_.append(data);
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', scan)) != std::string::npos; scan = start = nl + 1) {
      if (!Emit(std::string_view(pending_).substr(start, nl - start))) return false;
    }
    pending_.erase(0, start);
    if (pending_.size() > kMaxLineBytes) {
      too_long_ = true;
      return false;
    }
    return true;
  }
  // The last line, when the stream ended without a line end.
  void Finish() {
    if (!pending_.empty()) Emit(pending_);
    pending_.clear();
  }
  bool stopped() const { return stopped_; }
  bool too_long() const { return too_long_; }

 private:
  bool Emit(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return true;
    if (!on_line_(line)) stopped_ = true;
    return !stopped_;
  }

  const std::function<bool(std::string_view)>& on_line_;
  std::string pending_;
  bool stopped_ = false;
  bool too_long_ = false;
};

util::StatusCode CodeOfHttpStatus(int status) {
  switch (status) {
    case 400:
    case 401:
    case 403:
    case 422:
      return util::StatusCode::kInvalidArgument;
    case 404:
    case 410:
      return util::StatusCode::kNotFound;
    case 409:
      return util::StatusCode::kAlreadyExists;
    case 429:
      return util::StatusCode::kUnavailable;
    default:
      return status >= 500 ? util::StatusCode::kUnavailable : util::StatusCode::kInternal;
  }
}

util::Status MakeStatus(util::StatusCode code, std::string message) {
  switch (code) {
    case util::StatusCode::kInvalidArgument:
      return util::Status::InvalidArgument(std::move(message));
    case util::StatusCode::kNotFound:
      return util::Status::NotFound(std::move(message));
    case util::StatusCode::kAlreadyExists:
      return util::Status::AlreadyExists(std::move(message));
    case util::StatusCode::kUnavailable:
      return util::Status::Unavailable(std::move(message));
    default:
      return util::Status::Internal(std::move(message));
  }
}

}  // namespace

// Parsed once by Create; every connection's SSL_CTX takes a reference to the same objects.
struct ApiClient::Tls {
  StorePtr store;  // the CAs the server's certificate must chain to; null: insecure
  X509Ptr cert;    // client certificate, or null
  KeyPtr key;
};

struct ApiClient::Answer {
  int status = 0;
  std::string reason;
  std::string body;
};

// One request's httplib client: set up for the server, and known to Stop() while it lives.
// Not movable: OpenSSL's verify callback writes to verify_failure_.
class ApiClient::Connection {
 public:
  explicit Connection(ApiClient* owner) : owner_(owner) {}
  ~Connection() {
    if (!registered_) return;
    std::lock_guard lock(owner_->mu_);
    owner_->active_.erase(client_.get());
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  util::Status Open(double read_timeout_s) {
    const ApiConfig& config = owner_->config_;
    if (owner_->tls_enabled_) {
      const Tls& tls = *owner_->tls_;
      auto ssl = std::make_unique<httplib::SSLClient>(owner_->host_, owner_->port_, tls.cert.get(),
                                                      tls.key.get());
      if (!ssl->is_valid()) {
        return util::Status::Internal(
            fmt::format("{}: cannot set up TLS: {}", config.source, TakeOpenSslError()));
      }
      // httplib's own check would trust the system's CAs besides the cluster's, and would not
      // say why it refused: OpenSSL checks the chain and the host name during the handshake.
      ssl->enable_server_certificate_verification(false);
      if (tls.store != nullptr) {
        SSL_CTX* ctx = ssl->ssl_context();
        SSL_CTX_set1_cert_store(ctx, tls.store.get());
        X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
        const std::string& host = owner_->host_;
        const int set = IsIpAddress(host)
                            ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                            : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
        if (set != 1) {
          return util::Status::Internal(fmt::format("{}: cannot check host name '{}': {}",
                                                    config.source, host, TakeOpenSslError()));
        }
        SSL_CTX_set_ex_data(ctx, VerifyFailureIndex(), &verify_failure_);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, RecordVerifyFailure);
      }
      client_ = std::move(ssl);
    } else {
      client_ = std::make_unique<httplib::ClientImpl>(owner_->host_, owner_->port_);
    }
    const std::chrono::duration<double> timeout(config.timeout_s);
    client_->set_connection_timeout(timeout);
    client_->set_write_timeout(timeout);
    client_->set_read_timeout(std::chrono::duration<double>(read_timeout_s));
    client_->set_url_encode(false);  // paths come encoded
    std::lock_guard lock(owner_->mu_);
    if (owner_->stopped_) return owner_->StoppedError();
    owner_->active_.insert(client_.get());
    registered_ = true;
    return util::Status::Ok();
  }

  httplib::ClientImpl& client() { return *client_; }

  // What went wrong, for a request that got no answer.
  std::string Problem(httplib::Error error) const {
    const std::string ssl_error = TakeOpenSslError();
    const double timeout_s = owner_->config_.timeout_s;
    std::string problem;
    switch (error) {
      case httplib::Error::Connection:
        problem = "cannot connect (is the API server up, and is this its address?)";
        break;
      case httplib::Error::ConnectionTimeout:
        problem = fmt::format("no connection within {}s", timeout_s);
        break;
      case httplib::Error::SSLConnection:
        if (!verify_failure_.empty()) {
          return "TLS: the server's certificate is not accepted: " + verify_failure_ +
                 (owner_->config_.ca_pem.empty() ? " (no CA configured: checked against the "
                                                   "system's CAs)"
                                                 : "");
        }
        problem = "TLS handshake failed (is it an https server?)";
        break;
      case httplib::Error::Read:
        problem = "the connection broke or the answer did not come in time";
        break;
      case httplib::Error::Write:
        problem = "the request could not be sent";
        break;
      default:
        problem = httplib::to_string(error);
    }
    return ssl_error.empty() ? problem : problem + ": " + ssl_error;
  }

 private:
  ApiClient* owner_;
  std::unique_ptr<httplib::ClientImpl> client_;
  std::string verify_failure_;
  bool registered_ = false;
};

ApiClient::ApiClient(ApiConfig config) : config_(std::move(config)) {}
ApiClient::~ApiClient() = default;

util::Status ApiClient::ParseServer() {
  const std::string& s = config_.server;
  const auto bad = [&](const std::string& problem) {
    return util::Status::InvalidArgument(fmt::format(
        "{}: server '{}': {} (expected https://HOST[:PORT], like https://10.0.0.1:6443)",
        config_.source, s, problem));
  };
  size_t rest = 0;
  if (s.rfind("https://", 0) == 0) {
    tls_enabled_ = true;
    rest = 8;
  } else if (s.rfind("http://", 0) == 0) {
    rest = 7;
  } else {
    return bad("not an https:// URL");
  }
  if (s.find_first_of("?#", rest) != std::string::npos) return bad("has a query or fragment");
  const size_t slash = std::min(s.find('/', rest), s.size());
  const std::string authority = s.substr(rest, slash - rest);
  base_path_ = s.substr(slash);
  while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string::npos) return bad("no ']' after the IPv6 address");
    host_ = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("text after the IPv6 address");
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.find(':');
    if (colon != std::string::npos && authority.find(':', colon + 1) != std::string::npos) {
      return bad("an IPv6 address needs brackets");
    }
    host_ = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (host_.empty()) return bad("no host");
  if (host_.find('@') != std::string::npos) return bad("user info is not supported");
  port_ = tls_enabled_ ? 443 : 80;
  if (!port_text.empty() || authority.back() == ':') {
    const auto [ptr, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port_);
    if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
        port_ < 1 || port_ > 65535) {
      return bad(fmt::format("port '{}' is not a number from 1 to 65535", port_text));
    }
  }
  return util::Status::Ok();
}

util::Result<std::unique_ptr<ApiClient>> ApiClient::Create(ApiConfig config) {
  std::unique_ptr<ApiClient> c(new ApiClient(std::move(config)));
  const ApiConfig& cfg = c->config_;
  RETURN_IF_ERROR(c->ParseServer());
  if (!(cfg.timeout_s > 0)) {
    return util::Status::InvalidArgument(
        fmt::format("{}: timeout {}s (expected more than 0)", cfg.source, cfg.timeout_s));
  }
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: a client certificate needs both its certificate and its key", cfg.source));
  }
  if (!c->tls_enabled_) return c;
  auto tls = std::make_unique<Tls>();
  if (!cfg.insecure_skip_tls_verify) {
    tls->store.reset(X509_STORE_new());
    if (cfg.ca_pem.empty()) {
      X509_STORE_set_default_paths(tls->store.get());
    } else {
      ASSIGN_OR_RETURN(std::vector<X509Ptr> cas,
                       ParseCertificates(cfg.ca_pem, cfg.source + ": CA certificate"));
      for (const X509Ptr& ca : cas) X509_STORE_add_cert(tls->store.get(), ca.get());
    }
  }
  if (!cfg.client_cert_pem.empty()) {
    ASSIGN_OR_RETURN(std::vector<X509Ptr> certs,
                     ParseCertificates(cfg.client_cert_pem, cfg.source + ": client certificate"));
    ASSIGN_OR_RETURN(tls->key, ParseKey(cfg.client_key_pem, cfg.source + ": client key"));
    tls->cert = std::move(certs.front());
    if (X509_check_private_key(tls->cert.get(), tls->key.get()) != 1) {
      ERR_clear_error();
      return util::Status::InvalidArgument(
          fmt::format("{}: the client key is not the client certificate's key", cfg.source));
    }
  }
  c->tls_ = std::move(tls);
  return c;
}

util::Status ApiClient::StoppedError() const {
  return util::Status::Unavailable(fmt::format("{}: the API client was stopped", config_.source));
}

std::string ApiClient::Describe(const std::string& method, const std::string& path) const {
  std::string server = config_.server;
  while (!server.empty() && server.back() == '/') server.pop_back();
  const std::string source = config_.source.empty() ? "" : " (" + config_.source + ")";
  return fmt::format("{} {}{}{}", method, server, path, source);
}

util::Result<std::string> ApiClient::BearerToken() const {
  if (config_.token_file.empty()) return config_.token;
  auto text = util::ReadFile(config_.token_file);
  if (!text.ok()) {
    return util::Status::Unavailable(
        fmt::format("{}: token file: {}", config_.source, text.status().message()));
  }
  std::string token = std::move(text).value();
  const size_t begin = token.find_first_not_of(" \t\r\n");
  const size_t end = token.find_last_not_of(" \t\r\n");
  token = begin == std::string::npos ? "" : token.substr(begin, end + 1 - begin);
  // A line break would end the header and start another.
  if (token.empty() || token.find_first_of("\r\n") != std::string::npos) {
    return util::Status::Unavailable(
        fmt::format("{}: token file {}: {} (expected one line, the token)", config_.source,
                    config_.token_file, token.empty() ? "is empty" : "has several lines"));
  }
  return token;
}

util::Status ApiClient::StatusError(const std::string& method, const std::string& path, int status,
                                    const std::string& reason, const std::string& body) const {
  // The API's errors are Status objects; proxies in front of it may answer anything.
  std::string message;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    message = j["message"].get<std::string>();
  } else {
    message = body.empty() ? "(no message)" : util::FirstLine(body);
  }
  if (status == 401) message += " (the credentials were refused)";
  // IsGone tests the start of the message: the phrase of 410 is fixed, whatever a proxy says.
  const std::string phrase = status == 410 ? "Gone" : reason.empty() ? "(no reason)" : reason;
  return MakeStatus(CodeOfHttpStatus(status), fmt::format("{} {} from {}: {}", status, phrase,
                                                          Describe(method, path), message));
}

util::Result<ApiClient::Answer> ApiClient::Send(const std::string& method, const std::string& path,
                                                const std::string* body) {
  if (stopped_) return StoppedError();
  ASSIGN_OR_RETURN(std::string token, BearerToken());
  httplib::Headers headers = RequestHeaders(token);
  Connection conn(this);
  RETURN_IF_ERROR(conn.Open(config_.timeout_s));
  ERR_clear_error();
  if (body == nullptr) headers.emplace("Accept-Encoding", "gzip");
  httplib::Result res =
      body == nullptr ? conn.client().Get(base_path_ + path, headers)
                      : conn.client().Post(base_path_ + path, headers, *body, "application/json");
  if (stopped_) return StoppedError();
  if (!res) {
    return util::Status::Unavailable(
        fmt::format("{}: {}", Describe(method, path), conn.Problem(res.error())));
  }
  return Answer{res->status, res->reason, std::move(res->body)};
}

util::Result<std::string> ApiClient::Get(const std::string& path) {
  ASSIGN_OR_RETURN(Answer a, Send("GET", path, nullptr));
  if (a.status / 100 != 2) return StatusError("GET", path, a.status, a.reason, a.body);
  return std::move(a.body);
}

util::Result<std::string> ApiClient::Post(const std::string& path, const std::string& body) {
  ASSIGN_OR_RETURN(Answer a, Send("POST", path, &body));
  if (a.status / 100 != 2) return StatusError("POST", path, a.status, a.reason, a.body);
  return std::move(a.body);
}

util::Status ApiClient::Watch(const std::string& path,
                              const std::function<bool(std::string_view line)>& on_line) {
  if (stopped_) return StoppedError();
  ASSIGN_OR_RETURN(std::string token, BearerToken());
  Connection conn(this);
  RETURN_IF_ERROR(conn.Open(WatchReadTimeout(path, config_.timeout_s)));
  int status = 0;
  std::string reason;
  std::string error_body;
  LineSplitter lines(on_line);
  ERR_clear_error();
  httplib::Result res = conn.client().Get(
      base_path_ + path, RequestHeaders(token),
      [&](const httplib::Response& r) {
        status = r.status;
        reason = r.reason;
        // A Stop() that came before the request was in flight could not shut its socket.
        return !stopped_;
      },
      [&](const char* data, size_t n) {
        if (stopped_) return false;
        if (status / 100 != 2) {
          error_body.append(
              data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
          return true;
        }
        return lines.Feed(std::string_view(data, n));
      });
  if (stopped_ || lines.stopped()) return util::Status::Ok();
  if (lines.too_long()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: a line of the watch is longer than {} MiB", Describe("GET", path),
                    kMaxLineBytes >> 20));
  }
  if (!res) {
    return util::Status::Unavailable(
        fmt::format("{}: {}", Describe("GET", path), conn.Problem(res.error())));
  }
  if (status / 100 != 2) return StatusError("GET", path, status, reason, error_body);
  lines.Finish();
  return util::Status::Ok();
}

void ApiClient::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  // Shuts the sockets down: their reads and writes fail at once.
  for (httplib::ClientImpl* client : active_) client->stop();
}

bool IsGone(const util::Status& status) {
  return status.code() == util::StatusCode::kNotFound &&
         status.message().rfind(kGonePrefix, 0) == 0;
}

// ---------------------------------------------------------------------------------------------
// Kubeconfig

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

struct Entry {
  YAML::Node body;  // the entry's cluster/context/user mapping
  std::string at;   // its field path, like "clusters[1].cluster"
};

class KubeconfigReader {
 public:
  explicit KubeconfigReader(std::string path)
      : path_(std::move(path)), dir_(std::filesystem::path(path_).parent_path().string()) {}

  util::Status Error(const YAML::Mark& m, const std::string& field, const std::string& problem,
                     const std::string& expected = "") const {
    return util::InputError({path_, m.line + 1, m.column + 1}, field, problem, expected);
  }
  util::Status Error(const YAML::Node& n, const std::string& field, const std::string& problem,
                     const std::string& expected = "") const {
    return Error(n.Mark(), field, problem, expected);
  }

  util::Result<std::string> String(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "is not a string");
    return n.Scalar();
  }

  util::Result<bool> Bool(const YAML::Node& n, const std::string& field) const {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
      return n.Scalar() == "true";
    }
    return Error(n, field, "is not a boolean", "true or false");
  }

  // A path in the kubeconfig, relative to its folder.
  util::Result<std::string> Path(const YAML::Node& n, const std::string& field) const {
    ASSIGN_OR_RETURN(std::string p, String(n, field));
    if (p.empty()) return Error(n, field, "is empty", "a file path");
    if (dir_.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(dir_) / p).string();
  }

  // The PEM text of a certificate (`key` false) or private key field: `-data` fields in
  // base64, the others naming a file.
  util::Result<std::string> Pem(const YAML::Node& n, const std::string& field, bool key) const {
    std::string pem;
    if (field.size() > 5 && field.compare(field.size() - 5, 5, "-data") == 0) {
      ASSIGN_OR_RETURN(std::string text, String(n, field));
      std::string problem;
      std::optional<std::string> decoded = DecodeBase64(text, &problem);
      if (!decoded) return Error(n, field, problem, "base64 of PEM text");
      pem = std::move(*decoded);
    } else {
      ASSIGN_OR_RETURN(std::string file, Path(n, field));
      auto text = util::ReadFile(file);
      if (!text.ok()) return Error(n, field, text.status().message());
      pem = std::move(text).value();
    }
    const bool looks_right = key ? pem.find("PRIVATE KEY-----") != std::string::npos
                                 : pem.find("-----BEGIN CERTIFICATE-----") != std::string::npos;
    if (!looks_right) {
      return Error(n, field, key ? "holds no PEM private key" : "holds no PEM certificate",
                   key ? "-----BEGIN PRIVATE KEY----- (or EC/RSA PRIVATE KEY)"
                       : "-----BEGIN CERTIFICATE-----");
    }
    return pem;
  }

  // The entry named `name` in the list `list` ("contexts"), each {name, `inner`: {...}}.
  // `named_at` and `named_field` are where the name came from, for the error.
  util::Result<Entry> Find(const YAML::Node& root, const std::string& list,
                           const std::string& inner, const std::string& name,
                           const YAML::Mark& named_at, const std::string& named_field) const {
    const YAML::Node entries = root[list];
    if (!entries || entries.IsNull()) {
      return Error(named_at, named_field,
                   fmt::format("no {} named '{}': the kubeconfig has no {}", inner, name, list));
    }
    if (!entries.IsSequence()) {
      return Error(entries, list, "is not a list",
                   fmt::format("entries {{name: NAME, {}: {{...}}}}", inner));
    }
    std::string names;
    for (size_t i = 0; i < entries.size(); ++i) {
      const YAML::Node e = entries[i];
      const std::string at = fmt::format("{}[{}]", list, i);
      if (!e.IsMap()) {
        return Error(e, at, "is not a mapping", fmt::format("{{name: NAME, {}: {{...}}}}", inner));
      }
      if (!e["name"]) return Error(e, at + ".name", "is missing");
      ASSIGN_OR_RETURN(std::string entry_name, String(e["name"], at + ".name"));
      if (entry_name == name) {
        const YAML::Node body = e[inner];
        if (!body || !(body.IsMap() || body.IsNull())) {
          return Error(e, at + "." + inner, "is missing or not a mapping");
        }
        return Entry{body, at + "." + inner};
      }
      names += (names.empty() ? "" : ", ") + entry_name;
    }
    return Error(named_at, named_field, fmt::format("no {} named '{}'", inner, name),
                 names.empty() ? "" : "one of: " + names);
  }

 private:
  std::string path_;
  std::string dir_;
};

util::Status ReadCluster(const KubeconfigReader& r, const Entry& e, ApiConfig* c) {
  std::string ca_data, ca_file;
  if (e.body.IsMap()) {
    for (const auto& kv : e.body) {
      const std::string key = kv.first.Scalar();
      const std::string at = e.at + "." + key;
      const YAML::Node& v = kv.second;
      if (key == "server") {
        ASSIGN_OR_RETURN(c->server, r.String(v, at));
      } else if (key == "certificate-authority-data") {
        ASSIGN_OR_RETURN(ca_data, r.Pem(v, at, /*key=*/false));
      } else if (key == "certificate-authority") {
        ASSIGN_OR_RETURN(ca_file, r.Pem(v, at, /*key=*/false));
      } else if (key == "insecure-skip-tls-verify") {
        ASSIGN_OR_RETURN(c->insecure_skip_tls_verify, r.Bool(v, at));
      } else if (key == "tls-server-name" || key == "proxy-url") {
        return r.Error(kv.first, at, "is not supported by hetsched",
                       key == "proxy-url" ? "a server the extender reaches directly"
                                          : "a server URL whose host the certificate names");
      }
      // The rest (extensions, disable-compression, ...) changes nothing hetsched does.
    }
  }
  if (c->server.empty()) {
    return r.Error(e.body, e.at + ".server", "is missing or empty",
                   "the API server's URL, like https://10.0.0.1:6443");
  }
  c->ca_pem = !ca_data.empty() ? ca_data : ca_file;
  if (c->insecure_skip_tls_verify && !c->ca_pem.empty()) {
    return r.Error(e.body, e.at, "insecure-skip-tls-verify together with a certificate authority",
                   "one of them, as kubectl does");
  }
  return util::Status::Ok();
}

util::Status ReadUser(const KubeconfigReader& r, const Entry& e, const std::string& name,
                      ApiConfig* c) {
  const std::string instead =
      "a token, tokenFile or client-certificate and client-key in the kubeconfig, or in a pod "
      "its service account";
  std::string cert_data, cert_file, key_data, key_file;
  if (e.body.IsMap()) {
    for (const auto& kv : e.body) {
      const std::string key = kv.first.Scalar();
      const std::string at = e.at + "." + key;
      const YAML::Node& v = kv.second;
      if (key == "token") {
        ASSIGN_OR_RETURN(c->token, r.String(v, at));
      } else if (key == "tokenFile") {
        ASSIGN_OR_RETURN(c->token_file, r.Path(v, at));
        if (access(c->token_file.c_str(), R_OK) != 0) {
          return r.Error(v, at,
                         fmt::format("cannot read '{}': {}", c->token_file, std::strerror(errno)));
        }
      } else if (key == "client-certificate-data") {
        ASSIGN_OR_RETURN(cert_data, r.Pem(v, at, /*key=*/false));
      } else if (key == "client-certificate") {
        ASSIGN_OR_RETURN(cert_file, r.Pem(v, at, /*key=*/false));
      } else if (key == "client-key-data") {
        ASSIGN_OR_RETURN(key_data, r.Pem(v, at, /*key=*/true));
      } else if (key == "client-key") {
        ASSIGN_OR_RETURN(key_file, r.Pem(v, at, /*key=*/true));
      } else if (key == "exec") {
        return r.Error(kv.first, at,
                       fmt::format("user '{}' gets its credentials from an exec plugin, which "
                                   "hetsched does not run",
                                   name),
                       instead);
      } else if (key == "auth-provider") {
        return r.Error(kv.first, at,
                       fmt::format("user '{}' uses an auth-provider plugin, which hetsched does "
                                   "not support",
                                   name),
                       instead);
      } else if (key == "username" || key == "password") {
        return r.Error(
            kv.first, at,
            fmt::format("user '{}' logs in with a username and password, which hetsched does "
                        "not support",
                        name),
            instead);
      } else if (key == "as" || key == "as-uid" || key == "as-groups" || key == "as-user-extra") {
        return r.Error(kv.first, at,
                       fmt::format("user '{}' impersonates another, which hetsched does not "
                                   "support",
                                   name),
                       "the credentials of the account to act as");
      }
      // The rest (extensions, ...) changes nothing hetsched does.
    }
  }
  c->client_cert_pem = !cert_data.empty() ? cert_data : cert_file;
  c->client_key_pem = !key_data.empty() ? key_data : key_file;
  if (c->client_cert_pem.empty() != c->client_key_pem.empty()) {
    return r.Error(e.body, e.at,
                   c->client_key_pem.empty() ? "has a client certificate but no client key"
                                             : "has a client key but no client certificate",
                   "both client-certificate(-data) and client-key(-data)");
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<ApiConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return util::InputError({path, e.mark.line + 1, e.mark.column + 1}, "",
                            fmt::format("not YAML: {}", e.msg));
  }
  const KubeconfigReader r(path);
  if (!root.IsMap()) {
    return r.Error(root, "", "is not a mapping",
                   "a kubeconfig: clusters, users, contexts and current-context");
  }
  std::string name = context;
  YAML::Mark named_at = root.Mark();
  std::string named_field = "contexts";
  if (name.empty()) {
    const YAML::Node current = root["current-context"];
    if (!current || current.IsNull() || (current.IsScalar() && current.Scalar().empty())) {
      return r.Error(root, "current-context", "is missing or empty",
                     "the name of a context, or a context chosen explicitly");
    }
    ASSIGN_OR_RETURN(name, r.String(current, "current-context"));
    named_at = current.Mark();
    named_field = "current-context";
  } else if (const YAML::Node contexts = root["contexts"]; contexts) {
    named_at = contexts.Mark();
  }
  ASSIGN_OR_RETURN(Entry ctx, r.Find(root, "contexts", "context", name, named_at, named_field));
  const YAML::Node cluster_name = ctx.body.IsMap() ? ctx.body["cluster"] : YAML::Node();
  if (!cluster_name) {
    return r.Error(ctx.body, ctx.at + ".cluster", "is missing", "the name of a cluster");
  }
  ASSIGN_OR_RETURN(std::string cluster, r.String(cluster_name, ctx.at + ".cluster"));
  ASSIGN_OR_RETURN(Entry cluster_entry, r.Find(root, "clusters", "cluster", cluster,
                                               cluster_name.Mark(), ctx.at + ".cluster"));
  ApiConfig config;
  config.source = fmt::format("kubeconfig {}, context {}", path, name);
  RETURN_IF_ERROR(ReadCluster(r, cluster_entry, &config));
  const YAML::Node user_name = ctx.body.IsMap() ? ctx.body["user"] : YAML::Node();
  if (user_name && !user_name.IsNull()) {
    ASSIGN_OR_RETURN(std::string user, r.String(user_name, ctx.at + ".user"));
    if (!user.empty()) {
      ASSIGN_OR_RETURN(Entry user_entry,
                       r.Find(root, "users", "user", user, user_name.Mark(), ctx.at + ".user"));
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
