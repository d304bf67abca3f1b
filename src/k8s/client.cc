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

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/file.h"
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

}  // namespace hetsched::svc::k8s
