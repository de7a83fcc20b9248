/* hz-gazetteer.c — the built-in word lists (GResource, see data/SOURCE.md) and the lexicon:
 * one open-addressing hash table mapping every lower-cased word of every list (gazetteers
 * and the recognizers' cue lists) to a bit set of the lists that contain it. A token is
 * classified with one probe; recognizers never scan a list. */
#include "hz-redact-private.h"

#include <gio/gio.h>
#include <string.h>

guint64
hz_lex_key (const char *s, gsize n, char *buf, gsize cap, gsize *out_n)
{
  gsize o = 0;
  for (gsize i = 0; i < n;)
    {
      guint8 c = (guint8) s[i];
      if (c < 0x80)
        {
          if (o >= cap)
            return 0;
          buf[o++] = (char) (c + ((guint8) (c - 'A') < 26 ? 32 : 0));
          i++;
          continue;
        }
      /* non-ASCII: Unicode simple lower case, re-encoded (the text is valid UTF-8) */
      const char *nx = g_utf8_next_char (s + i);
      if ((gsize) (nx - s) > n)
        return 0;
      gunichar u = g_unichar_tolower (g_utf8_get_char (s + i));
      char tmp[6];
      int k = g_unichar_to_utf8 (u, tmp);
      if (o + k > cap)
        return 0;
      memcpy (buf + o, tmp, k);
      o += k;
      i = nx - s;
    }
  *out_n = o;
  return hz_key_hash (buf, o);
}

/* murmur3 finaliser: slot index from the low bits, fingerprint from the high bits */
static inline guint64
lex_mix (guint64 h)
{
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xc4ceb9fe1a85ec53);
  h ^= h >> 33;
  return h;
}

static inline guint64
lex_fp (guint64 m)
{
  guint64 fp = m >> (64 - (64 - HZ_LEX_CLS_BITS));
  return (fp ? fp : 1) << HZ_LEX_CLS_BITS;
}

#define LEX_CLS_MASK ((G_GUINT64_CONSTANT (1) << HZ_LEX_CLS_BITS) - 1)

guint64
hz_lex_get (const HzLexicon *lex, guint64 h, const char *key, gsize n)
{
  (void) key;
  (void) n;
  if (!lex->slots || h == 0)
    return 0;
  guint64 m = lex_mix (h), fp = lex_fp (m);
  for (guint32 i = (guint32) m & lex->mask;; i = (i + 1) & lex->mask)
    {
      guint64 v = lex->slots[i];
      if ((v & ~LEX_CLS_MASK) == fp)
        return v & LEX_CLS_MASK;
      if (v == 0)
        return 0;
    }
}

guint64
hz_lex_lookup (const HzLexicon *lex, const char *s, gsize n)
{
  char buf[128];
  gsize kn = 0;
  guint64 h = hz_lex_key (s, n, buf, sizeof buf, &kn);
  return h ? hz_lex_get (lex, h, buf, kn) : 0;
}

/* Add `bits` to the word `s`[0..n) (lower-cased here), in the load-time table. */
static void
lex_add (HzLexicon *lex, const char *s, gsize n, guint64 bits)
{
  char buf[128];
  gsize kn = 0;
  guint64 h = hz_lex_key (s, n, buf, sizeof buf, &kn);
  if (!h || kn == 0)
    return;
  gpointer old = NULL;
  if (g_hash_table_lookup_extended (lex->build, &h, NULL, &old))
    {
      const char *first = g_hash_table_lookup (lex->check, &h);
      if (first && (strlen (first) != kn || memcmp (first, buf, kn) != 0))
        g_warning ("hzredact: lexicon hash collision between '%s' and '%.*s'; the second "
                   "word shares the first's classes", first, (int) kn, buf);
      *(guint64 *) old |= bits;
      return;
    }
  guint64 *hk = g_new (guint64, 1), *bv = g_new (guint64, 1);
  *hk = h;
  *bv = bits;
  g_hash_table_insert (lex->build, hk, bv);
  guint64 *ck = g_new (guint64, 1);
  *ck = h;
  g_hash_table_insert (lex->check, ck, g_strndup (buf, kn));
}

/* Move the load-time table into the compact slot array. */
static void
lex_freeze (HzLexicon *lex)
{
  guint n = g_hash_table_size (lex->build);
  guint32 cap = 1024;
  while (cap < 2 * n)
    cap *= 2;
  lex->slots = g_new0 (guint64, cap);
  lex->mask = cap - 1;
  lex->n = n;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, lex->build);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      guint64 m = lex_mix (*(guint64 *) k), fp = lex_fp (m);
      guint32 i = (guint32) m & lex->mask;
      while (lex->slots[i] && (lex->slots[i] & ~LEX_CLS_MASK) != fp)
        i = (i + 1) & lex->mask;
      lex->slots[i] |= fp | (*(guint64 *) v & LEX_CLS_MASK);
    }
}

/* Add every line of built-in list `name` ('#' lines skipped) with class `bit`. Multi-word
 * entries also mark their first word with `head_bit` (if >= 0). */
static gboolean
lex_add_resource (HzLexicon *lex, const char *name, int bit, int head_bit, GError **error)
{
  g_autofree char *path = g_strconcat ("/ai/hanzo/redact/data/", name, NULL);
  g_autoptr (GBytes) b = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (!b)
    return FALSE;
  gsize n = 0;
  const char *d = g_bytes_get_data (b, &n);
  if (!g_utf8_validate_len (d, n, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "built-in list %s is not UTF-8", name);
      return FALSE;
    }
  const char *p = d, *end = d + n;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', end - p);
      const char *le = nl ? nl : end;
      while (le > p && (le[-1] == '\r' || le[-1] == ' '))
        le--;
      if (le > p && *p != '#')
        {
          lex_add (lex, p, le - p, HZ_WB (bit));
          const char *sp = memchr (p, ' ', le - p);
          if (sp && head_bit >= 0)
            lex_add (lex, p, sp - p, HZ_WB (head_bit));
        }
      p = nl ? nl + 1 : end;
    }
  return TRUE;
}

GHashTable *
hz_load_set (const char *name, char **buf_out, GError **error)
{
  g_autofree char *path = g_strconcat ("/ai/hanzo/redact/data/", name, NULL);
  g_autoptr (GBytes) b = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (!b)
    return NULL;
  gsize n = 0;
  const char *d = g_bytes_get_data (b, &n);
  char *buf = g_malloc (n + 1);
  memcpy (buf, d, n);
  buf[n] = 0;
  GHashTable *set = g_hash_table_new (g_str_hash, g_str_equal);
  char *p = buf;
  while (*p)
    {
      char *nl = strchr (p, '\n');
      if (nl)
        *nl = 0;
      if (*p && *p != '#')
        {
          if (!g_utf8_validate (p, -1, NULL))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "built-in list %s is not UTF-8", name);
              g_hash_table_destroy (set);
              g_free (buf);
              return NULL;
            }
          g_hash_table_add (set, p);
        }
      if (!nl)
        break;
      p = nl + 1;
    }
  *buf_out = buf;
  return set;
}

gboolean
hz_gazetteers_load (HzRedactor *r, const HzWordList *const *lists, GError **error)
{
  HzLexicon *lex = &r->lex;
  lex->check = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  lex->build = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  if (!lex_add_resource (lex, "given-names.txt", HZ_W_GIVEN, -1, error)
      || !lex_add_resource (lex, "surnames.txt", HZ_W_SURNAME, -1, error)
      || !lex_add_resource (lex, "given-names-intl.txt", HZ_W_GIVEN, -1, error)
      || !lex_add_resource (lex, "surnames-intl.txt", HZ_W_SURNAME, -1, error)
      || !lex_add_resource (lex, "given-names-frequent.txt", HZ_W_GIVEN_FREQ, -1, error)
      || !lex_add_resource (lex, "surnames-frequent.txt", HZ_W_SURNAME_FREQ, -1, error)
      || !lex_add_resource (lex, "words-en.txt", HZ_W_COMMON, -1, error)
      || !lex_add_resource (lex, "places.txt", HZ_W_PLACE, HZ_W_PLACE_HEAD, error)
      || !lex_add_resource (lex, "cities.txt", HZ_W_CITY, HZ_W_PLACE_HEAD, error))
    return FALSE;
  for (gsize t = 0; lists[t]; t++)
    for (const HzWordList *l = lists[t]; l->words; l++)
      for (const char *const *w = l->words; *w; w++)
        lex_add (lex, *w, strlen (*w), HZ_WB (l->bit));
  lex_freeze (lex);
  g_clear_pointer (&lex->check, g_hash_table_destroy);
  g_clear_pointer (&lex->build, g_hash_table_destroy);
  return TRUE;
}

void
hz_gazetteers_free (HzRedactor *r)
{
  g_clear_pointer (&r->lex.slots, g_free);
  g_clear_pointer (&r->lex.check, g_hash_table_destroy);
  g_clear_pointer (&r->lex.build, g_hash_table_destroy);
}
