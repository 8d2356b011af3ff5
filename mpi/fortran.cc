// Handle conversion for Fortran (MPI 3.1 section 17.2.4): every C handle
// gets a small integer on first conversion (0 is the null handle), the
// same one every time; statuses are copied word for word.
#include <cstring>
#include <vector>

#include "mpi/impl.h"

namespace {
MPI_Fint g_status_ignore[MPI_F_STATUS_SIZE > 0 ? 8 : 8];
MPI_Fint g_statuses_ignore[8];
}  // namespace

MPI_Fint* MPI_F_STATUS_IGNORE = g_status_ignore;
MPI_Fint* MPI_F_STATUSES_IGNORE = g_statuses_ignore;

namespace toroid::mpi {
namespace {

template <int kKind>
struct Table {
  static std::vector<void*>& v() {
    static auto* t = new std::vector<void*>();
    return *t;
  }
  static MPI_Fint c2f(void* h) {
    if (!h) return 0;
    auto& t = v();
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == h) return static_cast<MPI_Fint>(i + 1);
    t.push_back(h);
    return static_cast<MPI_Fint>(t.size());
  }
  static void* f2c(MPI_Fint f) {
    auto& t = v();
    return f > 0 && static_cast<size_t>(f) <= t.size() ? t[static_cast<size_t>(f) - 1] : nullptr;
  }
};

}  // namespace
}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

#define TOROID_F2C(Kind, Type, n)                                                                          \
  TOROID_MPI_API(MPI_Fint, Kind##_c2f, (Type h)) { return Table<n>::c2f(static_cast<void*>(h)); }          \
  TOROID_MPI_API(Type, Kind##_f2c, (MPI_Fint f)) { return static_cast<Type>(Table<n>::f2c(f)); }
TOROID_F2C(Comm, MPI_Comm, 0)
TOROID_F2C(Type, MPI_Datatype, 1)
TOROID_F2C(Group, MPI_Group, 2)
TOROID_F2C(Request, MPI_Request, 3)
TOROID_F2C(Op, MPI_Op, 4)
TOROID_F2C(Info, MPI_Info, 5)
TOROID_F2C(Errhandler, MPI_Errhandler, 6)
TOROID_F2C(Message, MPI_Message, 7)
TOROID_F2C(Win, MPI_Win, 8)
TOROID_F2C(File, MPI_File, 9)
#undef TOROID_F2C

TOROID_MPI_API(int, Status_c2f, (const MPI_Status* c_status, MPI_Fint* f_status)) {
  if (!c_status || !f_status || c_status == MPI_STATUS_IGNORE) return MPI_ERR_ARG;
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Status_f2c, (const MPI_Fint* f_status, MPI_Status* c_status)) {
  if (!f_status || !c_status || f_status == MPI_F_STATUS_IGNORE) return MPI_ERR_ARG;
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
