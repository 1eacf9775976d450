#include "mpi_context.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/core/error.hpp"

#ifdef HCSIM_HAVE_MPI
// The C API only: the deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace hcsim::sweep {

bool mpi_launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

#ifdef HCSIM_HAVE_MPI

namespace {
constexpr int kTagJob = 1;
constexpr int kTagResult = 2;
constexpr std::int64_t kStop = -1;

// libsimgrid exports its own MPI_* and PMPI_* functions (SMPI), which would win over the MPI
// library's at link time and abort ("not properly initialized"). So the MPI library is not
// linked: it is opened here, only under an MPI launcher, with RTLD_DEEPBIND so that its own
// calls bind to itself, and each function (and, for Open MPI, each predefined handle) is
// taken from it by name.
struct MpiApi {
  decltype(&::MPI_Init) init;
  decltype(&::MPI_Finalize) finalize;
  decltype(&::MPI_Initialized) initialized;
  decltype(&::MPI_Finalized) finalized;
  decltype(&::MPI_Comm_rank) comm_rank;
  decltype(&::MPI_Comm_size) comm_size;
  decltype(&::MPI_Send) send;
  decltype(&::MPI_Recv) recv;
  decltype(&::MPI_Probe) probe;
  decltype(&::MPI_Get_count) get_count;
  decltype(&::MPI_Allreduce) allreduce;
  decltype(&::MPI_Abort) abort;
  MPI_Comm world;
  MPI_Datatype int64, chars, ints;
  MPI_Op land;
};

void* open_mpi_library() {
  for (const char* name : {HCSIM_MPI_LIBRARY, HCSIM_MPI_SONAME}) {
    if (void* h = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL)) return h;
  }
  throw InputError("", std::string("started by an MPI launcher, but the MPI library cannot be loaded: ") + ::dlerror());
}

template <class T>
T symbol(void* h, const char* name) {
  void* p = ::dlsym(h, name);
  if (!p) throw InputError("", std::string("the MPI library lacks ") + name);
  return reinterpret_cast<T>(p);
}

const MpiApi& mpi() {
  static const MpiApi api = [] {
    void* h = open_mpi_library();
    MpiApi a{};
    a.init = symbol<decltype(a.init)>(h, "MPI_Init");
    a.finalize = symbol<decltype(a.finalize)>(h, "MPI_Finalize");
    a.initialized = symbol<decltype(a.initialized)>(h, "MPI_Initialized");
    a.finalized = symbol<decltype(a.finalized)>(h, "MPI_Finalized");
    a.comm_rank = symbol<decltype(a.comm_rank)>(h, "MPI_Comm_rank");
    a.comm_size = symbol<decltype(a.comm_size)>(h, "MPI_Comm_size");
    a.send = symbol<decltype(a.send)>(h, "MPI_Send");
    a.recv = symbol<decltype(a.recv)>(h, "MPI_Recv");
    a.probe = symbol<decltype(a.probe)>(h, "MPI_Probe");
    a.get_count = symbol<decltype(a.get_count)>(h, "MPI_Get_count");
    a.allreduce = symbol<decltype(a.allreduce)>(h, "MPI_Allreduce");
    a.abort = symbol<decltype(a.abort)>(h, "MPI_Abort");
#ifdef OPEN_MPI
    // Open MPI's predefined handles are addresses of objects inside the library.
    a.world = symbol<MPI_Comm>(h, "ompi_mpi_comm_world");
    a.int64 = symbol<MPI_Datatype>(h, "ompi_mpi_int64_t");
    a.chars = symbol<MPI_Datatype>(h, "ompi_mpi_char");
    a.ints = symbol<MPI_Datatype>(h, "ompi_mpi_int");
    a.land = symbol<MPI_Op>(h, "ompi_mpi_op_land");
#else
    a.world = MPI_COMM_WORLD;
    a.int64 = MPI_INT64_T;
    a.chars = MPI_CHAR;
    a.ints = MPI_INT;
    a.land = MPI_LAND;
#endif
    return a;
  }();
  return api;
}

void send_job(std::int64_t index, int rank) { mpi().send(&index, 1, mpi().int64, rank, kTagJob, mpi().world); }

void serve(const JobFn& job) {
  for (;;) {
    std::int64_t index = kStop;
    mpi().recv(&index, 1, mpi().int64, 0, kTagJob, mpi().world, MPI_STATUS_IGNORE);
    if (index < 0) return;
    const std::string out = job(static_cast<std::size_t>(index));
    mpi().send(out.data(), static_cast<int>(out.size()), mpi().chars, 0, kTagResult, mpi().world);
  }
}
// Rank 0: one job at a time to each of ranks 1..size-1, the next one as each result arrives.
void dispatch(const std::vector<std::size_t>& jobs, const ResultFn& done, int size) {
  std::vector<std::int64_t> in_flight(static_cast<std::size_t>(size), kStop);
  std::size_t next = 0;
  int active = 0;
  const auto feed = [&](int r) {
    auto& slot = in_flight[static_cast<std::size_t>(r)];
    slot = next < jobs.size() ? static_cast<std::int64_t>(jobs[next++]) : kStop;
    if (slot != kStop) ++active;
    send_job(slot, r);
  };
  for (int r = 1; r < size; ++r) feed(r);
  while (active > 0) {
    MPI_Status st;
    mpi().probe(MPI_ANY_SOURCE, kTagResult, mpi().world, &st);
    int count = 0;
    mpi().get_count(&st, mpi().chars, &count);
    std::string out(static_cast<std::size_t>(count), '\0');
    mpi().recv(out.data(), count, mpi().chars, st.MPI_SOURCE, kTagResult, mpi().world, MPI_STATUS_IGNORE);
    const auto index = static_cast<std::size_t>(in_flight[static_cast<std::size_t>(st.MPI_SOURCE)]);
    --active;
    done(index, std::move(out));
    feed(st.MPI_SOURCE);
  }
}
}  // namespace

bool mpi_built() { return true; }

MpiContext::MpiContext() {
  int initialised = 0;
  mpi().initialized(&initialised);
  if (!initialised) mpi().init(nullptr, nullptr);
  mpi().comm_rank(mpi().world, &rank_);
  mpi().comm_size(mpi().world, &size_);
}

MpiContext::~MpiContext() {
  int finalised = 0;
  mpi().finalized(&finalised);
  if (!finalised) mpi().finalize();
}

bool MpiContext::all_ok(bool ok) const {
  int mine = ok ? 1 : 0, all = 0;
  mpi().allreduce(&mine, &all, 1, mpi().ints, mpi().land, mpi().world);
  return all != 0;
}

void MpiContext::run(const std::vector<std::size_t>& jobs, const JobFn& job, const ResultFn& done) const {
  if (rank_ != 0) return serve(job);
  try {
    dispatch(jobs, done, size_);
  } catch (const std::exception& e) {
    // Other ranks may be computing or waiting: no clean stop is possible, and
    // MPI_Finalize would wait for them.
    std::fprintf(stderr, "hcsim: %s\n", e.what());
    mpi().abort(mpi().world, 1);
  }
}

#else

bool mpi_built() { return false; }

MpiContext::MpiContext() {
  throw InputError("", "started by an MPI launcher, but this hcsim was built without MPI; install libopenmpi-dev "
                       "and rebuild, or run the sweep without mpirun (-j N, --shard i/n)");
}
MpiContext::~MpiContext() = default;
bool MpiContext::all_ok(bool ok) const { return ok; }
void MpiContext::run(const std::vector<std::size_t>&, const JobFn&, const ResultFn&) const {}

#endif

}  // namespace hcsim::sweep
