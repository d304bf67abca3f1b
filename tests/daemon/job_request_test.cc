// Job requests are JSON, read strictly: a number or a boolean must be one (not a string), a key
// is given once, and a job must end within 10 years on its fastest device type. Each error is
// a 400 naming the field and what was expected.
#include "daemon/job_request.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace hetsched::svc
