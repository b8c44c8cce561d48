/* The standard ABI header name: the same declarations as mpi.h. */
#include "mpi.h"
