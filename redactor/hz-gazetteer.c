/* hz-gazetteer.c — the built-in word lists (GResource, see data/SOURCE.md) as hash sets. */
#include "hz-redact-private.h"

#include <gio/gio.h>
#include <string.h>

/* Load resource `name` into a set of its lines (lower-cased; '#' lines skipped). The keys
 * point into *buf_out, which the caller frees after the set. */
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
hz_gazetteers_load (HzRedactor *r, GError **error)
{
  struct { const char *name; GHashTable **set; } lists[] = {
    { "given-names.txt", &r->given },
    { "surnames.txt", &r->surname },
    { "words-en.txt", &r->words },
    { "places.txt", &r->places },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (lists); i++)
    {
      *lists[i].set = hz_load_set (lists[i].name, &r->bufs[i], error);
      if (!*lists[i].set)
        return FALSE;
    }
  /* places are stored as written; look-ups are lower-case */
  GHashTable *lower = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, r->places);
  while (g_hash_table_iter_next (&it, &k, NULL))
    g_hash_table_add (lower, g_utf8_strdown (k, -1));
  g_hash_table_destroy (r->places);
  r->places = lower;
  return TRUE;
}

void
hz_gazetteers_free (HzRedactor *r)
{
  GHashTable **sets[] = { &r->given, &r->surname, &r->words, &r->places };
  for (gsize i = 0; i < G_N_ELEMENTS (sets); i++)
    g_clear_pointer (sets[i], g_hash_table_destroy);
  for (gsize i = 0; i < G_N_ELEMENTS (r->bufs); i++)
    g_clear_pointer (&r->bufs[i], g_free);
}
