/* learner/ops-f32.c — float instantiation of ops-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 0
#include "ops-impl.c"
