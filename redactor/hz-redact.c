/* hz-redact.c — the redactor object and the analysis pipeline: the scan (hz-scan.c), the rule
 * recognizers in order, the tagger, the model pass, then overlap resolution and offsets. */
#include "hz-redact.h"
#include "hz-recognizers.h"
#include "hz-tagger.h"

#include <gio/gio.h>
#include <string.h>

HzRedactor *
hz_redactor_new (GError **error)
{
  HzRedactor *r = g_new0 (HzRedactor, 1);
  for (int t = 1; t < HZ_ENTITY_N_TYPES; t++)
    r->enabled[t] = TRUE;
  r->min_score = 0.3f;
  /* the recognizer families' word lists, in this order (the lexicon's layout follows it) */
  static const HzWordList *const lists[] = { hz_names_lists, hz_address_lists, hz_date_lists,
                                             hz_ident_lists, NULL };
  if (!hz_gazetteers_load (r, lists, error))
    {
      hz_redactor_free (r);
      return NULL;
    }
  /* the learned PERSON tagger: built in, or HZ_REDACT_PERSON_TAGGER (a file, or "none");
   * a tagger that cannot be loaded leaves the rules alone, with a warning */
  /* and the tagger of encyclopedic prose: built in, or HZ_REDACT_PROSE_TAGGER (a file, or
   * "none": the tagger above for every text) */
  const char *env = g_getenv ("HZ_REDACT_PERSON_TAGGER");
  const char *penv = g_getenv ("HZ_REDACT_PROSE_TAGGER");
  if (!env || g_ascii_strcasecmp (env, "none") != 0)
    {
      g_autoptr (GError) terr = NULL;
      if (!hz_redactor_load_person_tagger (r, env && *env ? env : NULL, &terr))
        g_warning ("redactor: PERSON tagger not loaded, using the rules alone: %s", terr->message);
      else if ((!penv || g_ascii_strcasecmp (penv, "none") != 0)
               && !hz_redactor_load_prose_tagger (r, penv && *penv ? penv : NULL, &terr))
        g_warning ("redactor: prose PERSON tagger not loaded, using the other tagger for prose: %s", terr->message);
    }
  return r;
}

static void
take_tagger (HzTagger **slot, HzTagger *tagger)
{
  if (tagger && !tagger->rows)
    hz_tagger_pack (tagger);
  hz_tagger_free (*slot);
  *slot = tagger;
}

void
hz_redactor_take_tagger (HzRedactor *self, HzTagger *tagger)
{
  g_return_if_fail (self != NULL);
  take_tagger (&self->tagger, tagger);
}

void
hz_redactor_take_prose_tagger (HzRedactor *self, HzTagger *tagger)
{
  g_return_if_fail (self != NULL);
  take_tagger (&self->tagger_prose, tagger);
}

/* Read a weights file (`path`, or the GResource `resource`); NULL with `error` set. */
static HzTagger *
read_tagger (const char *path, const char *resource, GError **error)
{
  g_autoptr (GBytes) bytes = NULL;
  if (path)
    {
      char *data = NULL;
      gsize n = 0;
      if (!g_file_get_contents (path, &data, &n, error))
        return NULL;
      bytes = g_bytes_new_take (data, n);
    }
  else if (!(bytes = g_resources_lookup_data (resource, G_RESOURCE_LOOKUP_FLAGS_NONE, error)))
    return NULL;
  HzTagger *t = hz_tagger_new_from_bytes (bytes, error);
  if (!t && path && error && *error)
    g_prefix_error (error, "%s: ", path);
  return t;
}

/* Replace *slot by the tagger read from `path` (or `resource`); on error *slot is NULL. */
static gboolean
load_tagger (HzTagger **slot, const char *path, const char *resource, GError **error)
{
  take_tagger (slot, NULL);
  take_tagger (slot, read_tagger (path, resource, error));
  return *slot != NULL;
}

gboolean
hz_redactor_load_person_tagger (HzRedactor *self, const char *path, GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return load_tagger (&self->tagger, path, HZ_TAGGER_RESOURCE, error);
}

gboolean
hz_redactor_load_prose_tagger (HzRedactor *self, const char *path, GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return load_tagger (&self->tagger_prose, path, HZ_TAGGER_PROSE_RESOURCE, error);
}

void
hz_redactor_clear_person_tagger (HzRedactor *self)
{
  hz_redactor_take_tagger (self, NULL);
  hz_redactor_take_prose_tagger (self, NULL);
}

gboolean
hz_redactor_has_person_tagger (const HzRedactor *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->tagger != NULL;
}

void
hz_redactor_free (HzRedactor *self)
{
  if (!self)
    return;
  if (self->model_destroy)
    self->model_destroy (self->model_data);
  hz_tagger_free (self->tagger);
  hz_tagger_free (self->tagger_prose);
  hz_gazetteers_free (self);
  g_free (self);
}

void
hz_redactor_set_enabled (HzRedactor *self, HzEntityType type, gboolean enabled)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail ((int) type > 0 && type < HZ_ENTITY_N_TYPES);
  self->enabled[type] = enabled;
}

void
hz_redactor_set_model (HzRedactor *self, HzModelFunc func, gpointer user_data,
                       GDestroyNotify destroy)
{
  g_return_if_fail (self != NULL);
  if (self->model_destroy)
    self->model_destroy (self->model_data);
  self->model = func;
  self->model_data = func ? user_data : NULL;
  self->model_destroy = func ? destroy : NULL;
}

void
hz_redactor_set_min_score (HzRedactor *self, float min_score)
{
  g_return_if_fail (self != NULL);
  self->min_score = min_score;
}

/* the rule recognizers, in order (hz-redact-private.h lists them) */
static void
run_rules (HzScan *scan)
{
  hz_rec_email_url (scan);
  hz_rec_card (scan);
  hz_rec_iban (scan);
  hz_rec_net (scan);
  hz_rec_ssn (scan);
  hz_rec_natid (scan);
  hz_rec_phone (scan);
  hz_rec_secret (scan);
  hz_rec_date (scan);
  hz_rec_address (scan);
  hz_scan_index_identifiers (scan);
  hz_rec_names (scan);
}

void
hz_redactor_scan_rules (const HzRedactor *self, const char *text, gsize len, HzScanHook hook,
                        gpointer user_data)
{
  g_return_if_fail (self != NULL && hook != NULL);
  g_return_if_fail (g_utf8_validate_len (text, len, NULL));
  HzScan scan = { 0 };
  for (gsize i = 0; i < len; i++)
    scan.has[(guchar) text[i]] = 1;
  hz_scan_begin (&scan, self, text, len);
  run_rules (&scan);
  hook (&scan, user_data);
  hz_scan_end (&scan);
}

HzRedaction *
hz_redactor_analyze (const HzRedactor *self, const char *text, gssize len,
                     HzRedactFlags flags, GError **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (text != NULL || len == 0, NULL);
  if (len < 0)
    len = strlen (text);
  HzRedaction *res = g_new0 (HzRedaction, 1);
  const char *bad = NULL;
  /* one pass: which bytes occur (recognizers skip early on it) and whether the input is
   * plain ASCII without NUL, which needs no UTF-8 validation */
  HzScan scan = { 0 };
  guint8 hi = 0;
  for (gssize i = 0; i < len; i++)
    {
      guchar c = (guchar) text[i];
      scan.has[c] = 1;
      hi |= c;
    }
  gboolean ascii_in = !(hi & 0x80) && !scan.has[0];
  if (ascii_in || g_utf8_validate_len (text, len, &bad))
    res->text = g_strndup (text, len);
  else if (flags & HZ_REDACT_UTF8_REJECT)
    {
      g_set_error (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE,
                   "invalid UTF-8 at byte %" G_GSIZE_FORMAT, (gsize) (bad - text));
      g_free (res);
      return NULL;
    }
  else
    res->text = g_utf8_make_valid (text, len);
  res->len = ascii_in ? (gsize) len : strlen (res->text);

  if (!ascii_in)
    {
      /* repaired text: U+FFFD replaced bytes, NULs are gone */
      memset (scan.has, 0, sizeof scan.has);
      for (gsize i = 0; i < res->len; i++)
        scan.has[(guchar) res->text[i]] = 1;
    }
  hz_scan_begin (&scan, self, res->text, res->len);

  run_rules (&scan);
  if (self->tagger)
    hz_rec_tagger (&scan, self->tagger_prose && hz_tagger_text_is_encyclopedic (&scan) ? self->tagger_prose : self->tagger);
  if ((flags & HZ_REDACT_MODEL) && self->model)
    hz_rec_model (&scan);

  GArray *sel = hz_scan_resolve (&scan, hz_tagger_rec);
  res->n_spans = sel->len;
  res->spans = g_new0 (HzSpan, MAX (sel->len, 1));
  /* byte -> code point offsets in one pass (spans are sorted and disjoint); pure ASCII
   * text has equal offsets */
  gboolean ascii = ascii_in;
  gsize cp = 0, pos = 0;
  for (guint i = 0; i < sel->len; i++)
    {
      HzCand *k = &g_array_index (sel, HzCand, i);
      HzSpan *s = &res->spans[i];
      cp += ascii ? k->s - pos : (gsize) g_utf8_strlen (res->text + pos, k->s - pos);
      s->start_byte = k->s;
      s->start_cp = cp;
      cp += ascii ? k->e - k->s : (gsize) g_utf8_strlen (res->text + k->s, k->e - k->s);
      s->end_byte = k->e;
      s->end_cp = cp;
      pos = k->e;
      s->type = k->type;
      s->score = k->score;
      s->recognizer = k->rec;
    }
  hz_scan_end (&scan);
  return res;
}

void
hz_redaction_free (HzRedaction *redaction)
{
  if (!redaction)
    return;
  g_free (redaction->text);
  g_free (redaction->spans);
  g_free (redaction);
}

static int
span_start_cmp (gconstpointer a, gconstpointer b)
{
  const HzSpan *x = a, *y = b;
  return x->start_byte < y->start_byte ? -1 : x->start_byte > y->start_byte;
}

guint
hz_redaction_mark_known (HzRedaction *redaction, const char *surface, HzEntityType type)
{
  g_return_val_if_fail (redaction != NULL && surface != NULL, 0);
  gsize n = strlen (surface);
  if (n == 0 || n > redaction->len || (int) type <= 0 || type >= HZ_ENTITY_N_TYPES
      || !g_utf8_validate (surface, n, NULL))
    return 0;
  const char *t = redaction->text;
  GArray *add = g_array_new (FALSE, FALSE, sizeof (HzSpan));
  guint si = 0;
  for (gsize p = 0; p + n <= redaction->len; p++)
    {
      /* skip existing spans (sorted, disjoint) */
      while (si < redaction->n_spans && redaction->spans[si].end_byte <= p)
        si++;
      if (si < redaction->n_spans && redaction->spans[si].start_byte <= p)
        {
          p = redaction->spans[si].end_byte - 1;
          continue;
        }
      if (g_ascii_tolower (t[p]) != g_ascii_tolower (surface[0]) || hz_alnum_before (t, p)
          || g_ascii_strncasecmp (t + p, surface, n) != 0 || hz_alnum_at (t, redaction->len, p + n))
        continue;
      if (si < redaction->n_spans && redaction->spans[si].start_byte < p + n)
        continue; /* would overlap the next span */
      HzSpan s = { p, p + n, 0, 0, type, 0.9f, "known" };
      g_array_append_val (add, s);
      p += n - 1;
    }
  guint added = add->len;
  if (added)
    {
      redaction->spans = g_renew (HzSpan, redaction->spans, redaction->n_spans + added);
      memcpy (redaction->spans + redaction->n_spans, add->data, added * sizeof (HzSpan));
      redaction->n_spans += added;
      qsort (redaction->spans, redaction->n_spans, sizeof (HzSpan), span_start_cmp);
      gsize cp = 0, pos = 0;
      for (guint i = 0; i < redaction->n_spans; i++)
        {
          HzSpan *s = &redaction->spans[i];
          cp += g_utf8_strlen (t + pos, s->start_byte - pos);
          s->start_cp = cp;
          cp += g_utf8_strlen (t + s->start_byte, s->end_byte - s->start_byte);
          s->end_cp = cp;
          pos = s->end_byte;
        }
    }
  g_array_free (add, TRUE);
  return added;
}
