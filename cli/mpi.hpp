// cli/mpi.hpp — the optional MPI component (docs/scale.md): present when CMake found MPI
// (FPCERT_HAVE_MPI); without it mpi_built() is false and `--mpi` exits 2 saying so.
#pragma once

#include <string>
#include <vector>

namespace fpcert::cli {

bool mpi_built();

struct MpiWorld {
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;  ///< among the ranks of this node (MPI_COMM_TYPE_SHARED)
};

/// MPI_Init (once) and this rank's place. Throws InputError when MPI is not built in.
MpiWorld mpi_init();
/// Every rank's string at rank 0 (in rank order; other ranks get an empty list).
std::vector<std::string> mpi_gather_to_root(const std::string& mine);
/// Rank 0's value on every rank.
int mpi_broadcast_from_root(int value);
/// Stop every rank (a rank failed before it could take part in the gather).
[[noreturn]] void mpi_abort(int code);
void mpi_finalize();

}  // namespace fpcert::cli
