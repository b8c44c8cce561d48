/* Errors: with MPI_ERRORS_RETURN each bad call returns the class the standard names, with a
   text from MPI_Error_string; MPI_ERRORS_ARE_FATAL is the default. */
#include <mpi.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include "check.h"

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void expect(int code, int class) {
  int c = -1, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  if (code == MPI_SUCCESS) {
    fprintf(stderr, "expected error class %d, the call succeeded\n", class);
    exit(1);
  }
  CHECK(MPI_Error_class(code, &c) == MPI_SUCCESS);
  if (c != class) {
    MPI_Error_string(code, text, &len);
    fprintf(stderr, "expected error class %d, got %d: %s\n", class, c, text);
    exit(1);
  }
  CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS);
  CHECK(len > 0 && (int)strlen(text) == len);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_RETURN);

  int x = 0;
  expect(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  expect(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  expect(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
  expect(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  expect(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  expect(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  expect(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  expect(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  expect(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  MPI_Request r = (MPI_Request)(intptr_t)0x2000;
  expect(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  MPI_Comm freed;
  MPI_Comm_dup(MPI_COMM_WORLD, &freed);
  MPI_Comm keep = freed;
  MPI_Comm_free(&freed);
  expect(MPI_Barrier(keep), MPI_ERR_COMM);
  expect(MPI_Comm_free(&keep), MPI_ERR_COMM);
  MPI_Comm world = MPI_COMM_WORLD;
  expect(MPI_Comm_free(&world), MPI_ERR_COMM);
  expect(MPI_Comm_remote_size(MPI_COMM_WORLD, &x), MPI_ERR_COMM);
  expect(MPI_Init(&argc, &argv), MPI_ERR_OTHER);
  {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, code = MPI_Abi_set_fortran_info(MPI_INFO_NULL);
    expect(code, MPI_ERR_INFO);
    MPI_Error_string(code, text, &len);
    CHECK(strstr(text, "MPI_Abi_set_fortran_info") != NULL);
  }

  /* freed and invalid objects of every kind */
  MPI_Datatype t, tkeep;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_commit(&t);
  tkeep = t;
  MPI_Type_free(&t);
  expect(MPI_Send(&x, 1, tkeep, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  expect(MPI_Type_free(&tkeep), MPI_ERR_TYPE);
  MPI_Datatype predefined = MPI_INT;
  expect(MPI_Type_free(&predefined), MPI_ERR_TYPE);
  MPI_Group g, gkeep;
  MPI_Comm_group(MPI_COMM_WORLD, &g);
  gkeep = g;
  MPI_Group_free(&g);
  expect(MPI_Group_size(gkeep, &x), MPI_ERR_GROUP);
  expect(MPI_Group_size(MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
  MPI_Comm_group(MPI_COMM_WORLD, &g);
  int outside[1] = {size};
  MPI_Group sub;
  expect(MPI_Group_incl(g, 1, outside, &sub), MPI_ERR_RANK);
  MPI_Group_free(&g);
  MPI_Info inf, ikeep;
  MPI_Info_create(&inf);
  ikeep = inf;
  MPI_Info_free(&inf);
  expect(MPI_Info_set(ikeep, "k", "v"), MPI_ERR_INFO);
  expect(MPI_Info_get_nkeys(MPI_INFO_NULL, &x), MPI_ERR_INFO);
  MPI_Op sum = MPI_SUM;
  expect(MPI_Op_free(&sum), MPI_ERR_OP);
  int key = 12345, *val, flag;
  expect(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &val, &flag), MPI_ERR_KEYVAL);
  MPI_Message m = MPI_MESSAGE_NULL;
  expect(MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  /* counts that do not fit */
  expect(MPI_Send_c(&x, (MPI_Count)1 << 62, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  expect(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  /* MPI_IN_PLACE where it is not a buffer */
  expect(MPI_Send(MPI_IN_PLACE, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);

  /* a truncated receive */
  if (size >= 2 && rank < 2) {
    int two[2] = {1, 2}, one = 0;
    if (rank == 0) {
      MPI_Send(two, 2, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else {
      expect(MPI_Recv(&one, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    }
    /* and a truncated non-blocking one, found at MPI_Wait */
    if (rank == 0) {
      MPI_Send(two, 2, MPI_INT, 1, 10, MPI_COMM_WORLD);
    } else {
      MPI_Request q;
      MPI_Irecv(&one, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &q);
      expect(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
      CHECK(q == MPI_REQUEST_NULL);
    }
  }

  /* the tool interface: a call before MPI_T_init_thread */
  int nvars;
  CHECK(MPI_T_cvar_get_num(&nvars) == MPI_T_ERR_NOT_INITIALIZED);

  /* files: a bad access mode, an existing file with MPI_MODE_EXCL, writing a read-only file,
     reading a write-only one, an unknown data representation, a negative offset, a bad
     whence, the null file; files return errors by default */
  {
    char fpath[256];
    int fid = (int)getpid();
    MPI_Bcast(&fid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const char *tmp = getenv("TMPDIR");
    snprintf(fpath, sizeof fpath, "%s/ibdyn-errors-%d.dat", tmp && *tmp ? tmp : "/tmp", fid);
    MPI_File f;
    expect(MPI_File_open(MPI_COMM_WORLD, fpath, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &f),
           MPI_ERR_AMODE);
    CHECK(MPI_File_open(MPI_COMM_WORLD, fpath, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &f) == MPI_SUCCESS);
    int word = 7;
    /* the shared file pointer's side file has no name once open: a killed job leaves none */
    CHECK(MPI_File_write_shared(f, &word, 1, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    DIR *d = opendir(tmp && *tmp ? tmp : "/tmp");
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      char mine[64];
      snprintf(mine, sizeof mine, "ibdyn-errors-%d.dat.ibdyn-shfp", fid);
      CHECK(strstr(e->d_name, mine) == NULL);
    }
    closedir(d);
    expect(MPI_File_read_at(f, 0, &word, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    expect(MPI_File_write_at(f, -1, &word, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    expect(MPI_File_seek(f, 0, 12345), MPI_ERR_ARG);
    expect(MPI_File_set_view(f, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL),
           MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_File_close(&f);
    expect(MPI_File_open(MPI_COMM_WORLD, fpath, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                         MPI_INFO_NULL, &f),
           MPI_ERR_FILE_EXISTS);
    CHECK(MPI_File_open(MPI_COMM_WORLD, fpath, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                        MPI_INFO_NULL, &f) == MPI_SUCCESS);
    expect(MPI_File_write_at(f, 0, &word, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    MPI_File_close(&f);
    f = MPI_FILE_NULL;
    expect(MPI_File_close(&f), MPI_ERR_FILE);
    MPI_Barrier(MPI_COMM_WORLD);
    expect(MPI_File_delete(fpath, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
  }

  /* packing: a buffer too small, a negative count, reading past the packed data */
  char small[8], packed[16];
  double d[4] = {0};
  int pos = 0;
  expect(MPI_Pack(d, 4, MPI_DOUBLE, small, sizeof small, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  CHECK(pos == 0);
  expect(MPI_Pack(d, -1, MPI_DOUBLE, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK(MPI_Pack(d, 2, MPI_DOUBLE, packed, sizeof packed, &pos, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(pos == 16);
  expect(MPI_Unpack(packed, 16, &pos, d, 1, MPI_DOUBLE, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  pos = -1;
  expect(MPI_Unpack(packed, 16, &pos, d, 1, MPI_DOUBLE, MPI_COMM_WORLD), MPI_ERR_ARG);
  expect(MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_NULL, &pos), MPI_ERR_COMM);

  /* partitioned: a partition out of range, marked twice, before MPI_Start, and a wait on a
     send whose partitions are not all ready (the request stays usable) */
  int part[4] = {1, 2, 3, 4}, got[4] = {0};
  MPI_Request ps, pr, plain;
  MPI_Psend_init(part, 2, 2, MPI_INT, rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &ps);
  MPI_Precv_init(got, 2, 2, MPI_INT, rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
  expect(MPI_Pready(0, ps), MPI_ERR_REQUEST);
  MPI_Start(&ps);
  MPI_Start(&pr);
  expect(MPI_Pready(2, ps), MPI_ERR_ARG);
  CHECK(MPI_Pready(1, ps) == MPI_SUCCESS);
  expect(MPI_Pready(1, ps), MPI_ERR_ARG);
  expect(MPI_Wait(&ps, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  expect(MPI_Pready(0, pr), MPI_ERR_REQUEST);
  CHECK(MPI_Pready(0, ps) == MPI_SUCCESS);
  CHECK(MPI_Wait(&pr, MPI_STATUS_IGNORE) == MPI_SUCCESS && got[3] == 4);
  CHECK(MPI_Wait(&ps, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_Irecv(got, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &plain);
  expect(MPI_Parrived(plain, 0, &flag), MPI_ERR_REQUEST);
  MPI_Cancel(&plain);
  MPI_Wait(&plain, MPI_STATUS_IGNORE);
  MPI_Request_free(&ps);
  MPI_Request_free(&pr);
  /* the Fortran details of the standard ABI: a LOGICAL size that is none, values set twice
     differently, true and false the same, the info set twice */
  int t1 = 1, f0 = 0, tm = -1;
  MPI_Op op_x;
  MPI_Errhandler eh_x;
  expect(MPI_Abi_set_fortran_booleans(3, &t1, &f0), MPI_ERR_ARG);
  expect(MPI_Abi_set_fortran_booleans(4, &t1, &t1), MPI_ERR_ARG);
  CHECK(MPI_Abi_set_fortran_booleans(4, &t1, &f0) == MPI_SUCCESS);
  CHECK(MPI_Abi_set_fortran_booleans(4, &t1, &f0) == MPI_SUCCESS);
  expect(MPI_Abi_set_fortran_booleans(4, &tm, &f0), MPI_ERR_ABI);
  expect(MPI_Abi_get_fortran_booleans(4, NULL, NULL, NULL), MPI_ERR_ARG);
  MPI_Info fortran;
  MPI_Info_create(&fortran);
  CHECK(MPI_Abi_set_fortran_info(fortran) == MPI_SUCCESS);
  expect(MPI_Abi_set_fortran_info(fortran), MPI_ERR_ABI);
  MPI_Info_free(&fortran);
  expect(MPIX_Op_create_x(NULL, NULL, 1, NULL, &op_x), MPI_ERR_ARG);
  expect(MPIX_Comm_create_errhandler_x(NULL, NULL, NULL, &eh_x), MPI_ERR_ARG);

  /* partitioned calls match at their init: no wildcards, no rank outside the group */
  expect(MPI_Precv_init(got, 2, 2, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &pr), MPI_ERR_RANK);
  expect(MPI_Precv_init(got, 2, 2, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &pr), MPI_ERR_TAG);
  expect(MPI_Psend_init(part, 2, 2, MPI_INT, 1 << 20, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &ps),
         MPI_ERR_RANK);

  /* one-sided: no epoch, out of the window, a bad rank, lock type, unlock, operation, unit */
  int wmem[4] = {0}, one1 = 1;
  MPI_Win win;
  expect(MPI_Win_create(wmem, sizeof wmem, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
  CHECK(MPI_Win_create(wmem, sizeof wmem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
        MPI_SUCCESS);
  CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  expect(MPI_Put(&one1, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  MPI_Win_fence(0, win);
  expect(MPI_Put(&one1, 1, MPI_INT, 0, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  expect(MPI_Get(&one1, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  expect(MPI_Put(&one1, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  expect(MPI_Put(&one1, 1, MPI_INT, 0, 0, 2, MPI_INT, win), MPI_ERR_TYPE);
  MPI_Op myop;
  MPI_Op_create(user_sum, 1, &myop);
  expect(MPI_Accumulate(&one1, 1, MPI_INT, 0, 0, 1, MPI_INT, myop, win), MPI_ERR_OP);
  MPI_Op_free(&myop);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  expect(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE);
  expect(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
  expect(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
  expect(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
  CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win) == MPI_SUCCESS);
  expect(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
  expect(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
  CHECK(MPI_Win_unlock(0, win) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS && win == MPI_WIN_NULL);
  expect(MPI_Win_fence(0, win), MPI_ERR_WIN);
  /* a dynamic window: overlapping attach, detach of what is not attached, an address of
     this process outside its regions */
  int64_t region[4];
  CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK(MPI_Win_attach(win, region, 2 * sizeof(int64_t)) == MPI_SUCCESS);
  expect(MPI_Win_attach(win, region + 1, sizeof(int64_t)), MPI_ERR_RMA_ATTACH);
  expect(MPI_Win_detach(win, region + 2), MPI_ERR_RMA_ATTACH);
  MPI_Aint at;
  MPI_Get_address(region + 2, &at);
  int64_t v64 = 5;
  MPI_Win_lock_all(0, win);
  expect(MPI_Put(&v64, 1, MPI_INT64_T, rank, at, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE);
  MPI_Win_unlock_all(win);
  CHECK(MPI_Win_detach(win, region) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("errors: ok\n");
  MPI_Finalize();
  return 0;
}
