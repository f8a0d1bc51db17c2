// cli/mpi.cpp — the MPI calls of `--mpi`, compiled with MPI when the build found it.
#include "cli/mpi.hpp"

#include <cstdint>
#include <cstdlib>

#include "base/error.hpp"
#include "cli/exit_codes.hpp"

#ifdef FPCERT_HAVE_MPI
#define OMPI_SKIP_MPICXX 1   // the C API only: no deprecated C++ bindings
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace fpcert::cli {

#ifdef FPCERT_HAVE_MPI

bool mpi_built() { return true; }

MpiWorld mpi_init() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  MpiWorld w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &w.local_rank);
  MPI_Comm_size(node, &w.local_size);
  MPI_Comm_free(&node);
  return w;
}

std::vector<std::string> mpi_gather_to_root(const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Results files can exceed 2 GiB only for absurd runs; a count beyond int is refused here.
  if (mine.size() > static_cast<std::size_t>(INT32_MAX)) throw InputError("--mpi: a rank's results exceed 2 GiB");
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs;
  std::string all;
  if (rank == 0) {
    long long total = 0;
    for (int l : lens) {
      displs.push_back(static_cast<int>(total));
      total += l;
    }
    if (total > INT32_MAX) throw InputError("--mpi: the gathered results exceed 2 GiB");
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; rank == 0 && r < size; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]), static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
}

int mpi_broadcast_from_root(int value) {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

void mpi_abort(int code) {
  disarm_exit_guard();  // fpcert's own exit, not a plugin's
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void mpi_finalize() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

#else

bool mpi_built() { return false; }

MpiWorld mpi_init() {
  throw InputError("--mpi: this fpcert was built without MPI (install libopenmpi-dev, or run scripts/deps.sh --tests, and "
                   "rebuild; docs/scale.md)");
}
std::vector<std::string> mpi_gather_to_root(const std::string& mine) { return {mine}; }
int mpi_broadcast_from_root(int value) { return value; }
void mpi_abort(int code) {
  disarm_exit_guard();  // fpcert's own exit, not a plugin's
  std::exit(code);
}
void mpi_finalize() {}

#endif

}  // namespace fpcert::cli
