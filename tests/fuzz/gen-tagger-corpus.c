/* tests/fuzz/gen-tagger-corpus.c — writes the seed inputs of the tagger-weights fuzz corpus
 * (tests/fuzz/corpus/tagger-weights/seed-*; the input layout is in fuzz-tagger-weights.c:
 * flags byte, weights file) with the project's own writer, hz_tagger_serialize(): small
 * valid files (2^8 buckets, each veto mode) with and without the checksum fix-up flag, and
 * a truncated one. Not built by default: `ninja tests/fuzz/gen-tagger-corpus`, then
 * `gen-tagger-corpus tests/fuzz/corpus/tagger-weights`. */
#include <glib.h>
#include <string.h>

#include "hz-tagger.h"

static void
write_seed (const char *dir, const char *name, guint8 flags, const guint8 *file, gsize n)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree guint8 *buf = g_malloc (n + 1);
  buf[0] = flags;
  memcpy (buf + 1, file, n);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, (const char *) buf, (gssize) n + 1, &error))
    g_error ("%s", error->message);
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      g_printerr ("usage: %s CORPUS-DIR (tests/fuzz/corpus/tagger-weights)\n", argv[0]);
      return 2;
    }
  for (guint veto = HZ_TAGGER_VETO_NONE; veto <= HZ_TAGGER_VETO_X; veto++)
    {
      HzTagger *t = hz_tagger_new (8);
      /* a few weights of each tag in every 5th bucket, so that about a fifth have a row */
      for (guint k = 0; k < (guint) HZ_TAG_N << 8; k++)
        t->w[k] = (k / HZ_TAG_N) % 5 == 0 ? (float) ((int) (k * 7919 % 41) - 20) / 4.0f : 0.0f;
      for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
        t->trans[k] = (float) (k % 7) - 3.0f;
      t->scope = veto % 2 ? HZ_TAGGER_SCOPE_SOCIAL : HZ_TAGGER_SCOPE_ALL;
      t->veto = veto;
      t->o_bias = -2.0f;
      t->prose_bias = 4.0f;
      t->veto_margin = veto == HZ_TAGGER_VETO_X ? 1.0f : 0.0f;
      g_autoptr (GBytes) b = hz_tagger_serialize (t);
      hz_tagger_free (t);
      gsize n = 0;
      const guint8 *p = g_bytes_get_data (b, &n);
      g_autofree char *plain = g_strdup_printf ("seed-veto%u", veto);
      g_autofree char *fixed = g_strdup_printf ("seed-veto%u-fixup", veto);
      write_seed (argv[1], plain, 0, p, n);
      write_seed (argv[1], fixed, 1, p, n);
      if (veto == HZ_TAGGER_VETO_X)
        write_seed (argv[1], "seed-truncated", 1, p, n / 2);
    }
  return 0;
}
