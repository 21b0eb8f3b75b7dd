// sanitizers.hpp - which sanitizer a test binary is built with, for the tests that cannot run
// under one (ThreadSanitizer treats the in-thread engine's SIGBUS handler, which takes the
// engine's lock, as signal-unsafe).
#pragma once

#if defined(__SANITIZE_THREAD__)
#define DIMMAP_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DIMMAP_TEST_TSAN 1
#endif
#endif
#ifndef DIMMAP_TEST_TSAN
#define DIMMAP_TEST_TSAN 0
#endif

constexpr bool kThreadSanitizer = DIMMAP_TEST_TSAN != 0;
constexpr const char* kInThreadUnderTsan =
    "ThreadSanitizer takes the engine's lock in the SIGBUS handler for signal-unsafe";
