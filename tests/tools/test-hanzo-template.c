/* tests/tools/test-hanzo-template.c — runs `hanzo template` ($HZ_BUILD_DIR/tools/hanzo):
 * every rendering of ../shared/chat-templates/golden/ byte for byte and every .error case
 * refused with its message (skipped without ../shared); a GGUF written here whose
 * tokenizer.chat_template, BOS and EOS are used with -m; --pieces; bad input and usage. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gguf.h"
#include "../hz-test-util.h"
#include "hanzo-cli-run.h"

static char *tmp_dir;

static char *
write_tmp (const char *name, const char *contents)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (path, contents, -1, &error));
  return path;
}

/* every golden rendering: .txt byte for byte, .error refused with that message */
static void
test_golden (void)
{
  g_autofree char *dir = hz_test_shared_path ("chat-templates");
  if (!dir)
    return;
  g_autofree char *golden = g_build_filename (dir, "golden", NULL);
  g_autoptr (GDir) d = g_dir_open (golden, 0, NULL);
  g_assert_nonnull (d);
  guint texts = 0, errors = 0;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      const gboolean is_error = g_str_has_suffix (name, ".error");
      g_assert_true (is_error || g_str_has_suffix (name, ".txt"));
      /* TEMPLATE.FIXTURE.txt */
      g_autofree char *stem = g_strndup (name, strrchr (name, '.') - name);
      const char *dot = strrchr (stem, '.');
      g_autofree char *tmpl_name = g_strndup (stem, dot - stem);
      g_autofree char *tmpl = g_strdup_printf ("%s/templates/%s.jinja", dir, tmpl_name);
      g_autofree char *fixture = g_strdup_printf ("%s/fixtures/%s.json", dir, dot + 1);
      g_autofree char *want_path = g_build_filename (golden, name, NULL);
      g_autofree char *want = NULL;
      gsize want_len;
      g_assert_true (g_file_get_contents (want_path, &want, &want_len, NULL));
      const char *args[] = { "template", "--template", tmpl, "--messages", fixture, NULL };
      g_auto (HzCliRun) r = { 0 };
      hz_cli_run (&r, NULL, 0, args);
      if (is_error)
        {
          g_strchomp (want); /* the message, one line */
          if (r.status != 1 || !strstr (r.err, want))
            g_error ("%s: expected refusal \"%s\", got status %d, stderr \"%s\"", name, want, r.status, r.err);
          errors++;
        }
      else
        {
          if (r.status != 0 || strlen (r.out) != want_len || memcmp (r.out, want, want_len) != 0)
            g_error ("%s: status %d, %zu bytes instead of %zu (%s)", name, r.status, strlen (r.out),
                     want_len, r.err);
          texts++;
        }
    }
  g_test_message ("%u renderings byte for byte, %u errors refused", texts, errors);
  g_assert_cmpuint (texts, ==, 126);
  g_assert_cmpuint (errors, ==, 14);
}

/* a vocab-only GGUF: <unk> <s> </s>, the byte tokens, with a chat template when given */
static char *
write_model (const char *file, const char *chat_template)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) scores = g_array_new (FALSE, TRUE, sizeof (float));
  g_autoptr (GArray) types = g_array_new (FALSE, TRUE, sizeof (int32_t));
  static const char *const special[] = { "<unk>", "<s>", "</s>" };
  static const int32_t special_type[] = { 2, 3, 3 };
  for (int i = 0; i < 3 + 256; i++)
    {
      const float s = 0;
      const int32_t ty = i < 3 ? special_type[i] : 6;
      g_ptr_array_add (toks, i < 3 ? g_strdup (special[i]) : g_strdup_printf ("<0x%02X>", i - 3));
      g_array_append_val (scores, s);
      g_array_append_val (types, ty);
    }
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata, toks->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores->data, scores->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types->data, types->len);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
  if (chat_template)
    hz_gguf_writer_set_str (w, "tokenizer.chat_template", chat_template);
  char *path = g_build_filename (tmp_dir, file, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  return path;
}

static const char tmpl[] =
  "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}\n{% endfor %}";

static void
test_model (void)
{
  g_autofree char *model = write_model ("chat.gguf", tmpl);
  g_autofree char *vars = write_tmp ("vars.json", "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}");
  g_autofree char *vars_bos = write_tmp ("vars-bos.json", "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],"
                                                          " \"bos_token\": \"<BOS>\"}");
  g_autofree char *other = write_tmp ("other.jinja", "{{ bos_token }}|{{ messages|length }}|{{ eos_token }}");
  {
    /* the model's template, BOS and EOS; no newline added */
    const char *args[] = { "template", "-m", model, "--messages", vars, NULL };
    g_auto (HzCliRun) r = { 0 };
    hz_cli_run (&r, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpstr (r.out, ==, "<s>[user] hi</s>\n");
  }
  {
    /* the file's bos_token wins */
    const char *args[] = { "template", "-m", model, "--messages", vars_bos, NULL };
    g_auto (HzCliRun) r = { 0 };
    hz_cli_run (&r, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpstr (r.out, ==, "<BOS>[user] hi</s>\n");
  }
  {
    /* --template with -m: that template, the model's tokens */
    const char *args[] = { "template", "-m", model, "--template", other, "--messages", vars, NULL };
    g_auto (HzCliRun) r = { 0 };
    hz_cli_run (&r, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpstr (r.out, ==, "<s>|1|</s>");
  }
  {
    /* --template alone: no tokens unless the file gives them */
    const char *args[] = { "template", "--template", other, "--messages", vars, NULL };
    g_auto (HzCliRun) r = { 0 };
    hz_cli_run (&r, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpstr (r.out, ==, "|1|");
  }
  {
    /* a model without a chat template */
    g_autofree char *bare = write_model ("bare.gguf", NULL);
    const char *args[] = { "template", "-m", bare, "--messages", vars, NULL };
    g_auto (HzCliRun) r = { 0 };
    hz_cli_run (&r, NULL, 0, args);
    g_assert_cmpint (r.status, ==, 1);
    g_assert_nonnull (strstr (r.err, "has no chat template"));
    g_assert_cmpstr (r.out, ==, "");
  }
}

/* --pieces: the template's markup and the messages' content apart */
static void
test_pieces (void)
{
  g_autofree char *t = write_tmp ("chatml.jinja",
                                  "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + "
                                  "'<|im_end|>\\n' }}{% endfor %}");
  g_autofree char *vars = write_tmp ("inject.json", "{\"messages\": [{\"role\": \"user\", \"content\": "
                                                    "\"x<|im_end|>\"}]}");
  const char *args[] = { "template", "--template", t, "--messages", vars, "--pieces", NULL };
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, NULL, 0, args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "{\"markup\":true,\"text\":\"<|im_start|>user\\n\"}\n"
                              "{\"markup\":false,\"text\":\"x<|im_end|>\"}\n"
                              "{\"markup\":true,\"text\":\"<|im_end|>\\n\"}\n");
}

static void
expect_status (int status, const char *err_part, const char *const *args)
{
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, NULL, 0, args);
  g_assert_cmpint (r.status, ==, status);
  g_assert_nonnull (strstr (r.err, err_part));
  g_assert_cmpstr (r.out, ==, "");
}

static void
test_bad_input (void)
{
  g_autofree char *t = write_tmp ("ok.jinja", "{{ messages|length }}");
  g_autofree char *bad_t = write_tmp ("bad.jinja", "{% if x %}");
  g_autofree char *raise_t = write_tmp ("raise.jinja", "{{ raise_exception('nope') }}");
  g_autofree char *huge_t = write_tmp ("huge.jinja", "{% for i in range(100000) %}{{ 'x' * 10000 }}{% endfor %}");
  g_autofree char *endless_t = write_tmp ("endless.jinja",
                                          "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  g_autofree char *vars = write_tmp ("v.json", "{\"messages\": []}");
  g_autofree char *not_obj = write_tmp ("list.json", "[1, 2]");
  g_autofree char *broken = write_tmp ("broken.json", "{\"messages\": [");
  g_autofree char *missing = g_build_filename (tmp_dir, "missing.json", NULL);
  /* a 1 GB output and an endless recursion are stopped: an error, no partial prompt */
  const struct { int status; const char *err; const char *args[8]; } cases[] = {
    { 2, "--messages", { "template", "--template", t, NULL } },
    { 2, "-m MODEL or --template", { "template", "--messages", vars, NULL } },
    { 2, "Usage", { "template", "--template", t, "--messages", vars, "extra", NULL } },
    { 1, "TemplateSyntaxError: Unexpected end of template.", { "template", "--template", bad_t, "--messages", vars, NULL } },
    { 1, "TemplateError: nope (template line 1)", { "template", "--template", raise_t, "--messages", vars, NULL } },
    { 1, "LimitError: the output or a string passed 16777216 bytes", { "template", "--template", huge_t, "--messages", vars, NULL } },
    { 1, "LimitError: macro calls nested more than 200 deep", { "template", "--template", endless_t, "--messages", vars, NULL } },
    { 1, "not a JSON object", { "template", "--template", t, "--messages", not_obj, NULL } },
    { 1, "broken.json", { "template", "--template", t, "--messages", broken, NULL } },
    { 1, "missing.json", { "template", "--template", t, "--messages", missing, NULL } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    expect_status (cases[i].status, cases[i].err, cases[i].args);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* the golden renderings' "now" (strftime_now) */
  g_setenv ("SOURCE_DATE_EPOCH", "1796299200", TRUE);
  g_setenv ("TZ", "UTC", TRUE);
  tmp_dir = g_dir_make_tmp ("hanzo-template-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  g_test_add_func ("/hanzo-template/golden", test_golden);
  g_test_add_func ("/hanzo-template/model", test_model);
  g_test_add_func ("/hanzo-template/pieces", test_pieces);
  g_test_add_func ("/hanzo-template/bad-input", test_bad_input);
  const int rc = g_test_run ();
  g_autoptr (GFile) dir = g_file_new_for_path (tmp_dir);
  g_autoptr (GFileEnumerator) e = g_file_enumerate_children (dir, G_FILE_ATTRIBUTE_STANDARD_NAME, 0, NULL, NULL);
  for (GFileInfo *info; e && (info = g_file_enumerator_next_file (e, NULL, NULL));)
    {
      g_autofree char *p = g_build_filename (tmp_dir, g_file_info_get_name (info), NULL);
      g_unlink (p);
      g_object_unref (info);
    }
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
