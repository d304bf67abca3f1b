// The daemon's names for the backend interface, which lives in exec/backend.h (the simulator
// implements it too). svc code keeps saying svc::Backend, svc::LaunchSpec, ...
#pragma once

#include "exec/backend.h"

namespace hetsched::svc {

using exec::Backend;
using exec::BackendEvent;
using exec::BackendEventKind;
using exec::BackendJob;
using exec::BackendNode;
using exec::LaunchSpec;

}  // namespace hetsched::svc
