/* learner/ops-f64.c — double instantiation of ops-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 1
#include "ops-impl.c"
