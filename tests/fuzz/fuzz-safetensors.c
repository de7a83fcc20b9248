/* tests/fuzz/fuzz-safetensors.c — libFuzzer target for the safetensors reader
 * (engine/safetensors.c), which reads PEFT adapters, Hugging Face checkpoints and the
 * federation's uploads.
 *
 * Feeds the input to hz_safetensors_new_from_bytes(); on success walks every tensor and
 * checks the reader's invariants: a known dtype, 1..HZ_ST_MAX_DIMS non-negative
 * dimensions whose product times the dtype size is n_bytes, data inside the buffer after
 * the header, lookup by name finds the same tensor, tensors in offset order and disjoint;
 * a rejected input carries an HZ_SAFETENSORS_ERROR with a message. Any violation aborts. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-safetensors: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static volatile guint8 sink;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  GError *error = NULL;
  HzSafetensors *st = hz_safetensors_new_from_bytes (bytes, &error);
  if (!st)
    {
      CHECK (error != NULL && error->domain == HZ_SAFETENSORS_ERROR && error->message[0]);
      g_error_free (error);
      return 0;
    }
  CHECK (error == NULL);
  const guint8 *base = g_bytes_get_data (bytes, NULL);
  const guint64 hdr = hz_safetensors_header_size (st);
  CHECK (hdr <= size - 8);
  const guint8 *prev_end = base + 8 + hdr;
  for (guint i = 0; i < hz_safetensors_n_tensors (st); i++)
    {
      const HzSafetensor *t = hz_safetensors_tensor (st, i);
      CHECK (t != NULL && t->name != NULL);
      CHECK (g_utf8_validate (t->name, -1, NULL));
      CHECK (t->dtype <= HZ_ST_BOOL);
      CHECK (t->n_dims <= HZ_ST_MAX_DIMS);
      guint64 n = 1;
      for (guint d = 0; d < t->n_dims; d++)
        {
          CHECK (t->shape[d] >= 0);
          CHECK (g_uint64_checked_mul (&n, n, (guint64) t->shape[d]));
        }
      guint64 nb;
      CHECK (g_uint64_checked_mul (&nb, n, hz_st_dtype_size (t->dtype)));
      CHECK (nb == t->n_bytes);
      const guint8 *p = t->data;
      if (t->n_bytes)
        {
          CHECK (p >= prev_end && p + t->n_bytes <= base + size);
          sink ^= p[0] ^ p[t->n_bytes - 1];
          prev_end = p + t->n_bytes;
        }
      CHECK (hz_safetensors_find (st, t->name) == t);
      CHECK (hz_st_dtype_name (t->dtype) != NULL);
    }
  const char *fmt = hz_safetensors_metadata (st, "format");
  if (fmt)
    CHECK (g_utf8_validate (fmt, -1, NULL));
  CHECK (hz_safetensors_find (st, "__metadata__") == NULL);
  hz_safetensors_free (st);
  return 0;
}
