/* The tool interface as a profiling tool starts it: MPI_T_init_thread (before and after
   MPI_Init), the variable, category, event and source counts, a performance-variable
   session, and every index below a count being valid; MPI_T_finalize once per init. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
  int provided, n;
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  MPI_Init(&argc, &argv);
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  CHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n >= 0);
  for (int i = 0; i < n; i++) {
    char name[256], desc[256];
    int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    CHECK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope) ==
          MPI_SUCCESS);
  }
  CHECK(MPI_T_pvar_get_num(&n) == MPI_SUCCESS && n >= 0);
  CHECK(MPI_T_category_get_num(&n) == MPI_SUCCESS && n >= 0);
  CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS && n >= 0);
  CHECK(MPI_T_source_get_num(&n) == MPI_SUCCESS && n >= 0);
  int stamp;
  CHECK(MPI_T_category_changed(&stamp) == MPI_SUCCESS);
  MPI_T_pvar_session session;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS && session == MPI_T_PVAR_SESSION_NULL);
  int idx;
  CHECK(MPI_T_cvar_get_index("surely-not-a-variable-name", &idx) == MPI_T_ERR_INVALID_NAME);
  CHECK(MPI_T_finalize() == MPI_SUCCESS);
  CHECK(MPI_T_finalize() == MPI_SUCCESS);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("tool: ok\n");
  MPI_Finalize();
  return 0;
}
