// output_file.hpp - outputs that are never seen half-written.
//
// Each output is written under a temporary name beside its final name and renamed into place
// by commit(). Until then the temporary files are registered for removal: by the destructor
// (C++ errors), by an atexit handler (libbwa calls exit() on fatal errors) and by a handler for
// SIGINT, SIGTERM, SIGHUP and crashes (SIGSEGV, SIGBUS, SIGABRT). A run killed with SIGKILL
// (e.g. by the OOM killer) leaves only files whose names say they are temporary.
#pragma once

#include <dimmap/support/atomic_file.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace bwammap {

// "dir/name" -> "dir/name.bwa-mmap-tmp.<pid>"
std::string temporary_name(const std::string& final_path);

class PendingFiles {
 public:
  PendingFiles() = default;
  ~PendingFiles();  // removes the temporary files unless committed
  PendingFiles(const PendingFiles&) = delete;
  PendingFiles& operator=(const PendingFiles&) = delete;

  // Registers final_path; returns the temporary path to write instead (temporary_name() of
  // final_path unless given).
  const std::string& add(const std::string& final_path, std::string temporary_path = "");
  // Removes each final path, then renames the temporaries into place in the order added
  // (put the file whose presence marks completion last). Throws dimmap::Error on failure.
  void commit();

 private:
  std::vector<dimmap::support::PendingRename> files_;
};

// A text output (SAM) on stdout: the process's stdout when path is "" or "-", else stdout
// redirected to a temporary file that commit() renames to path.
class OutputStream {
 public:
  explicit OutputStream(const std::string& path);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  FILE* file() const { return file_; }
  // Writes s; remembers the first failure instead of throwing (called from the pipeline).
  void write(const char* s);
  bool failed() const { return error_ != 0; }
  // Flushes, checks for write errors, renames into place. Throws dimmap::Error.
  void commit();

 private:
  std::string path_;
  FILE* file_ = nullptr;
  bool is_stdout_ = true;
  int error_ = 0;
  PendingFiles pending_;
};

}  // namespace bwammap
