/* tests/fuzz/fuzz-gguf.c — libFuzzer target for the GGUF reader (engine/gguf.c).
 *
 * Feeds the input to hz_gguf_open_from_data(); on success walks every key/value (type,
 * rendering, array accessors, typed getters) and every tensor (lookup by name, first and
 * last data byte), and checks the reader's invariants: tensor data lies inside the buffer,
 * after the data offset, aligned, and rejected inputs carry an HZ_GGUF_ERROR. Then the
 * model hyperparameters (engine/llm.h hz_hparams_read: every architecture's keys, Gemma's
 * sliding-window pattern arrays among them) are read: refused with a message, or
 * dimensions within their bounds and the window rule's KV bytes computable. Any
 * violation aborts, which libFuzzer reports as a crash.
 *
 * Built as a fuzzer only with -Dfuzzing=true (clang, see tools/fuzz.sh); always built into
 * the corpus runner (run-corpus.c) that `meson test fuzz-gguf-corpus` runs. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "llm.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-gguf: invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static volatile guint8 sink;

static void
walk_kv (const HzGguf *g, int64_t i)
{
  HzGgufStr key = hz_gguf_key (g, i);
  CHECK (key.ptr != NULL);
  g_autofree char *name = g_strndup (key.ptr, key.len);
  /* A key with an embedded NUL cannot be found by its C string; all others must be. */
  if (strlen (name) == key.len)
    CHECK (hz_gguf_find_key (g, name) == i);

  HzGgufType type = hz_gguf_kv_type (g, i);
  g_autofree char *text = hz_gguf_value_to_string (g, i, 16);
  CHECK (text != NULL);

  uint32_t u32; int64_t i64; float f; gboolean b;
  (void) hz_gguf_get_u32 (g, name, &u32);
  (void) hz_gguf_get_i64 (g, name, &i64);
  (void) hz_gguf_get_f32 (g, name, &f);
  (void) hz_gguf_get_bool (g, name, &b);
  g_free (hz_gguf_get_str (g, name));

  if (type != HZ_GGUF_TYPE_ARRAY)
    return;
  HzGgufType et = hz_gguf_arr_type (g, i);
  uint64_t n = hz_gguf_arr_n (g, i);
  const guint8 *p = hz_gguf_arr_data (g, i);
  const guint8 *base = hz_gguf_file_data (g);
  if (et == HZ_GGUF_TYPE_STRING)
    {
      for (uint64_t j = 0; j < n; j++)
        {
          HzGgufStr s = hz_gguf_arr_str (g, i, j);
          CHECK (s.ptr != NULL);
          CHECK ((const guint8 *) s.ptr >= base &&
                 (const guint8 *) s.ptr + s.len <= base + hz_gguf_file_size (g));
          if (s.len)
            sink ^= (guint8) s.ptr[s.len - 1];
        }
      CHECK (hz_gguf_arr_str (g, i, n).ptr == NULL);
    }
  else if (et != HZ_GGUF_TYPE_ARRAY)
    {
      CHECK (p != NULL && p >= base && p <= base + hz_gguf_file_size (g));
      if (n)
        sink ^= p[0];
    }
  else
    CHECK (p == NULL);
}

static void
walk_tensor (const HzGguf *g, int64_t i)
{
  const HzGgufTensor *t = hz_gguf_tensor (g, i);
  CHECK (t != NULL);
  CHECK (t->n_dims >= 1 && t->n_dims <= 4);
  for (int d = 0; d < 4; d++)
    CHECK (t->ne[d] >= 1);
  CHECK (t->offset % hz_gguf_alignment (g) == 0);
  const guint8 *base = hz_gguf_file_data (g);
  const guint8 *p = t->data;
  CHECK (p == base + hz_gguf_data_offset (g) + t->offset);
  CHECK (hz_gguf_data_offset (g) + t->offset + t->n_bytes <= hz_gguf_file_size (g));
  if (t->n_bytes)
    sink ^= p[0] ^ p[t->n_bytes - 1];
  g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
  if (strlen (name) == t->name.len)
    CHECK (hz_gguf_find_tensor (g, name) == t);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  HzGguf *g = hz_gguf_open_from_data (size ? data : NULL, size, &error);
  if (!g)
    {
      CHECK (error != NULL && error->domain == HZ_GGUF_ERROR && error->message[0]);
      g_error_free (error);
      return 0;
    }
  CHECK (error == NULL);
  CHECK (hz_gguf_version (g) == 2 || hz_gguf_version (g) == 3);
  uint32_t align = hz_gguf_alignment (g);
  CHECK (align != 0 && (align & (align - 1)) == 0);
  CHECK (hz_gguf_data_offset (g) % align == 0);
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    walk_kv (g, i);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    walk_tensor (g, i);
  HzHparams hp;
  if (hz_hparams_read (&hp, g, &error))
    {
      CHECK (hp.n_layer >= 1 && hp.n_layer <= HZ_MAX_LAYER && hp.n_embd >= 1 && hp.n_swa >= 0);
      for (int il = 0; il < hp.n_layer; il++)
        CHECK (hz_layer_kv_cells (&hp, il, 4096) >= 1 && hz_layer_kv_cells (&hp, il, 4096) <= 4096);
      sink ^= (guint8) hz_hparams_kv_bytes (&hp, 4096, 4);
    }
  else
    {
      CHECK (error != NULL && error->message[0]);
      g_clear_error (&error);
    }
  hz_gguf_free (g);
  return 0;
}
