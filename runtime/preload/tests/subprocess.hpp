// subprocess.hpp - test helper: run a command, capture its exit status, stdout and stderr.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace dimmap::test {

struct Outcome {
  int status = -1;  // exit code, 128 + signal, or -1 if it could not start
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv with extra environment variables (NAME=value; NAME= with no value unsets).
inline Outcome run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
  char out_name[] = "/tmp/dimmap-test-out-XXXXXX";
  char err_name[] = "/tmp/dimmap-test-err-XXXXXX";
  const int out_fd = mkstemp(out_name), err_fd = mkstemp(err_name);
  Outcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    for (const std::string& kv : env) {
      const size_t eq = kv.find('=');
      const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
      if (value.empty()) unsetenv(name.c_str());
      else setenv(name.c_str(), value.c_str(), 1);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(125);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid)
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  close(out_fd);
  close(err_fd);
  o.out = slurp(out_name);
  o.err = slurp(err_name);
  unlink(out_name);
  unlink(err_name);
  return o;
}

}  // namespace dimmap::test
