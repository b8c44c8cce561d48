/* Communicator and group management: names, attributes (predefined and user keyvals with
   copy and delete functions), groups and their set operations, Comm_create, compare,
   split_type, info objects, handle conversion. Any number of ranks >= 2. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int deleted = 0;
static int del_fn(MPI_Comm c, int k, void *v, void *extra) {
  (void)c, (void)k, (void)v, (void)extra;
  deleted++;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  int rank, size, flag, r, n;
  char name[MPI_MAX_OBJECT_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Comm_get_name(MPI_COMM_WORLD, name, &n);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
  int *tag_ub, *usize;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag && *tag_ub >= 32767);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
  if (flag) CHECK(*usize >= size); /* optional: MPICH's mpiexec sets it only when asked */

  /* user attributes follow MPI_Comm_dup through the copy function, deleted on free */
  int key;
  static int payload = 99;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_fn, &key, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, key, &payload);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int *got;
  MPI_Comm_get_attr(dup, key, &got, &flag);
  CHECK(flag && got == &payload);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &r);
  CHECK(r == MPI_CONGRUENT);
  MPI_Comm_compare(dup, dup, &r);
  CHECK(r == MPI_IDENT);
  MPI_Comm_set_name(dup, "my dup");
  MPI_Comm_get_name(dup, name, &n);
  CHECK(strcmp(name, "my dup") == 0 && n == 6);
  MPI_Comm_free(&dup);
  CHECK(deleted == 1 && dup == MPI_COMM_NULL);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
  CHECK(deleted == 2);
  MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
  CHECK(!flag);
  MPI_Comm_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID);

  /* groups */
  MPI_Group world, evens, odds, all, none, back;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(world, &n);
  MPI_Group_rank(world, &r);
  CHECK(n == size && r == rank);
  int range[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(world, 1, range, &evens);
  MPI_Group_range_excl(world, 1, range, &odds);
  MPI_Group_size(evens, &n);
  CHECK(n == (size + 1) / 2);
  MPI_Group_rank(evens, &r);
  CHECK(r == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED));
  MPI_Group_union(evens, odds, &all);
  MPI_Group_compare(all, world, &r);
  CHECK(r == MPI_SIMILAR || (size <= 2 && r == MPI_IDENT));
  MPI_Group_intersection(evens, odds, &none);
  CHECK(none == MPI_GROUP_EMPTY);
  MPI_Group_difference(world, odds, &back);
  MPI_Group_compare(back, evens, &r);
  CHECK(r == MPI_IDENT);
  int from[2] = {0, 1}, to[2];
  MPI_Group_translate_ranks(world, 2, from, evens, to);
  CHECK(to[0] == 0 && to[1] == MPI_UNDEFINED);
  int firsttwo[2] = {0, 1};
  MPI_Group two;
  MPI_Group_incl(world, 2, firsttwo, &two);
  MPI_Comm sub;
  MPI_Comm_create(MPI_COMM_WORLD, two, &sub);
  if (rank < 2) {
    MPI_Comm_size(sub, &n);
    CHECK(n == 2);
    MPI_Comm_free(&sub);
  } else {
    CHECK(sub == MPI_COMM_NULL);
  }
  MPI_Group_free(&two);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&all);
  MPI_Group_free(&back);
  MPI_Group_free(&world);
  CHECK(world == MPI_GROUP_NULL);

  /* split_type: every rank of this job shares its node's memory with the ranks there */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &n);
  CHECK(n >= 1 && n <= size);
  MPI_Comm_free(&node);

  /* info */
  MPI_Info info, copy;
  MPI_Info_create(&info);
  MPI_Info_set(info, "host", "node7");
  MPI_Info_set(info, "wdir", "/tmp");
  MPI_Info_set(info, "host", "node8");
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 2);
  char key0[MPI_MAX_INFO_KEY], val[64];
  MPI_Info_get_nthkey(info, 0, key0);
  CHECK(strcmp(key0, "host") == 0);
  int buflen = sizeof val;
  MPI_Info_get_string(info, "host", &buflen, val, &flag);
  CHECK(flag && strcmp(val, "node8") == 0 && buflen == 6);
  MPI_Info_dup(info, &copy);
  MPI_Info_delete(copy, "host");
  MPI_Info_get_nkeys(copy, &n);
  CHECK(n == 1);
  buflen = sizeof val;
  MPI_Info_get_string(copy, "host", &buflen, val, &flag);
  CHECK(!flag);
  MPI_Info_free(&info);
  MPI_Info_free(&copy);
  CHECK(info == MPI_INFO_NULL);
  buflen = sizeof val;
  MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &buflen, val, &flag);
  if (flag) CHECK(atoi(val) == size); /* the keys of MPI_INFO_ENV are optional */

  /* handle conversion */
  CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
  CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("comm_mgmt: ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
