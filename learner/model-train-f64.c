/* learner/model-train-f64.c — double instantiation of model-train-impl.c (see real.h). */
#define HZ_INSTANCE_DOUBLE 1
#include "model-train-impl.c"
