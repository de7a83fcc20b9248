/* hz-scan.c — the scan of one text: per-thread token and candidate memory, hz_scan_add() for
 * the recognizers, and overlap resolution. Below the recognizers (hz-scan.h). */
#include "hz-scan.h"

#include <stdlib.h>
#include <string.h>

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
GArray *
hz_scan_resolve (HzScan *scan, const char *unmerged)
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
              && ((k->rec != unmerged && (k->s == p->e || (k->s == p->e + 1 && scan->text[p->e] == ' ')))
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
typedef struct _HzScanScratch {
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

void
hz_scan_index_identifiers (HzScan *scan)
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

void
hz_scan_begin (HzScan *scan, const HzRedactor *r, const char *text, gsize len)
{
  scan->r = r;
  scan->text = text;
  scan->len = len;
  Scratch *scratch = scratch_get ();
  scan->scratch = scratch;
  scan->cands = scratch->cands;
  scan->n_toks = hz_tokenize (&r->lex, text, len, &scratch->toks, &scratch->toks_cap);
  scan->toks = scratch->toks;
}

void
hz_scan_end (HzScan *scan)
{
  g_clear_pointer (&scan->ident_starts, g_free);
  scan->n_ident_starts = 0;
  Scratch *scratch = scan->scratch;
  scratch->cands = scan->cands; /* the same array, possibly reallocated */
  scratch_release (scratch);
  scan->scratch = NULL;
  scan->toks = NULL;
  scan->cands = NULL;
}
