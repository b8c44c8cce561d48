/* The Sessions model without MPI_Init: an info made before any init asks for a thread
   level, process sets, groups from them, a communicator from a group, an intercommunicator
   from two groups (the even and the odd ranks), finalize; the info outlives the session.
   Run with 2 or more ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int main(void) {
  MPI_Session s;
  MPI_Info asked, used;
  CHECK(MPI_Info_create(&asked) == MPI_SUCCESS);
  CHECK(MPI_Info_set(asked, "thread_level", "MPI_THREAD_MULTIPLE") == MPI_SUCCESS);
  CHECK(MPI_Session_init(asked, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
  char level[64];
  int level_len = sizeof level, flag = -1;
  CHECK(MPI_Session_get_info(s, &used) == MPI_SUCCESS);
  MPI_Info_get_string(used, "thread_level", &level_len, level, &flag);
  CHECK(flag && (strcmp(level, "MPI_THREAD_SERIALIZED") == 0 || strcmp(level, "MPI_THREAD_MULTIPLE") == 0));
  MPI_Info_free(&used);
  flag = -1;
  MPI_Initialized(&flag);
  CHECK(flag == 0);
  int n = 0;
  MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
  CHECK(n >= 2);
  int len = 0;
  MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL);
  char *name = malloc(len);
  MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name);
  CHECK(strcmp(name, "mpi://WORLD") == 0);
  free(name);
  MPI_Info info;
  char val[32];
  int vlen = sizeof val;
  MPI_Session_get_pset_info(s, "mpi://WORLD", &info);
  MPI_Info_get_string(info, "mpi_size", &vlen, val, &flag);
  CHECK(flag);
  int size = atoi(val);
  MPI_Info_free(&info);
  CHECK(size >= 2);

  MPI_Group world;
  MPI_Group_from_session_pset(s, "mpi://WORLD", &world);
  MPI_Comm comm;
  CHECK(MPI_Comm_create_from_group(world, "org.ibdyn.abi.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) == MPI_SUCCESS);
  int rank, csize;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &csize);
  CHECK(csize == size);
  int one = 1, total = 0;
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm);
  CHECK(total == size);
  /* the empty group makes MPI_COMM_NULL, locally */
  MPI_Comm none = MPI_COMM_SELF;
  CHECK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "org.ibdyn.abi.none", MPI_INFO_NULL,
                                   MPI_ERRORS_RETURN, &none) == MPI_SUCCESS);
  CHECK(none == MPI_COMM_NULL);

  /* evens and odds */
  int range[1][3] = {{0, size - 1, 2}};
  MPI_Group evens, odds;
  MPI_Group_range_incl(world, 1, range, &evens);
  MPI_Group_range_excl(world, 1, range, &odds);
  MPI_Comm ic;
  int even = rank % 2 == 0;
  CHECK(MPI_Intercomm_create_from_groups(even ? evens : odds, 0, even ? odds : evens, 0, "org.ibdyn.abi.halves", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic) == MPI_SUCCESS);
  int rs = 0;
  MPI_Comm_remote_size(ic, &rs);
  CHECK(rs == (even ? size / 2 : (size + 1) / 2));
  MPI_Comm_free(&ic);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&world);
  MPI_Comm_free(&comm);
  CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS && s == MPI_SESSION_NULL);
  int nkeys = 0;
  CHECK(MPI_Info_get_nkeys(asked, &nkeys) == MPI_SUCCESS && nkeys == 1);
  CHECK(MPI_Info_free(&asked) == MPI_SUCCESS && asked == MPI_INFO_NULL);
  if (rank == 0) printf("sessions: ok on %d ranks\n", size);
  return 0;
}
