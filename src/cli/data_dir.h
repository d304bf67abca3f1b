// Where the data hetsched ships (data/: Gavel throughputs and traces, Zeus power, DAG samples)
// is found at run time: $HETSCHED_DATA_DIR if set, else the source tree it was built from.
#pragma once

#include <string>
#include <string_view>

namespace hetsched::cli {

std::string DataDir();
// DataDir() + "/" + relative, e.g. DataPath("gavel/simulation_throughputs.json").
std::string DataPath(std::string_view relative);

// The shipped examples (examples/: clusters, workloads, models): $HETSCHED_EXAMPLES_DIR if set,
// else the source tree's examples/ folder. ExamplePath("clusters/seed-startup.yaml").
std::string ExamplesDir();
std::string ExamplePath(std::string_view relative);

}  // namespace hetsched::cli
