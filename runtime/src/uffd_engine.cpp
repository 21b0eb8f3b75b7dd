// uffd_engine.cpp - TEMPORARY placeholder while the userfaultfd engine is written.
#include <cerrno>

#include "engine.hpp"
#include "log.hpp"

namespace dimmap::detail {

std::unique_ptr<Engine> make_uffd_engine(const dimmap_config&, int* err) {
  *err = fail(ENOSYS, "the userfaultfd engine is not built yet");
  return nullptr;
}

}  // namespace dimmap::detail
