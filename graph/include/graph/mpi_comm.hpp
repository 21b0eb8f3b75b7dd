// mpi_comm.hpp - the BFS driver's Comm over MPI_COMM_WORLD (library graph_mpi).
#pragma once

#include <graph/bfs_run.hpp>

namespace graph {

// True when this process was started by mpirun / an MPI launcher.
bool launched_by_mpi();

class MpiComm : public Comm {
 public:
  MpiComm(int* argc, char*** argv);  // MPI_Init_thread (funneled)
  ~MpiComm() override;               // MPI_Finalize
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override;
  double max(double x) override;
  void sum(std::vector<uint64_t>& values) override;
  void broadcast(std::vector<uint64_t>& values) override;
  std::vector<RemoteVisit> exchange(std::vector<std::vector<RemoteVisit>>& outboxes) override;
  void allgather(const std::vector<int64_t>& local, std::vector<int64_t>& global) override;
  bool any(bool failed) override;
  void abort(int code);  // a rank that cannot go on takes the others down

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace graph
