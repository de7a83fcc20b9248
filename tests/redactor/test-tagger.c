/* The learned PERSON tagger (redactor/hz-tagger.h): Viterbi on toy chains, the weights-file
 * format (round trip, determinism, hostile and truncated files -> clear error and rules-only
 * fallback), the shipped weights' version and checksum, features, scope, and the miss
 * classes fixed with the tagger (invented texts). */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "hanzo/redact.h"
#include "hz-redact.h"
#include "hz-tagger.h"

/* SHA-256 of the shipped redactor/data/person-tagger.bin; update it (and redactor/README.md)
 * when the weights are regenerated. */
#define SHIPPED_SHA256 "543d4c87de9b496cabb3487ad257f9fc282679df1b40aee6ce9addabd65b3f86"
/* ... and of redactor/data/person-tagger-prose.bin, the tagger of encyclopedic prose */
#define SHIPPED_PROSE_SHA256 "d366019126e761d1950ad6528bd6465cb45aac66dd0ac3a73456cf082c70469b"

static void
test_viterbi_toy (void)
{
  /* start -> O strongly preferred; emissions alone would pick B at token 1 and I at token 2 */
  float trans[(HZ_TAG_N + 1) * HZ_TAG_N] = { 0 };
  float emit[4 * HZ_TAG_N] = {
    1, 0, 0, 0,   /* O */
    0, 2, 0, 0,   /* B */
    0, 0, 3, 0,   /* I */
    2, 0, 1, 0,   /* O */
  };
  guint8 back[4 * HZ_TAG_N], tags[4];
  hz_tagger_viterbi (emit, 4, trans, back, tags);
  guint8 want[] = { HZ_TAG_O, HZ_TAG_B, HZ_TAG_I, HZ_TAG_O };
  g_assert_cmpmem (tags, 4, want, 4);

  /* O -> I forbidden (large negative): token 2 must become B or O instead of I after O */
  float trans2[(HZ_TAG_N + 1) * HZ_TAG_N] = { 0 };
  trans2[(1 + HZ_TAG_O) * HZ_TAG_N + HZ_TAG_I] = -100;
  float emit2[2 * HZ_TAG_N] = { 5, 0, 0, 0, 0, 1, 3, 0 };
  hz_tagger_viterbi (emit2, 2, trans2, back, tags);
  g_assert_cmpuint (tags[0], ==, HZ_TAG_O);
  g_assert_cmpuint (tags[1], ==, HZ_TAG_B);

  /* transitions can outweigh emissions: B -> I bonus joins the second token to the name */
  float trans3[(HZ_TAG_N + 1) * HZ_TAG_N] = { 0 };
  trans3[(1 + HZ_TAG_B) * HZ_TAG_N + HZ_TAG_I] = 4;
  float emit3[2 * HZ_TAG_N] = { 0, 3, 0, 0, 2, 0, 0, 0 };
  hz_tagger_viterbi (emit3, 2, trans3, back, tags);
  g_assert_cmpuint (tags[0], ==, HZ_TAG_B);
  g_assert_cmpuint (tags[1], ==, HZ_TAG_I);

  /* one token, ties go to the lower tag */
  float emit4[HZ_TAG_N] = { 1, 1, 1, 1 };
  hz_tagger_viterbi (emit4, 1, trans, back, tags);
  g_assert_cmpuint (tags[0], ==, HZ_TAG_O);

  /* X (another entity) is a tag like the others: "Bank Street" as X X, not a name */
  float emit5[2 * HZ_TAG_N] = { 0, 1, 0, 3, 0, 0, 1, 2 };
  hz_tagger_viterbi (emit5, 2, trans, back, tags);
  g_assert_cmpuint (tags[0], ==, HZ_TAG_X);
  g_assert_cmpuint (tags[1], ==, HZ_TAG_X);
}

/* hz_tagger_viterbi_runs() decodes the same tags as hz_tagger_viterbi() over the whole
 * chain with the forced tokens' emissions (integer scores: exact float sums, ties alike) */
static void
test_viterbi_runs (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  enum { MAXN = 40 };
  float emit[MAXN * HZ_TAG_N], trans[(HZ_TAG_N + 1) * HZ_TAG_N];
  guint8 forced[MAXN], back[MAXN * HZ_TAG_N], a[MAXN], b[MAXN];
  for (int round = 0; round < 2000; round++)
    {
      guint n = (guint) g_rand_int_range (rng, 1, MAXN + 1);
      float o_bias = (float) g_rand_int_range (rng, -20, 21);
      for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
        trans[k] = (float) g_rand_int_range (rng, -10, 11);
      for (guint i = 0; i < n; i++)
        {
          forced[i] = g_rand_int_range (rng, 0, 5) < 2;
          for (int y = 0; y < HZ_TAG_N; y++)
            emit[i * HZ_TAG_N + y] = forced[i] ? (y == HZ_TAG_O ? o_bias + HZ_TAGGER_FORCE_O : 0)
                                               : (float) g_rand_int_range (rng, -20, 21);
        }
      hz_tagger_viterbi (emit, n, trans, back, a);
      memset (b, 0xff, sizeof b);
      hz_tagger_viterbi_runs (emit, forced, n, trans, back, b);
      g_assert_cmpmem (a, n, b, n);
      for (guint i = 0; i < n; i++)
        if (forced[i])
          g_assert_cmpuint (b[i], ==, HZ_TAG_O);
    }
}

/* hz_tagger_score() (direct table of the small templates, sparse rows, vector sums, the
 * POPCNT/SSE4.1 clone or the generic code) gives exactly the scores of the weights of
 * hz_tagger_features()' buckets, the trainer's definition */
typedef struct {
  const HzTagger *t;
  guint tokens, featured;
} ScoreCtx;

static void
score_hook (HzScan *scan, gpointer data)
{
  ScoreCtx *c = data;
  const HzTagger *t = c->t;
  guint n = scan->n_toks;
  HzTagMark *marks = g_new (HzTagMark, MAX (n, 1));
  float *emit = g_new (float, (gsize) MAX (n, 1) * HZ_TAG_N);
  guint8 *forced = g_new (guint8, MAX (n, 1));
  hz_tagger_marks (scan, marks);
  const float o_bias = -1.5f;
  guint n_feat = hz_tagger_score (scan, t, marks, o_bias, emit, forced);
  guint32 f[HZ_TAGGER_MAX_FEATS];
  guint want_feat = 0;
  for (guint i = 0; i < n; i++)
    {
      guint nf = hz_tagger_features (scan, marks, i, t->bucket_bits, f);
      want_feat += nf > 0;
      if (n_feat == 0)
        continue;
      g_assert_cmpuint (forced[i], ==, nf == 0);
      if (nf == 0)
        {
          g_assert_cmpfloat (emit[i * HZ_TAG_N], ==, o_bias + HZ_TAGGER_FORCE_O);
          continue;
        }
      gint32 sum[HZ_TAG_N] = { 0 };
      for (guint k = 0; k < nf; k++)
        for (int y = 0; y < HZ_TAG_N; y++)
          sum[y] += t->rows[(gsize) hz_tagger_row (t, f[k]) * HZ_TAG_ROW + (gsize) y];
      g_assert_cmpfloat (emit[i * HZ_TAG_N + 0], ==, o_bias + (float) sum[0] * t->scale);
      g_assert_cmpfloat (emit[i * HZ_TAG_N + 1], ==, (float) sum[1] * t->scale);
      g_assert_cmpfloat (emit[i * HZ_TAG_N + 2], ==, (float) sum[2] * t->scale);
      g_assert_cmpfloat (emit[i * HZ_TAG_N + 3], ==, (float) sum[3] * t->scale);
    }
  g_assert_cmpuint (n_feat, ==, want_feat);
  c->tokens += n;
  c->featured += n_feat;
  g_free (marks);
  g_free (emit);
  g_free (forced);
}

static void
test_score_fast (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) wb = g_resources_lookup_data (HZ_TAGGER_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  g_assert_no_error (error);
  HzTagger *t = hz_tagger_new_from_bytes (wb, &error);
  g_assert_no_error (error);
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  GString *longer = g_string_new (NULL);
  for (int i = 0; i < 60; i++)
    g_string_append (longer, "Then Ms. Okafor-Lindqvist told @jo_b that DANA and lil mo met at Nørrebro st. ");
  const char *texts[] = {
    "see you tomorrow Sam lol",
    "RT @djmarv : Gets To See Lindsay Tonight ! :D Dana Whitcombe says hi",
    "Mr. Baader is a 21 year old man who grew up in Remniku.",
    "WHY DID KENDRA LEAVE THE SHOW , SO SAD",
    "hey tanner , thanks obama and emma and kaite",
    "Šárka Ottová called 555-0100 from Zürich; mail jan@example.com",
    "the the the",
    "",
    longer->str,
  };
  for (int generic = 0; generic < 2; generic++)
    {
      hz_tagger_set_generic_only (generic);
      ScoreCtx c = { t, 0, 0 };
      for (gsize k = 0; k < G_N_ELEMENTS (texts); k++)
        hz_redactor_scan_rules (r, texts[k], strlen (texts[k]), score_hook, &c);
      g_assert_cmpuint (c.tokens, >, 300);
      g_assert_cmpuint (c.featured, >, 100);
    }
  hz_tagger_set_generic_only (FALSE);
  g_string_free (longer, TRUE);
  hz_redactor_free (r);
  hz_tagger_free (t);
}

static HzTagger *
toy_tagger (void)
{
  HzTagger *t = hz_tagger_new (8);
  for (guint k = 0; k < (guint) HZ_TAG_N << 8; k++)
    t->w[k] = (float) ((int) (k * 37 % 201) - 100) / 10.0f;
  /* a few all-zero buckets: they get no row in the file */
  for (guint b = 10; b < 200; b += 7)
    for (int y = 0; y < HZ_TAG_N; y++)
      t->w[b * HZ_TAG_N + y] = 0;
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    t->trans[k] = (float) k - 5.5f;
  t->scope = HZ_TAGGER_SCOPE_SOCIAL;
  t->veto = HZ_TAGGER_VETO_O;
  t->o_bias = -3.25f;
  t->veto_margin = 2.0f;
  t->prose_bias = 6.5f;
  return t;
}

static void
test_roundtrip (void)
{
  HzTagger *t = toy_tagger ();
  g_autoptr (GBytes) a = hz_tagger_serialize (t);
  g_autoptr (GBytes) b = hz_tagger_serialize (t);
  g_assert_true (g_bytes_equal (a, b)); /* deterministic */
  g_autoptr (GError) error = NULL;
  HzTagger *u = hz_tagger_new_from_bytes (a, &error);
  g_assert_no_error (error);
  g_assert_null (u->w); /* a loaded tagger keeps the packed tables only */
  guint zero = 0;
  for (guint k = 0; k < (guint) HZ_TAG_N << 8; k += HZ_TAG_N)
    zero += t->w[k] == 0 && t->w[k + 1] == 0 && t->w[k + 2] == 0;
  g_assert_cmpuint (zero, >=, 27);
  g_assert_cmpuint (u->n_rows, ==, 256 - zero);
  g_assert_cmpuint (g_bytes_get_size (a), ==, HZ_TAGGER_HEADER + 256 / 8 + 2 * HZ_TAG_N * u->n_rows);
  g_assert_cmpuint (u->bucket_bits, ==, 8);
  g_assert_cmpuint (u->scope, ==, HZ_TAGGER_SCOPE_SOCIAL);
  g_assert_cmpuint (u->veto, ==, HZ_TAGGER_VETO_O);
  g_assert_cmpfloat (u->o_bias, ==, -3.25f);
  g_assert_cmpfloat (u->veto_margin, ==, 2.0f);
  g_assert_cmpfloat (u->prose_bias, ==, 6.5f);
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    g_assert_cmpfloat (u->trans[k], ==, t->trans[k]);
  /* int16 quantisation with one scale: error <= half a step of 10/32767; the packed tables
   * of the trained tagger (hz_tagger_pack()) hold the same values as the loaded ones */
  hz_tagger_pack (t);
  for (guint k = 0; k < 256; k++)
    for (int y = 0; y < HZ_TAG_N; y++)
      {
        g_assert_cmpfloat (fabsf (hz_tagger_weight (u, k, y) - t->w[k * HZ_TAG_N + y]), <=, 10.0f / 32767 * 0.51f);
        g_assert_cmpfloat (hz_tagger_weight (u, k, y), ==, hz_tagger_weight (t, k, y));
      }
  /* loading the same bytes twice gives identical tables */
  HzTagger *v = hz_tagger_new_from_bytes (a, NULL);
  g_assert_cmpuint (v->n_rows, ==, u->n_rows);
  g_assert_cmpmem (u->rows, sizeof (gint16) * HZ_TAG_ROW * (1 + u->n_rows), v->rows,
                   sizeof (gint16) * HZ_TAG_ROW * (1 + v->n_rows));
  hz_tagger_free (v);
  hz_tagger_free (u);
  hz_tagger_free (t);
}

static void
test_shipped_weights (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) b = g_resources_lookup_data (HZ_TAGGER_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  g_assert_no_error (error);
  gsize n = 0;
  const guint8 *p = g_bytes_get_data (b, &n);
  g_assert_cmpuint (n, >, HZ_TAGGER_HEADER);
  g_assert_cmpmem (p, 8, HZ_TAGGER_MAGIC, 8);
  g_assert_cmpuint (p[8] | p[9] << 8, ==, HZ_TAGGER_VERSION);
  g_autofree char *sum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, b);
  g_assert_cmpstr (sum, ==, SHIPPED_SHA256);
  HzTagger *t = hz_tagger_new_from_bytes (b, &error);
  g_assert_no_error (error);
  /* every text, prose with a higher O bias (README.md: chosen on the developer set) */
  g_assert_cmpuint (t->scope, ==, HZ_TAGGER_SCOPE_ALL);
  g_assert_cmpfloat (t->prose_bias, >, 0);
  /* rule names that the tagger reads as another kind of entity are dropped (README.md) */
  g_assert_cmpuint (t->veto, ==, HZ_TAGGER_VETO_X);
  hz_tagger_free (t);
  /* the default redactor uses it */
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  g_assert_true (hz_redactor_has_person_tagger (r));
  hz_redactor_free (r);
}

/* The prose tagger: its shipped file, the texts it is used for, and how it is loaded. */
static void
genre_hook (HzScan *scan, gpointer data)
{
  *(gboolean *) data = hz_tagger_text_is_encyclopedic (scan);
}

static gboolean
encyclopedic (const HzRedactor *r, const char *text)
{
  gboolean e = FALSE;
  hz_redactor_scan_rules (r, text, strlen (text), genre_hook, &e);
  return e;
}

static void
test_prose_tagger (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) b = g_resources_lookup_data (HZ_TAGGER_PROSE_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_autofree char *sum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, b);
  g_assert_cmpstr (sum, ==, SHIPPED_PROSE_SHA256);
  HzTagger *t = hz_tagger_new_from_bytes (b, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->veto, ==, HZ_TAGGER_VETO_X);
  hz_tagger_free (t);

  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  /* encyclopedic prose: whole capitalised sentences, no chat signs, no "I"/"you"/"my" */
  g_assert_true (encyclopedic (r, "Dorvan Pelk was a Canadian ice hockey player who played "
                                  "for the Ottawa Senators from 1912 to 1915."));
  g_assert_true (encyclopedic (r, "The village lies on the river . Its church was built in 1420 ."));
  /* not: too short, chat-style, a handle, first or second person, a lower-case sentence */
  g_assert_false (encyclopedic (r, "Dorvan Pelk played hockey."));
  g_assert_false (encyclopedic (r, "lol Dorvan Pelk was sooo good in that game last night , "
                                   "best player ever ."));
  g_assert_false (encyclopedic (r, "Dorvan Pelk was a Canadian ice hockey player who played "
                                   "for @Senators from 1912 to 1915."));
  g_assert_false (encyclopedic (r, "I think Dorvan Pelk was a Canadian ice hockey player who "
                                   "played for the Ottawa Senators."));
  g_assert_false (encyclopedic (r, "Dorvan Pelk was a Canadian ice hockey player. he played "
                                   "for the Ottawa Senators from 1912 to 1915."));
  g_assert_false (encyclopedic (r, "Dorvan Pelk was a Canadian ice hockey player who played "
                                   "for the Ottawa Senators from 1912 to 1915 and"));

  /* the prose tagger is what tags such a text: without it, with the PERSON tagger only,
   * and with no taggers at all, the results may differ but the API says which is loaded */
  const char *text = "Dorvan Pelk was a Canadian ice hockey player who played for the Ottawa "
                     "Senators from 1912 to 1915.";
  HzRedaction *with = hz_redactor_analyze (r, text, -1, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (with->n_spans, >=, 1);
  g_assert_cmpstr (hz_entity_type_name (with->spans[0].type), ==, "PERSON");
  g_assert_cmpuint (with->spans[0].start_byte, ==, 0);
  g_assert_cmpuint (with->spans[0].end_byte, ==, strlen ("Dorvan Pelk"));
  hz_redaction_free (with);
  /* a missing file leaves no prose tagger (the PERSON tagger stays), a good one loads */
  g_assert_false (hz_redactor_load_prose_tagger (r, "/nonexistent/prose.bin", &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_true (hz_redactor_has_person_tagger (r));
  g_assert_null (r->tagger_prose);
  g_assert_true (hz_redactor_load_prose_tagger (r, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (r->tagger_prose);
  /* clearing drops both */
  hz_redactor_clear_person_tagger (r);
  g_assert_false (hz_redactor_has_person_tagger (r));
  g_assert_null (r->tagger_prose);
  hz_redactor_free (r);

  /* HZ_REDACT_PROSE_TAGGER=none (any case): the PERSON tagger alone;
   * HZ_REDACT_PERSON_TAGGER=none: neither */
  static const struct {
    const char *var, *value;
    gboolean person;
  } envs[] = { { "HZ_REDACT_PROSE_TAGGER", "none", TRUE }, { "HZ_REDACT_PERSON_TAGGER", "none", FALSE },
               { "HZ_REDACT_PROSE_TAGGER", "NONE", TRUE } };
  for (guint k = 0; k < G_N_ELEMENTS (envs); k++)
    {
      g_setenv (envs[k].var, envs[k].value, TRUE);
      r = hz_redactor_new (&error);
      g_assert_no_error (error);
      g_assert_true (hz_redactor_has_person_tagger (r) == envs[k].person);
      g_assert_null (r->tagger_prose);
      hz_redactor_free (r);
      g_unsetenv (envs[k].var);
    }
}

/* Every way a weights file can be broken fails with G_IO_ERROR_INVALID_DATA. */
static void
expect_bad (const guint8 *p, gsize n, const char *what)
{
  g_autoptr (GBytes) b = g_bytes_new (p, n);
  g_autoptr (GError) error = NULL;
  HzTagger *t = hz_tagger_new_from_bytes (b, &error);
  if (t || !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA))
    g_error ("%s: accepted or wrong error (%s)", what, error ? error->message : "none");
  g_assert_nonnull (strstr (error->message, "person tagger weights"));
}

static guint32
rd32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

static void
put32 (guint8 *p, guint32 v)
{
  p[0] = (guint8) v;
  p[1] = (guint8) (v >> 8);
  p[2] = (guint8) (v >> 16);
  p[3] = (guint8) (v >> 24);
}

static void
test_hostile (void)
{
  HzTagger *t = toy_tagger ();
  g_autoptr (GBytes) good = hz_tagger_serialize (t);
  hz_tagger_free (t);
  gsize n = g_bytes_get_size (good);
  guint8 *p = g_memdup2 (g_bytes_get_data (good, NULL), n);
  guint8 *q = g_malloc (n + 16);

  expect_bad (p, 0, "empty");
  expect_bad (p, 50, "header cut");
  expect_bad (p, n - 1, "payload cut by one byte");
  memcpy (q, p, n);
  q[n] = 0;
  expect_bad (q, n + 1, "one byte too many");
#define MUTATE(stmt, what) \
  do { memcpy (q, p, n); stmt; expect_bad (q, n, what); } while (0)
  MUTATE (q[0] = 'X', "magic");
  MUTATE (put32 (q + 8, HZ_TAGGER_VERSION + 1), "future version");
  {
    /* a newer file asks for a newer build, an older one for retraining */
    memcpy (q, p, n);
    put32 (q + 8, HZ_TAGGER_VERSION + 1);
    g_autoptr (GBytes) b = g_bytes_new (q, n);
    g_autoptr (GError) error = NULL;
    g_assert_null (hz_tagger_new_from_bytes (b, &error));
    g_assert_nonnull (strstr (error->message, "newer build"));
    put32 (q + 8, HZ_TAGGER_VERSION - 1);
    g_autoptr (GBytes) b2 = g_bytes_new (q, n);
    g_clear_error (&error);
    g_assert_null (hz_tagger_new_from_bytes (b2, &error));
    g_assert_nonnull (strstr (error->message, "retrain"));
  }
  MUTATE (put32 (q + 8, 1), "version 1 (other header layout)");
  MUTATE (put32 (q + 8, 2), "version 2 (dense payload)");
  MUTATE (put32 (q + 8, 3), "version 3 (three tags)");
  MUTATE (put32 (q + 12, 30), "bucket_bits 30");
  MUTATE (put32 (q + 12, 9), "bucket_bits not matching the size");
  MUTATE (put32 (q + 16, 7), "unknown scope");
  MUTATE (put32 (q + 20, 9), "unknown veto");
  MUTATE (put32 (q + 20, HZ_TAGGER_VETO_X + 1), "veto one past the last mode");
  MUTATE (put32 (q + 24, 0x7fc00000), "NaN o_bias");
  MUTATE (put32 (q + 28, 0), "zero scale");
  MUTATE (put32 (q + 36, 0x7fc00000), "NaN prose_bias");
  MUTATE (put32 (q + 40, 0x7f800000), "infinite transition");
  MUTATE (put32 (q + HZ_TAGGER_OFF_NROWS, 257), "more rows than buckets");
  MUTATE (put32 (q + HZ_TAGGER_OFF_NROWS, rd32 (q + HZ_TAGGER_OFF_NROWS) - 1), "one row less (size)");
  MUTATE (q[HZ_TAGGER_HEADER + 100] ^= 1, "payload bit flip (checksum)");
  MUTATE (q[HZ_TAGGER_HEADER + 3] ^= 1, "bitmap bit flip (checksum)");
  MUTATE (q[HZ_TAGGER_OFF_SHA + 3] ^= 1, "checksum bit flip");
  /* header fields that pass the range checks are covered by the checksum too */
  MUTATE (q[31] ^= 1, "scale bit flip (checksum)");
  MUTATE (q[24] ^= 1, "o_bias bit flip (checksum)");
  MUTATE (q[HZ_TAGGER_OFF_TRANS + 3] ^= 0x80, "transition sign flip (checksum)");
  MUTATE (put32 (q + 20, HZ_TAGGER_VETO_NONE), "other veto mode (checksum)");
  MUTATE (q[HZ_TAGGER_HEADER - 1] ^= 1, "last checksum byte flipped");
#undef MUTATE
  /* a bitmap that marks one bucket more than the header's rows, with a valid checksum */
  memcpy (q, p, n);
  guint8 *bitmap = q + HZ_TAGGER_HEADER;
  guint bit = 0;
  while (bitmap[bit / 8] >> (bit % 8) & 1)
    bit++;
  bitmap[bit / 8] |= (guint8) (1u << (bit % 8));
  hz_tagger_checksum (q, n, q + HZ_TAGGER_OFF_SHA);
  expect_bad (q, n, "bitmap with one bucket more than rows");
  g_free (q);

  /* through the public API: a truncated file -> FALSE, clear error, rules alone; the
   * results equal those of a redactor without a tagger */
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "hz-test-tagger-XXXXXX.bin", NULL);
  int fd = g_mkstemp (path);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, p, n / 2), ==, (gssize) (n / 2));
  close (fd);
  HzRedactor *r = hz_redactor_new (NULL);
  g_assert_true (hz_redactor_has_person_tagger (r));
  g_autoptr (GError) error = NULL;
  g_assert_false (hz_redactor_load_person_tagger (r, path, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "truncated"));
  g_assert_false (hz_redactor_has_person_tagger (r));
  g_clear_error (&error);
  g_assert_false (hz_redactor_load_person_tagger (r, "/nonexistent/tagger.bin", &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_clear_error (&error);
  HzRedactor *rules = hz_redactor_new (NULL);
  hz_redactor_clear_person_tagger (rules);
  const char *text = "RT @djmarv : Gets To See Lindsay Tonight ! :D Dana Whitcombe says hi";
  HzRedaction *a = hz_redactor_analyze (r, text, -1, 0, NULL);
  HzRedaction *b = hz_redactor_analyze (rules, text, -1, 0, NULL);
  g_assert_cmpuint (a->n_spans, ==, b->n_spans);
  g_assert_cmpuint (a->n_spans, >, 0);
  for (guint k = 0; k < a->n_spans; k++)
    {
      g_assert_cmpuint (a->spans[k].start_byte, ==, b->spans[k].start_byte);
      g_assert_cmpuint (a->spans[k].end_byte, ==, b->spans[k].end_byte);
      g_assert_cmpint (a->spans[k].type, ==, b->spans[k].type);
    }
  hz_redaction_free (a);
  hz_redaction_free (b);
  /* the built-in weights load again */
  g_assert_true (hz_redactor_load_person_tagger (r, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (hz_redactor_has_person_tagger (r));
  hz_redactor_free (rules);
  hz_redactor_free (r);
  g_unlink (path);
  g_free (p);
}

/* features of one token of a text (rules run first, as at run time) */
typedef struct {
  guint tok;
  guint32 f[HZ_TAGGER_MAX_FEATS];
  guint nf;
  gboolean in_scope, in_scope_all;
  float o_bias_all;
  HzTagger *scope_tagger;
} FeatCtx;

static void
feat_hook (HzScan *scan, gpointer data)
{
  FeatCtx *c = data;
  HzTagMark marks[64];
  g_assert_cmpuint (scan->n_toks, <=, 64);
  g_assert_cmpuint (c->tok, <, scan->n_toks);
  hz_tagger_marks (scan, marks);
  c->nf = hz_tagger_features (scan, marks, c->tok, 16, c->f);
  c->in_scope = hz_tagger_in_scope (c->scope_tagger, scan);
  g_assert_true (c->in_scope == hz_tagger_text_is_social (scan));
  HzTagger all = { .scope = HZ_TAGGER_SCOPE_ALL, .o_bias = -2.0f, .prose_bias = 5.0f };
  c->in_scope_all = hz_tagger_in_scope (&all, scan);
  c->o_bias_all = hz_tagger_o_bias_for (&all, scan);
}

static void
features_of (const HzRedactor *r, const char *text, guint tok, FeatCtx *c)
{
  HzTagger scope = { .scope = HZ_TAGGER_SCOPE_SOCIAL };
  c->tok = tok;
  c->scope_tagger = &scope;
  hz_redactor_scan_rules (r, text, strlen (text), feat_hook, c);
  c->scope_tagger = NULL;
}

static gboolean
same_features (const FeatCtx *a, const FeatCtx *b)
{
  return a->nf == b->nf && memcmp (a->f, b->f, a->nf * sizeof (guint32)) == 0;
}

static void
test_features (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  FeatCtx a, b, c;
  features_of (r, "see you tomorrow Sam lol", 3, &a);
  features_of (r, "see you tomorrow Sam lol", 3, &b);
  g_assert_true (same_features (&a, &b)); /* deterministic */
  g_assert_cmpuint (a.nf, >=, 20);
  g_assert_cmpuint (a.nf, <=, HZ_TAGGER_MAX_FEATS);
  for (guint k = 0; k < a.nf; k++)
    g_assert_cmpuint (a.f[k], <, 1u << 16);
  /* '@' adjacency, case and the neighbouring word change features */
  features_of (r, "see you tomorrow @Sam lol", 3, &c);
  g_assert_false (same_features (&a, &c));
  features_of (r, "see you tomorrow sam lol", 3, &c);
  g_assert_false (same_features (&a, &c));
  features_of (r, "see you tomorrow Sam haha", 3, &c);
  g_assert_false (same_features (&a, &c));

  /* scope: chat-style text, handles, emoji and headline case; not plain prose */
  features_of (r, "lol i cant even , see you tomorrow Sam", 0, &c);
  g_assert_true (c.in_scope);
  features_of (r, "Thanks @danaw for the ride", 0, &c);
  g_assert_true (c.in_scope);
  features_of (r, "Gets To See Lindsay Tonight With The Whole Family", 0, &c);
  g_assert_true (c.in_scope);
  features_of (r, "The soldier was killed when another avalanche hit the northern area.", 0, &c);
  g_assert_false (c.in_scope);
  features_of (r, "Mr. Baader is a 21 year old man who grew up in Remniku.", 0, &c);
  g_assert_false (c.in_scope);
  /* HZ_TAGGER_SCOPE_ALL tags every text; prose with prose_bias added to the O bias */
  g_assert_true (c.in_scope_all);
  g_assert_cmpfloat (c.o_bias_all, ==, 3.0f);
  features_of (r, "Thanks @danaw for the ride", 0, &c);
  g_assert_true (c.in_scope_all);
  g_assert_cmpfloat (c.o_bias_all, ==, -2.0f);
  hz_redactor_free (r);
}

/* Miss classes fixed with the tagger (invented texts): every PERSON span expected, exactly. */
typedef struct {
  const char *text;
  const char *names[4];
} NameCase;

static const NameCase name_cases[] = {
  /* names in headline-case text, where capitalisation says nothing (the rules missed them) */
  { "RT @djmarv : Gets To See Lindsay Tonight ! :D", { "djmarv", "Lindsay", NULL } },
  { "Is Joaquin Varnell Our Modern Day Andy Kaufman ?", { "Joaquin Varnell", "Andy Kaufman", NULL } },
  /* names listed with commas stay separate spans */
  { "Meet Levin , Hien and Fabi at the mall tomorrow lol", { "Levin", "Hien", "Fabi", NULL } },
  /* a title before a name found by the tagger stays outside the span */
  { "omg Dr. Kyle Kuefer just answered my tweet !!", { "Kyle Kuefer", NULL } },
  /* comment-style text outside the social genre (no handle, emoji or chat signals): the
   * tagger runs there too, with the prose O bias (the rules missed the name) */
  { "Happy birthday Orla , I love your videos of your cat as you film him .", { "Orla", NULL } },
  /* ALL-CAPS chat text (the rules find no name there; the tagger is trained with upper- and
   * lower-cased copies of its tweets) */
  { "WHY DID KENDRA LEAVE THE SHOW , SO SAD", { "KENDRA", NULL } },
  /* a run with an organisation word inside or right after it is a firm, not a person */
  { "I work for Aunt Bertha Inc", { NULL } },
  /* labels of form fields are no names, nor part of the name before them */
  { "Name: Toshiko Varlund Phone: 0490 75 40 81", { "Toshiko Varlund", NULL } },
  { "Personal Info: Phone: 201-948-1927 E-mail: kvarl@example.com", { NULL } },
  /* a name written with diacritics in chat text is kept (the tagger's data are English) */
  { "😀 Šárka Ottová: see you there", { "Šárka Ottová", NULL } },
  /* places and teams that the rules take for names, read by the tagger as another kind of
   * entity (tag X) and dropped (HZ_TAGGER_VETO_X); the people stay */
  { "Brensbach is a municipality in Hesse, Germany.", { NULL } },
  { "Maria Lopez played for the Boston Bruins.", { "Maria Lopez", NULL } },
  { "She moved to Salem, Oregon with Tom Harris.", { "Tom Harris", NULL } },
  /* ... but not a listed given name (no place) with a capitalised word after it, nor a
   * repeat of a name that stays */
  { "We hired Tamir Lindqvist as our new accountant.", { "Tamir Lindqvist", NULL } },
  { "Marisol Quenby arrived late. Everyone waited for Quenby, and Quenby said sorry.",
    { "Marisol Quenby", "Quenby", "Quenby", NULL } },
  /* in prose a lower-case English word at the edge of a tagger run is no part of the name */
  { "He needed someone to watch his son, so he took young Carter along to the show.", { "Carter", NULL } },
};

static void
test_name_cases (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  for (gsize c = 0; c < G_N_ELEMENTS (name_cases); c++)
    {
      const NameCase *k = &name_cases[c];
      HzRedaction *res = hz_redactor_analyze (r, k->text, -1, 0, NULL);
      GString *got = g_string_new (NULL), *want = g_string_new (NULL);
      for (guint i = 0; i < res->n_spans; i++)
        if (res->spans[i].type == HZ_ENTITY_PERSON)
          g_string_append_printf (got, "[%.*s]", (int) (res->spans[i].end_byte - res->spans[i].start_byte),
                                  res->text + res->spans[i].start_byte);
      for (guint i = 0; k->names[i]; i++)
        g_string_append_printf (want, "[%s]", k->names[i]);
      if (strcmp (got->str, want->str) != 0)
        g_error ("\"%s\": expected %s, got %s", k->text, want->str, got->str);
      g_string_free (got, TRUE);
      g_string_free (want, TRUE);
      hz_redaction_free (res);
    }
  hz_redactor_free (r);
}

/* No tagger span crosses a comma or other separator, and every span is in bounds, whatever
 * the text (tokens of a long chat message, with the heap work space). */
static void
test_long_text (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  GString *s = g_string_new (NULL);
  for (int i = 0; i < 400; i++)
    g_string_append (s, i % 7 == 0 ? "lol Sam , Jo and Mia Tan went to see Kid Cudi !! " : "omg hey ");
  HzRedaction *res = hz_redactor_analyze (r, s->str, (gssize) s->len, 0, NULL);
  guint names = 0;
  for (guint i = 0; i < res->n_spans; i++)
    {
      const HzSpan *sp = &res->spans[i];
      g_assert_cmpuint (sp->end_byte, <=, res->len);
      g_assert_cmpuint (sp->start_byte, <, sp->end_byte);
      if (sp->type != HZ_ENTITY_PERSON)
        continue;
      names++;
      g_assert_null (memchr (res->text + sp->start_byte, ',', sp->end_byte - sp->start_byte));
      g_assert_null (memchr (res->text + sp->start_byte, '!', sp->end_byte - sp->start_byte));
    }
  g_assert_cmpuint (names, >, 0);
  hz_redaction_free (res);
  g_string_free (s, TRUE);
  hz_redactor_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("HZ_REDACT_PERSON_TAGGER"); /* the built-in weights */
  g_test_add_func ("/redact/tagger/viterbi-toy", test_viterbi_toy);
  g_test_add_func ("/redact/tagger/viterbi-runs", test_viterbi_runs);
  g_test_add_func ("/redact/tagger/score-fast", test_score_fast);
  g_test_add_func ("/redact/tagger/roundtrip", test_roundtrip);
  g_test_add_func ("/redact/tagger/shipped-weights", test_shipped_weights);
  g_test_add_func ("/redact/tagger/prose-tagger", test_prose_tagger);
  g_test_add_func ("/redact/tagger/hostile-file", test_hostile);
  g_test_add_func ("/redact/tagger/features", test_features);
  g_test_add_func ("/redact/tagger/name-cases", test_name_cases);
  g_test_add_func ("/redact/tagger/long-text", test_long_text);
  return g_test_run ();
}
