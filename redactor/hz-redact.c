/* hz-redact.c — the redactor object, the analysis pipeline and overlap resolution. */
#include "hz-redact-private.h"

#include <gio/gio.h>
#include <string.h>

static const char *const type_names[HZ_ENTITY_N_TYPES] = {
  [HZ_ENTITY_NONE] = "NONE",
  [HZ_ENTITY_PERSON] = "PERSON",
  [HZ_ENTITY_EMAIL] = "EMAIL",
  [HZ_ENTITY_PHONE] = "PHONE",
  [HZ_ENTITY_CREDIT_CARD] = "CREDIT_CARD",
  [HZ_ENTITY_IBAN] = "IBAN",
  [HZ_ENTITY_IP_ADDRESS] = "IP_ADDRESS",
  [HZ_ENTITY_MAC_ADDRESS] = "MAC_ADDRESS",
  [HZ_ENTITY_URL] = "URL",
  [HZ_ENTITY_STREET_ADDRESS] = "STREET_ADDRESS",
  [HZ_ENTITY_LOCATION] = "LOCATION",
  [HZ_ENTITY_DATE_TIME] = "DATE_TIME",
  [HZ_ENTITY_US_SSN] = "US_SSN",
  [HZ_ENTITY_SECRET] = "SECRET",
};

const char *
hz_entity_type_name (HzEntityType type)
{
  if ((int) type <= 0 || type >= HZ_ENTITY_N_TYPES)
    return "NONE";
  return type_names[type];
}

HzEntityType
hz_entity_type_from_name (const char *name)
{
  static const struct { const char *alias; HzEntityType t; } aliases[] = {
    { "EMAIL_ADDRESS", HZ_ENTITY_EMAIL }, { "PHONE_NUMBER", HZ_ENTITY_PHONE },
    { "IBAN_CODE", HZ_ENTITY_IBAN }, { "DOMAIN_NAME", HZ_ENTITY_URL },
    { "GPE", HZ_ENTITY_LOCATION }, { "ADDRESS", HZ_ENTITY_STREET_ADDRESS },
    { "ZIP_CODE", HZ_ENTITY_STREET_ADDRESS },
  };
  if (!name)
    return HZ_ENTITY_NONE;
  for (int t = 1; t < HZ_ENTITY_N_TYPES; t++)
    if (g_ascii_strcasecmp (name, type_names[t]) == 0)
      return t;
  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (name, aliases[i].alias) == 0)
      return aliases[i].t;
  return HZ_ENTITY_NONE;
}

HzRedactor *
hz_redactor_new (GError **error)
{
  HzRedactor *r = g_new0 (HzRedactor, 1);
  for (int t = 1; t < HZ_ENTITY_N_TYPES; t++)
    r->enabled[t] = TRUE;
  r->min_score = 0.3f;
  if (!hz_gazetteers_load (r, error))
    {
      hz_redactor_free (r);
      return NULL;
    }
  return r;
}

void
hz_redactor_free (HzRedactor *self)
{
  if (!self)
    return;
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
hz_redactor_set_min_score (HzRedactor *self, float min_score)
{
  g_return_if_fail (self != NULL);
  self->min_score = min_score;
}

void
hz_scan_add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, int tier,
             const char *rec)
{
  if (s >= e || e > scan->len || !scan->r->enabled[type] || score < scan->r->min_score)
    return;
  HzCand c = { s, e, type, MIN (score, 1.0f), tier, rec };
  g_array_append_val (scan->cands, c);
}

static int
cand_priority_cmp (gconstpointer a, gconstpointer b)
{
  const HzCand *x = a, *y = b;
  if (x->tier != y->tier)
    return x->tier < y->tier ? -1 : 1;
  gsize lx = x->e - x->s, ly = y->e - y->s;
  if (lx != ly)
    return lx > ly ? -1 : 1;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return (int) x->type - (int) y->type;
}

static int
cand_start_cmp (gconstpointer a, gconstpointer b)
{
  const HzCand *x = a, *y = b;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return x->e < y->e ? -1 : x->e > y->e;
}

/* Greedy selection in priority order; `taken` is a bitmap of the bytes already covered. */
static GArray *
resolve (HzScan *scan)
{
  GArray *c = scan->cands;
  g_array_sort (c, cand_priority_cmp);
  guint8 *taken = g_malloc0 (scan->len / 8 + 1);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (HzCand));
  for (guint i = 0; i < c->len; i++)
    {
      HzCand *k = &g_array_index (c, HzCand, i);
      gboolean free_ = TRUE;
      for (gsize b = k->s; b < k->e && free_; b++)
        if (taken[b >> 3] & (1u << (b & 7)))
          free_ = FALSE;
      if (!free_)
        continue;
      for (gsize b = k->s; b < k->e; b++)
        taken[b >> 3] |= (guint8) (1u << (b & 7));
      g_array_append_val (out, *k);
    }
  g_free (taken);
  g_array_sort (out, cand_start_cmp);
  /* merge adjacent pieces of one name ("Anna" + "Maria Lopez" split by two recognizers) */
  guint w = 0;
  for (guint i = 0; i < out->len; i++)
    {
      HzCand *k = &g_array_index (out, HzCand, i);
      if (w > 0)
        {
          HzCand *p = &g_array_index (out, HzCand, w - 1);
          if (p->type == HZ_ENTITY_PERSON && k->type == HZ_ENTITY_PERSON
              && (k->s == p->e || (k->s == p->e + 1 && scan->text[p->e] == ' ')))
            {
              p->e = k->e;
              p->score = MAX (p->score, k->score);
              continue;
            }
        }
      g_array_index (out, HzCand, w++) = *k;
    }
  g_array_set_size (out, w);
  return out;
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
  if (g_utf8_validate_len (text, len, &bad))
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
  res->len = strlen (res->text);

  HzScan scan = { self, res->text, res->len, NULL, 0, NULL };
  scan.cands = g_array_new (FALSE, FALSE, sizeof (HzCand));
  scan.toks = hz_tokenize (scan.text, scan.len, &scan.n_toks);

  hz_rec_email_url (&scan);
  hz_rec_card (&scan);
  hz_rec_iban (&scan);
  hz_rec_net (&scan);
  hz_rec_ssn (&scan);
  hz_rec_phone (&scan);
  hz_rec_secret (&scan);
  hz_rec_date (&scan);
  hz_rec_address (&scan);
  hz_rec_names (&scan);

  GArray *sel = resolve (&scan);
  res->n_spans = sel->len;
  res->spans = g_new0 (HzSpan, MAX (sel->len, 1));
  /* byte -> code point offsets in one pass (spans are sorted and disjoint) */
  gsize cp = 0, pos = 0;
  for (guint i = 0; i < sel->len; i++)
    {
      HzCand *k = &g_array_index (sel, HzCand, i);
      HzSpan *s = &res->spans[i];
      cp += g_utf8_strlen (res->text + pos, k->s - pos);
      s->start_byte = k->s;
      s->start_cp = cp;
      cp += g_utf8_strlen (res->text + k->s, k->e - k->s);
      s->end_byte = k->e;
      s->end_cp = cp;
      pos = k->e;
      s->type = k->type;
      s->score = k->score;
      s->recognizer = k->rec;
    }
  g_array_free (sel, TRUE);
  g_array_free (scan.cands, TRUE);
  g_free (scan.toks);
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

char *
hz_redact_text (const HzRedactor *self, const char *text, gssize len, HzScrubMode mode,
                GError **error)
{
  HzRedaction *r = hz_redactor_analyze (self, text, len, HZ_REDACT_UTF8_REPLACE, error);
  if (!r)
    return NULL;
  HzScrubber *sc = hz_scrubber_new (mode, 0);
  char *out = hz_scrubber_scrub (sc, r);
  hz_scrubber_free (sc);
  hz_redaction_free (r);
  return out;
}
