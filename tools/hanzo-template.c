/* tools/hanzo-template.c — `hanzo template`: render a chat template.
 *
 *   hanzo template (-m MODEL | --template FILE.jinja) --messages FILE.json [--pieces]
 *
 * Renders the model's own Jinja chat template (tokenizer.chat_template of a GGUF file, or
 * of a Hugging Face folder's tokenizer_config.json), or the template in FILE.jinja, with
 * the render variables of FILE.json (an object: messages, add_generation_prompt, tools,
 * bos_token, eos_token, enable_thinking, any other keyword argument; as the fixtures of
 * ../shared/chat-templates/fixtures/). With -m, the model's BOS and EOS token texts are
 * bos_token and eos_token unless FILE.json gives them; with both -m and --template, the
 * file's template is rendered with the model's tokens.
 *
 * Prints the prompt byte for byte, as transformers' apply_chat_template(tokenize=False)
 * returns it (no newline added). --pieces prints it instead as JSON lines
 * {"markup": BOOL, "text": TEXT}: the template's own markup, and the content that came
 * from the variables (which a tokenizer must never read as control tokens).
 * Exit status: 0 ok, 1 the template or a file was refused (message on stderr), 2 usage.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cmd.h"
#include "gguf.h"
#include "jinja.h"
#include "hanzo/json-out.h"
#include "quantize.h"
#include "tokenizer.h"

/* the model's chat template and BOS / EOS texts (NULL when it has none) */
static gboolean
model_template (const char *model, char **tmpl, char **bos, char **eos, GError **error)
{
  g_autoptr (HzIsqModel) hf = NULL;
  g_autoptr (HzGguf) file = NULL;
  const HzGguf *gguf;
  if (g_file_test (model, G_FILE_TEST_IS_DIR))
    {
      if (!(hf = hz_isq_open (model, NULL, error)))
        return FALSE;
      gguf = hz_isq_model_gguf (hf);
    }
  else if (!(file = hz_gguf_open (model, error)))
    return FALSE;
  else
    gguf = file;
  *tmpl = hz_gguf_get_str (gguf, "tokenizer.chat_template");
  g_autoptr (HzTokenizer) tok = hz_tokenizer_new_from_gguf (gguf, error);
  if (!tok)
    return FALSE;
  const HzToken b = hz_tokenizer_bos (tok), e = hz_tokenizer_eos (tok);
  *bos = b >= 0 ? g_strdup (hz_tokenizer_token_text (tok, b)) : NULL;
  *eos = e >= 0 ? g_strdup (hz_tokenizer_token_text (tok, e)) : NULL;
  return TRUE;
}

static void
print_pieces (GPtrArray *pieces)
{
  for (guint i = 0; i < pieces->len; i++)
    {
      const HzJinjaPiece *p = pieces->pdata[i];
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "markup");
      json_builder_add_boolean_value (b, p->markup);
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, p->text);
      json_builder_end_object (b);
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      g_autofree char *line = hz_json_node_to_string (root, FALSE);
      printf ("%s\n", line);
    }
}

int
hz_cmd_template (int argc, char **argv)
{
  g_autofree char *model = NULL, *tmpl_file = NULL, *messages = NULL;
  gboolean pieces = FALSE;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
      "GGUF model or Hugging Face folder whose chat template (and BOS/EOS) to use", "MODEL" },
    { "template", 0, 0, G_OPTION_ARG_FILENAME, &tmpl_file, "Jinja chat template file", "FILE.jinja" },
    { "messages", 0, 0, G_OPTION_ARG_FILENAME, &messages,
      "JSON object of render variables (messages, add_generation_prompt, tools, ...)", "FILE.json" },
    { "pieces", 0, 0, G_OPTION_ARG_NONE, &pieces,
      "Print JSON lines {\"markup\", \"text\"}: template markup and caller content apart", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— render a chat template as the model sees it");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "hanzo template: %s\n", error->message);
      return 2;
    }
  if ((model == NULL && tmpl_file == NULL) || messages == NULL || argc != 1)
    {
      fprintf (stderr, "hanzo template: need -m MODEL or --template FILE.jinja, and --messages FILE.json\n"
                       "Usage: hanzo template (-m MODEL | --template FILE.jinja) --messages FILE.json [--pieces]\n");
      return 2;
    }

  g_autofree char *source = NULL, *bos = NULL, *eos = NULL;
  gsize source_len = 0;
  if (model && !model_template (model, &source, &bos, &eos, &error))
    {
      fprintf (stderr, "hanzo template: %s: %s\n", model, error->message);
      return 1;
    }
  if (tmpl_file)
    {
      g_clear_pointer (&source, g_free);
      if (!g_file_get_contents (tmpl_file, &source, &source_len, &error))
        {
          fprintf (stderr, "hanzo template: %s\n", error->message);
          return 1;
        }
    }
  else if (source == NULL)
    {
      fprintf (stderr, "hanzo template: %s has no chat template (tokenizer.chat_template); "
                       "give one with --template FILE.jinja\n", model);
      return 1;
    }
  else
    source_len = strlen (source);

  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, messages, &error))
    {
      fprintf (stderr, "hanzo template: %s: %s\n", messages, error->message);
      return 1;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      fprintf (stderr, "hanzo template: %s: not a JSON object of render variables\n", messages);
      return 1;
    }
  JsonObject *vars = json_node_get_object (root);
  if (bos && !json_object_has_member (vars, "bos_token"))
    json_object_set_string_member (vars, "bos_token", bos);
  if (eos && !json_object_has_member (vars, "eos_token"))
    json_object_set_string_member (vars, "eos_token", eos);

  g_autoptr (HzJinjaTemplate) t = hz_jinja_template_new (source, (gssize) source_len, &error);
  g_autoptr (GPtrArray) out = t ? hz_jinja_template_render_pieces (t, vars, NULL, NULL, &error) : NULL;
  if (out == NULL)
    {
      fprintf (stderr, "hanzo template: %s\n", error->message);
      return 1;
    }
  if (pieces)
    print_pieces (out);
  else
    for (guint i = 0; i < out->len; i++)
      {
        const HzJinjaPiece *p = out->pdata[i];
        fwrite (p->text, 1, p->len, stdout);
      }
  return fflush (stdout) == 0 ? 0 : 1;
}
