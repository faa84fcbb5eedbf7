#ifndef SNIFFMEET_CLIBPQ_SHIM_H
#define SNIFFMEET_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
