// Job requests are JSON, read strictly: a number or a boolean must be one (not a string), a key
// is given once, and a job must end within 10 years on its fastest device type. Each error is
// a 400 naming the field and what was expected.
#include "daemon/job_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/catalog.h"

namespace hetsched::svc {
namespace {

// The message of the error ParseJobRequest returns for `body`; "OK" when it accepts it.
std::string ErrorOf(const std::string& body) {
  auto r = ParseJobRequest(body, model::DeviceCatalog::BuiltIn());
  if (r.ok()) return "OK";
  EXPECT_EQ(r.status().code(), util::StatusCode::kInvalidArgument);
  return r.status().message();
}

const std::string kStacks = R"("stacks":["cuda"])";

TEST(JobRequest, AcceptsAPlainJob) {
  EXPECT_EQ(ErrorOf(R"({"name":"a","gang_size":2,"work":100,"preemptible":false,)" + kStacks + "}"),
            "OK");
  // Ten years less a little, on 2 workers at the assumed 1 step/s: accepted.
  EXPECT_EQ(ErrorOf(R"({"name":"a","gang_size":2,"work":6.3e8,)" + kStacks + "}"), "OK");
}

// On the virtual backend a job is modeled, so it needs a size: work (or duration), else an
// estimate, else a time limit. A command decides by itself when it ends.
TEST(JobRequest, AJobIsSizedByWorkByEstimateOrByTimeLimit) {
  for (const std::string size :
       {R"("estimate":"20m")", R"("time_limit":"30m")", R"("estimate":"20m","time_limit":"30m")"}) {
    auto r = ParseJobRequest(R"({"name":"a",)" + size + "," + kStacks + "}",
                             model::DeviceCatalog::BuiltIn());
    ASSERT_TRUE(r.ok()) << size << ": " << r.status().ToString();
    EXPECT_EQ(r->job.work, 0) << size;  // no work: the time fields size it
    // The stored request is what was sent, without anything added to read it.
    EXPECT_EQ(r->spec_json.find("work"), std::string::npos) << r->spec_json;
  }
  auto r = ParseJobRequest(R"({"name":"a","estimate":"20m","time_limit":"30m",)" + kStacks + "}",
                           model::DeviceCatalog::BuiltIn());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->job.estimate_s, 1200);
  EXPECT_EQ(r->job.time_limit_s, 1800);
  EXPECT_EQ(ErrorOf(R"({"name":"a","command":["true"],)" + kStacks + "}"), "OK");
  EXPECT_EQ(ErrorOf(R"({"name":"a",)" + kStacks + "}"),
            "request body: work: is missing (expected work (steps), duration with "
            "reference_device, an estimate or a time_limit; a job with a command may leave its "
            "size out)");
  // The reader's own checks come first: a bad field is named before the missing size.
  EXPECT_EQ(ErrorOf(R"({"name":"a","gpus":1,)" + kStacks + "}").find("gpus: unknown field"),
            std::string("request body:1: ").size());
  EXPECT_NE(ErrorOf(R"({"name":"a","time_limit":"5s",)" + kStacks + "}").find("time_limit: is 5 s"),
            std::string::npos);
}

TEST(JobRequest, AStringWhereANumberBelongsIsRefusedNamingTheField) {
  EXPECT_EQ(ErrorOf(R"({"name":"a","gang_size":"2","work":100,)" + kStacks + "}"),
            "request body:1: gang_size: \"2\" is not an integer (expected a positive integer)");
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":"100",)" + kStacks + "}"),
            "request body:1: work: \"100\" is not a number (expected a positive number of steps)");
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":100,"priority":"1",)" + kStacks + "}"),
            "request body:1: priority: \"1\" is not an integer (expected a 32-bit integer)");
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":100,"preemptible":"false",)" + kStacks + "}"),
            "request body:1: preemptible: \"false\" is not a boolean (expected true or false)");
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":100,"throughput":{"a100-80g":"3"},)" + kStacks + "}"),
            "request body:1: throughput.a100-80g: \"3\" is not a number (expected a positive "
            "number of steps/s)");
  // And a number where text belongs, with or without a size.
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":100,"kind":3,)" + kStacks + "}"),
            "request body:1: kind: is 3 (expected a non-empty string)");
  EXPECT_EQ(ErrorOf(R"({"name":"a","kind":3,)" + kStacks + "}"),
            "request body:1: kind: is 3 (expected a non-empty string)");
}

TEST(JobRequest, AJobLongerThanTenYearsIsRefusedNamingTheField) {
  const std::string work = ErrorOf(R"({"name":"a","work":1e308,)" + kStacks + "}");
  EXPECT_EQ(work.rfind("request body: work: the job would run 1e+308 s on its fastest device "
                       "type, more than 10 years",
                       0),
            0u)
      << work;
  const std::string duration =
      ErrorOf(R"({"name":"a","duration":"999999999999h","reference_device":"a100-80g",)"
              R"("throughput":{"a100-80g":3,"v100-32g":1},)" +
              kStacks + "}");
  EXPECT_EQ(duration.rfind("request body: duration: the job would run 3.6e+15 s", 0), 0u)
      << duration;
  // Fast enough on its fastest type with all its workers: accepted.
  EXPECT_EQ(ErrorOf(R"({"name":"a","gang_size":4,"work":1e9,"throughput":{"a100-80g":1},)" +
                    kStacks + "}"),
            "OK");
}

TEST(JobRequest, AKeyGivenTwiceIsRefusedNamingIt) {
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":100,"work":200,)" + kStacks + "}"),
            "request body: work: given twice in one object (expected each key once)");
  EXPECT_EQ(
      ErrorOf(R"({"name":"a","work":1,"throughput":{"a100-80g":1,"a100-80g":2},)" + kStacks + "}"),
      "request body: a100-80g: given twice in one object (expected each key once)");
  // The same key in two different objects is fine.
  EXPECT_EQ(ErrorOf(R"({"name":"a","work":1,"data":{"size":"1GiB"},"throughput":{"size":1},)" +
                    kStacks + "}")
                .find("given twice"),
            std::string::npos);
}

// Every field of `job` a request sets, as text: two jobs read the same when these are equal.
std::string Fields(const model::Job& job) {
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : "-"; };
  std::vector<std::string> stacks;
  for (const auto& s : job.stacks) stacks.push_back(s.name + ">=" + s.min_version);
  std::string out = fmt::format(
      "name={} kind={} type={} gang={} workers={}..{} stacks={} memory={} cores={} host={} "
      "work={} throughput={} unit_speed={} sync={} priority={} weight={} tenant={} deadline={} "
      "slo={} "
      "preemptible={} estimate={} limit={} portable={} data={}/{}@{} pinned={} command={}",
      job.name, model::JobKindName(job.kind), job.job_type, job.gang_size, job.min_workers,
      job.max_workers, stacks, job.memory_per_worker, job.cores_per_worker,
      job.host_memory_per_worker, job.work, job.throughput, job.unit_speed_assumed,
      job.sync_bytes_per_step, job.priority, job.priority_weight, job.tenant, opt(job.deadline_s),
      opt(job.slo_factor), job.preemptible, opt(job.estimate_s), opt(job.time_limit_s),
      job.portable_checkpoint, job.data_bytes, job.checkpoint_bytes, job.data_location,
      job.pinned_devices, job.command);
  if (job.ops) {
    out += fmt::format(" ops={}/{}/{}", job.ops->flops_per_step, job.ops->bytes_per_step,
                       job.ops->low_precision);
  }
  if (job.service) {
    out += fmt::format(" service={} ttft={} tpot={} p={} rate={} tokens={}/{}", job.service->model,
                       job.service->ttft_s, job.service->tpot_s, job.service->percentile,
                       job.service->rate, job.service->input_tokens, job.service->output_tokens);
  }
  return out;
}

// A restart reads each live job's stored request back (ParseStoredJobRequest): it must be the
// job the submission made, every field of it.
TEST(JobRequest, AStoredRequestReadsBackAsTheSubmittedJob) {
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  for (
      const std::string& body : std::vector<std::string>{
          R"({"name":"plain","work":100,)" + kStacks + "}",
          R"({"name":"timed","estimate":"20m","time_limit":"1h",)" + kStacks + "}",
          R"({"name":"full","kind":"batch","gang_size":4,"stacks":["cuda>=11.8","rocm"],)"
          R"("memory_per_worker":"8GiB","cores":4,"host_memory":"16GiB","duration":"2h",)"
          R"("reference_device":"v100","throughput":{"v100":2,"k80":0.5},"sync_bytes_per_step":1000,"priority":7,)"
          R"("priority_weight":2.5,"tenant":"vision","deadline":86400,"estimate":"3h",)"
          R"("time_limit":"4h","preemptible":false,"portable_checkpoint":true,)"
          R"("data":{"size":"1GiB","checkpoint":"2GiB","location":"rack-1"},)"
          R"("command":["train.py","--lr","0.1"],"pinned_devices":["n1/0"]})",
          R"({"name":"elastic","elastic":{"min":1,"max":8},"work":1e6,)"
          R"("throughput":{"v100":3,"k80":1},)" +
              kStacks + "}",
          R"({"name":"svc","kind":"service","model":"llama-7b","command":["serve","{port}"],)"
          R"("slo":{"ttft":"1s","tpot":"50ms"},"rate":[[0,5],[43200,20]],)"
          R"("tokens":{"input":512,"output":128},)" +
              kStacks + "}",
      }) {
    auto submitted = ParseJobRequest(body, catalog);
    ASSERT_TRUE(submitted.ok()) << body << ": " << submitted.status().ToString();
    auto stored = ParseStoredJobRequest(submitted->spec_json, catalog);
    ASSERT_TRUE(stored.ok()) << submitted->spec_json << ": " << stored.status().ToString();
    EXPECT_EQ(Fields(stored->job), Fields(submitted->job)) << body;
    EXPECT_EQ(stored->speed_assumed, submitted->speed_assumed) << body;
    // Where it was read, for later errors (a what-if's simulation names it).
    const auto origin = [](const model::Job& j) {
      return fmt::format("id {} entry {} at {}:{}:{}", j.id.value(), j.origin.entry,
                         j.origin.file ? *j.origin.file : "-", j.origin.line, j.origin.column);
    };
    EXPECT_EQ(origin(stored->job), origin(submitted->job)) << body;
    EXPECT_EQ(origin(stored->job), "id 0 entry 0 at request body:1:0") << body;
  }
}

// A stored request is still checked against the cluster as it is now, and a broken one is
// refused as a submission would be.
TEST(JobRequest, AStoredRequestIsCheckedAgainstTheCatalog) {
  auto stored =
      ParseStoredJobRequest(R"({"name":"a","work":1,"throughput":{"tpu-v9":1},)" + kStacks + "}",
                            model::DeviceCatalog::BuiltIn());
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.status().message().find("throughput"), std::string::npos)
      << stored.status().message();
  stored = ParseStoredJobRequest(R"({"name":"a","work":)", model::DeviceCatalog::BuiltIn());
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.status().message(), "request body: byte 20: not JSON (expected one job object)");
  // The daemon stores each key once; a stored request with one twice is refused as a
  // submission is.
  stored = ParseStoredJobRequest(R"({"name":"a","work":1,"work":2,)" + kStacks + "}",
                                 model::DeviceCatalog::BuiltIn());
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.status().message(),
            "request body: work: given twice in one object (expected each key once)");
}

}  // namespace
}  // namespace hetsched::svc
