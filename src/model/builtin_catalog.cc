#include "model/catalog.h"

namespace hetsched::model {

// Placeholder until the catalog entries land (being written now).
const DeviceCatalog& DeviceCatalog::BuiltIn() {
  static const DeviceCatalog catalog;
  return catalog;
}

}  // namespace hetsched::model
