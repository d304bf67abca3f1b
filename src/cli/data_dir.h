// Where the data hetsched ships (data/: Gavel throughputs and traces, Zeus power, DAG samples)
// is found at run time: $HETSCHED_DATA_DIR if set, else the source tree it was built from.
#pragma once

#include <string>
#include <string_view>

namespace hetsched::cli {

std::string DataDir();
// DataDir() + "/" + relative, e.g. DataPath("gavel/simulation_throughputs.json").
std::string DataPath(std::string_view relative);

}  // namespace hetsched::cli
