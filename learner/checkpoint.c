/* learner/checkpoint.c — resumable training state (see checkpoint.h). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "hanzo/atomic-file.h"
#include "checkpoint.h"
#include "adapter-io.h"

#define MAGIC "HZCKPT01"

gboolean
hz_checkpoint_save (const char *dir, const HzLora *lora, const HzAdamW *opt, const char *tag,
                    GError **error)
{
  if (!hz_lora_save_peft (lora, dir, HZ_ST_F32, NULL, error))
    return FALSE;
  GByteArray *b = g_byte_array_new ();
  const int64_t hdr[2] = { GINT64_TO_LE (opt->step), GINT64_TO_LE ((int64_t) opt->n) };
  g_byte_array_append (b, (const guint8 *) MAGIC, 8);
  g_byte_array_append (b, (const guint8 *) hdr, sizeof hdr);
  G_STATIC_ASSERT (G_BYTE_ORDER == G_LITTLE_ENDIAN);   /* moments written as in memory */
  g_byte_array_append (b, (const guint8 *) lora->params, sizeof (float) * opt->n);
  g_byte_array_append (b, (const guint8 *) opt->m, sizeof (float) * opt->n);
  g_byte_array_append (b, (const guint8 *) opt->v, sizeof (float) * opt->n);
  g_byte_array_append (b, (const guint8 *) tag, strlen (tag));
  g_autofree char *path = g_build_filename (dir, "optimizer.bin", NULL);
  /* whole or not at all, even if the learner is killed mid-write (atomic-file.h) */
  const gboolean ok = hz_atomic_file_set_contents (path, b->data, b->len, 0666, error);
  g_byte_array_unref (b);
  return ok;
}

gboolean
hz_checkpoint_load (const char *dir, HzLora *lora, HzAdamW *opt, const char *tag,
                    GError **error)
{
  g_autofree char *path = g_build_filename (dir, "optimizer.bin", NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return FALSE;
  if (!g_file_get_contents (path, &data, &len, error))
    return FALSE;
  return hz_checkpoint_load_from_data (data, len, lora, opt, tag);
}

gboolean
hz_checkpoint_load_from_data (const void *data, gsize len, HzLora *lora, HzAdamW *opt,
                              const char *tag)
{
  const guint8 *d = data;
  int64_t hdr[2];
  if (len < 8 + sizeof hdr || memcmp (d, MAGIC, 8) != 0)
    return FALSE;
  memcpy (hdr, d + 8, sizeof hdr);
  const int64_t step = GINT64_FROM_LE (hdr[0]), n = GINT64_FROM_LE (hdr[1]);
  if (step < 0 || n != (int64_t) opt->n || n != (int64_t) lora->n_params)
    return FALSE;
  const gsize body = 8 + sizeof hdr + 3 * sizeof (float) * (gsize) n;
  if (len < body || len - body != strlen (tag) || memcmp (d + body, tag, len - body) != 0)
    return FALSE;
  /* copied out before use: `data` need not be aligned for float */
  g_autofree float *f = g_new (float, 3 * (gsize) n);
  memcpy (f, d + 8 + sizeof hdr, 3 * sizeof (float) * (gsize) n);
  /* a state that would poison training is no checkpoint: finite parameters and first
   * moments, second moments (means of squared gradients) finite and >= 0 */
  for (gsize i = 0; i < 3 * (gsize) n; i++)
    if (!isfinite (f[i]) || (i >= 2 * (gsize) n && f[i] < 0))
      return FALSE;
  memcpy (lora->params, f, sizeof (float) * n);
  memcpy (opt->m, f + n, sizeof (float) * n);
  memcpy (opt->v, f + 2 * n, sizeof (float) * n);
  opt->step = step;
  return TRUE;
}

void
hz_checkpoint_clear (const char *dir)
{
  static const char *const files[] = {
    "optimizer.bin", "adapter_model.safetensors", "adapter_config.json",
  };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}
