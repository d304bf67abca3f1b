// A job of kind service submitted to the daemon is refused with a reason, not run as a plain
// one-device job: only the simulator routes requests and scales replicas.
#include <gtest/gtest.h>

#include "daemon/job_request.h"
#include "model/catalog.h"

namespace hetsched::svc {
namespace {

TEST(ServiceRequest, TheDaemonRefusesServices) {
  auto req =
      ParseJobRequest(R"({"name":"chat","kind":"service","model":"llama-7b","stacks":["cuda"],)"
                      R"("rate":[["0h",1]],"tokens":{"input":10,"output":10}})",
                      model::DeviceCatalog::BuiltIn());
  ASSERT_FALSE(req.ok());
  EXPECT_NE(req.status().message().find("kind: 'service' runs in `hetsched simulate` only"),
            std::string::npos)
      << req.status().message();
}

}  // namespace
}  // namespace hetsched::svc
