/* MPI_Comm_spawn with ibdyn's info key ibdyn_prestart=1: after the first spawn the node
   daemon keeps a copy of the command started and waiting; the second spawn's child is that
   copy (the child reports its pid, the parent found the waiting copy's pid in /proc). The
   copy is forked from a template of the command, which shows the same arguments and
   environment in /proc: the copy is the one that opened its shared-memory queue ahead. */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

/* True if file `path` contains the `n` bytes at `needle`. */
static int file_has(const char *path, const char *needle, size_t n) {
  static char buf[1 << 16];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(buf + i, needle, n) == 0) return 1;
  return 0;
}

/* The pid of a waiting copy whose arguments hold `marker`, or 0. */
static int waiting_copy(const char *marker) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int found = 0;
  char path[64];
  while (d && !found && (e = readdir(d))) {
    int pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    if (!file_has(path, marker, strlen(marker))) continue;
    snprintf(path, sizeof path, "/proc/%d/environ", pid);
    if (!file_has(path, "IBDYN_PRESTARTED=", 17)) continue;
    snprintf(path, sizeof path, "/dev/shm/ibdyn-%d", pid);
    if (access(path, F_OK) == 0) found = pid;
  }
  if (d) closedir(d);
  return found;
}

static int spawn_one(char *self, char *marker, MPI_Info info) {
  char *args[] = {"child", marker, NULL};
  MPI_Comm child;
  int code = -1, pid = 0;
  CHECK(MPI_Comm_spawn(self, args, 1, info, 0, MPI_COMM_SELF, &child, &code) == MPI_SUCCESS);
  CHECK(code == MPI_SUCCESS);
  MPI_Recv(&pid, 1, MPI_INT, 0, 1, child, MPI_STATUS_IGNORE);
  MPI_Comm_disconnect(&child);
  return pid;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    int pid = getpid();
    MPI_Send(&pid, 1, MPI_INT, 0, 1, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  char marker[64];
  snprintf(marker, sizeof marker, "spawn-prestart-%d", (int)getpid());
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "ibdyn_prestart", "1");
  int first = spawn_one(argv[0], marker, info);
  /* The copy is started by the daemon after the first spawn: wait (bounded) until it is. */
  int copy = 0;
  for (int i = 0; i < 6000 && !(copy = waiting_copy(marker)); i++) {
    struct timespec ms = {0, 5000000};
    nanosleep(&ms, NULL);
  }
  CHECK(copy != 0 && copy != first);
  int second = spawn_one(argv[0], marker, info);
  CHECK(second == copy);
  MPI_Info_free(&info);
  printf("spawn_prestart: ok, the second child was the prestarted copy\n");
  MPI_Finalize();
  return 0;
}
