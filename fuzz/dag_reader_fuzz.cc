// libFuzzer target: the DAG readers (JSON and STG) must reject any input with a Status, never
// crash or hang; whatever they accept must schedule into a valid schedule.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/io/dag_reader.h"
#include "plan/dag_problem.h"
#include "plan/heft.h"
#include "plan/peft.h"
#include "plan/schedule.h"

namespace {

void Check(const hetsched::util::Result<hetsched::model::TaskGraph>& g) {
  if (!g.ok()) return;
  // Keep each run fast: large accepted graphs are only read, not scheduled.
  if (static_cast<int64_t>(g->num_tasks()) * g->num_processors() > 20000) return;
  const hetsched::plan::DagProblem problem(*g);
  for (const auto& s : {hetsched::plan::Heft(problem), hetsched::plan::Peft(problem)}) {
    // Absurd but finite inputs (1e308 costs) may overflow to an infinite makespan; that is
    // arithmetic, not a reader bug. Anything finite must be a valid schedule.
    if (std::isfinite(s.makespan) && !hetsched::plan::ValidateSchedule(problem, s).ok()) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(hetsched::model::io::ParseDagJson(text, "fuzz.json"));
  hetsched::model::io::DagReadOptions stg;
  stg.stg_processors = 3;
  Check(hetsched::model::io::ParseDagStg(text, "fuzz.stg", stg));
  return 0;
}
