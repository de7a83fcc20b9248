/* train-person-tagger.c — trains the redactor's PERSON tagger (hz-tagger.h) offline.
 *
 *   train-person-tagger [options] -o OUT.bin TRAIN...
 *
 * TRAIN: CoNLL files (token and BIO tag per line, see read_conll()) or, for names ending in
 * `.jsonl`, records in the redactor-eval format (`text`, `spans` with `start_byte`,
 * `end_byte`, `label`). PERSON entities (CoNLL "person"/"PER", JSONL "PERSON") give the tags
 * B and I; every other entity gives X on its tokens that have features; the rest is O. Each text is
 * run through the tokenizer and the rule recognizers (hz_redactor_scan_rules()), whose
 * candidates become features, and the tagger is trained as an averaged structured
 * perceptron (Collins 2002) with Viterbi decoding, records shuffled each epoch (GRand, fixed
 * seed: the output is byte-identical from run to run).
 *
 * Model selection uses the training data only, by K-fold cross-validation over the FIRST
 * file (the target genre and annotation convention): in fold f the records k of that file
 * with k % --holdout == holdout - 1 - f are held out and the model is trained on all other
 * records; after each epoch the whole redactor (rules + tagger, with every O bias below,
 * and with --allow-veto every veto mode and margin too, at the --scope given) is scored on
 * the held-out records (PERSON true/false positives and misses, exact byte spans), and the
 * counts of each setting are summed over the --folds folds. The setting with the best
 * summed F2 is printed, then the tagger is retrained on all records for the chosen number
 * of epochs and written with the chosen combination.
 *
 * Options: --epochs N (most epochs tried, default 12), --holdout K (default 4; 0: no
 * selection, use --fixed-epochs/--veto/--o-bias/--veto-margin as given), --folds F (1..K,
 * default 4; 1: one held-out split, the residue K - 1), --case-augment N (add a lower-cased
 * and an upper-cased copy of every N-th record, default 4; 0: none), --scope 0|1 (texts the tagger
 * runs on, HzTaggerScope; default 0: every text, those outside the social genre of the
 * training data with --prose-bias X added to the O score, default 4; 1: chat-style and
 * social-media text only). The prose bias is not selected here (the selection's held-out
 * records are tweets, which say nothing about prose); the default was chosen by
 * cv-person-tagger.sh on the developer files and Presidio (see README.md). --bits B (hash buckets
 * 2^B, default 16), --min-count C (buckets seen fewer than C times stay zero, default 2),
 * --seed S (default 17), --seeds K (default 1: the written model is the mean of the weights
 * and transitions of K models trained with the shuffle seeds S .. S + K - 1; averaging
 * linear models costs nothing at run time and removes most of the seed-to-seed spread).
 */
#include "hz-redact.h"
#include "hz-tagger.h"
#include "rec-names-context.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *text;
  gsize len;
  GArray *gold;     /* pairs of gsize: PERSON byte spans */
  GArray *other;    /* pairs of gsize: spans of the other named entities (tag X) */
  GArray *mentions; /* pairs of gsize: the @-mentions among them (relabelled, see extract_hook) */
  guint n;          /* tokens */
  guint32 *feats;   /* n * HZ_TAGGER_MAX_FEATS, unused entries G_MAXUINT32 */
  guint8 *tags;     /* gold tags */
  guint src;        /* index of the record it was made from (--case-augment), else its own */
} Sent;

typedef struct {
  guint bits;
  Sent *cur;
} ExtractCtx;

/* appends the byte span [a, b) to a GArray of gsize pairs */
static void
span_append (GArray *spans, gsize a, gsize b)
{
  g_array_append_val (spans, a);
  g_array_append_val (spans, b);
}

static void
extract_hook (HzScan *scan, gpointer data)
{
  ExtractCtx *ctx = data;
  Sent *s = ctx->cur;
  s->n = scan->n_toks;
  s->feats = g_new (guint32, (gsize) MAX (s->n, 1) * HZ_TAGGER_MAX_FEATS);
  s->tags = g_new0 (guint8, MAX (s->n, 1));
  /* @-mentions are PERSON in the redactor (rec-names.c, "mention"); the training files label
   * them O (WNUT-17 train, BTC), so they are relabelled here, as the redactor reads them */
  for (guint k = 0; k < scan->cands->len; k++)
    {
      const HzCand *c = &g_array_index (scan->cands, HzCand, k);
      if (c->type != HZ_ENTITY_PERSON || g_strcmp0 (c->rec, HZ_REC_MENTION) != 0)
        continue;
      gboolean overlap = FALSE;
      for (guint g = 0; g < s->gold->len && !overlap; g += 2)
        overlap = g_array_index (s->gold, gsize, g) < c->e && c->s < g_array_index (s->gold, gsize, g + 1);
      if (!overlap)
        {
          span_append (s->gold, c->s, c->e);
          span_append (s->mentions, c->s, c->e);
        }
    }
  HzTagMark *marks = g_new (HzTagMark, MAX (s->n, 1));
  hz_tagger_marks (scan, marks);
  for (guint i = 0; i < s->n; i++)
    {
      guint32 *f = s->feats + (gsize) i * HZ_TAGGER_MAX_FEATS;
      guint nf = hz_tagger_features (scan, marks, i, ctx->bits, f);
      for (guint k = nf; k < HZ_TAGGER_MAX_FEATS; k++)
        f[k] = G_MAXUINT32;
      const HzToken *t = &scan->toks[i];
      /* X on the tokens with features (a token that is always O stays O: "Bank of America") */
      for (guint g = 0; g < s->other->len && nf > 0; g += 2)
        if (t->s >= g_array_index (s->other, gsize, g) && t->s < g_array_index (s->other, gsize, g + 1))
          s->tags[i] = HZ_TAG_X;
      for (guint g = 0; g < s->gold->len; g += 2)
        {
          gsize gs = g_array_index (s->gold, gsize, g), ge = g_array_index (s->gold, gsize, g + 1);
          if (t->s >= gs && t->s < ge)
            s->tags[i] = t->s == gs || i == 0 || scan->toks[i - 1].s < gs ? HZ_TAG_B : HZ_TAG_I;
        }
    }
  g_free (marks);
}

static Sent *
sent_new (char *text)
{
  Sent *s = g_new0 (Sent, 1);
  s->text = text;
  s->len = strlen (text);
  s->gold = g_array_new (FALSE, FALSE, sizeof (gsize));
  s->other = g_array_new (FALSE, FALSE, sizeof (gsize));
  s->mentions = g_array_new (FALSE, FALSE, sizeof (gsize));
  return s;
}

/* A person label of the CoNLL files used (WNUT-17 "person", Broad Twitter Corpus "PER"). */
static gboolean
is_person_label (const char *x)
{
  return g_ascii_strcasecmp (x, "person") == 0 || g_ascii_strcasecmp (x, "PER") == 0;
}

/* CoNLL: "token<TAB>tag" per line (the tag is the last field), a blank line between
 * sentences, BIO tags (a stray I- opens an entity, as in conlleval). The text is the tokens
 * joined by single spaces, as in ../shared/redactor-eval. A PERSON entity that is an
 * @-handle or a hashtag ("@name", "@ name", "#name") is left out: the redactor, like the
 * WNUT-17 annotation, does not treat them as names (the Broad Twitter Corpus labels them PER). Sentences that are not valid
 * UTF-8 are skipped. */
static gboolean
read_conll (const char *path, GPtrArray *out, GError **error)
{
  g_autofree char *data = NULL;
  gsize n = 0;
  if (!g_file_get_contents (path, &data, &n, error))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (data, "\n", -1);
  GString *text = g_string_new (NULL);
  GArray *gold = g_array_new (FALSE, FALSE, sizeof (gsize)), *other = g_array_new (FALSE, FALSE, sizeof (gsize));
  gssize open_at = -1; /* start of the PERSON entity being read */
  gssize other_at = -1; /* start of the other entity being read */
  gboolean open_handle = FALSE, after_tag = FALSE;
  for (guint l = 0;; l++)
    {
      char *line = lines[l] ? g_strstrip (lines[l]) : NULL;
      if (!line || !*line)
        {
          if (open_at >= 0 && !open_handle)
            span_append (gold, (gsize) open_at, text->len);
          if (other_at >= 0)
            span_append (other, (gsize) other_at, text->len);
          open_at = other_at = -1;
          after_tag = FALSE;
          if (text->len && g_utf8_validate (text->str, text->len, NULL))
            {
              Sent *s = sent_new (g_strdup (text->str));
              g_array_append_vals (s->gold, gold->data, gold->len);
              g_array_append_vals (s->other, other->data, other->len);
              g_ptr_array_add (out, s);
            }
          g_string_truncate (text, 0);
          g_array_set_size (gold, 0);
          g_array_set_size (other, 0);
          if (!line)
            break;
          continue;
        }
      char *tab = strrchr (line, '\t');
      if (!tab)
        tab = strrchr (line, ' ');
      if (!tab)
        continue;
      *tab = 0;
      char *tok = g_strstrip (line), *tag = g_strstrip (tab + 1);
      if (!*tok)
        continue;
      gboolean b = g_str_has_prefix (tag, "B-"), i = g_str_has_prefix (tag, "I-");
      gboolean per = (b || i) && is_person_label (tag + 2), oth = (b || i) && !per;
      if (other_at >= 0 && (!oth || b))
        {
          span_append (other, (gsize) other_at, text->len);
          other_at = -1;
        }
      if (open_at >= 0 && (!per || b))
        {
          if (!open_handle)
            span_append (gold, (gsize) open_at, text->len);
          open_at = -1;
        }
      if (text->len)
        g_string_append_c (text, ' ');
      if (oth && other_at < 0)
        other_at = (gssize) text->len;
      if (per && open_at < 0)
        {
          open_at = (gssize) text->len;
          open_handle = tok[0] == '@' || tok[0] == '#' || after_tag;
        }
      after_tag = strcmp (tok, "@") == 0 || strcmp (tok, "#") == 0;
      g_string_append (text, tok);
    }
  g_string_free (text, TRUE);
  g_array_free (gold, TRUE);
  g_array_free (other, TRUE);
  return TRUE;
}

static gboolean
read_jsonl (const char *path, GPtrArray *out, GError **error)
{
  g_autofree char *data = NULL;
  gsize n = 0;
  if (!g_file_get_contents (path, &data, &n, error))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (data, "\n", -1);
  for (guint l = 0; lines[l]; l++)
    {
      if (!*lines[l])
        continue;
      g_autoptr (JsonParser) p = json_parser_new ();
      if (!json_parser_load_from_data (p, lines[l], -1, error))
        {
          g_prefix_error (error, "%s:%u: ", path, l + 1);
          return FALSE;
        }
      JsonObject *o = json_node_get_object (json_parser_get_root (p));
      if (!o || !json_object_has_member (o, "text"))
        continue;
      Sent *s = sent_new (g_strdup (json_object_get_string_member (o, "text")));
      JsonArray *sp = json_object_has_member (o, "spans") ? json_object_get_array_member (o, "spans") : NULL;
      for (guint k = 0; sp && k < json_array_get_length (sp); k++)
        {
          JsonObject *x = json_array_get_object_element (sp, k);
          gboolean per = g_strcmp0 (json_object_get_string_member_with_default (x, "label", ""), "PERSON") == 0;
          gsize a = (gsize) json_object_get_int_member (x, "start_byte");
          gsize b = (gsize) json_object_get_int_member (x, "end_byte");
          if (a < b && b <= s->len)
            span_append (per ? s->gold : s->other, a, b);
        }
      g_ptr_array_add (out, s);
    }
  return TRUE;
}

/* Perceptron state: current weights in the tagger, sums for averaging (Daume's trick:
 * avg = w - u / c). */
typedef struct {
  HzTagger *t;
  float *u;
  float ut[(HZ_TAG_N + 1) * HZ_TAG_N];
  double c;
  const guint8 *active; /* buckets with enough counts */
} Perc;

static void
decode (const HzTagger *t, const Sent *s, const guint8 *active, float *emit, guint8 *forced, guint8 *back,
        guint8 *pred)
{
  for (guint i = 0; i < s->n; i++)
    {
      float sc[HZ_TAG_N] = { t->o_bias }; /* O; B, I, X start at 0 */
      const guint32 *f = s->feats + (gsize) i * HZ_TAGGER_MAX_FEATS;
      forced[i] = f[0] == G_MAXUINT32;
      if (forced[i])
        sc[HZ_TAG_O] += HZ_TAGGER_FORCE_O; /* no features: always O, as at run time */
      for (guint k = 0; k < HZ_TAGGER_MAX_FEATS && f[k] != G_MAXUINT32; k++)
        if (active[f[k]])
          for (int y = 0; y < HZ_TAG_N; y++)
            sc[y] += t->w[(gsize) f[k] * HZ_TAG_N + y];
      memcpy (emit + i * HZ_TAG_N, sc, sizeof sc);
    }
  /* decoded as at run time: runs of tokens with features, the others O */
  hz_tagger_viterbi_runs (emit, forced, s->n, t->trans, back, pred);
}

static void
upd (Perc *p, const Sent *s, guint i, int y, float d)
{
  const guint32 *f = s->feats + (gsize) i * HZ_TAGGER_MAX_FEATS;
  for (guint k = 0; k < HZ_TAGGER_MAX_FEATS && f[k] != G_MAXUINT32; k++)
    if (p->active[f[k]])
      {
        gsize j = (gsize) f[k] * HZ_TAG_N + y;
        p->t->w[j] += d;
        p->u[j] += (float) (p->c * d);
      }
}

static void
train_epoch (Perc *p, GPtrArray *sents, const guint *order, guint n_order, float *emit, guint8 *forced, guint8 *back,
             guint8 *pred)
{
  for (guint o = 0; o < n_order; o++)
    {
      const Sent *s = g_ptr_array_index (sents, order[o]);
      if (s->n == 0)
        continue;
      decode (p->t, s, p->active, emit, forced, back, pred);
      if (memcmp (pred, s->tags, s->n) != 0)
        for (guint i = 0; i < s->n; i++)
          {
            int gp = i ? 1 + s->tags[i - 1] : 0, pp = i ? 1 + pred[i - 1] : 0;
            if (s->tags[i] != pred[i])
              {
                upd (p, s, i, s->tags[i], 1);
                upd (p, s, i, pred[i], -1);
              }
            if (gp != pp || s->tags[i] != pred[i])
              {
                p->t->trans[gp * HZ_TAG_N + s->tags[i]] += 1;
                p->ut[gp * HZ_TAG_N + s->tags[i]] += (float) p->c;
                p->t->trans[pp * HZ_TAG_N + pred[i]] -= 1;
                p->ut[pp * HZ_TAG_N + pred[i]] -= (float) p->c;
              }
          }
      p->c += 1;
    }
}

static HzTagger *
averaged (const Perc *p)
{
  HzTagger *a = hz_tagger_new (p->t->bucket_bits);
  gsize nw = (gsize) HZ_TAG_N << p->t->bucket_bits;
  for (gsize k = 0; k < nw; k++)
    a->w[k] = p->active[k / HZ_TAG_N] ? p->t->w[k] - (float) (p->u[k] / p->c) : 0;
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    a->trans[k] = p->t->trans[k] - (float) (p->ut[k] / p->c);
  return a;
}

/* PERSON scores of the whole redactor on the records in `idx`: exact byte spans. @-mentions
 * (recognizer "mention", relabelled in the gold) are left out on both sides: the rule finds
 * them all, and counting them would make every setting look alike. */
typedef struct { guint tp, fp, fn; } Counts;

static double
f2 (Counts c)
{
  double pr = c.tp + c.fp ? (double) c.tp / (c.tp + c.fp) : 0, rc = c.tp + c.fn ? (double) c.tp / (c.tp + c.fn) : 0;
  return pr + rc > 0 ? 5 * pr * rc / (4 * pr + rc) : 0;
}

static gboolean
is_mention (const Sent *s, gsize a, gsize b)
{
  for (guint g = 0; g < s->mentions->len; g += 2)
    if (g_array_index (s->mentions, gsize, g) == a && g_array_index (s->mentions, gsize, g + 1) == b)
      return TRUE;
  return FALSE;
}

static Counts
score (const HzRedactor *r, GPtrArray *sents, const guint *idx, guint n_idx)
{
  Counts c = { 0 };
  for (guint o = 0; o < n_idx; o++)
    {
      const Sent *s = g_ptr_array_index (sents, idx[o]);
      HzRedaction *res = hz_redactor_analyze (r, s->text, s->len, HZ_REDACT_UTF8_REPLACE, NULL);
      guint pred = 0, hit = 0;
      for (guint k = 0; k < res->n_spans; k++)
        if (res->spans[k].type == HZ_ENTITY_PERSON && g_strcmp0 (res->spans[k].recognizer, HZ_REC_MENTION) != 0
            && !is_mention (s, res->spans[k].start_byte, res->spans[k].end_byte))
          {
            pred++;
            for (guint g = 0; g < s->gold->len; g += 2)
              if (g_array_index (s->gold, gsize, g) == res->spans[k].start_byte
                  && g_array_index (s->gold, gsize, g + 1) == res->spans[k].end_byte)
                hit++;
          }
      c.tp += hit;
      c.fp += pred - hit;
      c.fn += (s->gold->len - s->mentions->len) / 2 - hit;
      hz_redaction_free (res);
    }
  return c;
}

typedef struct {
  guint epochs, scope, veto;
  float o_bias, veto_margin, prose_bias;
  double f2;
} Choice;

static const float o_biases[] = { -32, -24, -16, -12, -8, -4, 0, 4, 8 };
static const float veto_margins[] = { -1000, 0, 8, 16 };

#define N_VETO (HZ_TAGGER_VETO_X + 1)
#define N_BIAS G_N_ELEMENTS (o_biases)
#define N_MARGIN G_N_ELEMENTS (veto_margins)
/* index into the selection grid of Counts: epoch (1-based), veto mode, O bias, veto margin */
static inline gsize
grid_at (guint e, guint veto, gsize b, gsize m)
{
  return (((gsize) (e - 1) * N_VETO + veto) * N_BIAS + b) * N_MARGIN + m;
}

/* train on `order` for up to `epochs` epochs; with `val`, score every combination after each
 * epoch and add its counts to `grid` (grid_at()); without, return the averaged model after
 * `epochs` epochs */
/* --allow-veto: the selection may also choose the veto modes (off by default: on the WNUT-17
 * test split the veto chosen on held-out training data removed more right names than wrong
 * ones, see README.md) */
static gboolean allow_veto = FALSE;
/* --prose-bias */
static double prose_bias = 4;

static HzTagger *
train (GPtrArray *sents, guint *order, guint n_order, const guint *val, guint n_val, guint epochs,
       guint bits, guint min_count, guint32 seed, HzRedactor *r, guint scope, Counts *grid)
{
  gsize nb = (gsize) 1 << bits;
  guint32 *count = g_new0 (guint32, nb);
  guint max_n = 1;
  for (guint o = 0; o < n_order; o++)
    {
      const Sent *s = g_ptr_array_index (sents, order[o]);
      max_n = MAX (max_n, s->n);
      for (gsize k = 0; k < (gsize) s->n * HZ_TAGGER_MAX_FEATS; k++)
        if (s->feats[k] != G_MAXUINT32)
          count[s->feats[k]]++;
    }
  for (guint o = 0; o < n_val; o++)
    max_n = MAX (max_n, ((const Sent *) g_ptr_array_index (sents, val[o]))->n);
  guint8 *active = g_new0 (guint8, nb);
  for (gsize k = 0; k < nb; k++)
    active[k] = count[k] >= min_count;
  g_free (count);
  Perc p = { hz_tagger_new (bits), g_new0 (float, HZ_TAG_N * nb), { 0 }, 1, active };
  float *emit = g_new (float, (gsize) max_n * HZ_TAG_N);
  guint8 *back = g_new (guint8, (gsize) max_n * HZ_TAG_N), *pred = g_new (guint8, max_n);
  guint8 *forced = g_new (guint8, max_n);
  GRand *rng = g_rand_new_with_seed (seed);
  HzTagger *out = NULL;
  for (guint e = 1; e <= epochs; e++)
    {
      for (guint k = n_order; k > 1; k--)
        {
          guint j = (guint) g_rand_int_range (rng, 0, (gint32) k);
          guint tmp = order[k - 1];
          order[k - 1] = order[j];
          order[j] = tmp;
        }
      train_epoch (&p, sents, order, n_order, emit, forced, back, pred);
      if (!val)
        continue;
      for (guint veto = 0; veto <= (allow_veto ? HZ_TAGGER_VETO_X : HZ_TAGGER_VETO_NONE); veto++)
          for (gsize b = 0; b < G_N_ELEMENTS (o_biases); b++)
            /* the margin is read by HZ_TAGGER_VETO_O and _ALL only */
            for (gsize m = 0; m < (veto == HZ_TAGGER_VETO_O || veto == HZ_TAGGER_VETO_ALL ? G_N_ELEMENTS (veto_margins) : 1); m++)
            {
              HzTagger *a = averaged (&p);
              a->scope = scope;
              a->veto = veto;
              a->o_bias = o_biases[b];
              a->veto_margin = veto_margins[m];
              a->prose_bias = (float) prose_bias;
              hz_redactor_take_tagger (r, a);
              Counts c = score (r, sents, val, n_val);
              double f = f2 (c);
              printf ("epoch %2u scope %-6s veto %u o_bias %+5.1f margin %4.1f  tp %4u fp %4u fn %4u  F2 %.4f\n", e,
                      scope ? "social" : "all", veto, o_biases[b], veto_margins[m], c.tp, c.fp, c.fn, f);
              Counts *g = &grid[grid_at (e, veto, b, m)];
              g->tp += c.tp;
              g->fp += c.fp;
              g->fn += c.fn;
            }
      hz_redactor_take_tagger (r, NULL);
    }
  if (!val)
    out = averaged (&p);
  g_rand_free (rng);
  g_free (emit);
  g_free (back);
  g_free (pred);
  g_free (forced);
  g_free (p.u);
  g_free (active);
  hz_tagger_free (p.t);
  return out;
}

int
main (int argc, char **argv)
{
  gboolean keep_split = FALSE;
  int epochs = 12, holdout = 4, folds = 4, case_augment = 4, bits = 16, min_count = 2, seed = 17, n_seeds = 1, fixed_epochs = 0, scope = 0, veto = 0;
  double o_bias = 0, veto_margin = 0;
  char *out = NULL;
  GOptionEntry entries[] = {
    { "epochs", 0, 0, G_OPTION_ARG_INT, &epochs, "most epochs tried (selection)", "N" },
    { "holdout", 0, 0, G_OPTION_ARG_INT, &holdout, "hold out every K-th record for selection (0: none)", "K" },
    { "case-augment", 0, 0, G_OPTION_ARG_INT, &case_augment, "add a lower- and an upper-cased copy of every N-th record (0: none; default 4)", "N" },
    { "folds", 0, 0, G_OPTION_ARG_INT, &folds, "cross-validation folds of the selection, 1..K (default 4)", "F" },
    { "bits", 0, 0, G_OPTION_ARG_INT, &bits, "2^B hash buckets", "B" },
    { "min-count", 0, 0, G_OPTION_ARG_INT, &min_count, "buckets seen fewer times stay zero", "C" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, "shuffle seed", "S" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &n_seeds, "average the models of K shuffle seeds (default 1)", "K" },
    { "fixed-epochs", 0, 0, G_OPTION_ARG_INT, &fixed_epochs, "without selection: epochs", "N" },
    { "scope", 0, 0, G_OPTION_ARG_INT, &scope, "0 all texts (default), 1 chat-style/social text only", "S" },
    { "prose-bias", 0, 0, G_OPTION_ARG_DOUBLE, &prose_bias, "O bias added outside the social genre (scope 0; default 8)", "X" },
    { "veto", 0, 0, G_OPTION_ARG_INT, &veto, "without selection: 0 keep rule names, 1 drop those tagged O, 2 tagger replaces them, 3 drop those tagged X (another entity)", "V" },
    { "o-bias", 0, 0, G_OPTION_ARG_DOUBLE, &o_bias, "without selection: O bias", "X" },
    { "veto-margin", 0, 0, G_OPTION_ARG_DOUBLE, &veto_margin, "without selection: veto margin", "X" },
    { "allow-veto", 0, 0, G_OPTION_ARG_NONE, &allow_veto, "selection may choose a veto mode (default: the tagger only adds names)", NULL },
    { "keep-split", 0, 0, G_OPTION_ARG_NONE, &keep_split, "write the model trained without the first fold's held-out records (for error analysis)", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "weights file to write", "OUT.bin" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRAIN.jsonl... — train the PERSON tagger");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc < 2 || !out)
    {
      fprintf (stderr, "train-person-tagger: %s\n", error ? error->message : "need -o OUT.bin and TRAIN.jsonl");
      return 2;
    }
  if (bits < 8 || bits > 22 || epochs < 1 || epochs > 100 || holdout < 0 || holdout == 1 || min_count < 1
      || folds < 1 || (holdout > 0 && folds > holdout) || case_augment < 0 || n_seeds < 1 || n_seeds > 64
      || scope < 0 || scope > 1 || veto < 0 || veto > HZ_TAGGER_VETO_X || !isfinite (o_bias) || !isfinite (veto_margin)
      || !isfinite (prose_bias) || fabs (prose_bias) > 1e6)
    {
      fprintf (stderr, "train-person-tagger: option out of range\n");
      return 2;
    }
  GPtrArray *sents = g_ptr_array_new ();
  guint n_first = 0; /* records of the first file: the held-out records come from it */
  for (int a = 1; a < argc; a++, n_first = n_first ? n_first : sents->len)
    if (!(g_str_has_suffix (argv[a], ".jsonl") ? read_jsonl (argv[a], sents, &error)
                                               : read_conll (argv[a], sents, &error)))
      {
        fprintf (stderr, "train-person-tagger: %s\n", error->message);
        return 1;
      }
  HzRedactor *r = hz_redactor_new (&error);
  if (!r)
    {
      fprintf (stderr, "train-person-tagger: %s\n", error->message);
      return 1;
    }
  hz_redactor_clear_person_tagger (r);
  /* case augmentation (as in Mayhew, Tsygankova, Roth 2019, "ner and pos when nothing is
   * capitalized"): a lower-cased and an upper-cased copy (ASCII letters, so byte offsets
   * stay) of every N-th record with the same gold spans, so that names in all-lowercase and
   * ALL-CAPS text are learnt from their context; a copy goes with its original (never
   * trained on while the original is held out, never scored) */
  guint n_orig = sents->len;
  for (guint k = 0; k < n_orig; k++)
    ((Sent *) g_ptr_array_index (sents, k))->src = k;
  for (guint k = 0; case_augment > 0 && k < n_orig; k += (guint) case_augment)
    for (int up = 0; up < 2; up++)
      {
        const Sent *o = g_ptr_array_index (sents, k);
        Sent *c = sent_new (up ? g_ascii_strup (o->text, (gssize) o->len) : g_ascii_strdown (o->text, (gssize) o->len));
        g_array_append_vals (c->gold, o->gold->data, o->gold->len);
        g_array_append_vals (c->other, o->other->data, o->other->len);
        c->src = k;
        g_ptr_array_add (sents, c);
      }
  ExtractCtx ec = { (guint) bits, NULL };
  guint n_gold = 0;
  for (guint k = 0; k < sents->len; k++)
    {
      ec.cur = g_ptr_array_index (sents, k);
      hz_redactor_scan_rules (r, ec.cur->text, ec.cur->len, extract_hook, &ec);
      n_gold += ec.cur->gold->len / 2;
    }
  printf ("%u records, %u PERSON spans\n", sents->len, n_gold);
  guint *all = g_new (guint, sents->len), n_all = sents->len;
  for (guint k = 0; k < sents->len; k++)
    all[k] = k;
  Choice best = { (guint) (fixed_epochs ? fixed_epochs : epochs), (guint) scope, (guint) veto, (float) o_bias,
                  (float) veto_margin, (float) prose_bias, -1 };
  if (holdout > 0)
    {
      /* K-fold cross-validation over the first file: fold f holds out its records k with
       * k % holdout == holdout - 1 - f; the counts of every setting are summed over the
       * folds (less noise than one held-out split of ~170 names) */
      guint *tr = g_new (guint, sents->len), *va = g_new (guint, sents->len), ntr = 0, nva = 0;
      gsize n_grid = grid_at ((guint) epochs + 1, 0, 0, 0);
      Counts *grid = g_new0 (Counts, n_grid), base = { 0 };
      for (int f = 0; f < folds; f++)
        {
          guint res = (guint) (holdout - 1 - f);
          ntr = nva = 0;
          for (guint k = 0; k < sents->len; k++)
            {
              guint src = ((const Sent *) g_ptr_array_index (sents, k))->src;
              if (src < n_first && src % (guint) holdout == res)
                {
                  if (k < n_orig)
                    va[nva++] = k;
                }
              else
                tr[ntr++] = k;
            }
          Counts c = score (r, sents, va, nva);
          printf ("fold %d: held-out %u records, rules alone: tp %u fp %u fn %u  F2 %.4f\n", f, nva, c.tp, c.fp,
                  c.fn, f2 (c));
          base.tp += c.tp;
          base.fp += c.fp;
          base.fn += c.fn;
          train (sents, tr, ntr, va, nva, (guint) epochs, (guint) bits, (guint) min_count, (guint32) seed, r,
                 (guint) scope, grid);
          if (keep_split && f == 0)
            {
              memcpy (all, tr, ntr * sizeof (guint));
              n_all = ntr;
            }
        }
      printf ("%d fold(s), rules alone: F2 %.4f\n", folds, f2 (base));
      best.f2 = -1;
      for (guint e = 1; e <= (guint) epochs; e++)
        for (guint v = 0; v < N_VETO; v++)
          for (gsize b = 0; b < N_BIAS; b++)
            for (gsize m = 0; m < N_MARGIN; m++)
              {
                Counts c = grid[grid_at (e, v, b, m)];
                if (c.tp + c.fp + c.fn > 0 && f2 (c) > best.f2)
                  best = (Choice) { e, (guint) scope, v, o_biases[b], veto_margins[m], (float) prose_bias, f2 (c) };
              }
      printf ("chosen: epochs %u scope %s veto %u o_bias %+.1f veto_margin %.1f prose_bias %+.1f (held-out F2 %.4f)\n",
              best.epochs, best.scope ? "social" : "all", best.veto, best.o_bias, best.veto_margin, best.prose_bias,
              best.f2);
      g_free (grid);
      g_free (tr);
      g_free (va);
    }
  HzTagger *t = train (sents, all, n_all, NULL, 0, best.epochs, (guint) bits, (guint) min_count,
                       (guint32) seed, r, best.scope, NULL);
  /* --seeds K: the mean of K models trained with the shuffle seeds seed .. seed + K - 1 */
  for (int k = 1; k < n_seeds; k++)
    {
      HzTagger *u = train (sents, all, n_all, NULL, 0, best.epochs, (guint) bits, (guint) min_count,
                           (guint32) (seed + k), r, best.scope, NULL);
      for (gsize j = 0; j < (gsize) HZ_TAG_N << bits; j++)
        t->w[j] += u->w[j];
      for (int j = 0; j < (HZ_TAG_N + 1) * HZ_TAG_N; j++)
        t->trans[j] += u->trans[j];
      hz_tagger_free (u);
    }
  for (gsize j = 0; j < (gsize) HZ_TAG_N << bits; j++)
    t->w[j] /= (float) n_seeds; /* exact for one seed */
  for (int j = 0; j < (HZ_TAG_N + 1) * HZ_TAG_N; j++)
    t->trans[j] /= (float) n_seeds;
  t->scope = best.scope;
  t->veto = best.veto;
  t->o_bias = best.o_bias;
  t->veto_margin = best.veto_margin;
  t->prose_bias = best.prose_bias;
  g_autoptr (GBytes) bytes = hz_tagger_serialize (t);
  if (!g_file_set_contents (out, g_bytes_get_data (bytes, NULL), (gssize) g_bytes_get_size (bytes), &error))
    {
      fprintf (stderr, "train-person-tagger: %s\n", error->message);
      return 1;
    }
  GChecksum *c = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (c, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  printf ("wrote %s (%" G_GSIZE_FORMAT " bytes, sha256 %s)\n", out, g_bytes_get_size (bytes), g_checksum_get_string (c));
  g_checksum_free (c);
  hz_tagger_free (t);
  hz_redactor_free (r);
  return 0;
}
