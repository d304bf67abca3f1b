// `hetsched serve`: the scheduling daemon (docs/operations.md). Wires the config, store,
// backend, service and HTTP API together, then waits for SIGINT or SIGTERM.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "backends/local/local_backend.h"
#include "backends/local/probed_cluster.h"
#include "backends/slurm/slurm_backend.h"
#include "backends/virtual/virtual_backend.h"
#include "cli/command.h"
#include "cli/data_dir.h"
#include "cli/serve_analysis.h"
#include "daemon/api/http_api.h"
#include "daemon/api/serve_config.h"
#include "daemon/service.h"
#include "daemon/store.h"
#include "k8s/client.h"
#include "k8s/extender.h"
#include "k8s/node_cache.h"
#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "model/io/tenants_reader.h"
#include "sim/faults.h"

namespace hetsched::cli {
namespace {

struct ServeFlags {
  std::string config;
  std::string listen;
  std::string db;
  std::string backend;
  std::string cluster;
  std::string policy;
  std::string log_level;
  double time_scale = 0;  // 0: from the config
  std::string faults;     // virtual backend: a fault file to play
};

// The simulator's fault file (docs/simulator.md, "Faults") as the virtual backend plays it:
// whole nodes down, or failing their starts, at modeled times.
util::Result<std::vector<svc::VirtualFault>> LoadVirtualFaults(const std::string& path,
                                                               const model::Cluster& cluster) {
  ASSIGN_OR_RETURN(std::vector<sim::Fault> faults, sim::LoadFaults(path, cluster));
  std::vector<svc::VirtualFault> out;
  for (const sim::Fault& f : faults) {
    if (f.device.valid()) {
      return util::Status::InvalidArgument(fmt::format(
          "--faults {}: a fault at {} s names one device of {}; the virtual backend fails whole "
          "nodes",
          path, f.time_s, cluster.node(f.node).name));
    }
    out.push_back({f.time_s, cluster.node(f.node).name, f.duration_s, f.start_failure});
  }
  return out;
}

// 32 random bytes from the kernel, hex.
util::Result<std::string> NewToken() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return util::Status::IoError("cannot read /dev/urandom for a token");
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

std::filesystem::path TokenPathBeside(const std::string& db_path) {
  return std::filesystem::path(db_path).parent_path() / "hetsched.token";
}

// The admin token beside the database: read when it exists, else made (mode 0600).
util::Result<std::string> TokenBeside(const std::string& db_path, std::string* token_path) {
  *token_path = TokenPathBeside(db_path).string();
  if (std::filesystem::exists(*token_path)) {
    std::ifstream in(*token_path);
    std::string token;
    std::getline(in, token);
    if (token.size() < 16) {
      return util::Status::InvalidArgument(
          fmt::format("{}: not a token (expected at least 16 characters on the first line); "
                      "remove it to have a new one made",
                      *token_path));
    }
    return token;
  }
  ASSIGN_OR_RETURN(std::string token, NewToken());
  const std::string tmp = *token_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return util::Status::IoError(fmt::format("cannot write {}", tmp));
    ::chmod(tmp.c_str(), 0600);
    out << token << "\n";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, *token_path, ec);
  if (ec)
    return util::Status::IoError(fmt::format("cannot write {}: {}", *token_path, ec.message()));
  return token;
}

// The Slurm backend (docs/slurm.md), checking that the config's catalog names exist.
util::Result<std::unique_ptr<svc::SlurmBackend>> MakeSlurmBackend(
    const svc::ServeConfig& c, const model::DeviceCatalog& catalog, svc::Logger* logger) {
  for (const auto& [slurm_name, type] : c.slurm.mapping.device_types) {
    if (!catalog.Find(type)) {
      return util::Status::InvalidArgument(fmt::format(
          "slurm.device_types.{}: '{}' is not a catalog device type (`hetsched catalog` lists "
          "them)",
          slurm_name, type));
    }
  }
  if (!c.slurm.mapping.cpu_type.empty() && !catalog.Find(c.slurm.mapping.cpu_type)) {
    return util::Status::InvalidArgument(
        fmt::format("slurm.cpu_type: '{}' is not a catalog device type", c.slurm.mapping.cpu_type));
  }
  svc::SlurmBackendOptions o;
  o.conf = c.slurm.conf;
  o.bin_dir = c.slurm.bin_dir;
  o.partitions = c.slurm.partitions;
  o.mapping = c.slurm.mapping;
  o.catalog = catalog;
  std::error_code ec;
  std::filesystem::create_directories(c.slurm.output_dir, ec);
  o.output_dir = std::filesystem::absolute(c.slurm.output_dir).string();
  if (ec) {
    return util::Status::IoError(
        fmt::format("slurm.output_dir {}: {}", o.output_dir, ec.message()));
  }
  o.poll_interval_s = c.slurm.poll_interval_s;
  o.start_timeout_s = c.slurm.start_timeout_s;
  o.logger = logger;
  return svc::SlurmBackend::Create(std::move(o));
}

util::Result<std::unique_ptr<svc::Backend>> MakeBackend(const svc::ServeConfig& c,
                                                        const model::Cluster& cluster,
                                                        const std::string& faults) {
  if (c.backend == "virtual") {
    svc::VirtualBackendOptions o;
    for (const model::Node& n : cluster.nodes) o.nodes.push_back(n.name);
    o.time_scale = c.time_scale;
    if (!faults.empty()) {
      ASSIGN_OR_RETURN(o.faults, LoadVirtualFaults(faults, cluster));
    }
    return std::unique_ptr<svc::Backend>(std::make_unique<svc::VirtualBackend>(std::move(o)));
  }
  if (c.power.policy != "always-on") {
    return util::Status::InvalidArgument(
        fmt::format("power policy '{}': the local backend cannot switch this machine's power (use "
                    "always-on, or the virtual backend)",
                    c.power.policy));
  }
  if (cluster.nodes.size() != 1) {
    return util::Status::InvalidArgument(fmt::format(
        "the local backend runs jobs on this machine: its cluster must have one node, not {} "
        "(e.g. --cluster 'xeon-8380=1' or a cluster file with one node)",
        cluster.nodes.size()));
  }
  svc::LocalBackendOptions o;
  o.node_name = cluster.nodes[0].name;
  o.state_dir = svc::LocalStateDir(c);
  ASSIGN_OR_RETURN(auto backend, svc::LocalBackend::Create(std::move(o)));
  return std::unique_ptr<svc::Backend>(std::move(backend));
}

// This machine as one node (backends/local/probed_cluster.h), printing what the probe found
// and the node.
util::Result<model::Cluster> ProbeThisMachine() {
  std::vector<std::string> notes;
  auto probed = svc::ProbeLocalCluster({}, &notes);
  for (const std::string& note : notes) std::printf("hetsched serve: probed %s\n", note.c_str());
  std::fflush(stdout);
  if (!probed.ok()) return probed.status();
  return std::move(probed->cluster);
}

// One daemon per database: a second one would place the same jobs again. An exclusive flock
// on DATABASE.lock, held until this process exits (the descriptor is never closed).
util::Status LockDatabase(const std::string& database) {
  const std::string lock_path = database + ".lock";
  for (;;) {
    const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0) {
      return util::Status::IoError(fmt::format("{}: {}", lock_path, std::strerror(errno)));
    }
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(lock_fd);
      return util::Status::AlreadyExists(
          fmt::format("{}: another hetsched serve uses this database (it holds {}); one daemon per "
                      "database: stop that one or choose another with --db",
                      database, lock_path));
    }
    // A daemon whose start failed removes the lock file it made (StartLeftovers): a lock taken
    // on the file it removed locks nothing, so take it again on the file now at the path.
    struct stat held {
    }, at_path{};
    if (::fstat(lock_fd, &held) == 0 && ::stat(lock_path.c_str(), &at_path) == 0 &&
        held.st_dev == at_path.st_dev && held.st_ino == at_path.st_ino) {
      return util::Status::Ok();
    }
    ::close(lock_fd);
  }
}

// The database's folder must exist: the daemon makes its files there, not the folder.
util::Status CheckDatabaseFolder(const std::string& database) {
  const std::filesystem::path folder = std::filesystem::path(database).parent_path();
  std::error_code ec;
  if (folder.empty() || std::filesystem::is_directory(folder, ec)) return util::Status::Ok();
  if (std::filesystem::exists(folder, ec)) {
    return util::Status::InvalidArgument(
        fmt::format("database {}: {} is not a folder; choose another with --db (or database: "
                    "in the config)",
                    database, folder.string()));
  }
  return util::Status::InvalidArgument(
      fmt::format("database {}: its folder {} does not exist; create it (mkdir -p {}) or choose "
                  "another with --db (or database: in the config)",
                  database, folder.string(), folder.string()));
}

// What one start of the daemon may create (the database and its side files, the token file,
// the Slurm output folder, the local backend's state folder), removed again when the start
// fails, so that a failed start leaves the folders as it found them. Paths that existed when
// they were watched are never touched.
class StartLeftovers {
 public:
  StartLeftovers() = default;
  StartLeftovers(const StartLeftovers&) = delete;
  StartLeftovers& operator=(const StartLeftovers&) = delete;
  ~StartLeftovers() {
    std::error_code ec;
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) std::filesystem::remove_all(*it, ec);
  }

  // Call before `path` may be created: when it does not exist, it (or its outermost missing
  // folder, for a folder made with its parents) is removed unless Keep is called. Whether it
  // did not exist.
  bool Watch(const std::filesystem::path& path) {
    std::error_code ec;
    if (path.empty() || std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      return false;
    }
    std::filesystem::path outermost = std::filesystem::absolute(path, ec);
    while (outermost.has_parent_path() && outermost.parent_path() != outermost &&
           !std::filesystem::exists(outermost.parent_path(), ec)) {
      outermost = outermost.parent_path();
    }
    made_.push_back(outermost);
    return true;
  }
  // The daemon started: what it made is its state now.
  void Keep() { made_.clear(); }

 private:
  std::vector<std::filesystem::path> made_;
};

// Watches every path this start may create in `leftovers`.
void WatchStartPaths(const svc::ServeConfig& c, StartLeftovers& leftovers) {
  leftovers.Watch(c.database + ".lock");
  // SQLite's side files of a database that existed may hold its last commits: kept.
  if (leftovers.Watch(c.database)) {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) leftovers.Watch(c.database + suffix);
  }
  if (c.tokens.empty()) {
    const std::filesystem::path token = TokenPathBeside(c.database);
    leftovers.Watch(token);
    leftovers.Watch(token.string() + ".tmp");
  }
  if (c.backend == "slurm") leftovers.Watch(c.slurm.output_dir);
  if (c.backend == "local") {
    const std::filesystem::path state = svc::LocalStateDir(c);
    leftovers.Watch(state);
    leftovers.Watch(state / "logs");
    leftovers.Watch(state / "run");
  }
}

// Where and for whom the API listens.
svc::HttpApiOptions ApiOptionsOf(const svc::ServeConfig& c) {
  svc::HttpApiOptions o;
  o.host = c.host;
  o.port = c.port;
  o.tokens = c.tokens;
  o.anonymous_read = c.anonymous_read;
  return o;
}

// Blocks SIGINT and SIGTERM for sigwait; threads started afterwards inherit the block.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The Kubernetes API as the config says: the pod's service account or a kubeconfig.
util::Result<std::unique_ptr<svc::k8s::ApiClient>> KubernetesClient(
    const svc::ServeConfig::Kubernetes& k) {
  util::Result<svc::k8s::ApiConfig> config = util::Status::Internal("no API");
  if (k.api == "in-cluster") {
    config = svc::k8s::InClusterConfig();
  } else {
    std::string path = k.kubeconfig;
    if (path.empty()) {
      const char* env = std::getenv("KUBECONFIG");
      const char* home = std::getenv("HOME");
      path = env && *env ? env : std::string(home ? home : "") + "/.kube/config";
      if (path.find(':') != std::string::npos) {
        return util::Status::InvalidArgument(fmt::format(
            "KUBECONFIG lists several files ({}); hetsched reads one: set kubernetes.kubeconfig",
            path));
      }
    }
    config = svc::k8s::LoadKubeconfig(path, k.context);
  }
  if (!config.ok()) return config.status();
  return svc::k8s::ApiClient::Create(std::move(config).value());
}

// A name the API server accepts for a namespace or pod (RFC 1123 subdomain characters): it goes
// into a URL path.
bool ValidObjectName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';
  });
}

// `serve --backend kubernetes`: hetsched as kube-scheduler's extender (docs/kubernetes.md).
// kube-scheduler keeps the queue: no database, no job routes; the verbs, the node cache's view
// (GET /v1/k8s/nodes), /healthz and /metrics.
int RunKubernetesExtender(svc::ServeConfig& c) {
  const svc::ServeConfig::Kubernetes& k = c.kubernetes;
  svc::Logger logger(c.log_level);
  auto profile = model::io::LoadGavelThroughputs(DataPath("gavel/simulation_throughputs.json"));
  if (!profile.ok()) return ReportError(profile.status());
  std::unique_ptr<svc::k8s::ApiClient> client;
  if (k.api != "none") {
    auto made = KubernetesClient(k);
    if (!made.ok()) return ReportError(made.status());
    client = std::move(made).value();
  }
  svc::k8s::ExtenderOptions o;
  o.mapping = k.mapping;
  o.profile = &*profile;
  o.scorers = k.scorers;
  o.packing_weight = k.packing;
  o.locality_weight = k.locality;
  o.node_cache = k.node_cache;
  o.group_timeout_s = k.group_timeout_s;
  o.tenants = c.tenants;
  if (client) {
    o.binder = [api = client.get()](const std::string& ns, const std::string& name,
                                    const std::string& uid, const std::string& node) {
      if (!ValidObjectName(ns) || !ValidObjectName(name) || !ValidObjectName(node)) {
        return util::Status::InvalidArgument(
            fmt::format("bind {}/{} to {}: not valid Kubernetes names", ns, name, node));
      }
      nlohmann::json binding = {
          {"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
      // The API server binds only the pod with this UID (not a namesake made since).
      if (!uid.empty()) binding["metadata"]["uid"] = uid;
      return api
          ->Post(fmt::format("/api/v1/namespaces/{}/pods/{}/binding", ns, name), binding.dump())
          .status();
    };
  }
  auto extender = svc::k8s::Extender::Create(std::move(o));
  if (!extender.ok()) return ReportError(extender.status());

  sigset_t signals = BlockStopSignals();
  svc::MetricsRegistry metrics;
  svc::HttpApiOptions ao = ApiOptionsOf(c);
  ao.extender_prefix = k.prefix;
  auto api = svc::HttpApi::Create(ao, nullptr, &metrics, &logger, extender->get());
  if (!api.ok()) return ReportError(api.status());
  std::unique_ptr<svc::k8s::NodeCache> cache;
  if (client && k.node_cache) {
    cache = std::make_unique<svc::k8s::NodeCache>(client.get(), extender->get(), &logger);
  }
  (*api)->Start();
  const std::string host = c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
  std::printf("hetsched serve: kube-scheduler extender, node cache %s, Kubernetes API %s\n",
              k.node_cache ? "on" : "off",
              client ? client->config().source.c_str() : "none (bind unavailable)");
  std::printf("hetsched serve: listening on http://%s:%d%s/{filter,prioritize,bind,preempt}\n",
              host.c_str(), (*api)->port(), k.prefix.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  logger.Info("shutting down", {{"signal", sig}});
  (*api)->Stop();
  if (cache) cache->Stop();
  return kExitOk;
}

// The configuration file (--config) with the flags given over it, checked against the backend.
util::Result<svc::ServeConfig> ServeConfigOf(const ServeFlags& f) {
  svc::ServeConfig c;
  if (!f.config.empty()) {
    ASSIGN_OR_RETURN(c, svc::LoadServeConfig(f.config));
  }
  if (!f.listen.empty()) RETURN_IF_ERROR(svc::ParseListen(f.listen, &c));
  if (!f.db.empty()) c.database = f.db;
  if (!f.backend.empty()) c.backend = f.backend;
  if (!f.cluster.empty()) c.cluster = f.cluster;
  if (!f.policy.empty()) c.policy = f.policy;
  if (f.time_scale > 0) c.time_scale = f.time_scale;
  if (!f.log_level.empty()) {
    ASSIGN_OR_RETURN(c.log_level, svc::ParseLogLevel(f.log_level));
  }
  if (c.backend != "virtual" && c.backend != "local" && c.backend != "slurm" &&
      c.backend != "kubernetes") {
    return util::Status::InvalidArgument(fmt::format(
        "--backend '{}': unknown (expected virtual, local, slurm or kubernetes)", c.backend));
  }
  if (c.backend != "virtual" && !f.faults.empty()) {
    return util::Status::InvalidArgument(
        "--faults applies to the virtual backend only (real machines fail on their own)");
  }
  if (c.backend != "virtual" && c.time_scale != 1) {
    return util::Status::InvalidArgument(
        "--time-scale applies to the virtual backend only (real jobs run in real time)");
  }
  return c;
}

// The cluster the daemon schedules: the cluster file, else Slurm's nodes (slurm), this machine
// (local) or the seed example (virtual). With slurm, `*slurm` is the backend that was asked.
util::Result<model::Cluster> ServeCluster(svc::ServeConfig& c, svc::Logger* logger,
                                          std::unique_ptr<svc::Backend>* slurm) {
  if (c.backend == "slurm") {
    // The cluster is Slurm's nodes, unless a cluster file describes them (with its links).
    std::optional<model::Cluster> file;
    if (!c.cluster.empty()) {
      ASSIGN_OR_RETURN(file, model::io::LoadCluster(c.cluster));
    }
    ASSIGN_OR_RETURN(
        auto b,
        MakeSlurmBackend(c, file ? file->catalog : model::DeviceCatalog::BuiltIn(), logger));
    util::Result<model::Cluster> cluster = util::Status::Internal("no cluster");
    if (file) {
      cluster = std::move(*file);
    } else {
      std::vector<std::string> problems;
      cluster = svc::slurm::ClusterOfNodes(b->ListNodes(), c.power.resume_timeout_s,
                                           c.power.suspend_timeout_s, &problems);
      for (const std::string& p : problems) {
        std::printf("hetsched serve: Slurm node %s\n", p.c_str());
      }
    }
    *slurm = std::move(b);
    return cluster;
  }
  // The local backend runs jobs here: without a cluster it describes this machine.
  if (c.cluster.empty() && c.backend != "virtual") return ProbeThisMachine();
  if (c.cluster.empty()) c.cluster = ExamplePath("clusters/seed-startup.yaml");
  return model::io::LoadCluster(c.cluster);
}

svc::ServiceOptions ServiceOptionsOf(const svc::ServeConfig& c) {
  svc::ServiceOptions so;
  so.policy = c.policy;
  so.scheduler.scorers = c.scorers;
  so.classes = c.classes;
  so.scheduler.elastic = c.elastic;
  so.scheduler.placement = c.placement;
  so.scheduler.preemption_cost_s = c.preemption_cost_s;
  if (!c.tenants.empty()) so.scheduler.tenants = std::make_shared<const model::Tenants>(c.tenants);
  so.time_scale = c.time_scale;
  so.stop_grace_s = c.stop_grace_s;
  so.keep_ended_s = c.keep_ended_s;
  so.history_every_s = c.history_every_s;
  so.power = c.power;
  so.analysis = ServeAnalysisHooks();
  return so;
}

int RunServe(const ServeFlags& f) {
  auto config = ServeConfigOf(f);
  if (!config.ok()) return ReportError(config.status());
  svc::ServeConfig& c = *config;
  if (c.backend == "kubernetes") return RunKubernetesExtender(c);
  if (auto st = CheckDatabaseFolder(c.database); !st.ok()) return ReportError(st);
  // Declared before everything that writes: its destructor runs after theirs have closed.
  StartLeftovers leftovers;
  WatchStartPaths(c, leftovers);
  // The checks that can fail without creating anything come first: the database's lock before
  // asking Slurm for its nodes or making a token.
  if (auto st = LockDatabase(c.database); !st.ok()) return ReportError(st);
  svc::Logger logger(c.log_level);
  std::unique_ptr<svc::Backend> slurm_backend;
  util::Result<model::Cluster> cluster = ServeCluster(c, &logger, &slurm_backend);
  if (!cluster.ok()) return ReportError(cluster.status());
  if (!c.tenants.empty()) {
    if (auto st = model::io::ResolveTenants(*cluster, &c.tenants); !st.ok()) return ReportError(st);
  }

  // Signals are taken by sigwait below; every thread started from here on inherits the block.
  sigset_t signals = BlockStopSignals();

  svc::MetricsRegistry metrics;
  std::string token_note;
  if (c.tokens.empty()) {
    std::string token_path;
    auto token = TokenBeside(c.database, &token_path);
    if (!token.ok()) return ReportError(token.status());
    c.tokens.push_back({*token, svc::Role::kAdmin, ""});
    token_note = fmt::format("admin token in {} (the client reads it from there)", token_path);
  }
  auto store = svc::Store::Open(c.database, c.synchronous_full);
  if (!store.ok()) return ReportError(store.status());
  util::Result<std::unique_ptr<svc::Backend>> backend =
      slurm_backend ? util::Result<std::unique_ptr<svc::Backend>>(std::move(slurm_backend))
                    : MakeBackend(c, *cluster, f.faults);
  if (!backend.ok()) return ReportError(backend.status());
  auto service =
      svc::Service::Create(std::move(cluster).value(), std::move(backend).value(),
                           std::move(store).value(), ServiceOptionsOf(c), &logger, &metrics);
  if (!service.ok()) return ReportError(service.status());
  svc::ServingLoop serving(service->get(), c.serving, &logger);
  auto api =
      svc::HttpApi::Create(ApiOptionsOf(c), service->get(), &metrics, &logger, nullptr, &serving);
  if (!api.ok()) return ReportError(api.status());
  // The API answers 503 while the service recovers its state.
  (*api)->Start();
  if (auto st = (*service)->Start(); !st.ok()) {
    (*api)->Stop();
    return ReportError(st);
  }
  serving.Start();
  leftovers.Keep();
  const std::string host = c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
  std::printf("hetsched serve: %s backend, policy %s, database %s\n", c.backend.c_str(),
              c.policy.c_str(), c.database.c_str());
  if (!token_note.empty()) std::printf("hetsched serve: %s\n", token_note.c_str());
  std::printf("hetsched serve: listening on http://%s:%d/ (dashboard; API under /v1)\n",
              host.c_str(), (*api)->port());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  logger.Info("shutting down", {{"signal", sig}});
  (*api)->Stop();
  // Before the daemon's loop stops: the serving loop submits and cancels through it.
  serving.Stop();
  (*service)->Shutdown();
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand(
      "serve",
      "Run the scheduling daemon: an HTTP API, a dashboard and durable state. With no flags: "
      "the seed start-up cluster as a virtual backend, state in ./hetsched.db, on "
      "127.0.0.1:8080");
  cmd->add_option("--config", flags->config, "YAML config (docs/operations.md)");
  cmd->add_option("--listen", flags->listen, "HOST:PORT to listen on (port 0: any free port)");
  cmd->add_option("--db", flags->db, "SQLite database for the daemon's state");
  cmd->add_option("--backend", flags->backend,
                  "virtual (jobs run for their modeled time), local (jobs' commands run on "
                  "this machine), slurm (a Slurm cluster runs them; docs/slurm.md) or "
                  "kubernetes (kube-scheduler's extender; docs/kubernetes.md)");
  cmd->add_option("--cluster", flags->cluster,
                  "cluster YAML or shorthand like 'v100-32g=4'. Default: the seed start-up "
                  "cluster (virtual); for local, this machine as one node: its CPU and the "
                  "GPUs/NPUs nvidia-smi, rocm-smi and npu-smi report, mapped to catalog types "
                  "by model (an unknown model is an error: then pass --cluster); for slurm, "
                  "Slurm's nodes");
  cmd->add_option("--policy", flags->policy, "scheduling policy (see `hetsched simulate --help`)");
  cmd->add_option("--time-scale", flags->time_scale,
                  "virtual backend: modeled seconds per wall second (e.g. 60)");
  cmd->add_option("--faults", flags->faults,
                  "virtual backend: a fault file to play in modeled time, as `hetsched simulate "
                  "--faults` reads it (nodes down for a while, or failing their starts)");
  cmd->add_option("--log-level", flags->log_level, "debug, info, warn or error");
  cmd->callback([flags, &result] { result.exit_code = RunServe(*flags); });
}

}  // namespace hetsched::cli
