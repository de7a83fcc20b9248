/* learner/train-ops-f32.c — float instantiation of train-ops-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 0
#include "train-ops-impl.c"
