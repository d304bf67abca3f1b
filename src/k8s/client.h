// A small Kubernetes API client for the scheduler extender: where the API server is and how to
// authenticate (kubeconfig or the pod's service account), GET, POST and line-by-line watches.
//
// Only what the extender's node cache and its bind need: JSON in and out as text (callers parse
// it), HTTPS verified against the cluster's CA, bearer tokens or client certificates.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "util/status.h"

namespace httplib {
class ClientImpl;
}

namespace hetsched::svc::k8s {

// How to reach the API server: from a kubeconfig or the pod's service account.
struct ApiConfig {
  std::string server;      // "https://10.0.0.1:6443" (http:// allowed for tests); may end in a path
  std::string ca_pem;      // the cluster's CA (PEM text); empty: the system's CAs
  std::string token;       // bearer token, or
  std::string token_file;  // a file read again on every request (bound tokens rotate); wins
  std::string client_cert_pem, client_key_pem;  // client certificate auth (PEM text)
  bool insecure_skip_tls_verify = false;
  double timeout_s = 10;  // connect + read timeout of one request (not of a watch)
  // "kubeconfig ~/.kube/config, context kind-kind" / "in-cluster": for messages.
  std::string source;
};

// Reads a kubeconfig (YAML: clusters/users/contexts, current-context). `context` empty: the
// current context. Supports certificate-authority (a file, relative to the kubeconfig's folder)
// and certificate-authority-data (base64), token, tokenFile, client-certificate(-data),
// client-key(-data), insecure-skip-tls-verify; the -data forms win over the files, as in kubectl.
// Anything it cannot do (exec plugins, auth-provider, username/password, impersonation,
// tls-server-name, proxy-url) is an error naming the entry and what to use instead. Errors are
// "PATH:LINE:COLUMN: field: problem (expected ...)" (kInvalidArgument) or the file's read error.
util::Result<ApiConfig> LoadKubeconfig(const std::string& path, const std::string& context);

// The pod's service account: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT from the
// environment, token (kept as token_file: it rotates) and ca.crt under `account_dir`. kNotFound
// saying which is missing.
util::Result<ApiConfig> InClusterConfig(
    const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Thread-safe: every call opens a connection of its own (one TLS handshake per call), so Get,
// Post and any number of Watches may run at once from different threads, and Stop() reaches
// them all. Paths are sent as given ("/api/v1/nodes?watch=1&resourceVersion=5"): callers
// percent-encode query values. Each request sends `Accept: application/json` and, with a token
// or token file, `Authorization: Bearer TOKEN`.
//
// Errors: an answer other than 2xx is "CODE REASON from METHOD URL (SOURCE): API MESSAGE" with
// the StatusCode from the HTTP status (400/422: kInvalidArgument, 401/403: kInvalidArgument,
// 404/410: kNotFound, 409: kAlreadyExists, 429/5xx: kUnavailable, others kInternal); a
// connection or TLS failure is kUnavailable "METHOD URL (SOURCE): PROBLEM".
class ApiClient {
 public:
  // Checks the server URL and that the PEMs parse (and that the key is the certificate's).
  static util::Result<std::unique_ptr<ApiClient>> Create(ApiConfig config);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET path (with query); the body on 2xx (`Accept-Encoding: gzip`: lists of many MB shrink
  // about tenfold on the wire).
  util::Result<std::string> Get(const std::string& path);
  // POST a JSON body; the response body on 2xx (the API answers 200 or 201).
  util::Result<std::string> Post(const std::string& path, const std::string& body);
  // GET a watch (path includes watch=1): calls on_line for each complete non-empty line, without
  // its line end, as it arrives (the API server streams one JSON event per line, chunked; a line
  // may be up to 64 MiB). Returns when the server ends the stream (OK; a last line without a
  // line end is delivered), on a transport error or non-2xx status (error), when on_line
  // returns false (OK), or when Stop() is called from another thread (OK, within about a
  // second). The read timeout is the query's timeoutSeconds plus timeout_s; without
  // timeoutSeconds, 24 hours. A watch from a resourceVersion that is too old usually gets 200
  // and then an ERROR event whose object is a Status with code 410: that line is on_line's.
  util::Status Watch(const std::string& path,
                     const std::function<bool(std::string_view line)>& on_line);
  // Ends running calls (a Watch returns OK, Get/Post fail) and makes later calls fail fast
  // (kUnavailable). Thread-safe. It may wait for a connection being set up (up to timeout_s).
  void Stop();
  const ApiConfig& config() const { return config_; }

 private:
  struct Tls;        // OpenSSL objects parsed once by Create
  class Connection;  // one request's httplib client, registered for Stop()
  struct Answer;     // what one request got back
  explicit ApiClient(ApiConfig config);

  util::Status ParseServer();  // config_.server into tls_enabled_, host_, port_, base_path_
  util::Result<Answer> Send(const std::string& method, const std::string& path,
                            const std::string* body);
  util::Result<std::string> BearerToken() const;
  util::Status StoppedError() const;
  // "METHOD URL (SOURCE)" for messages.
  std::string Describe(const std::string& method, const std::string& path) const;
  util::Status StatusError(const std::string& method, const std::string& path, int status,
                           const std::string& reason, const std::string& body) const;

  ApiConfig config_;
  bool tls_enabled_ = false;  // https://
  std::string host_;          // without IPv6 brackets
  int port_ = 0;
  std::string base_path_;  // the server URL's path, without a trailing '/'
  std::unique_ptr<Tls> tls_;

  std::atomic<bool> stopped_{false};
  std::mutex mu_;                          // guards active_ and the stop of its entries
  std::set<httplib::ClientImpl*> active_;  // requests in flight
};

// Whether an error from Get/Post/Watch was the API's 410 Gone ("too old resource version": list
// again). Test the Status as returned, before adding context to its message.
bool IsGone(const util::Status& status);

}  // namespace hetsched::svc::k8s
