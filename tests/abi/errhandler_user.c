/* User error handlers: MPI_Comm_create_errhandler, set/get, MPI_Comm_call_errhandler, a real
 * error raised by the library reaching the user's function with the communicator and the
 * code, inheritance on MPI_Comm_dup, MPI_Errhandler_free; the same for a session
 * (MPI_Session_create_errhandler, set/get/call) and a window (MPI_Win_create_errhandler).
 * With the argument "raised", errors the library finds itself (a bad rank, an unknown pset)
 * are checked too: a library built without error checking (MPICH's wheel) finds none. */
#include <mpi.h>
#include <stdarg.h>
#include <string.h>

#include "check.h"

static int comm_calls = 0, last_code = 0;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void on_comm_error(MPI_Comm *comm, int *code, ...) {
  comm_calls++;
  last_comm = *comm;
  last_code = *code;
}

static int session_calls = 0, session_code = 0;
static MPI_Session last_session = MPI_SESSION_NULL;

static void on_session_error(MPI_Session *session, int *code, ...) {
  session_calls++;
  last_session = *session;
  session_code = *code;
}

static int win_calls = 0, win_code = 0;
static MPI_Win last_win = MPI_WIN_NULL;

static void on_win_error(MPI_Win *win, int *code, ...) {
  win_calls++;
  last_win = *win;
  win_code = *code;
}

/* A window's handler gets the window: called by the program, and (raised) by the library. */
static void window_handler(int raised) {
  int mem[2];
  MPI_Win win;
  MPI_Errhandler weh = MPI_ERRHANDLER_NULL, wgot = MPI_ERRHANDLER_NULL;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  CHECK(MPI_Win_create_errhandler(on_win_error, &weh) == MPI_SUCCESS);
  CHECK(MPI_Win_set_errhandler(win, weh) == MPI_SUCCESS);
  CHECK(MPI_Win_get_errhandler(win, &wgot) == MPI_SUCCESS && wgot == weh);
  MPI_Errhandler_free(&wgot);
  CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER) == MPI_SUCCESS);
  CHECK(win_calls == 1 && win_code == MPI_ERR_OTHER && last_win == win);
  if (raised) {
    int v = 1, cls = -1;
    MPI_Win_fence(0, win);
    int rc = MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE && win_calls == 2 && last_win == win);
    CHECK(win_code == MPI_ERR_RMA_RANGE);
    MPI_Win_fence(0, win);
  }
  MPI_Errhandler_free(&weh);
  MPI_Win_free(&win);
}

int main(int argc, char **argv) {
  int raised = argc > 1 && strcmp(argv[1], "raised") == 0;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
  window_handler(raised);
  CHECK(MPI_Comm_create_errhandler(on_comm_error, &eh) == MPI_SUCCESS);
  CHECK(eh != MPI_ERRHANDLER_NULL);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Comm_set_errhandler(dup, eh) == MPI_SUCCESS);
  CHECK(MPI_Comm_get_errhandler(dup, &got) == MPI_SUCCESS);
  CHECK(got == eh);
  CHECK(MPI_Errhandler_free(&got) == MPI_SUCCESS);
  CHECK(got == MPI_ERRHANDLER_NULL);

  /* Called by the program. */
  CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER) == MPI_SUCCESS);
  CHECK(comm_calls == 1 && last_code == MPI_ERR_OTHER && last_comm == dup);

  /* Raised by the library: a rank out of range. The call returns the code too. */
  int x = 0, rc;
  if (raised) {
    rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup);
    CHECK(rc != MPI_SUCCESS);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK);
    CHECK(comm_calls == 2 && last_code == rc && last_comm == dup);
  }

  /* Freeing the handle leaves the communicator's handler in place; a dup inherits it. */
  CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS);
  CHECK(eh == MPI_ERRHANDLER_NULL);
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  if (raised) {
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, dup2);
    CHECK(rc != MPI_SUCCESS && comm_calls == 3 && last_comm == dup2);
  } else {
    CHECK(MPI_Comm_call_errhandler(dup2, MPI_ERR_TAG) == MPI_SUCCESS);
    CHECK(comm_calls == 2 && last_code == MPI_ERR_TAG && last_comm == dup2);
  }
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup);
  if (raised) {
    /* A handle freed by all its holders can no longer be set. */
    MPI_Errhandler tmp;
    MPI_Comm_create_errhandler(on_comm_error, &tmp);
    MPI_Errhandler stale = tmp;
    MPI_Errhandler_free(&tmp);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, stale);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ERRHANDLER);
  }


  /* Sessions. */
  MPI_Errhandler seh;
  CHECK(MPI_Session_create_errhandler(on_session_error, &seh) == MPI_SUCCESS);
  MPI_Session s;
  CHECK(MPI_Session_init(MPI_INFO_NULL, seh, &s) == MPI_SUCCESS);
  MPI_Errhandler sgot;
  CHECK(MPI_Session_get_errhandler(s, &sgot) == MPI_SUCCESS);
  CHECK(sgot == seh);
  MPI_Errhandler_free(&sgot);
  CHECK(MPI_Session_call_errhandler(s, MPI_ERR_ARG) == MPI_SUCCESS);
  CHECK(session_calls == 1 && session_code == MPI_ERR_ARG && last_session == s);
  MPI_Group g;
  if (raised) {
    /* Raised by the library: an unknown process set. */
    rc = MPI_Group_from_session_pset(s, "no://such/pset", &g);
    CHECK(rc != MPI_SUCCESS && session_calls == 2 && session_code == rc);
  }
  CHECK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  CHECK(MPI_Session_get_errhandler(s, &sgot) == MPI_SUCCESS && sgot == MPI_ERRORS_RETURN);
  if (raised) {
    rc = MPI_Group_from_session_pset(s, "no://such/pset", &g);
    CHECK(rc != MPI_SUCCESS && session_calls == 2);
  }
  MPI_Errhandler_free(&seh);
  MPI_Session_finalize(&s);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("errhandler_user: ok\n");
  MPI_Finalize();
  return 0;
}
