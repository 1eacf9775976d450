#pragma once
// Sweeps across machines on MPI (`mpirun -np N hcsim sweep ...`). Rank 0 hands out job
// indices one at a time to ranks 1..N-1 as they become free (dynamic load balancing),
// gathers their results and alone writes the result files; every rank reads the same sweep
// file and enumerates the same points, so only indices and results travel. MPI is
// initialised only when the process was started by an MPI launcher, so a plain `hcsim`
// never touches it. Built without MPI (HCSIM_HAVE_MPI unset), a launched sweep is refused.

#include <cstddef>
#include <vector>

#include "sim/sweep/worker_pool.hpp"

namespace hcsim::sweep {

// True when an MPI launcher started this process (Open MPI, PMIx or PMI environment).
bool mpi_launched();
// True when hcsim was built with MPI.
bool mpi_built();

class MpiContext {
 public:
  MpiContext();  // MPI_Init; throws InputError when hcsim was built without MPI
  ~MpiContext();  // MPI_Finalize
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  // True on every rank when `ok` is true on every rank (so all stop together on an error).
  bool all_ok(bool ok) const;

  // Rank 0: runs `jobs` on ranks 1..size-1, calling `done` as results arrive (size >= 2).
  // Other ranks: serve jobs with `job` until rank 0 says stop; `jobs` and `done` unused.
  void run(const std::vector<std::size_t>& jobs, const JobFn& job, const ResultFn& done) const;

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace hcsim::sweep
