/* hz-redact.c — the redactor object, the analysis pipeline and overlap resolution. */
#include "hz-redact-private.h"
#include "hz-tagger.h"

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
  [HZ_ENTITY_NATIONAL_ID] = "NATIONAL_ID",
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

/* TRUE when the bytes [a, c) between a name's parts hold a quoted nickname (whether or not
 * it is a span of its own): optional space, an opening quote, one to three capitalised
 * words, a closing quote, one space ("William | \"Buckshot\" | May", tokenized
 * "Charalambos | \" Bambos \" | Xanthos"). */
static gboolean
nickname_between (const HzScan *scan, gsize a, gsize c)
{
  const char *t = scan->text;
  if (c <= a || c - a > 48)
    return FALSE;
  gsize p = a, words = 0, q;
  if (p < c && t[p] == ' ')
    p++;
  if (!(q = hz_quote_at (scan->text, scan->len, p, TRUE)))
    return FALSE;
  p += q;
  if (p < c && t[p] == ' ')
    p++;
  while (p < c && words < 3 && g_ascii_isupper (t[p]))
    {
      while (p < c && (g_ascii_isalpha (t[p]) || t[p] == '-' || t[p] == '.'))
        p++;
      words++;
      if (p < c && t[p] == ' ' && p + 1 < c && g_ascii_isupper (t[p + 1]))
        p++;
    }
  if (words == 0)
    return FALSE;
  if (p < c && t[p] == ' ')
    p++;
  if (!(q = hz_quote_at (scan->text, scan->len, p, TRUE)))
    return FALSE;
  p += q;
  return p < c && t[p] == ' ' && p + 1 == c;
}

/* Greedy selection in priority order; `taken` is a bitmap of the bytes already covered. */
static GArray *
resolve (HzScan *scan)
{
  GArray *c = scan->cands;
  g_array_sort (c, cand_priority_cmp);
  guint8 stack_taken[512];
  guint8 *taken = scan->len / 8 + 1 <= sizeof stack_taken ? stack_taken : g_malloc0 (scan->len / 8 + 1);
  if (taken == stack_taken)
    memset (stack_taken, 0, scan->len / 8 + 1);
  /* selected candidates are compacted in place (index sel <= i): no second array */
  GArray *out = c;
  guint sel = 0;
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
      g_array_index (c, HzCand, sel++) = *k;
    }
  g_array_set_size (c, sel);
  if (taken != stack_taken)
    g_free (taken);
  g_array_sort (out, cand_start_cmp);
  /* merge adjacent pieces of one name ("Anna" + "Maria Lopez" split by two recognizers), and
   * a name with a quoted nickname inside ("William \"Buckshot\" May"), whether or not the
   * nickname was found on its own */
  guint w = 0;
  for (guint i = 0; i < out->len; i++)
    {
      HzCand *k = &g_array_index (out, HzCand, i);
      if (w > 0)
        {
          HzCand *p = &g_array_index (out, HzCand, w - 1);
          if (p->type == HZ_ENTITY_PERSON && k->type == HZ_ENTITY_PERSON
              && ((k->rec != hz_tagger_rec && (k->s == p->e || (k->s == p->e + 1 && scan->text[p->e] == ' ')))
                  || nickname_between (scan, p->e, k->s)))
            {
              p->e = k->e;
              p->score = MAX (p->score, k->score);
              continue;
            }
          HzCand *q = i + 1 < out->len ? &g_array_index (out, HzCand, i + 1) : NULL;
          if (q && p->type == HZ_ENTITY_PERSON && k->type == HZ_ENTITY_PERSON && q->type == HZ_ENTITY_PERSON
              && nickname_between (scan, p->e, q->s))
            {
              p->e = q->e;
              p->score = MAX (p->score, MAX (k->score, q->score));
              i++;
              continue;
            }
        }
      g_array_index (out, HzCand, w++) = *k;
    }
  g_array_set_size (out, w);
  /* a name that ends in an initial keeps the initial's period ("signed by William L."; in
   * tokenized text "William L .") */
  for (guint i = 0; i < out->len; i++)
    {
      HzCand *k = &g_array_index (out, HzCand, i);
      const char *t = scan->text;
      if (k->type != HZ_ENTITY_PERSON || k->e - k->s < 3 || !g_ascii_isupper (t[k->e - 1]) || t[k->e - 2] != ' ')
        continue;
      gsize d = k->e < scan->len && t[k->e] == '.' ? k->e
                : k->e + 1 < scan->len && t[k->e] == ' ' && t[k->e + 1] == '.' ? k->e + 1 : 0;
      if (d && (d + 1 == scan->len || g_ascii_isspace (t[d + 1]))
          && (i + 1 == out->len || g_array_index (out, HzCand, i + 1).s > d))
        k->e = d + 1;
    }
  return out;
}

/* Per-thread scratch memory of hz_redactor_analyze(): the token array and the candidate
 * array are reused from one call to the next (most texts are short, so allocating them
 * per text cost more than the analysis of a chat message); memory above SCRATCH_KEEP bytes
 * is returned after the call. */
typedef struct {
  HzToken *toks;
  gsize toks_cap;
  GArray *cands;
  gboolean in_use; /* a nested call (from a model callback) gets its own scratch */
} Scratch;

enum { SCRATCH_KEEP = 1 << 20 };

static void
scratch_free (gpointer p)
{
  Scratch *sc = p;
  g_free (sc->toks);
  if (sc->cands)
    g_array_free (sc->cands, TRUE);
  g_free (sc);
}

static GPrivate scratch_key = G_PRIVATE_INIT (scratch_free);

static Scratch *
scratch_new (void)
{
  Scratch *sc = g_new0 (Scratch, 1);
  sc->cands = g_array_sized_new (FALSE, FALSE, sizeof (HzCand), 64);
  return sc;
}

static Scratch *
scratch_get (void)
{
  Scratch *sc = g_private_get (&scratch_key);
  if (!sc)
    {
      sc = scratch_new ();
      g_private_set (&scratch_key, sc);
    }
  else if (sc->in_use)
    return scratch_new ();
  sc->in_use = TRUE;
  g_array_set_size (sc->cands, 0);
  return sc;
}

static void
scratch_release (Scratch *sc)
{
  if (sc != g_private_get (&scratch_key))
    {
      scratch_free (sc);
      return;
    }
  sc->in_use = FALSE;
  if (sc->toks_cap * sizeof (HzToken) > SCRATCH_KEEP)
    {
      g_clear_pointer (&sc->toks, g_free);
      sc->toks_cap = 0;
    }
  if (sc->cands->len * sizeof (HzCand) > SCRATCH_KEEP)
    {
      g_array_free (sc->cands, TRUE);
      sc->cands = g_array_sized_new (FALSE, FALSE, sizeof (HzCand), 64);
    }
}

/* scan->ident_starts: the sorted start bytes of the identifiers found so far (validated or
 * pattern tier, no name or place), for hz_names_identifier_label(); freed by scan_clear() */
static void
index_identifiers (HzScan *scan)
{
  scan->ident_starts = scan->cands->len ? g_new (guint64, scan->cands->len) : NULL;
  scan->n_ident_starts = 0;
  for (guint c = 0; c < scan->cands->len; c++)
    {
      const HzCand *k = &g_array_index (scan->cands, HzCand, c);
      if (k->tier <= HZ_TIER_PATTERN && k->type != HZ_ENTITY_PERSON && k->type != HZ_ENTITY_LOCATION)
        scan->ident_starts[scan->n_ident_starts++] = k->s;
    }
  if (scan->n_ident_starts > 1)
    qsort (scan->ident_starts, scan->n_ident_starts, sizeof (guint64), hz_u64_cmp);
}

static void
scan_clear (HzScan *scan)
{
  g_clear_pointer (&scan->ident_starts, g_free);
  scan->n_ident_starts = 0;
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
  index_identifiers (scan);
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
  scan.r = self;
  scan.text = text;
  scan.len = len;
  Scratch *scratch = scratch_get ();
  scan.cands = scratch->cands;
  scan.n_toks = hz_tokenize (&self->lex, text, len, &scratch->toks, &scratch->toks_cap);
  scan.toks = scratch->toks;
  run_rules (&scan);
  hook (&scan, user_data);
  scan_clear (&scan);
  scratch->cands = scan.cands;
  scratch_release (scratch);
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

  scan.r = self;
  scan.text = res->text;
  scan.len = res->len;
  if (!ascii_in)
    {
      /* repaired text: U+FFFD replaced bytes, NULs are gone */
      memset (scan.has, 0, sizeof scan.has);
      for (gsize i = 0; i < scan.len; i++)
        scan.has[(guchar) scan.text[i]] = 1;
    }
  Scratch *scratch = scratch_get ();
  scan.cands = scratch->cands;
  scan.n_toks = hz_tokenize (&self->lex, scan.text, scan.len, &scratch->toks, &scratch->toks_cap);
  scan.toks = scratch->toks;

  run_rules (&scan);
  if (self->tagger)
    hz_rec_tagger (&scan, self->tagger_prose && hz_tagger_text_is_encyclopedic (&scan) ? self->tagger_prose : self->tagger);
  if ((flags & HZ_REDACT_MODEL) && self->model)
    hz_rec_model (&scan);

  scan_clear (&scan);
  GArray *sel = resolve (&scan);
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
  scratch->cands = scan.cands; /* the same array, possibly reallocated */
  scratch_release (scratch);
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
