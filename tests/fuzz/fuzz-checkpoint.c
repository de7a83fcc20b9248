/* tests/fuzz/fuzz-checkpoint.c — libFuzzer target for the learner's checkpoint file
 * (learner/checkpoint.c, optimizer.bin: magic, step, n, params/m/v, the job's tag), read
 * by hz_checkpoint_load_from_data() into adapters of the small Llama shape of shapes.c
 * (FUZZ_CHECKPOINT_TARGETS at FUZZ_CHECKPOINT_RANK) and their AdamW state.
 *
 * Invariants: a refused input leaves the adapters and the optimiser untouched (a sentinel
 * value everywhere); an accepted one sets a step >= 0, finite parameters and first
 * moments, second moments finite and >= 0, and holds exactly the floats of the input (its
 * size is then the header, 3 n floats and the tag). Any violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "shapes.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-checkpoint: invariant failed: %s (%s:%d)\n", #cond, __FILE__,  \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

#define SENTINEL 7.25f

static HzLora *lora;
static HzAdamW *opt;

static void
reset_state (void)
{
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] = opt->m[i] = opt->v[i] = SENTINEL;
  opt->step = 12345;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!lora)
    {
      const HzHparams hp = fuzz_adapter_hparams ();
      HzLoraConfig cfg;
      hz_lora_config_init (&cfg);
      cfg.r = FUZZ_CHECKPOINT_RANK;
      cfg.targets = FUZZ_CHECKPOINT_TARGETS;
      lora = hz_lora_alloc (&hp, &cfg, FALSE, NULL);
      CHECK (lora != NULL);
      HzAdamWParams ap;
      hz_adamw_params_init (&ap);
      opt = hz_adamw_new (lora->n_params, &ap);
      CHECK (opt != NULL);
    }
  reset_state ();
  if (!hz_checkpoint_load_from_data (data, size, lora, opt, FUZZ_CHECKPOINT_TAG))
    {
      CHECK (opt->step == 12345);
      for (gsize i = 0; i < lora->n_params; i++)
        CHECK (lora->params[i] == SENTINEL && opt->m[i] == SENTINEL && opt->v[i] == SENTINEL);
      return 0;
    }
  CHECK (opt->step >= 0);
  for (gsize i = 0; i < lora->n_params; i++)
    CHECK (isfinite (lora->params[i]) && isfinite (opt->m[i]) && isfinite (opt->v[i]) &&
           opt->v[i] >= 0);
  /* what was read is what the file said: params, m, v in order after the 24-byte header */
  CHECK (size == 24 + 3 * 4 * lora->n_params + strlen (FUZZ_CHECKPOINT_TAG));
  CHECK (memcmp (data + 24, lora->params, 4 * lora->n_params) == 0);
  CHECK (memcmp (data + 24 + 4 * lora->n_params, opt->m, 4 * lora->n_params) == 0);
  CHECK (memcmp (data + 24 + 8 * lora->n_params, opt->v, 4 * lora->n_params) == 0);
  return 0;
}
