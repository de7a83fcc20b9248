/* learner/model-train-f32.c — float instantiation of model-train-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 0
#include "model-train-impl.c"
