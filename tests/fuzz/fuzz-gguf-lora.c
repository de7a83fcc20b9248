/* tests/fuzz/fuzz-gguf-lora.c — libFuzzer target for llama.cpp GGUF LoRA adapters, as
 * `hanzo --lora FILE.gguf`, the app and the learner read them: the input is the GGUF file,
 * written to a private temporary folder (removed at exit) and read by hz_lora_read_gguf()
 * (engine/lora-adapter.c) for the small Llama shape of shapes.c — the header checks
 * (general.type, adapter.type, architecture), rank and targets from layer 0, every slot's
 * ne against the model, tensor types, finite values and left-over tensors.
 *
 * Invariants: an accepted adapter has rank >= 1, at least one target, the model's layer
 * count, a finite positive scaling and finite parameters, and fits the model
 * (hz_lora_check_model); a refused one carries an error with a message. Any violation
 * aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "shapes.h"
#include "lora-adapter.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-gguf-lora: invariant failed: %s (%s:%d)\n", #cond, __FILE__,   \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static char *dir, *path;

static void
remove_dir (void)
{
  g_unlink (path);
  g_rmdir (dir);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!dir)
    {
      /* memory-backed when there is /dev/shm: every input writes the file */
      const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
      g_autofree char *tmpl = g_build_filename (base, "hz-fuzz-gguf-lora-XXXXXX", NULL);
      dir = g_mkdtemp (g_steal_pointer (&tmpl));
      CHECK (dir != NULL);
      path = g_build_filename (dir, "adapter.gguf", NULL);
      atexit (remove_dir);
    }
  CHECK (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));

  const HzHparams hp = fuzz_adapter_hparams ();
  GError *error = NULL;
  HzLora *lora = hz_lora_read_gguf (path, &hp, &error);
  if (lora)
    {
      CHECK (error == NULL);
      CHECK (lora->config.r >= 1 && lora->config.targets != 0);
      CHECK (lora->n_layer == hp.n_layer);
      CHECK (isfinite (lora->scaling) && lora->scaling > 0);
      for (gsize i = 0; i < lora->n_params; i++)
        CHECK (isfinite (lora->params[i]));
      CHECK (hz_lora_check_model (lora, &hp, NULL));
      hz_lora_free (lora);
    }
  else
    {
      CHECK (error != NULL && error->message[0]);
      g_clear_error (&error);
    }
  return 0;
}
