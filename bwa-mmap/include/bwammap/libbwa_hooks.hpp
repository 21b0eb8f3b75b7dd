// libbwa_hooks.hpp - calls inside libbwa that bwa-mmap wraps at link time (see
// src/libbwa_hooks.cpp for bwt_sa, src/reads_watch.cpp for the reader). Nothing to call:
// the wraps act on libbwa's own calls.
#pragma once

#include <bwa/bwt.h>
