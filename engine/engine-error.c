/* engine/engine-error.c — the HZ_ENGINE_ERROR quark (hanzo/engine-error.h), on the ground
 * floor so that the files below model-context.c report errors without calling up into it. */
#include "hanzo/engine-error.h"

G_DEFINE_QUARK (hz-engine-error-quark, hz_engine_error)
