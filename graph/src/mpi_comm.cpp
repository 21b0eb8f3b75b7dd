// mpi_comm.cpp - collectives for the distributed BFS.
#include <graph/mpi_comm.hpp>

#include <mpi.h>

#include <cstdlib>

namespace graph {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var)) return true;
  return false;
}

MpiComm::MpiComm(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiComm::~MpiComm() { MPI_Finalize(); }

void MpiComm::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

double MpiComm::max(double x) {
  double out = 0;
  MPI_Allreduce(&x, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void MpiComm::sum(std::vector<uint64_t>& values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void MpiComm::broadcast(std::vector<uint64_t>& values) {
  uint64_t n = values.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  values.resize(n);
  MPI_Bcast(values.data(), static_cast<int>(n), MPI_UINT64_T, 0, MPI_COMM_WORLD);
}

std::vector<RemoteVisit> MpiComm::exchange(std::vector<std::vector<RemoteVisit>>& outboxes) {
  const int p = size_;
  std::vector<int> send_counts(p), recv_counts(p), send_displs(p), recv_displs(p);
  std::vector<RemoteVisit> send;
  for (int r = 0; r < p; ++r) {
    send_displs[r] = static_cast<int>(send.size() * sizeof(RemoteVisit));
    send_counts[r] = static_cast<int>(outboxes[r].size() * sizeof(RemoteVisit));
    send.insert(send.end(), outboxes[r].begin(), outboxes[r].end());
    outboxes[r].clear();
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < p; ++r) recv_displs[r] = total, total += recv_counts[r];
  std::vector<RemoteVisit> recv(static_cast<size_t>(total) / sizeof(RemoteVisit));
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  return recv;
}

void MpiComm::allgather(const std::vector<int64_t>& local, std::vector<int64_t>& global) {
  const int p = size_;
  int mine = static_cast<int>(local.size());
  std::vector<int> counts(p), displs(p);
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < p; ++r) displs[r] = total, total += counts[r];
  global.resize(static_cast<size_t>(total));
  MPI_Allgatherv(local.data(), mine, MPI_INT64_T, global.data(), counts.data(), displs.data(), MPI_INT64_T,
                 MPI_COMM_WORLD);
}

bool MpiComm::any(bool failed) {
  int in = failed ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out != 0;
}

void MpiComm::abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

}  // namespace graph
