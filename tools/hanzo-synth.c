/* tools/hanzo-synth.c — `hanzo synth`: write a random-weight GGUF with a real shape.
 *
 *   hanzo synth [--arch llama|qwen2|qwen3|gemma2|gemma3|...] --shape SHAPE --type T --vocab FROM.gguf
 *               -o OUT.gguf [--seed N] [--pure] [--matrix-type FORMAT] [--expert-type FORMAT]
 *               [--chat-template FILE.jinja] [--fast] [-t THREADS]
 *
 * SHAPE: tinyllama-1.1b, llama2-7b, llama3-8b, qwen2.5-0.5b, qwen3-0.6b, moe-30b-a3b
 * (Qwen3-30B-A3B, qwen3moe), tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe, gemma3-1b,
 * gemma3-12b, gemma2-2b, tiny-gemma3, tiny-gemma2, gpt-oss-20b, gpt-oss-120b, tiny-gpt-oss,
 * mid-gpt-oss or
 * custom:dim=..,layers=..,heads=..,kv=..,ffn=..[,experts=..,experts_used=..,ffn_exp=..]
 * [,window=..,rope_base_swa=..,rope_linear=..,yarn=..,yarn_ctx=..] (window for --arch
 * gemma2/gemma3/gpt-oss, rope_base_swa and rope_linear for gemma3)
 * T: a file type of `hanzo quantize --list` (mix rules as llama-quantize; --pure for none).
 * --matrix-type puts every quantizable matrix in one format of the quant table instead
 * (any weight format; IQ2_XXS, IQ2_XS and IQ1_S, which need an importance matrix to
 * quantize, as random blocks of the right scale). --expert-type puts the experts' 3-D
 * tensors in one format (default for gpt-oss: MXFP4, as the released models ship them;
 * with --matrix-type and no --expert-type, the experts follow --matrix-type).
 * Weights and vocabulary: engine/synth.h. A file system without room for the tensor data
 * is reported before any weight is generated, and nothing is written.
 * Exit status: 0 ok, 1 error, 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "quant.h"
#include "synth.h"

/* The ggml type of a weight format name of the quant table that synth can write, or -1
 * after a message. */
static int32_t
weight_format (const char *name)
{
  for (gsize i = 0; i < hz_quant_n_formats (); i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      if (g_ascii_strcasecmp (t->name, name) == 0 && t->vec_dot &&
          (t->from_float || hz_synth_random_blocks (t->type)))
        return (int32_t) t->type;
    }
  fprintf (stderr, "hanzo synth: '%s' is not a weight format of the quant table\n", name);
  return -1;
}

int
hz_cmd_synth (int argc, char **argv)
{
  g_autofree char *arch = NULL, *shape = NULL, *type = NULL, *vocab = NULL, *out = NULL,
                  *matrix_type = NULL, *expert_type = NULL, *template_file = NULL,
                  *template_text = NULL;
  gint64 seed = 42;
  gint threads = 0;
  gboolean pure = FALSE, fast = FALSE;
  GOptionEntry entries[] = {
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch, "llama, qwen2, qwen3, qwen2moe, qwen3moe, gemma2, gemma3 or gpt-oss (default: the shape's)", "A" },
    { "shape", 0, 0, G_OPTION_ARG_STRING, &shape, "Model shape (see the list below)", "SHAPE" },
    { "type", 0, 0, G_OPTION_ARG_STRING, &type, "File type (Q4_0, Q4_K_M, ...)", "T" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &vocab, "GGUF to copy the tokenizer from", "FILE" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Output GGUF", "FILE" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "RNG seed (default 42)", "N" },
    { "pure", 0, 0, G_OPTION_ARG_NONE, &pure, "Every matrix at the default type", NULL },
    { "matrix-type", 0, 0, G_OPTION_ARG_STRING, &matrix_type,
      "Every matrix in this format (q4_0, iq2_xxs, ...) instead of the type's mix", "FORMAT" },
    { "expert-type", 0, 0, G_OPTION_ARG_STRING, &expert_type,
      "The experts' tensors in this format (default for gpt-oss: mxfp4)", "FORMAT" },
    { "chat-template", 0, 0, G_OPTION_ARG_FILENAME, &template_file,
      "Write this Jinja file as the model's chat template", "FILE.jinja" },
    { "fast", 0, 0, G_OPTION_ARG_NONE, &fast,
      "Benchmark file: quantize ~1M weights per tensor and fill the rest with copies of those rows (seconds instead of minutes for big models; weights repeat)", NULL },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Threads, 0..1024 (default 0: all cores)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("— write a random-weight model");
  g_option_context_set_description (oc,
    "Shapes: tinyllama-1.1b llama2-7b llama3-8b qwen2.5-0.5b qwen3-0.6b moe-30b-a3b\n"
    "        tiny-qwen3moe tiny-mixtral tiny-qwen2moe\n"
    "        gemma3-1b gemma3-12b gemma2-2b tiny-gemma3 tiny-gemma2\n"
    "        gpt-oss-20b gpt-oss-120b tiny-gpt-oss mid-gpt-oss\n"
    "        custom:dim=128,layers=2,heads=4,kv=2,ffn=384[,head_dim=D,ctx=N,tied=1]\n"
    "               [,experts=E,experts_used=K,ffn_exp=F,ffn_shexp=F]\n"
    "               [,window=W,rope_base_swa=B,rope_linear=F] (gemma2, gemma3)\n"
    "               [,window=W,yarn=F,yarn_ctx=N] (gpt-oss)\n");
  g_option_context_add_main_entries (oc, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error))
    {
      hz_cli_print_error ("synth", error->message);
      return 2;
    }
  if (!hz_cli_check_threads ("synth", "--threads", threads))
    return 2;
  if (!shape || !type || !vocab || !out || argc != 1)
    {
      fprintf (stderr, "hanzo synth: need --shape, --type, --vocab and -o (see --help)\n");
      return 2;
    }
  HzSynthParams p = { 0 };
  p.matrix_type = -1;
  if (!hz_synth_shape_parse (shape, &p.shape, &error))
    {
      hz_cli_print_error ("synth", error->message);
      return 2;
    }
  const HzFtypeInfo *fi = hz_ftype_from_name (type);
  if (!fi)
    {
      fprintf (stderr, "hanzo synth: unknown type '%s' (see hanzo quantize --list)\n", type);
      return 2;
    }
  if (matrix_type && (p.matrix_type = weight_format (matrix_type)) < 0)
    return 2;
  const char *arch_name = arch ? arch : p.shape.arch;
  if (expert_type)
    {
      /* F32 (type 0) is "as the other matrices" */
      if ((p.expert_type = weight_format (expert_type)) < 0)
        return 2;
    }
  else if (strcmp (arch_name, "gpt-oss") == 0 && !matrix_type)
    p.expert_type = HZ_TYPE_MXFP4;
  if (template_file && !g_file_get_contents (template_file, &template_text, NULL, &error))
    {
      hz_cli_print_error ("synth", error->message);
      return 1;
    }
  p.chat_template = template_text;
  p.arch = arch;
  p.ftype = fi->ftype;
  p.pure = pure;
  p.fast = fast;
  p.seed = (guint64) seed;
  p.vocab_gguf = vocab;
  p.n_threads = (guint) threads;
  gint64 t0 = g_get_monotonic_time ();
  if (!hz_synth_write (&p, out, &error))
    {
      hz_cli_print_error ("synth", error->message);
      return 1;
    }
  printf ("%s: %s shape %s at %s in %.1f s\n", out, arch_name, p.shape.name,
          fi->name, (g_get_monotonic_time () - t0) / 1e6);
  return 0;
}
