/* tests/engine/test-tokenizer.c — tokenizers against llama.cpp's golden vectors (all 7
 * vocabularies: SPM, byte-level BPE, WordPiece)
 * (../shared/golden/tokenizer, ../shared/golden/stories260K) plus core tests on small
 * vocabularies written with the GGUF writer (no shared data needed). */
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "gguf.h"
#include "tokenizer.h"
#include "../hz-test-util.h"

#define SEP "\n__ggml_vocab_test__\n"

static HzTokenizer *
load_tokenizer (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzGguf) g = hz_gguf_open (path, &error);
  HzTokenizer *t;

  g_assert_no_error (error);
  t = hz_tokenizer_new_from_gguf (g, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

/* Tokenizer of ../shared/golden/tokenizer/ggml-vocab-NAME.gguf, or NULL (skipped). */
static HzTokenizer *
load_vocab (const char *name)
{
  g_autofree char *rel = g_strdup_printf ("golden/tokenizer/ggml-vocab-%s.gguf", name);
  g_autofree char *path = hz_test_shared_path (rel);
  return path ? load_tokenizer (path) : NULL;
}

typedef struct {
  GPtrArray *inputs;    /* GBytes */
  GPtrArray *expected;  /* GArray of HzToken */
} Golden;

static void
golden_clear (Golden *gd)
{
  g_clear_pointer (&gd->inputs, g_ptr_array_unref);
  g_clear_pointer (&gd->expected, g_ptr_array_unref);
}

/* Read X.inp / X.out (format: ../shared/golden/tokenizer/README.md). */
static gboolean
golden_load (const char *inp_rel, Golden *gd)
{
  g_autofree char *inp_path = hz_test_shared_path (inp_rel);
  g_autofree char *out_path = NULL;
  g_autofree char *inp = NULL, *out = NULL;
  gsize inp_len, out_len;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  const char *p, *end;
  guint n_lines;

  if (inp_path == NULL)
    return FALSE;
  out_path = g_strdup (inp_path);
  memcpy (out_path + strlen (out_path) - 3, "out", 3);
  g_file_get_contents (inp_path, &inp, &inp_len, &error);
  g_assert_no_error (error);
  g_file_get_contents (out_path, &out, &out_len, &error);
  g_assert_no_error (error);

  gd->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  gd->expected = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  p = inp;
  end = inp + inp_len;
  while (p < end)
    {
      const char *s = g_strstr_len (p, end - p, SEP);
      g_assert_nonnull (s);
      /* NUL-terminated copy (the length excludes the NUL) */
      g_ptr_array_add (gd->inputs, g_bytes_new_take (g_strndup (p, s - p), s - p));
      p = s + strlen (SEP);
    }

  lines = g_strsplit (out, "\n", -1);
  n_lines = g_strv_length (lines);
  if (n_lines > 0 && lines[n_lines - 1][0] == '\0')
    n_lines--;   /* text after the final newline */
  g_assert_cmpuint (n_lines, ==, gd->inputs->len);
  for (guint i = 0; i < n_lines; i++)
    {
      GArray *ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_auto(GStrv) f = g_strsplit (g_strstrip (lines[i]), " ", -1);
      for (guint j = 0; f[j] != NULL; j++)
        if (f[j][0] != '\0')
          {
            HzToken id = (HzToken) g_ascii_strtoll (f[j], NULL, 10);
            g_array_append_val (ids, id);
          }
      g_ptr_array_add (gd->expected, ids);
    }
  return TRUE;
}

static char *
ids_to_string (const HzToken *ids, gsize n)
{
  GString *s = g_string_new (NULL);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (s, " %d", ids[i]);
  return g_string_free (s, FALSE);
}

/* Tokenize every golden input (add_special = FALSE, parse_special = FALSE) and compare. */
static guint
check_golden (const HzTokenizer *t, const Golden *gd, const char *label)
{
  guint n_ok = 0;

  for (guint i = 0; i < gd->inputs->len; i++)
    {
      gsize len, n;
      const char *text = g_bytes_get_data (gd->inputs->pdata[i], &len);
      GArray *exp = gd->expected->pdata[i];
      g_autofree HzToken *ids = hz_tokenizer_encode (t, text, (gssize) len, FALSE, FALSE, &n);

      if (n == exp->len && memcmp (ids, exp->data, n * sizeof (HzToken)) == 0)
        n_ok++;
      else
        {
          g_autofree char *got = ids_to_string (ids, n);
          g_autofree char *want = ids_to_string ((HzToken *) (void *) exp->data, exp->len);
          g_autofree char *esc = g_strescape (text, NULL);
          g_test_message ("%s case %u \"%s\"\n  got: %s\n want: %s", label, i, esc, got, want);
        }
    }
  g_test_message ("%s: %u/%u golden cases exact", label, n_ok, gd->inputs->len);
  return n_ok;
}

static void
test_golden_vocab (gconstpointer data)
{
  const char *name = data;
  g_autofree char *rel = g_strdup_printf ("golden/tokenizer/ggml-vocab-%s.gguf.inp", name);
  g_autoptr(HzTokenizer) t = NULL;
  Golden gd = { 0 };

  if (!golden_load (rel, &gd))
    return;
  t = load_vocab (name);
  g_assert_cmpuint (check_golden (t, &gd, name), ==, gd.inputs->len);
  golden_clear (&gd);
}

/* Round trip: SPM decodes exactly (byte fallback, the prefix space is removed); byte-level
 * BPE pieces always concatenate to the input, and decode() equals it where llama.cpp does
 * not clean up spaces. */
static void
test_round_trip (gconstpointer data)
{
  const char *name = data;
  g_autofree char *rel = g_strdup_printf ("golden/tokenizer/ggml-vocab-%s.gguf.inp", name);
  g_autoptr(HzTokenizer) t = NULL;
  gboolean spm, cleans;
  Golden gd = { 0 };

  if (!golden_load (rel, &gd))
    return;
  t = load_vocab (name);
  spm = g_str_equal (name, "llama-spm") || g_str_equal (name, "phi-3");
  cleans = g_str_equal (name, "gpt-2") || g_str_equal (name, "llama-bpe");
  for (guint i = 0; i < gd.inputs->len; i++)
    {
      gsize len, n;
      const char *data = g_bytes_get_data (gd.inputs->pdata[i], &len);
      const char *text = data ? data : "";
      g_autofree HzToken *ids = hz_tokenizer_encode (t, text, (gssize) len, FALSE, FALSE, &n);
      g_autofree char *dec = hz_tokenizer_decode (t, ids, n, FALSE);
      GString *cat = g_string_new (NULL);
      g_autofree char *spaced = g_strconcat (len ? " " : "", text, NULL);

      for (gsize k = 0; k < n; k++)
        {
          char buf[256];
          gsize m = hz_tokenizer_piece (t, ids[k], FALSE, buf, sizeof buf);
          g_assert_cmpuint (m, <=, sizeof buf);
          g_string_append_len (cat, buf, (gssize) m);
        }
      if (!cleans)
        g_assert_cmpstr (dec, ==, text);
      if (spm)
        g_assert_cmpstr (cat->str, ==, spaced);
      else
        g_assert_cmpstr (cat->str, ==, text);
      g_string_free (cat, TRUE);
    }
  golden_clear (&gd);
}

static void
test_stories260k (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  g_autofree char *json_path = NULL;
  g_autoptr(HzTokenizer) t = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *tests;
  Golden gd = { 0 };

  if (model == NULL || !golden_load ("golden/stories260K/stories260K.gguf.inp", &gd))
    return;
  t = load_tokenizer (model);
  g_assert_cmpuint (check_golden (t, &gd, "stories260K"), ==, gd.inputs->len);
  golden_clear (&gd);

  json_path = hz_test_shared_path ("golden/stories260K/tokenize.json");
  if (json_path == NULL)
    return;
  parser = json_parser_new ();
  json_parser_load_from_file (parser, json_path, &error);
  g_assert_no_error (error);
  tests = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                        "tests");
  g_assert_cmpuint (json_array_get_length (tests), ==, 20);
  for (guint i = 0; i < json_array_get_length (tests); i++)
    {
      JsonObject *o = json_array_get_object_element (tests, i);
      const char *hex = json_object_get_string_member (o, "text_utf8_hex");
      JsonArray *want = json_object_get_array_member (o, "ids");
      JsonArray *want_sp = json_object_get_array_member (o, "ids_add_special");
      JsonArray *pieces = json_object_get_array_member (o, "pieces_hex");
      gsize tlen = strlen (hex) / 2, n, n_sp;
      g_autofree char *text = g_malloc (tlen + 1);
      g_autofree HzToken *ids = NULL, *ids_sp = NULL;
      g_autofree char *dec = NULL;

      for (gsize k = 0; k < tlen; k++)
        text[k] = (char) (g_ascii_xdigit_value (hex[2 * k]) * 16 +
                          g_ascii_xdigit_value (hex[2 * k + 1]));
      text[tlen] = '\0';
      ids = hz_tokenizer_encode (t, text, (gssize) tlen, FALSE, FALSE, &n);
      ids_sp = hz_tokenizer_encode (t, text, (gssize) tlen, TRUE, FALSE, &n_sp);
      g_assert_cmpuint (n, ==, json_array_get_length (want));
      g_assert_cmpuint (n_sp, ==, json_array_get_length (want_sp));
      for (gsize k = 0; k < n; k++)
        g_assert_cmpint (ids[k], ==, json_array_get_int_element (want, k));
      for (gsize k = 0; k < n_sp; k++)
        g_assert_cmpint (ids_sp[k], ==, json_array_get_int_element (want_sp, k));
      for (gsize k = 0; k < n; k++)
        {
          char buf[64], got_hex[129] = "";
          gsize m = hz_tokenizer_piece (t, ids[k], TRUE, buf, sizeof buf);
          g_assert_cmpuint (m, <, 64);
          for (gsize j = 0; j < m; j++)
            g_snprintf (got_hex + 2 * j, 3, "%02x", (guchar) buf[j]);
          g_assert_cmpstr (got_hex, ==, json_array_get_string_element (pieces, k));
        }
      dec = hz_tokenizer_decode (t, ids, n, FALSE);
      g_assert_cmpstr (dec, ==, json_object_get_string_member (o, "detokenized"));
    }
}

/* Special tokens, BOS/EOS and EOG on real vocabularies. */
static void
test_special_qwen2 (void)
{
  g_autoptr(HzTokenizer) t = load_vocab ("qwen2");
  const char *chat = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n";
  HzToken im_start, im_end, eot;
  g_autofree HzToken *ids = NULL, *plain = NULL, *a = NULL, *b = NULL, *c = NULL;
  gsize n, n_plain, na, nb, nc;
  GArray *want;

  if (t == NULL)
    return;
  im_start = hz_tokenizer_find (t, "<|im_start|>");
  im_end = hz_tokenizer_find (t, "<|im_end|>");
  g_assert_cmpint (im_start, ==, 151644);
  g_assert_cmpint (im_end, ==, 151645);
  g_assert_true (hz_tokenizer_attr (t, im_start) & HZ_TOKEN_CONTROL);

  ids = hz_tokenizer_encode (t, chat, -1, TRUE, TRUE, &n);   /* add_bos is false */
  a = hz_tokenizer_encode (t, "user\nHello", -1, FALSE, FALSE, &na);
  b = hz_tokenizer_encode (t, "\n", -1, FALSE, FALSE, &nb);
  c = hz_tokenizer_encode (t, "assistant\n", -1, FALSE, FALSE, &nc);
  want = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_array_append_val (want, im_start);
  g_array_append_vals (want, a, na);
  g_array_append_val (want, im_end);
  g_array_append_vals (want, b, nb);
  g_array_append_val (want, im_start);
  g_array_append_vals (want, c, nc);
  g_assert_cmpuint (n, ==, want->len);
  g_assert_cmpmem (ids, n * sizeof (HzToken), want->data, want->len * sizeof (HzToken));
  g_array_unref (want);
  /* "user" "\n" "Hello" = 872 198 9707 (Qwen2.5 tokenizer.json) */
  g_assert_cmpuint (na, ==, 3);
  g_assert_cmpint (a[0], ==, 872);
  g_assert_cmpint (a[1], ==, 198);
  g_assert_cmpint (a[2], ==, 9707);

  /* without parse_special the markers are plain text */
  plain = hz_tokenizer_encode (t, chat, -1, FALSE, FALSE, &n_plain);
  g_assert_cmpuint (n_plain, >, n);
  for (gsize k = 0; k < n_plain; k++)
    g_assert_true (plain[k] != im_start && plain[k] != im_end);

  /* EOG and pieces of control tokens */
  eot = hz_tokenizer_eot (t);
  g_assert_cmpint (eot, ==, im_end);
  g_assert_true (hz_tokenizer_is_eog (t, im_end));
  g_assert_true (hz_tokenizer_is_eog (t, hz_tokenizer_find (t, "<|endoftext|>")));
  g_assert_true (hz_tokenizer_is_eog (t, hz_tokenizer_eos (t)));
  g_assert_false (hz_tokenizer_is_eog (t, 9707));
  g_assert_false (hz_tokenizer_is_eog (t, im_start));
  g_assert_cmpuint (hz_tokenizer_piece (t, im_end, FALSE, NULL, 0), ==, 0);
  g_assert_cmpuint (hz_tokenizer_piece (t, im_end, TRUE, NULL, 0), ==, strlen ("<|im_end|>"));
  g_assert_false (hz_tokenizer_add_bos (t));
  {
    g_autofree char *dec = hz_tokenizer_decode (t, ids, n, TRUE);
    g_autofree char *dec_plain = hz_tokenizer_decode (t, ids, n, FALSE);
    g_assert_cmpstr (dec, ==, chat);
    g_assert_cmpstr (dec_plain, ==, "user\nHello\nassistant\n");
  }
}

static void
test_add_special (void)
{
  struct { const char *vocab; HzToken first; gboolean eog_eos; } cases[] = {
    { "llama-spm", 1, TRUE },        /* <s> */
    { "llama-bpe", 128000, TRUE },   /* <|begin_of_text|> (llama3 default add_bos) */
    { "deepseek-coder", 32013, TRUE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(HzTokenizer) t = load_vocab (cases[i].vocab);
      g_autofree HzToken *ids = NULL, *plain = NULL;
      gsize n, np;
      if (t == NULL)
        return;
      ids = hz_tokenizer_encode (t, "Hello world", -1, TRUE, FALSE, &n);
      plain = hz_tokenizer_encode (t, "Hello world", -1, FALSE, FALSE, &np);
      g_assert_cmpuint (n, ==, np + 1);
      g_assert_cmpint (ids[0], ==, cases[i].first);
      g_assert_cmpint (hz_tokenizer_bos (t), ==, cases[i].first);
      g_assert_cmpmem (ids + 1, np * sizeof (HzToken), plain, np * sizeof (HzToken));
      g_assert_true (hz_tokenizer_is_eog (t, hz_tokenizer_eos (t)));
    }
  {
    g_autoptr(HzTokenizer) t = load_vocab ("llama-bpe");
    if (t == NULL)
      return;
    g_assert_true (hz_tokenizer_is_eog (t, hz_tokenizer_find (t, "<|eot_id|>")));
    g_assert_cmpint (hz_tokenizer_eot (t), ==, hz_tokenizer_find (t, "<|eot_id|>"));
  }
}

/* Streaming: a character split over byte tokens is held back until complete. */
static void
test_detokenizer_stream (void)
{
  g_autoptr(HzTokenizer) t = load_vocab ("llama-spm");
  g_autoptr(HzDetokenizer) d = NULL;
  HzToken e6, b0x97, a5, hello, ff;
  const char *emoji = "\xf0\x9f\xa6\x99 ok";
  g_autofree HzToken *ids = NULL;
  GString *acc;
  gsize n;

  if (t == NULL)
    return;
  e6 = hz_tokenizer_find (t, "<0xE6>");
  b0x97 = hz_tokenizer_find (t, "<0x97>");
  a5 = hz_tokenizer_find (t, "<0xA5>");
  ff = hz_tokenizer_find (t, "<0xFF>");
  hello = hz_tokenizer_find (t, "\xe2\x96\x81Hello");
  g_assert_cmpint (e6, >=, 0);
  g_assert_true (hz_tokenizer_attr (t, e6) & HZ_TOKEN_BYTE);

  d = hz_detokenizer_new (t, FALSE);
  g_assert_cmpstr (hz_detokenizer_push (d, hello), ==, " Hello");
  g_assert_cmpstr (hz_detokenizer_push (d, e6), ==, "");
  g_assert_cmpstr (hz_detokenizer_push (d, b0x97), ==, "");
  g_assert_cmpstr (hz_detokenizer_push (d, a5), ==, "\xe6\x97\xa5");   /* 日 */
  g_assert_cmpstr (hz_detokenizer_push (d, ff), ==, "\xef\xbf\xbd");   /* invalid byte */
  g_assert_cmpstr (hz_detokenizer_push (d, e6), ==, "");
  g_assert_cmpstr (hz_detokenizer_push (d, hello), ==, "\xef\xbf\xbd Hello");
  g_assert_cmpstr (hz_detokenizer_push (d, e6), ==, "");
  g_assert_cmpstr (hz_detokenizer_flush (d), ==, "\xef\xbf\xbd");
  g_assert_cmpstr (hz_detokenizer_flush (d), ==, "");
  /* control tokens are hidden unless special */
  g_assert_cmpstr (hz_detokenizer_push (d, hz_tokenizer_eos (t)), ==, "");

  /* an emoji via byte fallback, token by token */
  ids = hz_tokenizer_encode (t, emoji, -1, FALSE, FALSE, &n);
  g_assert_cmpuint (n, >=, 5);
  acc = g_string_new (NULL);
  for (gsize k = 0; k < n; k++)
    {
      const char *s = hz_detokenizer_push (d, ids[k]);
      g_assert_true (g_utf8_validate (s, -1, NULL));
      if (k == 1 || k == 2 || k == 3)   /* ▁ then 3 of the 4 bytes: held */
        g_assert_cmpstr (s, ==, "");
      g_string_append (acc, s);
    }
  g_string_append (acc, hz_detokenizer_flush (d));
  g_assert_cmpstr (acc->str, ==, " \xf0\x9f\xa6\x99 ok");
  g_string_free (acc, TRUE);
}

/* Random valid UTF-8 (code points of every length; no NUL, no surrogates). */
static gsize
random_utf8 (GRand *rand, char *buf, gsize cap)
{
  gsize len = 0;
  while (len + 4 <= cap && g_rand_int_range (rand, 0, 12) != 0)
    {
      static const guint32 top[] = { 0x7F, 0x7FF, 0xFFFF, 0x10FFFF };
      gunichar c = (gunichar) g_rand_int_range (rand, 1, (gint32) top[g_rand_int_range (rand, 0, 4)] + 1);
      if (c >= 0xD800 && c <= 0xDFFF)
        continue;
      len += (gsize) g_unichar_to_utf8 (c, buf + len);
    }
  return len;
}

/* Invalid UTF-8 and random bytes never crash and give ids in range; random valid UTF-8
 * round-trips (SPM byte fallback, byte-level BPE), as its NFC form for Qwen2, whose
 * tokenizer.json normalizes to NFC. */
static void
test_invalid_utf8 (void)
{
  const char *names[] = { "llama-spm", "qwen2", "gpt-2", "deepseek-coder", "llama-bpe" };
  static const char *const bad[] = {
    "\xff", "\xc3", "a\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80x", "\xc0\xaf",
    "\x80\x80 abc \xfe", "<|im_start|\xff>", "\xf0\x9f\xa6", "\xfa ab",
  };
  GRand *rand = g_rand_new_with_seed (1234);

  for (gsize v = 0; v < G_N_ELEMENTS (names); v++)
    {
      g_autoptr(HzTokenizer) t = load_vocab (names[v]);
      gboolean spm = v == 0, cleans = v == 2 || v == 4, nfc = v == 1;
      if (t == NULL)
        continue;
      for (int iter = 0; iter < 400 + (int) G_N_ELEMENTS (bad); iter++)
        {
          char buf[128];
          gsize len, n;
          gboolean valid = iter % 2 == 0 && iter >= (int) G_N_ELEMENTS (bad);
          g_autofree HzToken *ids = NULL;
          g_autofree char *dec = NULL;
          GString *cat;

          if (iter < (int) G_N_ELEMENTS (bad))
            {
              len = strlen (bad[iter]);
              memcpy (buf, bad[iter], len);
            }
          else if (valid)
            len = random_utf8 (rand, buf, sizeof buf);
          else
            {
              len = (gsize) g_rand_int_range (rand, 1, sizeof buf);
              for (gsize k = 0; k < len; k++)
                buf[k] = (char) g_rand_int_range (rand, 0, 256);
            }
          ids = hz_tokenizer_encode (t, buf, (gssize) len, !valid, !valid, &n);
          for (gsize k = 0; k < n; k++)
            {
              g_assert_cmpint (ids[k], >=, 0);
              g_assert_cmpint (ids[k], <, hz_tokenizer_n_vocab (t));
            }
          dec = hz_tokenizer_decode (t, ids, n, FALSE);
          if (!valid)
            continue;
          if (nfc)
            {
              /* random_utf8 writes no NUL, so GLib normalizes the whole text */
              g_autofree char *norm = g_utf8_normalize (buf, (gssize) len, G_NORMALIZE_NFC);
              len = strlen (norm);
              g_assert_cmpuint (len, <=, sizeof buf);
              memcpy (buf, norm, len);
            }
          if (!cleans)
            g_assert_cmpmem (dec, strlen (dec), buf, len);
          cat = g_string_new (NULL);
          for (gsize k = 0; k < n; k++)
            {
              char piece[256];
              gsize m = hz_tokenizer_piece (t, ids[k], FALSE, piece, sizeof piece);
              g_string_append_len (cat, piece, (gssize) m);
            }
          if (spm && len > 0)
            g_string_erase (cat, 0, 1);   /* the prefix space */
          g_assert_cmpmem (cat->str, cat->len, buf, len);
          g_string_free (cat, TRUE);
        }
      if (!spm)
        {
          /* an invalid byte is U+FFFD to the byte-level BPE (llama.cpp unicode.cpp) */
          gsize n;
          g_autofree HzToken *ids = hz_tokenizer_encode (t, "a\xff", -1, FALSE, FALSE, &n);
          g_autofree char *dec = hz_tokenizer_decode (t, ids, n, FALSE);
          g_assert_cmpstr (dec, ==, "a\xef\xbf\xbd");
        }
    }
  g_rand_free (rand);
}

/* All threads must agree (the tokenizer is immutable after creation). */
typedef struct {
  const HzTokenizer *t;
  const Golden *gd;
  guint n_ok;
} ThreadJob;

static gpointer
thread_run (gpointer data)
{
  ThreadJob *job = data;
  for (guint i = 0; i < job->gd->inputs->len; i++)
    {
      gsize len, n;
      const char *text = g_bytes_get_data (job->gd->inputs->pdata[i], &len);
      GArray *exp = job->gd->expected->pdata[i];
      g_autofree HzToken *ids = hz_tokenizer_encode (job->t, text, (gssize) len, FALSE,
                                                     FALSE, &n);
      if (n == exp->len && memcmp (ids, exp->data, n * sizeof (HzToken)) == 0)
        job->n_ok++;
    }
  return NULL;
}

static void
test_threads_and_speed (void)
{
  g_autofree char *path = hz_test_shared_path ("golden/tokenizer/ggml-vocab-qwen2.gguf");
  g_autoptr(HzGguf) g = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzTokenizer) t = NULL;
  ThreadJob jobs[4];
  GThread *threads[4];
  Golden gd = { 0 };
  gint64 t0, t1;
  GString *big;
  gsize n;
  g_autofree HzToken *ids = NULL;

  if (path == NULL || !golden_load ("golden/tokenizer/ggml-vocab-qwen2.gguf.inp", &gd))
    return;
  g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  t0 = g_get_monotonic_time ();
  t = hz_tokenizer_new_from_gguf (g, &error);
  t1 = g_get_monotonic_time ();
  g_assert_no_error (error);
  g_test_message ("qwen2 vocab (151936 tokens, 151387 merges) loaded in %.1f ms",
                  (t1 - t0) / 1000.0);
  g_assert_cmpint (t1 - t0, <, 5 * G_USEC_PER_SEC);   /* target: well under 1 s */

  for (int i = 0; i < 4; i++)
    {
      jobs[i] = (ThreadJob) { t, &gd, 0 };
      threads[i] = g_thread_new ("tok", thread_run, &jobs[i]);
    }
  for (int i = 0; i < 4; i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpuint (jobs[i].n_ok, ==, gd.inputs->len);
    }

  /* linear-ish: ~1 MB of mixed text */
  big = g_string_new (NULL);
  while (big->len < (1u << 20))
    for (guint i = 0; i < gd.inputs->len; i++)
      g_string_append_len (big, g_bytes_get_data (gd.inputs->pdata[i], NULL),
                           (gssize) g_bytes_get_size (gd.inputs->pdata[i]));
  t0 = g_get_monotonic_time ();
  ids = hz_tokenizer_encode (t, big->str, (gssize) big->len, FALSE, FALSE, &n);
  t1 = g_get_monotonic_time ();
  g_test_message ("qwen2: %zu bytes -> %zu tokens in %.1f ms (%.2f MB/s)", big->len, n,
                  (t1 - t0) / 1000.0, big->len / (double) (t1 - t0));
  g_assert_cmpuint (n, >, big->len / 8);
  g_assert_cmpint (t1 - t0, <, 20 * G_USEC_PER_SEC);
  g_string_free (big, TRUE);
  golden_clear (&gd);
}

/* ---- core tests: tiny vocabularies written with the GGUF writer ---- */

typedef struct {
  char *dir;
  char *path;
} TmpFile;

static void
tmp_init (TmpFile *f)
{
  g_autoptr(GError) error = NULL;
  f->dir = g_dir_make_tmp ("hz-tok-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "vocab.gguf", NULL);
}

static void
tmp_clear (TmpFile *f)
{
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* Write a vocab GGUF (the keys already in `w`, plus these); returns the tokenizer or NULL
 * with `error`. */
static HzTokenizer *
build_with (HzGgufWriter *w, const char *model, const char *pre, const char *const *tokens,
            const float *scores, const int32_t *types, const char *const *merges,
            GError **error)
{
  g_autoptr(HzGguf) g = NULL;
  TmpFile f;
  HzTokenizer *t = NULL;
  guint n = g_strv_length ((char **) tokens);

  tmp_init (&f);
  if (model)
    hz_gguf_writer_set_str (w, "tokenizer.ggml.model", model);
  if (pre)
    hz_gguf_writer_set_str (w, "tokenizer.ggml.pre", pre);
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", tokens, n);
  if (scores)
    hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores, n);
  if (types)
    hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, n);
  if (merges)
    hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.merges", merges,
                                g_strv_length ((char **) merges));
  g_assert_true (hz_gguf_writer_write_file (w, f.path, error));
  g = hz_gguf_open (f.path, error);
  g_assert_nonnull (g);
  t = hz_tokenizer_new_from_gguf (g, error);
  tmp_clear (&f);
  return t;
}

static HzTokenizer *
build (const char *model, const char *pre, const char *const *tokens, const float *scores,
       const int32_t *types, const char *const *merges, GError **error)
{
  g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
  return build_with (w, model, pre, tokens, scores, types, merges, error);
}

/* Messages logged (the project logs structured: G_LOG_USE_STRUCTURED), counted by the
 * writer installed in main() and passed on to GLib's default writer. */
static struct {
  guint n;
  char *last;
} messages;

static GLogWriterOutput
count_messages (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  if (level & G_LOG_LEVEL_MESSAGE)
    for (gsize i = 0; i < n_fields; i++)
      if (strcmp (fields[i].key, "MESSAGE") == 0)
        {
          messages.n++;
          g_free (messages.last);
          messages.last = g_strdup (fields[i].value);
        }
  return g_log_writer_default (level, fields, n_fields, data);
}

/* Special ids: (uint32) -1 is "none" and silent (stories260K's separator and padding ids);
 * other ids outside the vocab keep the default and are all reported in one message. */
static void
test_core_special_ids (void)
{
  static const char *const tokens[] = { "<unk>", "<s>", "</s>", "a", NULL };
  static const int32_t types[] = { 2, 3, 3, 1 };
  const guint before = messages.n;

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.seperator_token_id", G_MAXUINT32);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.padding_token_id", G_MAXUINT32);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", G_MAXUINT32);
    g_autoptr(HzTokenizer) t = build_with (w, "llama", NULL, tokens, NULL, types, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (hz_tokenizer_bos (t), ==, 1);            /* the SPM default kept */
    g_assert_cmpuint (messages.n, ==, before);
  }
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 77);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.padding_token_id", 4);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.unknown_token_id", 3);
    g_autoptr(HzTokenizer) t = build_with (w, "llama", NULL, tokens, NULL, types, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (hz_tokenizer_eos (t), ==, 2);
    g_assert_cmpuint (messages.n, ==, before + 1);
    g_assert_cmpstr (messages.last, ==, "tokenizer: special token ids outside the vocabulary of 4 "
                     "tokens ignored: tokenizer.ggml.eos_token_id = 77 (kept 2), "
                     "tokenizer.ggml.padding_token_id = 4 (kept -1)");
  }
}

static void
test_core_spm (void)
{
  /* <unk> <s> </s>, byte tokens for 'a' 'b' 'c' and U+2581, then merges by score */
  static const char *const tokens[] = {
    "<unk>", "<s>", "</s>", "<0x61>", "<0x62>", "<0x63>", "<0xE2>", "<0x96>", "<0x81>",
    "\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "a", "\xe2\x96\x81" "ab", "bc", NULL };
  static const float scores[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                  -1, -2, -2, -3, -4, -5, -2.5f };
  static const int32_t types[] = { 2, 3, 3, 6, 6, 6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HzTokenizer) t = build ("llama", NULL, tokens, scores, types, NULL, &error);
  g_autofree HzToken *ids = NULL;
  g_autofree char *dec = NULL;
  gsize n;

  g_assert_no_error (error);
  g_assert_cmpint (hz_tokenizer_n_vocab (t), ==, 16);
  g_assert_true (hz_tokenizer_add_bos (t));
  /* "abc": ▁ a b c -> bigrams ▁a(-4) ab(-3) bc(-2.5): bc first (best score), so ab is
   * stale; then ▁a; "▁abc" is no token -> ▁a bc */
  ids = hz_tokenizer_encode (t, "abc", -1, TRUE, FALSE, &n);
  {
    const HzToken want[] = { 1, 13, 15 };
    g_assert_cmpmem (ids, n * sizeof (HzToken), want, sizeof want);
  }
  g_free (ids);
  /* "ab" -> ▁ab merges fully; a control token's text is plain text without parse_special;
   * its characters have neither tokens nor byte tokens here, so they become <unk> */
  ids = hz_tokenizer_encode (t, "ab</s>", -1, FALSE, FALSE, &n);
  {
    const HzToken want[] = { 14, 0, 0, 0, 0 };
    g_assert_cmpmem (ids, n * sizeof (HzToken), want, sizeof want);
  }
  dec = hz_tokenizer_decode (t, ids, n, FALSE);
  g_assert_cmpstr (dec, ==, "ab");
  g_free (ids);
  /* with parse_special </s> is one token and the next fragment gets no prefix space */
  ids = hz_tokenizer_encode (t, "ab</s>", -1, FALSE, TRUE, &n);
  {
    const HzToken want[] = { 14, 2 };
    g_assert_cmpmem (ids, n * sizeof (HzToken), want, sizeof want);
  }
  g_assert_true (hz_tokenizer_is_eog (t, 2));
  g_assert_false (hz_tokenizer_is_eog (t, 1));
}

static void
test_core_bpe (void)
{
  /* byte-level alphabet for "a", "b", "Ġ" (space) and merges a+b, Ġ+ab */
  static const char *const tokens[] = { "a", "b", "\xc4\xa0", "ab", "\xc4\xa0" "ab",
                                        "<|endoftext|>", NULL };
  static const int32_t types[] = { 1, 1, 1, 1, 1, 3 };
  static const char *const merges[] = { "a b", "\xc4\xa0 ab", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HzTokenizer) t = build ("gpt2", "gpt-2", tokens, NULL, types, merges, &error);
  g_autofree HzToken *ids = NULL;
  g_autofree char *dec = NULL;
  gsize n;

  g_assert_no_error (error);
  ids = hz_tokenizer_encode (t, "ab ab abba", -1, FALSE, FALSE, &n);
  {
    /* words: "ab" " ab" " abba" -> ab, Ġab, Ġab b a */
    const HzToken want[] = { 3, 4, 4, 1, 0 };
    g_assert_cmpmem (ids, n * sizeof (HzToken), want, sizeof want);
  }
  dec = hz_tokenizer_decode (t, ids, n, FALSE);
  g_assert_cmpstr (dec, ==, "ab ab abba");
  g_assert_true (hz_tokenizer_is_eog (t, 5));       /* <|endoftext|> */
  g_assert_cmpint (hz_tokenizer_eot (t), ==, 5);
  g_assert_false (hz_tokenizer_add_bos (t));
  g_free (ids);
  /* characters outside the vocab are dropped, as llama.cpp does */
  ids = hz_tokenizer_encode (t, "xab", -1, FALSE, FALSE, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (ids[0], ==, 3);
}

static void
test_core_errors (void)
{
  static const char *const tokens[] = { "a", "b", NULL };
  static const char *const dup[] = { "a", "a", NULL };
  static const char *const merges[] = { "a b", NULL };
  struct {
    const char *model, *pre;
    const char *const *tokens, *const *merges;
    int code;
  } cases[] = {
    { NULL, NULL, tokens, NULL, HZ_TOKENIZER_ERROR_INVALID },         /* no model */
    { "t5", NULL, tokens, NULL, HZ_TOKENIZER_ERROR_UNSUPPORTED },
    { "gpt2", "no-such-pre", tokens, merges, HZ_TOKENIZER_ERROR_UNSUPPORTED },
    { "gpt2", "gpt-2", tokens, NULL, HZ_TOKENIZER_ERROR_INVALID },    /* no merges */
    { "llama", NULL, dup, NULL, HZ_TOKENIZER_ERROR_INVALID },          /* duplicate */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      HzTokenizer *t = build (cases[i].model, cases[i].pre, cases[i].tokens, NULL, NULL,
                              cases[i].merges, &error);
      g_assert_null (t);
      g_assert_error (error, HZ_TOKENIZER_ERROR, cases[i].code);
      g_test_message ("expected error: %s", error->message);
    }
}

int
main (int argc, char **argv)
{
  static const char *const vocabs[] = {
    "llama-spm", "phi-3", "gpt-2", "deepseek-coder", "llama-bpe", "qwen2", "bert-bge" };

  g_test_init (&argc, &argv, NULL);
  g_log_set_writer_func (count_messages, NULL, NULL);
  g_test_add_func ("/tokenizer/core/spm", test_core_spm);
  g_test_add_func ("/tokenizer/core/bpe", test_core_bpe);
  g_test_add_func ("/tokenizer/core/errors", test_core_errors);
  g_test_add_func ("/tokenizer/core/special-ids", test_core_special_ids);
  for (gsize i = 0; i < G_N_ELEMENTS (vocabs); i++)
    {
      g_autofree char *p1 = g_strdup_printf ("/tokenizer/golden/%s", vocabs[i]);
      g_autofree char *p2 = g_strdup_printf ("/tokenizer/round-trip/%s", vocabs[i]);
      g_test_add_data_func (p1, vocabs[i], test_golden_vocab);
      /* WordPiece lower-cases and drops accents: it does not round-trip */
      if (strcmp (vocabs[i], "bert-bge") != 0)
        g_test_add_data_func (p2, vocabs[i], test_round_trip);
    }
  g_test_add_func ("/tokenizer/golden/stories260K", test_stories260k);
  g_test_add_func ("/tokenizer/special/qwen2", test_special_qwen2);
  g_test_add_func ("/tokenizer/special/add-bos", test_add_special);
  g_test_add_func ("/tokenizer/detokenizer/stream", test_detokenizer_stream);
  g_test_add_func ("/tokenizer/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/tokenizer/threads-and-speed", test_threads_and_speed);
  return g_test_run ();
}
