// kmod_engine.cpp - DIMMAP_ENGINE=kmod: placeholder until the kernel-module engine lands.
#include <cerrno>

#include "engine.hpp"
#include "log.hpp"

namespace dimmap::detail {

std::unique_ptr<Engine> make_kmod_engine(const dimmap_config&, int* err) {
  *err = fail(ENOSYS, "DIMMAP_ENGINE=kmod: the kernel-module engine is not available in this build");
  return nullptr;
}

}  // namespace dimmap::detail
