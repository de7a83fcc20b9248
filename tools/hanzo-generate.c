/* tools/hanzo-generate.c — `hanzo generate`: continue a prompt with a model.
 *
 *   hanzo generate -m MODEL -p TEXT [-n N] [--temp T --top-k K --top-p P --min-p P
 *                  --repeat-penalty X --seed S --threads N --ctx-size N] [--json]
 *
 * Streams the generated text to stdout (timings on stderr), or with --json prints one
 * JSON object: model, prompt, prompt_ids, generated_ids, text, stop_reason, timings.
 * The prompt is tokenized with BOS as the model asks; --special parses control-token
 * texts. A prompt that is not UTF-8 goes on with U+FFFD for its bad bytes, after a warning
 * (hz_cli_utf8_repair, as the other subcommands). Exit status: 0 ok, 1 runtime error (message on stderr), 2 usage error.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "hanzo/json-out.h"

static gboolean
print_token (HzToken token, const char *text, gpointer user_data)
{
  *(gboolean *) user_data = TRUE;   /* a line is open on stdout */
  fputs (text, stdout);
  fflush (stdout);
  return TRUE;
}

static void
add_ids (JsonBuilder *b, const char *member, const HzToken *ids, gsize n)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (gsize i = 0; i < n; i++)
    json_builder_add_int_value (b, ids[i]);
  json_builder_end_array (b);
}

static void
add_double (JsonBuilder *b, const char *member, double v)
{
  json_builder_set_member_name (b, member);
  json_builder_add_double_value (b, v);
}

static double
rate (double n, double seconds)
{
  return seconds > 0 ? n / seconds : 0.0;
}

int
hz_cmd_generate (int argc, char **argv)
{
  HzGenOpts o;
  g_autofree char *prompt = NULL;
  gboolean json = FALSE, special = FALSE;
  g_autoptr (GError) error = NULL;

  hz_gen_opts_init (&o, 128);
  const GOptionEntry entries[] = {
    { "prompt", 'p', 0, G_OPTION_ARG_FILENAME, &prompt, "Prompt text (UTF-8)", "TEXT" },
    { "special", 0, 0, G_OPTION_ARG_NONE, &special,
      "Parse control-token texts in the prompt (e.g. <|im_start|>)", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object instead of the text", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("— continue a prompt with a model");
  g_option_context_add_main_entries (octx, entries, NULL);
  hz_gen_opts_add (octx, &o, HZ_GEN_OPT_SAMPLING);
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      hz_cli_print_error ("generate", error->message);
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (o.model == NULL || prompt == NULL || argc != 1)
    {
      fprintf (stderr, "hanzo generate: need -m MODEL and -p TEXT\n"
                       "Usage: hanzo generate -m MODEL -p TEXT [-n N] [--temp T] [--json] ...\n");
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (!hz_gen_opts_check (&o, "generate", HZ_GEN_OPT_SAMPLING))
    {
      hz_gen_opts_clear (&o);
      return 2;
    }

  /* as every subcommand: bytes that are not UTF-8 go on as U+FFFD, after a warning */
  gsize prompt_len = strlen (prompt);
  char *valid = hz_cli_utf8_repair ("generate", "--prompt", prompt, prompt_len, &prompt_len);
  if (valid)
    {
      g_free (prompt);
      prompt = valid;
    }

  g_autoptr (HzModel) model = NULL;
  g_autoptr (HzContext) ctx = NULL;
  HzGenerateParams gp;
  if (!hz_gen_opts_open (&o, "generate", &model, &ctx, &gp))
    return 1;

  gsize n_prompt = 0;
  g_autofree HzToken *ids = hz_model_tokenize (model, prompt, -1, TRUE, special, &n_prompt);
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (HzToken));
  HzGenerateStats st;
  gboolean printed = FALSE;
  g_autofree char *text = hz_context_generate (ctx, ids, n_prompt, &gp, json ? NULL : print_token,
                                               &printed, NULL, out, &st, &error);
  if (text == NULL)
    {
      if (printed)   /* ends the partial reply's line; nothing on stdout when none came */
        fputc ('\n', stdout);
      hz_cli_print_error ("generate", error->message);
      return 1;
    }

  if (!json)
    {
      fputc ('\n', stdout);
      fflush (stdout);   /* the text before the statistics, also when both go to one pipe */
      fprintf (stderr,
               "prompt: %u tokens (%u evaluated) in %.3f s (%.1f t/s); generated: %u tokens in "
               "%.3f s (%.1f t/s); first token after %.3f s; stop: %s\n",
               st.n_prompt, st.n_prompt_evaluated, st.prompt_seconds,
               rate (st.n_prompt_evaluated, st.prompt_seconds), st.n_generated, st.gen_seconds,
               rate (st.n_generated, st.gen_seconds), st.ttft_seconds,
               hz_stop_reason_name (st.stop_reason));
      return 0;
    }

  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, hz_model_name (model));
  json_builder_set_member_name (b, "prompt");
  json_builder_add_string_value (b, prompt);
  add_ids (b, "prompt_ids", ids, n_prompt);
  add_ids (b, "generated_ids", (const HzToken *) (void *) out->data, out->len);
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text);
  json_builder_set_member_name (b, "stop_reason");
  json_builder_add_string_value (b, hz_stop_reason_name (st.stop_reason));
  json_builder_set_member_name (b, "timings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "prompt_tokens");
  json_builder_add_int_value (b, st.n_prompt);
  json_builder_set_member_name (b, "prompt_tokens_evaluated");
  json_builder_add_int_value (b, st.n_prompt_evaluated);
  add_double (b, "prompt_seconds", st.prompt_seconds);
  add_double (b, "prompt_tokens_per_second", rate (st.n_prompt_evaluated, st.prompt_seconds));
  json_builder_set_member_name (b, "generated_tokens");
  json_builder_add_int_value (b, st.n_generated);
  add_double (b, "generation_seconds", st.gen_seconds);
  add_double (b, "generation_tokens_per_second", rate (st.n_generated, st.gen_seconds));
  add_double (b, "time_to_first_token_seconds", st.ttft_seconds);
  json_builder_end_object (b);
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *s = hz_json_generator_to_data (gen, NULL);
  printf ("%s\n", s);
  return 0;
}
