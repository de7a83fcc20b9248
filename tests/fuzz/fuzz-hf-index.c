/* tests/fuzz/fuzz-hf-index.c — libFuzzer target for sharded Hugging Face checkpoints
 * (engine/quantize.c): model.safetensors.index.json, whose "weight_map" names the shard of
 * every tensor, and the shards it names. The input is
 *   model.safetensors.index.json NUL model-00001-of-00002.safetensors NUL
 *   model-00002-of-00002.safetensors
 * The folder also holds the fixed config.json
 * (qwen2, no q/k permutation) and tokenizer files of shapes.h. It is opened with
 * hz_isq_open(); an accepted folder is converted to Q8_0 (hz_isq_convert).
 *
 * Invariants: a refused folder carries an error message; an accepted one has metadata with
 * general.architecture, and once converted one tensor per name. Any violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "quantize.h"
#include "shapes.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-hf-index: invariant failed: %s (%s:%d)\n", #cond, __FILE__,    \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

/* the parts of the input, in order, then the fixed files */
static const char *const files[] = {
  "model.safetensors.index.json", "model-00001-of-00002.safetensors",
  "model-00002-of-00002.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
};
enum { N_PARTS = 3 };
static char *dir;

static void
remove_dir (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

static void
put (const char *name, const void *data, gsize n)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  CHECK (g_file_set_contents (path, data, (gssize) n, NULL));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!dir)
    {
      /* memory-backed when there is /dev/shm: every input writes three files */
      const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
      g_autofree char *tmpl = g_build_filename (base, "hz-fuzz-hf-index-XXXXXX", NULL);
      dir = g_mkdtemp (g_steal_pointer (&tmpl));
      CHECK (dir != NULL);
      atexit (remove_dir);
      g_autofree char *cfg = fuzz_hf_config_json ("qwen2", "");
      put ("config.json", cfg, strlen (cfg));
      put ("tokenizer.json", fuzz_hf_tokenizer_json, strlen (fuzz_hf_tokenizer_json));
      put ("tokenizer_config.json", fuzz_hf_tokenizer_config_json,
           strlen (fuzz_hf_tokenizer_config_json));
    }
  const char *p = (const char *) data, *end = p + size;
  const char *nul = memchr (p, '\0', size);
  const char *index_end = nul ? nul : end;
  const char *s1 = nul ? nul + 1 : end;
  guint32 n1 = 0;
  if (end - s1 >= 4)
    {
      memcpy (&n1, s1, 4);
      n1 = GUINT32_FROM_LE (n1);
      s1 += 4;
    }
  else
    s1 = end;
  const char *e1 = (gsize) (end - s1) < n1 ? end : s1 + n1;
  const char *starts[N_PARTS] = { p, s1, e1 }, *ends[N_PARTS] = { index_end, e1, end };
  for (gsize i = 0; i < N_PARTS; i++)
    {
      if (ends[i] > starts[i])
        put (files[i], starts[i], (gsize) (ends[i] - starts[i]));
      else
        {
          g_autofree char *path = g_build_filename (dir, files[i], NULL);
          g_unlink (path);
        }
    }

  GError *error = NULL;
  g_autoptr (HzIsqModel) m = hz_isq_open (dir, NULL, &error);
  if (!m)
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return 0;
    }
  const HzGguf *g = hz_isq_model_gguf (m);
  CHECK (g != NULL);
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  CHECK (arch != NULL);
  if (!hz_isq_convert (m, "Q8_0", 1, &error))
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return 0;
    }
  /* one tensor per name: a tensor in two shards is refused, not lost */
  CHECK (g_hash_table_size (hz_isq_model_tensors (m)) == hz_isq_model_stats (m)->n_tensors);
  return 0;
}
