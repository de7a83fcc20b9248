/* tests/fuzz/fuzz-adapter.c — libFuzzer target for PEFT adapter folders, as `hanzo --lora
 * DIR`, the app and the learner's federation read them: adapter_config.json parsed by
 * engine/lora-adapter.c (hz_lora_read_peft() for a small Llama shape) and by
 * egress/lora-delta.c (hz_delta_config_new_from_peft()), with adapter_model.safetensors.
 *
 * Input: the JSON text, then optionally a NUL byte and the safetensors file (without one,
 * the safetensors file of the last input that had one is reused, so mutations of the JSON alone are
 * checked against real tensors). Both are written into a private temporary folder (removed
 * at exit). Invariants: an accepted adapter has rank >= 1, at least one target, the model's
 * layer count and finite parameters; a refused one carries an error with
 * a message. Any violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "lora-adapter.h"
#include "lora-delta.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-adapter: invariant failed: %s (%s:%d)\n", #cond, __FILE__,     \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static char *dir, *cfg_path, *st_path;

static void
remove_dir (void)
{
  g_unlink (cfg_path);
  g_unlink (st_path);
  g_rmdir (dir);
}

static void
put (const char *path, const void *data, gsize n)
{
  GError *error = NULL;
  if (!g_file_set_contents (path, data, (gssize) n, &error))
    g_error ("fuzz-adapter: %s", error->message);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!dir)
    {
      dir = g_dir_make_tmp ("hz-fuzz-adapter-XXXXXX", NULL);
      CHECK (dir != NULL);
      cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
      st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
      put (st_path, "", 0);
      atexit (remove_dir);
    }
  const uint8_t *nul = memchr (data, 0, size);
  put (cfg_path, data, nul ? (gsize) (nul - data) : size);
  if (nul)
    put (st_path, nul + 1, size - (gsize) (nul + 1 - data));

  const HzHparams hp = fuzz_adapter_hparams ();
  GError *error = NULL;
  HzLora *lora = hz_lora_read_peft (dir, &hp, &error);
  if (lora)
    {
      CHECK (error == NULL);
      CHECK (lora->config.r >= 1 && lora->config.targets != 0);
      CHECK (lora->n_layer == hp.n_layer);
      for (gsize i = 0; i < lora->n_params; i++)
        CHECK (isfinite (lora->params[i]));
      hz_lora_free (lora);
    }
  else
    {
      CHECK (error != NULL && error->message[0]);
      g_clear_error (&error);
    }

  HzDeltaConfig *c = hz_delta_config_new_from_peft (dir, &error);
  if (c)
    {
      CHECK (hz_delta_config_rank (c) >= 1 && hz_delta_config_n_tensors (c) >= 1);
      hz_delta_config_unref (c);
    }
  else
    {
      CHECK (error != NULL && error->message[0]);
      g_clear_error (&error);
    }
  return 0;
}
