/* MPI from several threads, one call at a time. The program asks for MPI_THREAD_MULTIPLE
   and gets at least MPI_THREAD_SERIALIZED. Three threads then take turns, in a fixed order
   that a baton (mutex + condition variable) enforces, round after round:
   - each round exchanges a derived type around a ring and reduces a sum, on a communicator
     and with a type that the previous round made in another thread, and frees them;
   - it completes the send and receive that the previous round's thread started;
   - it makes the communicator, type and requests the next round uses.
   A generalized request is completed by a thread while the main thread waits in MPI_Wait.

   With the argument "funneled" the program asks for MPI_THREAD_FUNNELED and a thread then
   calls MPI: the job must end with an error that says what to ask for.

   With the argument "multiple" (an even number of ranks) it needs MPI_THREAD_MULTIPLE: one
   thread's blocking call waits for what another thread of the same process sends only
   afterwards, and two threads exchange messages on two communicators in opposite orders on
   the two ranks of a pair. The second thread starts only once the first is asleep inside its
   MPI call (/proc/self/task/TID/stat), so a library that keeps other threads out while a call
   waits hangs here every time. Then two threads run blocking collectives (allreduce, bcast,
   allgather, barrier) on two communicators of every rank, in opposite orders on even and
   odd ranks, the second again once the first sleeps inside MPI.

   With the arguments "making DIR" (MPI_THREAD_MULTIPLE, 2 ranks or more) two threads make
   objects collectively on two communicators of every rank the same way (communicators of
   every kind, topologies, windows, a file in DIR), and a server thread waits in
   MPI_Comm_accept while its main thread exchanges with the clients, which connect only
   after that exchange; the same for a spawn whose root starts only after such an exchange,
   and for MPI_Comm_join. Last, a thread waits in MPI_Win_lock and in MPI_Win_lock_all for a
   lock that another process holds until this process's main thread sends it a message, and
   in MPI_Buffer_detach for a buffered send that its receiver takes only after such a
   message.
   The argument "child" makes the spawned process. */
#include <mpi.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define THREADS 3
#define ROUNDS 30

static pthread_mutex_t baton = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t passed = PTHREAD_COND_INITIALIZER;
static int turn;

static int rank, size;
static MPI_Comm comm;          /* made by the previous round */
static MPI_Datatype pair;      /* ditto */
static MPI_Request ring[2];    /* started by the previous round: receive, send */
static int ring_in, ring_out;  /* their buffers */

static void next_round_objects(int r) {
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS);
  CHECK(MPI_Type_contiguous(2, MPI_INT, &pair) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&pair) == MPI_SUCCESS);
  ring_out = 1000 * rank + r;
  MPI_Irecv(&ring_in, 1, MPI_INT, (rank + size - 1) % size, r, comm, &ring[0]);
  MPI_Isend(&ring_out, 1, MPI_INT, (rank + 1) % size, r, comm, &ring[1]);
}

static void round_of(int r) {
  int flag;
  CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && !flag);
  /* the requests and objects of round r - 1 (the main thread's for round 0) */
  CHECK(MPI_Waitall(2, ring, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(ring_in == 1000 * ((rank + size - 1) % size) + r - 1);
  int out[2] = {rank, r}, in[2] = {-1, -1};
  CHECK(MPI_Sendrecv(out, 1, pair, (rank + 1) % size, 7, in, 1, pair, (rank + size - 1) % size,
                     7, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(in[0] == (rank + size - 1) % size && in[1] == r);
  int sum = -1;
  CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == r * size);
  CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS && MPI_Type_free(&pair) == MPI_SUCCESS);
  next_round_objects(r);
}

static void *taker(void *arg) {
  int me = (int)(long)arg;
  for (int r = me; r < ROUNDS; r += THREADS) {
    pthread_mutex_lock(&baton);
    while (turn != r) pthread_cond_wait(&passed, &baton);
    pthread_mutex_unlock(&baton);
    round_of(r);
    pthread_mutex_lock(&baton);
    turn++;
    pthread_cond_broadcast(&passed);
    pthread_mutex_unlock(&baton);
  }
  return NULL;
}

static int query(void *extra, MPI_Status *st) {
  MPI_Status_set_elements(st, MPI_INT, 0);
  return MPI_SUCCESS;
}
static int release(void *extra) { return MPI_SUCCESS; }
static int cancel(void *extra, int complete) { return MPI_SUCCESS; }

static void *completer(void *arg) {
  usleep(20000);
  CHECK(MPI_Grequest_complete(*(MPI_Request *)arg) == MPI_SUCCESS);
  return NULL;
}

static void *funneled_caller(void *arg) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  fprintf(stderr, "threads: a call from another thread at MPI_THREAD_FUNNELED went through\n");
  return NULL;
}

/* Waits until thread `tid` of this process sleeps (inside its blocking MPI call) or has ended
   (its call needed nothing of this thread). A library whose waits never sleep (MPICH polls)
   gets 2 s, then the second thread starts anyway. */
static void until_asleep(pid_t tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  for (int i = 0; i < 20000; i++) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *state = strrchr(buf, ')');
    if (state && state[2] == 'S') return;
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
}

struct first { pid_t tid; int started; void (*body)(void); };
static pthread_mutex_t first_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t first_cv = PTHREAD_COND_INITIALIZER;

static void *run_first(void *arg) {
  struct first *f = arg;
  pthread_mutex_lock(&first_mu);
  f->tid = (pid_t)syscall(SYS_gettid);
  f->started = 1;
  pthread_cond_broadcast(&first_cv);
  pthread_mutex_unlock(&first_mu);
  f->body();
  return NULL;
}

/* Runs `a` in a new thread and, once that thread sleeps inside MPI, `b` in this one. */
static void first_then(void (*a)(void), void (*b)(void)) {
  struct first f = {0, 0, a};
  pthread_t t;
  pthread_create(&t, NULL, run_first, &f);
  pthread_mutex_lock(&first_mu);
  while (!f.started) pthread_cond_wait(&first_cv, &first_mu);
  pthread_mutex_unlock(&first_mu);
  until_asleep(f.tid);
  b();
  pthread_join(t, NULL);
}

static int peer;
static MPI_Comm comm_a, comm_b;

/* The even rank's first thread waits for tag 1, which the odd rank sends only after it has
   the even rank's second thread's tag 3. */
static void wait_for_tag_1(void) {
  int v = -1;
  CHECK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(v == 1);
}
static void tags_2_then_3(void) {
  int v = -1, three = 3;
  CHECK(MPI_Recv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(v == 2);
  CHECK(MPI_Send(&three, 1, MPI_INT, peer, 3, MPI_COMM_WORLD) == MPI_SUCCESS);
}

static void exchange_on(MPI_Comm c, int salt) {
  for (int i = 0; i < 20; i++) {
    int mine = 1000 * rank + salt + i, theirs = -1;
    CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, 1 - rank % 2, 0, &theirs, 1, MPI_INT, 1 - rank % 2, 0,
                       c, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(theirs == 1000 * peer + salt + i);
  }
}
static void exchange_a(void) { exchange_on(comm_a, 100); }
static void exchange_b(void) { exchange_on(comm_b, 200); }

/* Blocking collectives on a communicator of every rank, with values that name it. */
static void collectives_on(MPI_Comm c, int salt) {
  int all[64];
  for (int i = 0; i < 20; i++) {
    int mine = salt + rank + i, sum = -1, root = i % size, from_root = rank == root ? salt + i : -1;
    CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(sum == size * (salt + i) + size * (size - 1) / 2);
    CHECK(MPI_Bcast(&from_root, 1, MPI_INT, root, c) == MPI_SUCCESS);
    CHECK(from_root == salt + i);
    CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, c) == MPI_SUCCESS);
    for (int r = 0; r < size; r++) CHECK(all[r] == salt + r + i);
    CHECK(MPI_Barrier(c) == MPI_SUCCESS);
  }
}
static MPI_Comm comm_c, comm_d;
static void collectives_c(void) { collectives_on(comm_c, 300); }
static void collectives_d(void) { collectives_on(comm_d, 400); }

static int multiple_mode(void) {
  int provided_now;
  CHECK(MPI_Query_thread(&provided_now) == MPI_SUCCESS && provided_now == MPI_THREAD_MULTIPLE);
  CHECK(size % 2 == 0);
  peer = rank ^ 1;
  if (rank % 2 == 0) {
    first_then(wait_for_tag_1, tags_2_then_3);
  } else {
    int v = -1, two = 2, one = 1;
    CHECK(MPI_Send(&two, 1, MPI_INT, peer, 2, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(v == 3);
    CHECK(MPI_Send(&one, 1, MPI_INT, peer, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  /* pairs of ranks: comm_a and comm_b hold the two ranks of each pair */
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &comm_a) == MPI_SUCCESS);
  CHECK(MPI_Comm_dup(comm_a, &comm_b) == MPI_SUCCESS);
  if (rank % 2 == 0) first_then(exchange_a, exchange_b);
  else first_then(exchange_b, exchange_a);
  MPI_Comm_free(&comm_a);
  MPI_Comm_free(&comm_b);
  /* collectives of two threads on two communicators of every rank, started in opposite
     orders on even and odd ranks */
  CHECK(size <= 64);
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_c) == MPI_SUCCESS);
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_d) == MPI_SUCCESS);
  if (rank % 2 == 0) first_then(collectives_c, collectives_d);
  else first_then(collectives_d, collectives_c);
  MPI_Comm_free(&comm_c);
  MPI_Comm_free(&comm_d);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("threads: multiple ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}

/* "making": two threads make objects collectively on two communicators of every rank, in
   opposite orders on even and odd ranks, the second once the first sleeps inside MPI: a call
   that kept the process's other threads out while it waited hangs here every time. */
static char file_dir[200];

static void check_ring(MPI_Comm n, int salt) {
  int nsize, nrank, sum = -1;
  MPI_Comm_size(n, &nsize);
  MPI_Comm_rank(n, &nrank);
  CHECK(MPI_Allreduce(&salt, &sum, 1, MPI_INT, MPI_SUM, n) == MPI_SUCCESS && sum == salt * nsize);
}

static void make_split(MPI_Comm c, int salt) {
  MPI_Comm n;
  int nsize, nrank;
  CHECK(MPI_Comm_split(c, rank % 2, size - rank, &n) == MPI_SUCCESS);
  MPI_Comm_size(n, &nsize);
  MPI_Comm_rank(n, &nrank);
  CHECK(nsize == (size + 1 - rank % 2) / 2 && nrank == nsize - 1 - rank / 2);
  check_ring(n, salt);
  CHECK(MPI_Comm_free(&n) == MPI_SUCCESS);
  CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &n) == MPI_SUCCESS);
  check_ring(n, salt);
  CHECK(MPI_Comm_free(&n) == MPI_SUCCESS);
  MPI_Group g;
  char tag[32];
  CHECK(MPI_Comm_group(c, &g) == MPI_SUCCESS);
  CHECK(MPI_Comm_create_group(c, g, salt, &n) == MPI_SUCCESS);
  check_ring(n, salt);
  CHECK(MPI_Comm_free(&n) == MPI_SUCCESS);
  snprintf(tag, sizeof tag, "threads-%d", salt);
  CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &n) == MPI_SUCCESS);
  check_ring(n, salt);
  CHECK(MPI_Comm_free(&n) == MPI_SUCCESS);
  MPI_Group_free(&g);
}

static void make_topologies(MPI_Comm c, int salt) {
  MPI_Comm cart, sub, graph;
  int dims[1] = {size}, periods[1] = {1}, keep[1] = {1}, src, dst;
  CHECK(MPI_Cart_create(c, 1, dims, periods, 1, &cart) == MPI_SUCCESS);
  CHECK(MPI_Cart_shift(cart, 0, 1, &src, &dst) == MPI_SUCCESS);
  CHECK(MPI_Cart_sub(cart, keep, &sub) == MPI_SUCCESS);
  check_ring(sub, salt);
  int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  CHECK(MPI_Dist_graph_create_adjacent(c, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &graph) == MPI_SUCCESS);
  int mine = salt + rank;
  CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, &got, 1, MPI_INT, graph) == MPI_SUCCESS);
  CHECK(got == salt + left);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&sub);
  MPI_Comm_free(&cart);
}

static void make_intercomm(MPI_Comm c, int salt) {
  MPI_Comm half, inter, merged;
  int low = rank < size / 2, msize;
  CHECK(MPI_Comm_split(c, low, rank, &half) == MPI_SUCCESS);
  CHECK(MPI_Intercomm_create(half, 0, c, low ? size / 2 : 0, salt, &inter) == MPI_SUCCESS);
  CHECK(MPI_Intercomm_merge(inter, !low, &merged) == MPI_SUCCESS);
  MPI_Comm_size(merged, &msize);
  CHECK(msize == size);
  check_ring(merged, salt);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

static void make_windows(MPI_Comm c, int salt) {
  MPI_Win w;
  int *base, v = salt + rank;
  CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, c, &base, &w) == MPI_SUCCESS);
  *base = -1;
  CHECK(MPI_Win_fence(0, w) == MPI_SUCCESS);
  CHECK(MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, w) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, w) == MPI_SUCCESS);
  CHECK(*base == salt + (rank + size - 1) % size);
  CHECK(MPI_Win_free(&w) == MPI_SUCCESS);
  int local = 0;
  CHECK(MPI_Win_create(&local, sizeof local, sizeof local, MPI_INFO_NULL, c, &w) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&w) == MPI_SUCCESS);
}

static void make_file(MPI_Comm c, int salt) {
  char path[300];
  MPI_File f;
  int v = salt + rank, back = -1;
  snprintf(path, sizeof path, "%s/threads-%d", file_dir, salt);
  CHECK(MPI_File_open(c, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &f) == MPI_SUCCESS);
  CHECK(MPI_File_write_at_all(f, rank * sizeof v, &v, 1, MPI_INT, MPI_STATUS_IGNORE) ==
        MPI_SUCCESS);
  CHECK(MPI_File_read_at_all(f, rank * sizeof v, &back, 1, MPI_INT, MPI_STATUS_IGNORE) ==
        MPI_SUCCESS);
  CHECK(back == v);
  CHECK(MPI_File_close(&f) == MPI_SUCCESS);
}

/* A server thread waits in accept while the main thread exchanges with the clients, which
   connect only after that exchange. */
static char port[MPI_MAX_PORT_NAME];
static MPI_Comm half, accepted;
static void accept_on_half(void) {
  CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &accepted) == MPI_SUCCESS);
}
static void exchange_world(void) {
  int one = 1, sum = -1;
  CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sum == size);
}
static void accept_beside_exchange(void) {
  int server = rank < size / 2, remote = -1;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, server, rank, &half) == MPI_SUCCESS);
  if (rank == 0) CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
  CHECK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (server) {
    first_then(accept_on_half, exchange_world);
  } else {
    exchange_world();
    CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &accepted) == MPI_SUCCESS);
  }
  CHECK(MPI_Comm_remote_size(accepted, &remote) == MPI_SUCCESS);
  CHECK(remote == (server ? size - size / 2 : size / 2));
  CHECK(MPI_Barrier(accepted) == MPI_SUCCESS);
  CHECK(MPI_Comm_disconnect(&accepted) == MPI_SUCCESS);
  CHECK(MPI_Comm_free(&half) == MPI_SUCCESS);
  if (rank == 0) CHECK(MPI_Close_port(port) == MPI_SUCCESS);
}

/* A spawn whose root (rank 1) starts only after an exchange that needs rank 0's main
   thread, while rank 0's other thread waits inside the same spawn. */
static char self_path[4096];
static MPI_Comm two, spawned;
static void spawn_on_two(void) {
  char *child_argv[] = {"child", NULL};
  CHECK(MPI_Comm_spawn(self_path, child_argv, 1, MPI_INFO_NULL, 1, two, &spawned,
                       MPI_ERRCODES_IGNORE) == MPI_SUCCESS);
}
static void spawn_beside_exchange(void) {
  CHECK(realpath("/proc/self/exe", self_path) != NULL);
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two) ==
        MPI_SUCCESS);
  if (rank == 0) {
    first_then(spawn_on_two, exchange_world);
  } else {
    exchange_world();
    if (rank == 1) spawn_on_two();
  }
  if (rank < 2) {
    int v = 42;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, rank == 1 ? MPI_ROOT : MPI_PROC_NULL, spawned) == MPI_SUCCESS);
    CHECK(MPI_Comm_disconnect(&spawned) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&two) == MPI_SUCCESS);
  }
}

/* A join over a loopback connection of ranks 0 and 1, where rank 1 joins only after an
   exchange that needs rank 0's main thread, while rank 0's other thread waits in the join. */
static int join_fd = -1;
static MPI_Comm joined;
static void join_now(void) { CHECK(MPI_Comm_join(join_fd, &joined) == MPI_SUCCESS); }
static void join_beside_exchange(void) {
  struct sockaddr_in a = {0};
  socklen_t alen = sizeof a;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (rank == 0) {
    int l = socket(AF_INET, SOCK_STREAM, 0), port;
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
    CHECK(getsockname(l, (struct sockaddr *)&a, &alen) == 0);
    port = ntohs(a.sin_port);
    CHECK(MPI_Send(&port, 1, MPI_INT, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS);
    join_fd = accept(l, NULL, NULL);
    close(l);
  } else if (rank == 1) {
    int port;
    CHECK(MPI_Recv(&port, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    a.sin_port = htons(port);
    join_fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(join_fd, (struct sockaddr *)&a, sizeof a) == 0);
  }
  if (rank == 0) {
    CHECK(join_fd >= 0);
    first_then(join_now, exchange_world);
  } else {
    exchange_world();
    if (rank == 1) join_now();
  }
  if (rank < 2) {
    int remote = 0;
    CHECK(MPI_Comm_remote_size(joined, &remote) == MPI_SUCCESS && remote == 1);
    CHECK(MPI_Comm_disconnect(&joined) == MPI_SUCCESS);
    close(join_fd);
  }
}

/* The child of spawn_beside_exchange. */
static int spawned_child(void) {
  MPI_Comm parent;
  int v = 0;
  CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL);
  CHECK(MPI_Bcast(&v, 1, MPI_INT, 1, parent) == MPI_SUCCESS && v == 42);
  CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS);
  MPI_Finalize();
  return 0;
}

/* Passive-target locks: the odd rank of a pair holds the even rank's lock (it puts the round
   number there) until a message from the even rank comes, which the even rank's main thread
   sends only once its other thread waits in MPI_Win_lock (then MPI_Win_lock_all) for that
   lock. */
static MPI_Win lock_win;
static int *lock_base;
static int lock_round;

static void lock_own(void) {
  if (lock_round == 0) {
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, lock_win) == MPI_SUCCESS);
    CHECK(*lock_base == 1);
    CHECK(MPI_Win_unlock(rank, lock_win) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Win_lock_all(0, lock_win) == MPI_SUCCESS);
    CHECK(*lock_base == 2);
    CHECK(MPI_Win_unlock_all(lock_win) == MPI_SUCCESS);
  }
}

static void release_peer_lock(void) {
  int go = 1;
  CHECK(MPI_Send(&go, 1, MPI_INT, rank + 1, 77, MPI_COMM_WORLD) == MPI_SUCCESS);
}

static void locks_beside_exchange(void) {
  CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &lock_base,
                         &lock_win) == MPI_SUCCESS);
  *lock_base = 0;
  for (lock_round = 0; lock_round < 2; lock_round++) {
    int value = lock_round + 1, go;
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank % 2 == 1) {
      CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank - 1, 0, lock_win) == MPI_SUCCESS);
      CHECK(MPI_Put(&value, 1, MPI_INT, rank - 1, 0, 1, MPI_INT, lock_win) == MPI_SUCCESS);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank % 2 == 1) {
      CHECK(MPI_Recv(&go, 1, MPI_INT, rank - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
      CHECK(MPI_Win_unlock(rank - 1, lock_win) == MPI_SUCCESS);
    } else if (rank + 1 < size) {
      first_then(lock_own, release_peer_lock);
    } else {
      *lock_base = value; /* an odd size: the last rank has no pair */
    }
  }
  CHECK(MPI_Win_free(&lock_win) == MPI_SUCCESS);
}

/* A buffered send too large to go eagerly: the even rank's thread waits in MPI_Buffer_detach
   for it to leave, which its receiver lets happen only after a message from the even rank's
   main thread, sent once that thread waits. */
#define BSEND_INTS (1 << 18)
static int *bsend_data;

static void bsend_then_detach(void) {
  int size_bytes = BSEND_INTS * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  char *buf = malloc(size_bytes), *back;
  int back_size;
  CHECK(MPI_Buffer_attach(buf, size_bytes) == MPI_SUCCESS);
  CHECK(MPI_Bsend(bsend_data, BSEND_INTS, MPI_INT, rank + 1, 79, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS);
  CHECK(back == buf && back_size == size_bytes);
  free(buf);
}

static void release_peer_receive(void) {
  int go = 1;
  CHECK(MPI_Send(&go, 1, MPI_INT, rank + 1, 78, MPI_COMM_WORLD) == MPI_SUCCESS);
}

static void detach_beside_exchange(void) {
  bsend_data = malloc(BSEND_INTS * sizeof(int));
  if (rank % 2 == 1) {
    int go;
    CHECK(MPI_Recv(&go, 1, MPI_INT, rank - 1, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
    CHECK(MPI_Recv(bsend_data, BSEND_INTS, MPI_INT, rank - 1, 79, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < BSEND_INTS; i++) CHECK(bsend_data[i] == (i ^ (rank - 1)));
  } else if (rank + 1 < size) {
    for (int i = 0; i < BSEND_INTS; i++) bsend_data[i] = i ^ rank;
    first_then(bsend_then_detach, release_peer_receive);
  }
  free(bsend_data);
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
}

static void (*making)(MPI_Comm, int);
static void making_c(void) { making(comm_c, 500); }
static void making_d(void) { making(comm_d, 600); }

static int making_mode(const char *dir) {
  void (*kinds[])(MPI_Comm, int) = {make_split, make_topologies, make_intercomm, make_windows,
                                    make_file};
  const char *names[] = {"split", "topologies", "intercomm", "windows", "file"};
  int provided_now;
  CHECK(MPI_Query_thread(&provided_now) == MPI_SUCCESS && provided_now == MPI_THREAD_MULTIPLE);
  CHECK(size >= 2 && strlen(dir) < 150);
  strcpy(file_dir, dir);
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_c) == MPI_SUCCESS);
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_d) == MPI_SUCCESS);
  for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    making = kinds[k];
    if (rank % 2 == 0) first_then(making_c, making_d);
    else first_then(making_d, making_c);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank == 0) printf("threads: making %s ok\n", names[k]), fflush(stdout);
  }
  MPI_Comm_free(&comm_c);
  MPI_Comm_free(&comm_d);
  accept_beside_exchange();
  if (rank == 0) printf("threads: making port ok\n"), fflush(stdout);
  spawn_beside_exchange();
  if (rank == 0) printf("threads: making spawn ok\n"), fflush(stdout);
  join_beside_exchange();
  if (rank == 0) printf("threads: making join ok\n"), fflush(stdout);
  locks_beside_exchange();
  if (rank == 0) printf("threads: making locks ok\n"), fflush(stdout);
  detach_beside_exchange();
  if (rank == 0) printf("threads: making detach ok\n"), fflush(stdout);
  if (rank == 0) printf("threads: making ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}

int main(int argc, char **argv) {
  int provided, flag;
  int funneled = argc > 1 && strcmp(argv[1], "funneled") == 0;
  int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (multiple) {
    CHECK(provided == MPI_THREAD_MULTIPLE);
    return multiple_mode();
  }
  if (argc > 1 && strcmp(argv[1], "child") == 0) return spawned_child();
  if (argc > 2 && strcmp(argv[1], "making") == 0) {
    CHECK(provided == MPI_THREAD_MULTIPLE);
    return making_mode(argv[2]);
  }
  if (funneled) {
    CHECK(provided == MPI_THREAD_FUNNELED);
    pthread_t t;
    pthread_create(&t, NULL, funneled_caller, NULL);
    pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
  }
  CHECK(provided >= MPI_THREAD_SERIALIZED);
  int queried;
  CHECK(MPI_Query_thread(&queried) == MPI_SUCCESS && queried == provided);
  CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag);

  ring_out = 1000 * rank - 1;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS);
  CHECK(MPI_Type_contiguous(2, MPI_INT, &pair) == MPI_SUCCESS && MPI_Type_commit(&pair) == 0);
  MPI_Irecv(&ring_in, 1, MPI_INT, (rank + size - 1) % size, 99, comm, &ring[0]);
  MPI_Isend(&ring_out, 1, MPI_INT, (rank + 1) % size, 99, comm, &ring[1]);

  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, taker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);

  /* the last round's requests and objects, back in the main thread */
  CHECK(MPI_Waitall(2, ring, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(ring_in == 1000 * ((rank + size - 1) % size) + ROUNDS - 1);
  CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS && MPI_Type_free(&pair) == MPI_SUCCESS);

  /* a generalized request completed by a thread while this one waits for it */
  MPI_Request g;
  CHECK(MPI_Grequest_start(query, release, cancel, NULL, &g) == MPI_SUCCESS);
  pthread_t c;
  pthread_create(&c, NULL, completer, &g);
  CHECK(MPI_Wait(&g, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  pthread_join(c, NULL);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("threads: ok on %d ranks, %d rounds in %d threads\n", size, ROUNDS, THREADS);
  MPI_Finalize();
  return 0;
}
