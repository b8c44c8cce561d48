/* Functions libraries such as mpi4py call on every run, beyond the core: MPI_Alloc_mem and
   MPI_Free_mem, MPI_Dims_create, MPI_Topo_test, the split types of MPI 4, communicator
   hints, MPI_Isendrecv(_replace), persistent buffered sends, MPI_Is_thread_main,
   MPI_Pcontrol and a large-count non-blocking collective. Two or more ranks on one node. */
#include <mpi.h>
#include <string.h>
#include "check.h"

/* A large-count user reduction: elementwise maximum of ints. */
static void big_max(void *in, void *inout, MPI_Count *len, MPI_Datatype *t) {
  (void)t;
  for (MPI_Count i = 0; i < *len; i++)
    if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv) {
  int rank, size, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* memory */
  int *mem = NULL;
  CHECK(MPI_Alloc_mem(64 * sizeof(int), MPI_INFO_NULL, &mem) == MPI_SUCCESS && mem);
  for (int i = 0; i < 64; i++) mem[i] = i;
  CHECK(MPI_Free_mem(mem) == MPI_SUCCESS);
  void *none = NULL;
  CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &none) == MPI_SUCCESS);
  CHECK(MPI_Free_mem(none) == MPI_SUCCESS);

  /* dims */
  int d2[2] = {0, 0}, d3[3] = {0, 3, 0}, bad[2] = {3, 0};
  CHECK(MPI_Dims_create(12, 2, d2) == MPI_SUCCESS && d2[0] == 4 && d2[1] == 3);
  CHECK(MPI_Dims_create(12, 3, d3) == MPI_SUCCESS && d3[0] == 2 && d3[1] == 3 && d3[2] == 2);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rc = MPI_Dims_create(10, 2, bad);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_DIMS);
  int topo = 0;
  CHECK(MPI_Topo_test(MPI_COMM_WORLD, &topo) == MPI_SUCCESS && topo == MPI_UNDEFINED);

  /* split types: one node here */
  MPI_Info info;
  MPI_Comm c;
  MPI_Info_create(&info);
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c) == MPI_SUCCESS);
  CHECK(c == MPI_COMM_NULL);
  MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c) == MPI_SUCCESS);
  int n = 0;
  CHECK(c != MPI_COMM_NULL);
  MPI_Comm_size(c, &n);
  CHECK(n == size);
  MPI_Comm_free(&c);
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c) == MPI_SUCCESS);
  CHECK(c != MPI_COMM_NULL);
  MPI_Comm_free(&c);
  MPI_Info_free(&info);
  MPI_Info_create(&info);
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c) == MPI_SUCCESS);
  CHECK(c == MPI_COMM_NULL); /* no level below one node */
  MPI_Info_free(&info);

  /* the hardware levels, and names of the null handles */
  char lvl[64], nm[MPI_MAX_OBJECT_NAME];
  int lvl_len = sizeof lvl, nm_len;
  CHECK(MPI_Get_hw_resource_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL);
  /* the keys are the library's; ibdyn names the one level it splits by */
  CHECK(MPI_Info_get_string(info, "mpi_hw_resource_type", &lvl_len, lvl, &flag) == MPI_SUCCESS);
  CHECK(!flag || lvl_len > 0);
  MPI_Info_free(&info);
  CHECK(MPI_Comm_get_name(MPI_COMM_NULL, nm, &nm_len) == MPI_SUCCESS && strcmp(nm, "MPI_COMM_NULL") == 0);
  CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, nm, &nm_len) == MPI_SUCCESS);

  /* hints */
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
  CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_info(c, info) == MPI_SUCCESS);
  MPI_Info used;
  CHECK(MPI_Comm_get_info(c, &used) == MPI_SUCCESS && used != MPI_INFO_NULL);
  MPI_Info_free(&used);
  MPI_Comm_size(c, &n);
  CHECK(n == size);
  MPI_Comm_free(&c);
  MPI_Request r;
  CHECK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &r) == MPI_SUCCESS);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Comm_free(&c);
  MPI_Info_free(&info);

  /* Isendrecv around the ring, then Isendrecv_replace the other way */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[4], in[4];
  MPI_Status st;
  for (int i = 0; i < 4; i++) out[i] = rank * 10 + i;
  CHECK(MPI_Isendrecv(out, 4, MPI_INT, right, 7, in, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 4);
  for (int i = 0; i < 4; i++) CHECK(in[i] == left * 10 + i);
  CHECK(MPI_Isendrecv_replace(out, 4, MPI_INT, left, 8, right, 8, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  flag = 0;
  while (!flag) CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS);
  CHECK(st.MPI_SOURCE == right);
  for (int i = 0; i < 4; i++) CHECK(out[i] == right * 10 + i);

  /* a persistent buffered send, started twice */
  static char pool[2 * (sizeof(int) + MPI_BSEND_OVERHEAD)];
  CHECK(MPI_Buffer_attach(pool, sizeof pool) == MPI_SUCCESS);
  int v = 0, got = -1;
  CHECK(MPI_Bsend_init(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  for (int round = 0; round < 2; round++) {
    v = 100 * rank + round;
    CHECK(MPI_Start(&r) == MPI_SUCCESS);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    v = -1; /* the message was copied at the start */
    MPI_Recv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == 100 * left + round);
  }
  MPI_Request_free(&r);
  void *back;
  int back_size;
  CHECK(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS && back == pool);

  /* request status without completing: a receive not yet matched, then matched */
  MPI_Request two[2];
  int a = 0, b = 0, idx = -1, outc = -1, idxs[2];
  MPI_Irecv(&a, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &two[0]);
  two[1] = MPI_REQUEST_NULL;
  CHECK(MPI_Request_get_status_all(2, two, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !flag);
  CHECK(MPI_Request_get_status_any(2, two, &idx, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(!flag && idx == MPI_UNDEFINED);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody sends before every rank has checked */
  b = rank;
  MPI_Send(&b, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
  do {
    CHECK(MPI_Request_get_status_some(2, two, &outc, idxs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  } while (outc == 0);
  CHECK(outc == 1 && idxs[0] == 0 && two[0] != MPI_REQUEST_NULL); /* still there */
  MPI_Status peek;
  CHECK(MPI_Request_get_status(two[0], &flag, &peek) == MPI_SUCCESS && flag);
  MPI_Get_count(&peek, MPI_INT, &n);
  CHECK(peek.MPI_SOURCE == left && peek.MPI_TAG == 11 && n == 1); /* the receive's status */
  MPI_Status sts[2];
  CHECK(MPI_Request_get_status_all(2, two, &flag, sts) == MPI_SUCCESS && flag);
  CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 11);
  CHECK(MPI_Request_get_status_all(2, two, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag);
  MPI_Wait(&two[0], MPI_STATUS_IGNORE);
  CHECK(a == left);
  two[0] = MPI_REQUEST_NULL;
  CHECK(MPI_Request_get_status_some(2, two, &outc, idxs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(outc == MPI_UNDEFINED);

  /* MPI_Info_create_env holds what MPI_INFO_ENV holds */
  MPI_Info env;
  char val[64];
  CHECK(MPI_Info_create_env(argc, argv, &env) == MPI_SUCCESS);
  int len = sizeof val;
  CHECK(MPI_Info_get_string(env, "maxprocs", &len, val, &flag) == MPI_SUCCESS && flag);
  CHECK(atoi(val) == size);
  MPI_Info_free(&env);

  /* a large-count indexed block type: ints 0, 2, 4 of 6 */
  MPI_Datatype evens;
  MPI_Count disps[3] = {0, 2, 4};
  CHECK(MPI_Type_create_indexed_block_c(3, 1, disps, MPI_INT, &evens) == MPI_SUCCESS);
  MPI_Type_commit(&evens);
  int six[6] = {0, 1, 2, 3, 4, 5}, three[3];
  MPI_Sendrecv(six, 1, evens, rank, 12, three, 3, MPI_INT, rank, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(three[0] == 0 && three[1] == 2 && three[2] == 4);
  MPI_Type_free(&evens);

  /* subarrays: a 2 x 3 block at (1, 1) of a 4 x 5 array, C and Fortran order */
  int grid[20], block[6];
  for (int i = 0; i < 20; i++) grid[i] = i;
  int gs[2] = {4, 5}, ss[2] = {2, 3}, st0[2] = {1, 1};
  MPI_Datatype sub;
  CHECK(MPI_Type_create_subarray(2, gs, ss, st0, MPI_ORDER_C, MPI_INT, &sub) == MPI_SUCCESS);
  MPI_Type_commit(&sub);
  MPI_Aint lb, ext;
  int tsize;
  MPI_Type_get_extent(sub, &lb, &ext);
  MPI_Type_size(sub, &tsize);
  CHECK(lb == 0 && ext == 20 * (MPI_Aint)sizeof(int) && tsize == 6 * (int)sizeof(int));
  MPI_Sendrecv(grid, 1, sub, rank, 13, block, 6, MPI_INT, rank, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int expect_c[6] = {6, 7, 8, 11, 12, 13};
  for (int i = 0; i < 6; i++) CHECK(block[i] == expect_c[i]);
  MPI_Type_free(&sub);
  /* Fortran order: sizes 4 (fastest) x 5, block 2 x 3 at (1, 1): column-major offsets */
  MPI_Count gsc[2] = {4, 5}, ssc[2] = {2, 3}, stc[2] = {1, 1};
  CHECK(MPI_Type_create_subarray_c(2, gsc, ssc, stc, MPI_ORDER_FORTRAN, MPI_INT, &sub) == MPI_SUCCESS);
  MPI_Type_commit(&sub);
  MPI_Sendrecv(grid, 1, sub, rank, 14, block, 6, MPI_INT, rank, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int expect_f[6] = {5, 6, 9, 10, 13, 14};
  for (int i = 0; i < 6; i++) CHECK(block[i] == expect_f[i]);
  MPI_Type_free(&sub);
  int bad_st[2] = {3, 0};
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_create_subarray(2, gs, ss, bad_st, MPI_ORDER_C, MPI_INT, &sub) != MPI_SUCCESS);

  /* MPI_Comm_create_group: the even ranks only, called by them alone, twice with one tag */
  if (rank % 2 == 0) {
    MPI_Group world, evens;
    int ranks[32], ne = 0;
    for (int i = 0; i < size && ne < 32; i += 2) ranks[ne++] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, ne, ranks, &evens);
    for (int round = 0; round < 2; round++) {
      MPI_Comm ec;
      CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &ec) == MPI_SUCCESS);
      int en = 0, er = -1, esum = 0;
      MPI_Comm_size(ec, &en);
      MPI_Comm_rank(ec, &er);
      CHECK(en == ne && er == rank / 2);
      MPI_Allreduce(&rank, &esum, 1, MPI_INT, MPI_SUM, ec);
      CHECK(esum == ne * (ne - 1));
      MPI_Comm_free(&ec);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
  }

  /* splitting an intercommunicator (evens and odds): one colour on both sides, then a
     colour only one side has (MPI_COMM_NULL everywhere) */
  {
    MPI_Comm half, inter, sub;
    int side = rank % 2, rs = 0, ls = 0, ts = 0;
    MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : 1, 99, &inter);
    MPI_Comm_remote_size(inter, &ts);
    CHECK(MPI_Comm_split(inter, 7, rank, &sub) == MPI_SUCCESS && sub != MPI_COMM_NULL);
    MPI_Comm_test_inter(sub, &flag);
    MPI_Comm_remote_size(sub, &rs);
    MPI_Comm_size(sub, &ls);
    CHECK(flag && rs == ts && ls == size / 2 + (side ? 0 : size % 2));
    int x = rank, sumx = 0;
    MPI_Allreduce(&x, &sumx, 1, MPI_INT, MPI_SUM, sub); /* the other side's sum */
    int expect_sum = 0;
    for (int i = 0; i < size; i++) if (i % 2 != side) expect_sum += i;
    CHECK(sumx == expect_sum);
    MPI_Comm_free(&sub);
    CHECK(MPI_Comm_split(inter, side == 0 ? 3 : MPI_UNDEFINED, 0, &sub) == MPI_SUCCESS);
    CHECK(sub == MPI_COMM_NULL);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }

  /* MPI_Op_create_c */
  MPI_Op mx;
  int pairv[2] = {rank, -rank}, maxv[2];
  CHECK(MPI_Op_create_c(big_max, 1, &mx) == MPI_SUCCESS);
  CHECK(MPI_Allreduce(pairv, maxv, 2, MPI_INT, mx, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(maxv[0] == size - 1 && maxv[1] == 0);
  MPI_Op_free(&mx);

  /* MPI 4.1 buffers: one per communicator (preferred over the process's), flushed; an
     automatic one */
  MPI_Comm bc;
  MPI_Comm_dup(MPI_COMM_WORLD, &bc);
  static char cbuf[sizeof(int) + MPI_BSEND_OVERHEAD];
  CHECK(MPI_Comm_attach_buffer(bc, cbuf, sizeof cbuf) == MPI_SUCCESS);
  v = rank;
  CHECK(MPI_Bsend(&v, 1, MPI_INT, right, 15, bc) == MPI_SUCCESS);
  CHECK(MPI_Comm_flush_buffer(bc) == MPI_SUCCESS);
  MPI_Recv(&got, 1, MPI_INT, left, 15, bc, MPI_STATUS_IGNORE);
  CHECK(got == left);
  CHECK(MPI_Comm_detach_buffer(bc, &back, &back_size) == MPI_SUCCESS && back == cbuf);
  CHECK(MPI_Comm_attach_buffer(bc, MPI_BUFFER_AUTOMATIC, 0) == MPI_SUCCESS);
  static int many[64];
  CHECK(MPI_Bsend(many, 64, MPI_INT, right, 16, bc) == MPI_SUCCESS); /* no size limit */
  MPI_Recv(many, 64, MPI_INT, left, 16, bc, MPI_STATUS_IGNORE);
  MPI_Request fl;
  CHECK(MPI_Comm_iflush_buffer(bc, &fl) == MPI_SUCCESS && MPI_Wait(&fl, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_Comm_detach_buffer(bc, &back, &back_size) == MPI_SUCCESS && back == MPI_BUFFER_AUTOMATIC);
  MPI_Comm_set_errhandler(bc, MPI_ERRORS_RETURN);
  CHECK(MPI_Bsend(&v, 1, MPI_INT, right, 17, bc) != MPI_SUCCESS); /* no buffer at all now */
  MPI_Comm_free(&bc);
  CHECK(MPI_Buffer_flush() == MPI_SUCCESS);

  /* threads, profiling hook */
  CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag);
  CHECK(MPI_Pcontrol(1) == MPI_SUCCESS);

  /* a large-count non-blocking collective */
  int mine = rank + 1, all[64];
  CHECK(size <= 64);
  CHECK(MPI_Iallgather_c(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < size; i++) CHECK(all[i] == i + 1);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mpi4py_batch: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
