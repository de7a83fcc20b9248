/* tests/engine/test-pretok.c — the BPE pre-tokenizers against Hugging Face's tokenizer.
 *
 * tests/engine/pretok/ holds, for every distinct split of the pre-tokenizer table (31
 * "families" covering the 86 supported tokenizer.ggml.pre names), a small byte-level BPE
 * tokenizer.json and the ids Hugging Face's `tokenizers` gives for 88 strings
 * (tests/reference/pretok_reference.js wrote them). Each tokenizer.json goes through the
 * Hugging Face importer (hf-tokenizer.c), which must name the family, into a GGUF whose
 * ids must be the reference's, under every name of the family. Model-shaped
 * tokenizer.json files (GPT-2, SmolLM, Llama 3, Qwen2, DeepSeek-V3) check the name
 * mapping of real configurations. The scanners are checked against the regex matcher
 * on random text, and unrepresentable configurations against their errors. */
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "gguf.h"
#include "hf-folder.h"
#include "pretok-data.h"
#include "hf-tokenizer.h"
#include "tokenizer-private.h"
#include "unicode.h"

/* The GGUF keys the importer writes for folder `dir`; fails the test on an error. */
static HzGgufWriter *
import_folder (const char *dir)
{
  g_autoptr(GError) error = NULL;
  HzGgufWriter *w = hz_gguf_writer_new ();
  g_assert_true (hz_hf_tokenizer_import (w, dir, 0, NULL, &error));
  g_assert_no_error (error);
  return w;
}

/* Tokenizer of the GGUF `w` would write (the bytes must outlive it: returned in *keep). */
static HzTokenizer *
tokenizer_from_writer (HzGgufWriter *w, GBytes **keep, HzGguf **g_out)
{
  g_autoptr(GError) error = NULL;
  gsize size;
  const void *data;
  HzGguf *g;
  HzTokenizer *t;

  *keep = hz_gguf_writer_to_bytes (w, &error);
  g_assert_no_error (error);
  data = g_bytes_get_data (*keep, &size);
  g = hz_gguf_open_from_data (data, size, &error);
  g_assert_no_error (error);
  t = hz_tokenizer_new_from_gguf (g, &error);
  g_assert_no_error (error);
  *g_out = g;
  return t;
}

static char *
gguf_pre (const HzGguf *g)
{
  return hz_gguf_get_str (g, "tokenizer.ggml.pre");
}

/* Every family: the importer names it, and every name of it gives the reference's ids. */
static void
test_families (void)
{
  g_autoptr(JsonNode) texts_node = hz_pretok_load_json ("texts.json");
  g_autoptr(JsonNode) exp_node = hz_pretok_load_json ("expected.json");
  JsonArray *texts = json_node_get_array (texts_node);
  JsonObject *families = json_object_get_object_member (json_node_get_object (exp_node),
                                                        "families");
  g_autoptr(GList) members = json_object_get_members (families);
  guint n_names = 0, n_cases = 0, n_ok = 0, n_families = 0;

  for (GList *l = members; l; l = l->next)
    {
      const char *family = l->data;
      JsonObject *fam = json_object_get_object_member (families, family);
      JsonArray *names = json_object_get_array_member (fam, "names");
      JsonArray *ids = json_object_get_array_member (fam, "ids");
      g_autofree char *dir = hz_pretok_make_folder (family);
      g_autoptr(HzGgufWriter) w = import_folder (dir);
      hz_test_rm_dir (dir);
      n_families++;
      for (guint i = 0; i < json_array_get_length (names); i++)
        {
          const char *name = json_array_get_string_element (names, i);
          g_autoptr(GBytes) bytes = NULL;
          g_autoptr(HzGguf) g = NULL;
          g_autoptr(HzTokenizer) t = NULL;
          g_autofree char *label = g_strdup_printf ("%s (family %s)", name, family);
          if (i > 0)
            hz_gguf_writer_set_str (w, "tokenizer.ggml.pre", name);
          t = tokenizer_from_writer (w, &bytes, &g);
          if (i == 0)
            {
              /* the importer's choice for this tokenizer.json is the family's first name */
              g_autofree char *pre = gguf_pre (g);
              g_assert_cmpstr (pre, ==, family);
            }
          n_ok += hz_pretok_check_ids (t, texts, ids, label);
          n_cases += json_array_get_length (texts);
          n_names++;
        }
    }
  g_test_message ("%u families, %u names: %u/%u strings give Hugging Face's ids", n_families,
                  n_names, n_ok, n_cases);
  g_assert_cmpuint (n_ok, ==, n_cases);
  g_assert_cmpuint (n_families, ==, 31);
}

/* tokenizer.json files as published models write them: the importer's name and ids. */
static void
test_model_shaped (void)
{
  g_autoptr(JsonNode) texts_node = hz_pretok_load_json ("texts.json");
  g_autoptr(JsonNode) exp_node = hz_pretok_load_json ("expected.json");
  JsonArray *texts = json_node_get_array (texts_node);
  JsonObject *hf = json_object_get_object_member (json_node_get_object (exp_node), "hf");
  g_autoptr(GList) members = json_object_get_members (hf);

  for (GList *l = members; l; l = l->next)
    {
      const char *base = l->data;
      JsonObject *e = json_object_get_object_member (hf, base);
      g_autofree char *dir = hz_pretok_make_folder (base);
      g_autoptr(HzGgufWriter) w = import_folder (dir);
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(HzGguf) g = NULL;
      g_autoptr(HzTokenizer) t = NULL;
      g_autofree char *pre = NULL;
      guint ok;
      hz_test_rm_dir (dir);
      t = tokenizer_from_writer (w, &bytes, &g);
      pre = gguf_pre (g);
      g_assert_cmpstr (pre, ==, json_object_get_string_member (e, "pre"));
      ok = hz_pretok_check_ids (t, texts, json_object_get_array_member (e, "ids"), base);
      g_test_message ("%s -> tokenizer.ggml.pre '%s': %u/%u strings exact", base, pre, ok,
                      json_array_get_length (texts));
      g_assert_cmpuint (ok, ==, json_array_get_length (texts));
    }
}

/* Random text over an alphabet that exercises every branch of the scanners. */
static gsize
random_cpts (GRand *r, uint32_t *out, gsize cap)
{
  static const uint32_t alphabet[] = {
    'a', 'b', 'Z', 's', 't', 'd', 'm', 'l', 'L', 'r', 'e', 'v', 'S', 'D', '\'', '0', '7',
    ' ', ' ', ' ', '\t', '\n', '\r', '\v', '.', ',', '!', '$', '_', '-', '/', '(', 0,
    0xA0, 0x85, 0x1C, 0x2003, 0x3000, 0x17F, 0x212A, 0xE9, 0xC9, 0x301, 0x4E2D, 0x3042,
    0xAC00, 0x661, 0xB2, 0x216B, 0x1F600, 0x200D, 0xFE0F, 0xFFFD, 0xD800, 0x10FFFF,
  };
  gsize n = (gsize) g_rand_int_range (r, 0, (gint32) cap);
  for (gsize i = 0; i < n; i++)
    out[i] = alphabet[g_rand_int_range (r, 0, G_N_ELEMENTS (alphabet))];
  return n;
}

/* The GPT-2, Llama 3 and Qwen2 scanners split exactly as the regex matcher does. */
static void
test_scanners (void)
{
  const char *const *lists[] = {
    (const char *const[]) { hz_re_gpt2, NULL },
    (const char *const[]) { hz_re_llama3, NULL },
    (const char *const[]) { hz_re_qwen2, NULL },
  };
  GRand *r = g_rand_new_with_seed (23);
  HzRegexScratch scratch;
  uint32_t cpts[48];

  hz_regex_scratch_init (&scratch);
  for (gsize k = 0; k < G_N_ELEMENTS (lists); k++)
    {
      g_autoptr(GError) error = NULL;
      HzPreSplitter *fast = hz_pre_splitter_new (lists[k], TRUE, &error);
      HzPreSplitter *slow = hz_pre_splitter_new (lists[k], FALSE, &error);
      g_assert_no_error (error);
      g_assert_true (hz_pre_splitter_equal (fast, slow));
      for (int iter = 0; iter < 20000; iter++)
        {
          gsize n = random_cpts (r, cpts, G_N_ELEMENTS (cpts));
          g_autoptr(GArray) a = g_array_new (FALSE, FALSE, sizeof (gsize));
          g_autoptr(GArray) b = g_array_new (FALSE, FALSE, sizeof (gsize));
          hz_pretokenize (fast, &scratch, cpts, n, a);
          hz_pretokenize (slow, &scratch, cpts, n, b);
          if (a->len != b->len || memcmp (a->data, b->data, a->len * sizeof (gsize)) != 0)
            {
              GString *s = g_string_new (NULL);
              for (gsize i = 0; i < n; i++)
                g_string_append_printf (s, " U+%04X", cpts[i]);
              g_test_message ("regex %" G_GSIZE_FORMAT ": scanner and matcher differ on%s",
                              k, s->str);
              g_string_free (s, TRUE);
              g_test_fail ();
              break;
            }
        }
      hz_pre_splitter_free (fast);
      hz_pre_splitter_free (slow);
    }
  hz_regex_scratch_clear (&scratch);
  g_rand_free (r);
}

/* hz_nfc_normalize (which normalizes only the stretches that need it) equals GLib's NFC of
 * the whole text, on random text full of marks, jamo, singletons and precomposed letters. */
static void
test_nfc (void)
{
  static const uint32_t alphabet[] = {
    'a', 'e', 'A', ' ', 0xE9, 0xC5, 0x301, 0x323, 0x30A, 0x308, 0x1100, 0x1161, 0x11A8,
    0xAC00, 0xAC01, 0x212B, 0x2126, 0x212A, 0xF900, 0x1E69, 0x0B47, 0x0B3E, 0x0B57, 0x094D,
    0x0928, 0x093C, 0x0958, 0x0340, 0x0344, 0x1FD3, 0x0390, 0x4E2D, 0x1F600, 0x0F73, 0x0F71,
    0x0F72, 0x1D15E, 0x05B0, 0x05BC,
  };
  GRand *r = g_rand_new_with_seed (7);
  for (int iter = 0; iter < 20000; iter++)
    {
      g_autoptr(GArray) cpts = g_array_new (FALSE, FALSE, sizeof (uint32_t));
      g_autoptr(GArray) want = g_array_new (FALSE, FALSE, sizeof (uint32_t));
      GString *u8 = g_string_new (NULL);
      gsize n = (gsize) g_rand_int_range (r, 0, 12);
      for (gsize i = 0; i < n; i++)
        {
          uint32_t c = alphabet[g_rand_int_range (r, 0, G_N_ELEMENTS (alphabet))];
          g_array_append_val (cpts, c);
          g_string_append_unichar (u8, c);
        }
      g_autofree char *norm = g_utf8_normalize (u8->str, (gssize) u8->len, G_NORMALIZE_NFC);
      for (const char *p = norm; *p; p = g_utf8_next_char (p))
        {
          uint32_t c = g_utf8_get_char (p);
          g_array_append_val (want, c);
        }
      hz_nfc_normalize (cpts);
      if (cpts->len != want->len ||
          memcmp (cpts->data, want->data, want->len * sizeof (uint32_t)) != 0)
        {
          g_autofree char *esc = g_strescape (u8->str, NULL);
          g_test_message ("NFC differs on \"%s\"", esc);
          g_test_fail ();
          g_string_free (u8, TRUE);
          break;
        }
      g_string_free (u8, TRUE);
    }
  g_rand_free (r);
}

/* Words of `text` split by `pattern` (matches and gaps), joined with '|'. */
static char *
split_with (const char *pattern, const char *text)
{
  const char *const list[] = { pattern, NULL };
  g_autoptr(GError) error = NULL;
  HzPreSplitter *sp = hz_pre_splitter_new (list, FALSE, &error);
  g_autoptr(GArray) cpts = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  g_autoptr(GArray) lens = g_array_new (FALSE, FALSE, sizeof (gsize));
  HzRegexScratch scratch;
  GString *out = g_string_new (NULL);
  gsize pos = 0;

  g_assert_no_error (error);
  hz_regex_scratch_init (&scratch);
  hz_utf8_decode_lenient (text, strlen (text), cpts);
  hz_pretokenize (sp, &scratch, (const uint32_t *) (void *) cpts->data, cpts->len, lens);
  for (guint i = 0; i < lens->len; i++)
    {
      gsize len = g_array_index (lens, gsize, i);
      if (i)
        g_string_append_c (out, '|');
      for (gsize k = pos; k < pos + len; k++)
        g_string_append_unichar (out, g_array_index (cpts, uint32_t, k));
      pos += len;
    }
  hz_regex_scratch_clear (&scratch);
  hz_pre_splitter_free (sp);
  return g_string_free (out, FALSE);
}

/* Oniguruma's semantics, as Hugging Face's Split gives them (each expected split was
 * checked with the `tokenizers` package; a backreference, which Oniguruma has, is one of
 * the constructs the matcher refuses). */
static void
test_regex_semantics (void)
{
  static const struct { const char *re, *text, *want; } cases[] = {
    { "\\d+", "a\xd9\xa1\xd9\xa2" "b12", "a|\xd9\xa1\xd9\xa2|b|12" },            /* \d is Nd */
    { "\\s", "a\x1c" "b\xc2\x85" "c", "a\x1c" "b|\xc2\x85|c" },                  /* White_Space */
    { "\\s+$", "ab  \ncd  ", "ab|  |\ncd|  " },                                   /* $ before \n */
    { "(?=(\\d{3})+(?!\\d))", "1234567", "1|234|567" },                           /* empty matches */
    { "(?i:'s)", "x'Sy'\xc5\xbfz", "x|'S|y|'\xc5\xbf|z" },                        /* ſ folds to s */
    { "[\\p{L}&&[^\\p{Han}]]+", "ab\xe4\xb8\xad" "cd", "ab|\xe4\xb8\xad|cd" },    /* && */
    { "a?+a", "ba", "ba" },                      /* possessive: no backtracking into a?+ */
    { "\\d{1,3}(?=(?:\\d{3})*\\b)", "12345 x", "12|345| x" },                     /* \b */
    { "[^(\\s|.,)]+", "a(b) c|d", "a|(|b|) |c|||d" },                            /* literals */
    { "x+?", "xxx", "x|x|x" },                                                    /* lazy */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = split_with (cases[i].re, cases[i].text);
      g_assert_cmpstr (got, ==, cases[i].want);
    }
  /* unsupported constructs are refused, never run with other semantics */
  static const char *const bad[] = {
    "(a)\\1", "(?<=a)b", "(a?)*", "[a-", "a{2,1}", "\\p{Greek}", "(?x)a", "a**", "(a",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      HzRegex *re = hz_regex_new (bad[i], &error);
      g_assert_null (re);
      g_assert_error (error, G_REGEX_ERROR, G_REGEX_ERROR_COMPILE);
      g_test_message ("refused: %s", error->message);
    }
}

/* A vocab-only GGUF with `pre` (tokens a, b, ab; merge "a b"; BOS and SEP ids set, which
 * the names that add them by default need). */
static HzTokenizer *
tokenizer_named (const char *pre, GError **error)
{
  static const char *const tokens[] = { "a", "b", "ab" };
  static const char *const merges[] = { "a b" };
  g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(HzGguf) g = NULL;
  const void *data;
  gsize size;

  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "gpt2");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.pre", pre);
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", tokens, 3);
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.merges", merges, 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 0);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.seperator_token_id", 1);
  bytes = hz_gguf_writer_to_bytes (w, NULL);
  data = g_bytes_get_data (bytes, &size);
  g = hz_gguf_open_from_data (data, size, NULL);
  return hz_tokenizer_new_from_gguf (g, error);
}

/* Every name llama.cpp knows loads (or is refused with its reason); an unknown one is an
 * error that names it. */
static void
test_names (void)
{
  gsize n, n_ok = 0, n_refused = 0;
  const HzPreInfo *table = hz_pre_infos (&n);

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HzTokenizer) t = tokenizer_named (table[i].name, &error);
      if (table[i].regexes)
        {
          g_assert_no_error (error);
          g_assert_nonnull (t);
          n_ok++;
        }
      else
        {
          g_assert_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_UNSUPPORTED);
          g_assert_nonnull (strstr (error->message, table[i].name));
          g_test_message ("%s", error->message);
          n_refused++;
        }
    }
  g_test_message ("%" G_GSIZE_FORMAT " names load, %" G_GSIZE_FORMAT " refused", n_ok,
                  n_refused);
  g_assert_cmpuint (n_ok, ==, 86);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HzTokenizer) t = tokenizer_named ("qwen9-turbo", &error);
    g_assert_null (t);
    g_assert_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_UNSUPPORTED);
    g_assert_nonnull (strstr (error->message, "'qwen9-turbo'"));
  }
}

/* Configurations a GGUF cannot carry are refused, naming the part. */
static void
test_refused_configs (void)
{
  static const struct { const char *json, *needle; } cases[] = {
    { "{\"normalizer\":{\"type\":\"NFKC\"},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}", "NFKC" },
    { "{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},"
      "{\"type\":\"Lowercase\"}]},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}", "Lowercase" },
    { "{\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\"}", "Metaspace" },
    { "{\"pre_tokenizer\":null", "null" },
    { "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
      "\"pattern\":{\"Regex\":\"\\\\s+\"},\"behavior\":\"Removed\",\"invert\":false},"
      "{\"type\":\"ByteLevel\"}]}", "Removed" },
    { "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
      "\"pattern\":{\"Regex\":\"[a-z]+\"},\"behavior\":\"Isolated\",\"invert\":false},"
      "{\"type\":\"ByteLevel\",\"use_regex\":false}]}", "no tokenizer.ggml.pre name" },
    { "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"ByteLevel\"},"
      "{\"type\":\"Digits\",\"individual_digits\":true}]}", "after ByteLevel" },
    { "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true}", "add_prefix_space" },
    { "{\"pre_tokenizer\":{\"type\":\"Whitespace\"}", "Whitespace" },
    { "{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?<=a)b\"},"
      "\"behavior\":\"Isolated\"}", "unsupported group" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) perr = NULL;
      g_autofree char *json = g_strconcat (cases[i].json, ",\"model\":{\"type\":\"BPE\","
                                           "\"vocab\":{\"a\":0},\"merges\":[]}}", NULL);
      g_autoptr(JsonParser) p = json_parser_new ();
      g_assert_true (json_parser_load_from_data (p, json, -1, &perr));
      const char *name = hz_hf_tokenizer_pre_name (json_node_get_object (
                                                     json_parser_get_root (p)),
                                                   NULL, "tokenizer.json", &error);
      g_assert_null (name);
      g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID);
      g_test_message ("refused: %s", error->message);
      g_assert_nonnull (strstr (error->message, cases[i].needle));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pretok/names", test_names);
  g_test_add_func ("/pretok/regex-semantics", test_regex_semantics);
  g_test_add_func ("/pretok/scanners", test_scanners);
  g_test_add_func ("/pretok/nfc", test_nfc);
  g_test_add_func ("/pretok/families", test_families);
  g_test_add_func ("/pretok/model-shaped", test_model_shaped);
  g_test_add_func ("/pretok/refused", test_refused_configs);
  return g_test_run ();
}
