/* learner/real.h — the type-generic machinery of the learner's numeric code.
 *
 * The ops (train-ops-impl.c) and the training forward/backward (model-train-impl.c) are written
 * once over a scalar type REAL and compiled twice: as float (suffix _f32, the production
 * path) and as double (suffix _f64, for finite-difference gradient checks). A translation
 * unit selects the instantiation by defining HZ_REAL_DOUBLE to 0 or 1 before including
 * this header; headers that declare both instantiations include their *-decl.h template
 * twice (see train-ops.h). The wrappers *-f32.c / *-f64.c define HZ_INSTANCE_DOUBLE and include
 * the *-impl.c source, which copies it into HZ_REAL_DOUBLE after its own headers.
 *
 *   REAL        float or double
 *   HZ_R(name)  name_f32 or name_f64
 */
#ifndef HZ_REAL_DOUBLE
#error "define HZ_REAL_DOUBLE (0: float, 1: double) before including real.h"
#endif

#undef REAL
#undef HZ_R
#undef HZ_R_PASTE
#undef HZ_R_PASTE2
#define HZ_R_PASTE2(a, b) a##b
#define HZ_R_PASTE(a, b) HZ_R_PASTE2 (a, b)
#if HZ_REAL_DOUBLE
#define REAL double
#define HZ_R(name) HZ_R_PASTE (name, _f64)
#else
#define REAL float
#define HZ_R(name) HZ_R_PASTE (name, _f32)
#endif
