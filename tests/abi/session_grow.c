/* A job grows by one process through ibdyn's MPIX_ process-set calls and sees it: run with
 * one rank. The first process asks for MPIX_PSETOP_GROW of mpi://WORLD by 1 (outputs: the
 * delta set and the new main set), provides the new main set through
 * MPIX_Session_dyn_integrate_res_change; the process the grow started finds the change with
 * MPIX_Session_dyn_recv_res_change (it is in the delta) and integrates without providing.
 * Both make a communicator of the new main set, whose size is 2, and sum their ranks;
 * the first finalizes the change. Also: MPI_Session_get_info, MPIX_Set/Get_pset_data,
 * MPIX_Query_pset_op, MPIX_Session_pset_create_op; a grow with too few output buffers is
 * refused before it starts a process. */
#include <mpi.h>
#include <string.h>

#include "check.h"

int main(void) {
  MPI_Session s;
  CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
  MPI_Info info;
  CHECK(MPI_Session_get_info(s, &info) == MPI_SUCCESS);
  char val[MPI_MAX_INFO_VAL];
  int vlen = sizeof val, flag = 0;
  MPI_Info_get_string(info, "thread_level", &vlen, val, &flag);
  CHECK(flag);
  MPI_Info_free(&info);

  static char delta[MPI_MAX_PSET_NAME_LEN], main_set[MPI_MAX_PSET_NAME_LEN];
  int op = 0, included = 0, added = 0;
  flag = 0;
  CHECK(MPIX_Session_dyn_recv_res_change(s, "mpi://WORLD", &op, delta, &included, &flag) ==
        MPI_SUCCESS);
  int terminate = 1;
  if (flag && included && op == MPIX_PSETOP_GROW) {
    /* Started by the grow: mpi://WORLD is the delta. */
    added = 1;
    CHECK(MPIX_Session_dyn_integrate_res_change(s, delta, NULL, main_set, &terminate) ==
          MPI_SUCCESS);
  } else {
    CHECK(!flag);
    char *out[2] = {delta, main_set};
    const char *in[1] = {"mpi://WORLD"};
    /* Too few output buffers for a resource change: refused before any process starts. */
    int nout = 1, cls = 0;
    MPI_Error_class(MPIX_Pset_op(s, MPIX_PSETOP_GROW, 1, in, 1, &nout, out), &cls);
    CHECK(cls == MPI_ERR_ARG);
    nout = 2;
    CHECK(MPIX_Pset_op(s, MPIX_PSETOP_GROW, 1, in, 1, &nout, out) == MPI_SUCCESS);
    CHECK(nout == 2);
    /* The change is pending, the same for everyone; this process is not in the delta. */
    static char qdelta[MPI_MAX_PSET_NAME_LEN], qmain[MPI_MAX_PSET_NAME_LEN];
    CHECK(MPIX_Query_pset_op(s, "mpi://SELF", "mpi://WORLD", &op, qdelta, qmain, &included,
                             &flag) == MPI_SUCCESS);
    CHECK(flag && op == MPIX_PSETOP_GROW && !included);
    CHECK(strcmp(qdelta, delta) == 0 && strcmp(qmain, main_set) == 0);
    static char provided[MPI_MAX_PSET_NAME_LEN];
    strcpy(provided, main_set);
    CHECK(MPIX_Session_dyn_integrate_res_change(s, delta, provided, main_set, &terminate) ==
          MPI_SUCCESS);
    CHECK(strcmp(provided, main_set) == 0);
  }
  CHECK(terminate == 0);

  /* pset data: a key the delta's dictionary already holds after integrate, and one of ours */
  MPI_Group g;
  CHECK(MPI_Group_from_session_pset(s, main_set, &g) == MPI_SUCCESS);
  MPI_Comm comm;
  CHECK(MPI_Comm_create_from_group(g, "org.ibdyn.abi.grow", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                   &comm) == MPI_SUCCESS);
  int rank, size, sum = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  CHECK(size == 2);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  CHECK(sum == 1);
  CHECK(added == (rank == 1));

  if (rank == 0) {
    MPI_Info kv;
    MPI_Info_create(&kv);
    MPI_Info_set(kv, "answer", "42");
    CHECK(MPIX_Set_pset_data(s, main_set, kv) == MPI_SUCCESS);
    MPI_Info_free(&kv);
  }
  const char *keys[1] = {"answer"};
  MPI_Info got;
  CHECK(MPIX_Get_pset_data(s, main_set, main_set, keys, 1, 1, &got) == MPI_SUCCESS);
  vlen = sizeof val;
  MPI_Info_get_string(got, "answer", &vlen, val, &flag);
  CHECK(flag && strcmp(val, "42") == 0);
  MPI_Info_free(&got);

  /* Set algebra: the new main set minus the delta is the old world. */
  static char diff[MPI_MAX_PSET_NAME_LEN];
  CHECK(MPIX_Session_pset_create_op(s, MPIX_PSETOP_DIFFERENCE, main_set, delta, diff) ==
        MPI_SUCCESS);
  MPI_Group dg;
  CHECK(MPI_Group_from_session_pset(s, diff, &dg) == MPI_SUCCESS);
  int dsize = 0;
  MPI_Group_size(dg, &dsize);
  CHECK(dsize == 1);
  MPI_Group_free(&dg);

  MPI_Barrier(comm);
  if (!added) CHECK(MPIX_Finalize_pset_op(s, "mpi://WORLD") == MPI_SUCCESS);
  MPI_Comm_free(&comm);
  MPI_Group_free(&g);
  if (rank == 0) printf("session_grow: ok, 1 + 1 processes\n");
  MPI_Session_finalize(&s);
  return 0;
}
