/* learner/train-ops-f64.c — double instantiation of train-ops-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 1
#include "train-ops-impl.c"
