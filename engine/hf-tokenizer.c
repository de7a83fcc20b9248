/* engine/hf-tokenizer.c — a Hugging Face tokenizer as GGUF tokenizer.ggml.* keys; see
 * hf-tokenizer.h. */
#include <string.h>
#include "hf-tokenizer.h"
#include "json-in.h"
#include "tokenizer-private.h"

/* ---- normalizer and pre_tokenizer → a split ---- */

typedef struct {
  GPtrArray *regexes;     /* char* */
  gboolean   nfc;
  gboolean   byte_level;  /* a ByteLevel step was seen (it must be the last) */
  guint      step;        /* 1-based number of the step being read, for messages */
} HfSplit;

/* Regex of a Split's {"String": s} pattern: s matched literally. */
static char *
literal_regex (const char *s)
{
  GString *r = g_string_new (NULL);
  for (const char *p = s; *p; p++)
    {
      if (strchr ("\\^$.|?*+()[]{}-&", *p))
        g_string_append_c (r, '\\');
      g_string_append_c (r, *p);
    }
  return g_string_free (r, FALSE);
}

static gboolean
read_normalizer (JsonNode *node, const char *path, HfSplit *sp, GError **error)
{
  JsonObject *o;
  const char *type;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return hz_gguf_fail_invalid (error, "%s: normalizer is not an object", path);
  o = json_node_get_object (node);
  type = hz_json_str (o, "type");
  if (type && strcmp (type, "Sequence") == 0)
    {
      JsonArray *a = hz_json_arr (o, "normalizers");
      for (guint i = 0; a && i < json_array_get_length (a); i++)
        if (!read_normalizer (json_array_get_element (a, i), path, sp, error))
          return FALSE;
      return TRUE;
    }
  if (type && strcmp (type, "NFC") == 0)
    {
      sp->nfc = TRUE;
      return TRUE;
    }
  return hz_gguf_fail_invalid (error, "%s: normalizer %s cannot be represented in a GGUF (a GGUF tokenizer "
               "applies no normalizer but NFC, for Qwen2's pre-tokenizer names)", path,
               type ? type : "(without a type)");
}

static gboolean read_pre (JsonNode *node, const char *path, HfSplit *sp, GError **error);

static gboolean
read_pre_step (JsonObject *o, const char *path, HfSplit *sp, GError **error)
{
  const char *type = hz_json_str (o, "type");

  if (type && strcmp (type, "Sequence") == 0)
    {
      JsonArray *a = hz_json_arr (o, "pretokenizers");
      for (guint i = 0; a && i < json_array_get_length (a); i++)
        if (!read_pre (json_array_get_element (a, i), path, sp, error))
          return FALSE;
      return TRUE;
    }
  sp->step++;
  if (sp->byte_level)
    return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (%s) comes after ByteLevel: splitting "
                 "the byte-level text cannot be represented in a GGUF", path, sp->step,
                 type ? type : "?");
  if (type && strcmp (type, "Split") == 0)
    {
      JsonObject *pat = hz_json_obj (o, "pattern");
      const char *behavior = hz_json_str (o, "behavior");
      const char *re = hz_json_str (pat, "Regex"), *lit = hz_json_str (pat, "String");
      if (!re && !lit)
        return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (Split) has no Regex or String pattern",
                     path, sp->step);
      if (!behavior || strcmp (behavior, "Isolated") != 0)
        return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (Split) has behavior %s: only Isolated "
                     "(matches and the text between them become words) can be represented",
                     path, sp->step, behavior ? behavior : "(none)");
      if (hz_json_bool (o, "invert", FALSE))
        return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (Split) is inverted: cannot be "
                     "represented", path, sp->step);
      {
        char *regex = re ? g_strdup (re) : literal_regex (lit);
        g_autoptr(GError) local = NULL;
        HzRegex *compiled = hz_regex_new (regex, &local);
        g_ptr_array_add (sp->regexes, regex);
        if (compiled == NULL)
          return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (Split): %s", path, sp->step,
                       local->message);
        hz_regex_free (compiled);
      }
      return TRUE;
    }
  if (type && strcmp (type, "Digits") == 0)
    {
      /* Rust's char::is_numeric is \p{N}; Contiguous joins a run */
      g_ptr_array_add (sp->regexes, g_strdup (hz_json_bool (o, "individual_digits", FALSE)
                                              ? "\\p{N}" : "\\p{N}+"));
      return TRUE;
    }
  if (type && strcmp (type, "Punctuation") == 0)
    {
      /* is_ascii_punctuation || \p{P}: the ASCII symbols $+<=>^~|` are not \p{P} */
      const char *behavior = hz_json_str (o, "behavior");
      if (behavior && strcmp (behavior, "Contiguous") == 0)
        g_ptr_array_add (sp->regexes, g_strdup ("[\\p{P}\\$\\+<=>\\^~\\|`]+"));
      else if (behavior && strcmp (behavior, "Isolated") == 0)
        g_ptr_array_add (sp->regexes, g_strdup ("[\\p{P}\\$\\+<=>\\^~\\|`]"));
      else
        return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (Punctuation) has behavior %s: only "
                     "Isolated or Contiguous can be represented", path, sp->step,
                     behavior ? behavior : "(none)");
      return TRUE;
    }
  if (type && strcmp (type, "ByteLevel") == 0)
    {
      if (hz_json_bool (o, "add_prefix_space", FALSE))
        return hz_gguf_fail_invalid (error, "%s: pre_tokenizer ByteLevel has add_prefix_space: a GGUF "
                     "byte-level BPE adds no prefix space", path);
      if (hz_json_bool (o, "use_regex", TRUE))
        g_ptr_array_add (sp->regexes, g_strdup (hz_re_gpt2));
      sp->byte_level = TRUE;
      return TRUE;
    }
  if (type && strcmp (type, "Metaspace") == 0)
    return hz_gguf_fail_invalid (error, "%s: pre_tokenizer Metaspace (SentencePiece-style) cannot be "
                 "represented as a byte-level BPE; convert the model's tokenizer.model, or "
                 "pass --vocab FILE.gguf", path);
  return hz_gguf_fail_invalid (error, "%s: pre_tokenizer step %u (%s) cannot be represented in a GGUF "
               "byte-level BPE", path, sp->step, type ? type : "without a type");
}

static gboolean
read_pre (JsonNode *node, const char *path, HfSplit *sp, GError **error)
{
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return hz_gguf_fail_invalid (error, "%s: pre_tokenizer is %s: a byte-level BPE needs a ByteLevel "
                 "pre-tokenizer", path, node && JSON_NODE_HOLDS_NULL (node) ? "null"
                 : node ? "not an object" : "missing");
  return read_pre_step (json_node_get_object (node), path, sp, error);
}

static char *
describe_regexes (GPtrArray *regexes)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < regexes->len; i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "", (const char *) regexes->pdata[i]);
  return g_string_free (s, FALSE);
}

/* Documented in hf-tokenizer.h. */
const char *
hz_hf_tokenizer_pre_name (JsonObject *tokenizer, JsonObject *tokenizer_config,
                          const char *path, GError **error)
{
  g_autoptr(GPtrArray) regexes = g_ptr_array_new_with_free_func (g_free);
  HfSplit sp = { regexes, FALSE, FALSE, 0 };
  JsonObject *model = hz_json_obj (tokenizer, "model");
  gboolean ignore_merges = hz_json_bool (model, "ignore_merges", FALSE);
  JsonNode *clean = tokenizer_config
                    ? json_object_get_member (tokenizer_config, "clean_up_tokenization_spaces")
                    : NULL;
  gboolean has_clean = clean && JSON_NODE_HOLDS_VALUE (clean) &&
                       json_node_get_value_type (clean) == G_TYPE_BOOLEAN;
  const HzPreInfo *table, *found = NULL;
  g_autoptr(GError) local = NULL;
  HzPreSplitter *want;
  gsize n;

  if (!read_normalizer (json_object_get_member (tokenizer, "normalizer"), path, &sp, error) ||
      !read_pre (json_object_get_member (tokenizer, "pre_tokenizer"), path, &sp, error))
    return NULL;
  if (!sp.byte_level)
    {
      hz_gguf_fail_invalid (error, "%s: pre_tokenizer has no ByteLevel step: not a byte-level BPE", path);
      return NULL;
    }
  g_ptr_array_add (sp.regexes, NULL);
  want = hz_pre_splitter_new ((const char *const *) sp.regexes->pdata, FALSE, &local);
  g_ptr_array_remove_index (sp.regexes, sp.regexes->len - 1);
  if (want == NULL)
    {
      hz_gguf_fail_invalid (error, "%s: pre_tokenizer: %s", path, local->message);
      return NULL;
    }

  table = hz_pre_infos (&n);
  for (gsize i = 0; i < n; i++)
    {
      const HzPreInfo *info = &table[i];
      HzPreSplitter *have;
      gboolean same;
      if (info->regexes == NULL ||
          ((info->flags & HZ_PRE_NFC) != 0) != sp.nfc ||
          ((info->flags & HZ_PRE_IGNORE_MERGES) != 0) != ignore_merges)
        continue;
      have = hz_pre_splitter_new (info->regexes, FALSE, NULL);
      same = have && hz_pre_splitter_equal (have, want);
      hz_pre_splitter_free (have);
      if (!same)
        continue;
      if (!has_clean ||
          ((info->flags & HZ_PRE_KEEP_SPACES) == 0) == json_node_get_boolean (clean))
        {
          found = info;
          break;
        }
      if (found == NULL)
        found = info;
    }
  hz_pre_splitter_free (want);
  if (found == NULL)
    {
      g_autofree char *list = describe_regexes (sp.regexes);
      hz_gguf_fail_invalid (error, "%s: no tokenizer.ggml.pre name splits as this tokenizer does (regexes "
            "%s; normalizer %s; ignore_merges %s): it cannot be represented in a GGUF", path,
            list, sp.nfc ? "NFC" : "none", ignore_merges ? "true" : "false");
      return NULL;
    }
  return found->name;
}

/* ---- vocabulary, merges, special tokens ---- */

typedef struct {
  char   **texts;   /* [n], NULL-terminated */
  int32_t *types;   /* [n] llama.cpp token types */
  int64_t  n;
} Vocab;

static void
vocab_clear (Vocab *v)
{
  g_strfreev (v->texts);
  g_free (v->types);
}

static gboolean
read_vocab (JsonObject *tok, JsonObject *model, int64_t vocab_size, const char *path,
            Vocab *v, GError **error)
{
  JsonObject *vocab = hz_json_obj (model, "vocab");
  JsonArray *added = hz_json_arr (tok, "added_tokens");
  g_autoptr(GList) members = NULL;
  int64_t n = vocab_size;

  if (vocab == NULL)
    return hz_gguf_fail_invalid (error, "%s: model.vocab missing", path);
  members = json_object_get_members (vocab);
  for (GList *l = members; l; l = l->next)
    n = MAX (n, hz_json_int (vocab, l->data, -1) + 1);
  for (guint i = 0; added && i < json_array_get_length (added); i++)
    n = MAX (n, hz_json_int (json_array_get_object_element (added, i), "id", -1) + 1);
  if (n <= 0 || n > (1 << 22))
    return hz_gguf_fail_invalid (error, "%s: implausible vocabulary size %" G_GINT64_FORMAT, path, n);
  v->n = n;
  v->texts = g_new0 (char *, n + 1);
  v->types = g_new0 (int32_t, n);
  for (GList *l = members; l; l = l->next)
    {
      int64_t id = hz_json_int (vocab, l->data, -1);
      if (id >= 0 && id < n && !v->texts[id])
        {
          v->texts[id] = g_strdup (l->data);
          v->types[id] = 1;  /* normal */
        }
    }
  for (guint i = 0; added && i < json_array_get_length (added); i++)
    {
      JsonObject *a = json_array_get_object_element (added, i);
      int64_t id = hz_json_int (a, "id", -1);
      const char *content = hz_json_str (a, "content");
      if (id < 0 || id >= n || !content)
        continue;
      g_free (v->texts[id]);
      v->texts[id] = g_strdup (content);
      v->types[id] = hz_json_bool (a, "special", FALSE) ? 3 : 4;  /* control : user-defined */
    }
  for (int64_t i = 0; i < n; i++)
    if (!v->texts[i])
      {
        v->texts[i] = g_strdup_printf ("[PAD%" G_GINT64_FORMAT "]", i);
        v->types[i] = 5;  /* unused */
      }
  return TRUE;
}

/* model.merges as "left right" strings (the GGUF form); entries are "a b" strings or
 * ["a", "b"] pairs. */
static char **
read_merges (JsonObject *model, const char *path, guint *n_out, GError **error)
{
  JsonArray *ma = hz_json_arr (model, "merges");
  guint nm;
  char **merges;

  if (ma == NULL)
    {
      hz_gguf_fail_invalid (error, "%s: model.merges missing", path);
      return NULL;
    }
  nm = json_array_get_length (ma);
  merges = g_new0 (char *, nm + 1);
  for (guint i = 0; i < nm; i++)
    {
      JsonNode *e = json_array_get_element (ma, i);
      JsonArray *pair = JSON_NODE_HOLDS_ARRAY (e) ? json_node_get_array (e) : NULL;
      if (pair && json_array_get_length (pair) == 2 &&
          JSON_NODE_HOLDS_VALUE (json_array_get_element (pair, 0)) &&
          JSON_NODE_HOLDS_VALUE (json_array_get_element (pair, 1)))
        merges[i] = g_strdup_printf ("%s %s", json_array_get_string_element (pair, 0),
                                     json_array_get_string_element (pair, 1));
      else if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING &&
               strchr (json_node_get_string (e) + 1, ' ') != NULL)
        merges[i] = g_strdup (json_node_get_string (e));
      else
        {
          g_strfreev (merges);
          hz_gguf_fail_invalid (error, "%s: model.merges[%u] is neither \"left right\" nor a pair of strings",
                path, i);
          return NULL;
        }
    }
  *n_out = nm;
  return merges;
}

static int64_t
find_text (const Vocab *v, const char *text)
{
  for (int64_t i = 0; text && i < v->n; i++)
    if (strcmp (v->texts[i], text) == 0)
      return i;
  return -1;
}

/* tokenizer_config's NAME_token: a string or an AddedToken object {"content": ...}. */
static const char *
config_token_text (JsonObject *tcfg, const char *name)
{
  const char *text = hz_json_str (tcfg, name);
  return text ? text : hz_json_str (hz_json_obj (tcfg, name), "content");
}

/* The special tokens a post_processor puts before and after a single text: counts and the
 * id of the last one before / first one after. */
typedef struct {
  int     n_before, n_after;
  int64_t before, after;
} Around;

static int64_t
template_special_id (JsonObject *pp, const char *name, const Vocab *v)
{
  JsonObject *st = hz_json_obj (hz_json_obj (pp, "special_tokens"), name);
  JsonArray *ids = hz_json_arr (st, "ids");
  if (ids && json_array_get_length (ids) == 1)
    return json_array_get_int_element (ids, 0);
  return find_text (v, name);
}

static gboolean
read_post_processor (JsonObject *pp, const char *path, const Vocab *v, Around *a,
                     GError **error)
{
  const char *type = hz_json_str (pp, "type");

  if (pp == NULL || (type && strcmp (type, "ByteLevel") == 0))
    return TRUE;
  if (type && strcmp (type, "Sequence") == 0)
    {
      JsonArray *ps = hz_json_arr (pp, "processors");
      for (guint i = 0; ps && i < json_array_get_length (ps); i++)
        if (!read_post_processor (json_array_get_object_element (ps, i), path, v, a, error))
          return FALSE;
      return TRUE;
    }
  if (type && strcmp (type, "TemplateProcessing") == 0)
    {
      JsonArray *single = hz_json_arr (pp, "single");
      gboolean seen_text = FALSE;
      for (guint i = 0; single && i < json_array_get_length (single); i++)
        {
          JsonObject *item = json_array_get_object_element (single, i);
          const char *sp = hz_json_str (hz_json_obj (item, "SpecialToken"), "id");
          if (hz_json_obj (item, "Sequence"))
            seen_text = TRUE;
          else if (sp && !seen_text)
            a->n_before++, a->before = template_special_id (pp, sp, v);
          else if (sp && a->n_after++ == 0)
            a->after = template_special_id (pp, sp, v);
        }
      return TRUE;
    }
  if (type && (strcmp (type, "RobertaProcessing") == 0 || strcmp (type, "BertProcessing") == 0))
    {
      JsonArray *cls = hz_json_arr (pp, "cls"), *sep = hz_json_arr (pp, "sep");
      if (cls && json_array_get_length (cls) == 2)
        a->n_before++, a->before = json_array_get_int_element (cls, 1);
      if (sep && json_array_get_length (sep) == 2)
        a->n_after++, a->after = json_array_get_int_element (sep, 1);
      return TRUE;
    }
  return hz_gguf_fail_invalid (error, "%s: post_processor %s cannot be represented in a GGUF", path,
               type ? type : "(without a type)");
}

static void
write_chat_templates (HzGgufWriter *w, const char *dir, JsonObject *tcfg)
{
  JsonNode *ct = tcfg ? json_object_get_member (tcfg, "chat_template") : NULL;

  if (ct && JSON_NODE_HOLDS_VALUE (ct) && json_node_get_value_type (ct) == G_TYPE_STRING)
    {
      hz_gguf_writer_set_str (w, "tokenizer.chat_template", json_node_get_string (ct));
      return;
    }
  if (ct && JSON_NODE_HOLDS_ARRAY (ct))
    {
      /* [{"name": "default", "template": ...}, {"name": "tool_use", ...}] */
      JsonArray *list = json_node_get_array (ct);
      for (guint i = 0; i < json_array_get_length (list); i++)
        {
          JsonNode *e = json_array_get_element (list, i);
          JsonObject *o = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
          const char *name = hz_json_str (o, "name"), *tmpl = hz_json_str (o, "template");
          if (!name || !tmpl)
            continue;
          if (strcmp (name, "default") == 0)
            hz_gguf_writer_set_str (w, "tokenizer.chat_template", tmpl);
          else
            {
              g_autofree char *key = g_strdup_printf ("tokenizer.chat_template.%s", name);
              hz_gguf_writer_set_str (w, key, tmpl);
            }
        }
      return;
    }
  {
    g_autofree char *path = g_build_filename (dir, "chat_template.jinja", NULL);
    g_autofree char *text = NULL;
    if (g_file_get_contents (path, &text, NULL, NULL) && g_utf8_validate (text, -1, NULL))
      hz_gguf_writer_set_str (w, "tokenizer.chat_template", text);
  }
}

/* Documented in hf-tokenizer.h. */
gboolean
hz_hf_tokenizer_import (HzGgufWriter *w, const char *dir, int64_t vocab_size,
                        JsonObject *config, GError **error)
{
  g_autofree char *tpath = g_build_filename (dir, "tokenizer.json", NULL);
  g_autofree char *cpath = g_build_filename (dir, "tokenizer_config.json", NULL);
  g_autoptr(JsonParser) tp = NULL, cp = NULL;
  JsonObject *tok, *tcfg, *model;
  const char *mtype, *pre;
  Vocab v = { 0 };
  Around around = { 0, 0, -1, -1 };
  char **merges;
  guint nm = 0;
  gboolean ok = FALSE;

  tok = hz_json_read_object (tpath, &tp, FALSE, error);
  if (!tok)
    return error && *error ? FALSE
           : hz_gguf_fail_invalid (error, "%s: no tokenizer.json; pass a GGUF with the vocabulary "
                   "(--vocab FILE.gguf)", dir);
  tcfg = hz_json_read_object (cpath, &cp, FALSE, error);
  if (!tcfg && error && *error)
    return FALSE;

  model = hz_json_obj (tok, "model");
  mtype = hz_json_str (model, "type");
  if (!model || !mtype || strcmp (mtype, "BPE") != 0)
    return hz_gguf_fail_invalid (error, "%s: tokenizer model '%s' is not supported (byte-level BPE only); "
                 "pass --vocab FILE.gguf", tpath, mtype ? mtype : "?");
  if (hz_json_bool (model, "byte_fallback", FALSE))
    return hz_gguf_fail_invalid (error, "%s: a SentencePiece-style BPE (byte_fallback) needs tokenizer.model; "
                 "pass --vocab FILE.gguf", tpath);
  if ((hz_json_str (model, "continuing_subword_prefix") &&
       *hz_json_str (model, "continuing_subword_prefix")) ||
      (hz_json_str (model, "end_of_word_suffix") && *hz_json_str (model, "end_of_word_suffix")))
    return hz_gguf_fail_invalid (error, "%s: a BPE with continuing_subword_prefix or end_of_word_suffix "
                 "cannot be represented in a GGUF", tpath);
  pre = hz_hf_tokenizer_pre_name (tok, tcfg, tpath, error);
  if (pre == NULL)
    return FALSE;
  if (!read_vocab (tok, model, vocab_size, tpath, &v, error))
    goto out;
  if (!read_post_processor (hz_json_obj (tok, "post_processor"), tpath, &v, &around, error))
    goto out;
  if (around.n_before > 1 || around.n_after > 1)
    {
      hz_gguf_fail_invalid (error, "%s: post_processor adds %d special tokens before and %d after the text: "
            "a GGUF adds at most a BOS and an EOS", tpath, around.n_before, around.n_after);
      goto out;
    }
  merges = read_merges (model, tpath, &nm, error);
  if (merges == NULL)
    goto out;

  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "gpt2");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.pre", pre);
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) v.texts, v.n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, v.types, v.n);
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.merges", (const char *const *) merges, nm);
  g_strfreev (merges);

  /* special ids: the post_processor's, config.json's, then tokenizer_config's texts */
  {
    static const struct { const char *cfg, *key; } ids[] = {
      { "bos_token", "tokenizer.ggml.bos_token_id" },
      { "eos_token", "tokenizer.ggml.eos_token_id" },
      { "unk_token", "tokenizer.ggml.unknown_token_id" },
      { "pad_token", "tokenizer.ggml.padding_token_id" },
    };
    for (gsize k = 0; k < G_N_ELEMENTS (ids); k++)
      {
        g_autofree char *idkey = g_strdup_printf ("%s_id", ids[k].cfg);
        int64_t id = k == 0 && around.n_before ? around.before
                     : k == 1 && around.n_after ? around.after : -1;
        int64_t by_text = find_text (&v, config_token_text (tcfg, ids[k].cfg));
        if (id < 0)
          id = hz_json_int (config, idkey, -1);
        if (by_text >= 0)
          id = by_text;
        if (id >= 0 && id < v.n)
          hz_gguf_writer_set_u32 (w, ids[k].key, (uint32_t) id);
      }
  }
  hz_gguf_writer_set_bool (w, "tokenizer.ggml.add_bos_token",
                           hz_json_bool (tcfg, "add_bos_token", around.n_before > 0));
  hz_gguf_writer_set_bool (w, "tokenizer.ggml.add_eos_token",
                           hz_json_bool (tcfg, "add_eos_token", around.n_after > 0));
  /* the token after the text is the EOS above (RobertaProcessing's sep included) */
  hz_gguf_writer_set_bool (w, "tokenizer.ggml.add_sep_token", FALSE);
  write_chat_templates (w, dir, tcfg);
  ok = TRUE;
out:
  vocab_clear (&v);
  return ok;
}
