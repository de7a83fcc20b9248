/* tools/hanzo-quantize.c — `hanzo quantize`: requantize a model like llama-quantize.
 *
 *   hanzo quantize [--type T | T] [--pure] [-t THREADS] [--vocab V.gguf] [-v] IN OUT
 *
 * IN is a GGUF file (F32/F16/BF16 or any quantized type of the table: it is dequantized
 * first) or a Hugging Face safetensors folder (config.json + *.safetensors of a Llama,
 * Qwen2 or Qwen3 model; the tokenizer comes from tokenizer.json, or from --vocab). T is a
 * file type (`hanzo quantize --list`): Q4_0 … Q8_0, Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M,
 * Q6_K, IQ4_NL, IQ4_XS, IQ3_S, IQ3_M, TQ1_0, TQ2_0, F16, BF16, F32; Q4_K means Q4_K_M.
 * Per-tensor types follow llama.cpp's mixes (engine/quantize.h). Exit status: 0 ok,
 * 1 error (message names the tensor or key), 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "quant.h"
#include "quantize.h"

static void
list_types (FILE *out)
{
  fprintf (out, "File types (ftype id, default tensor type):\n");
  for (gsize i = 0; i < hz_ftype_count (); i++)
    {
      const HzFtypeInfo *f = hz_ftype_nth (i);
      const char *miss = hz_ftype_missing_format (f->ftype);
      fprintf (out, "  %-7s %2d  %-7s %s%s%s%s\n", f->name, (int) f->ftype,
               hz_quant_traits (f->default_type)->name, f->summary,
               miss ? " [unavailable: no encoder for " : "", miss ? miss : "", miss ? "]" : "");
    }
}

int
hz_cmd_quantize (int argc, char **argv)
{
  g_autofree char *type = NULL, *vocab = NULL;
  gboolean pure = FALSE, verbose = FALSE, list = FALSE;
  gint threads = 0;
  GOptionEntry entries[] = {
    { "type", 0, 0, G_OPTION_ARG_STRING, &type, "Target file type (Q4_K_M, Q8_0, ...)", "T" },
    { "pure", 0, 0, G_OPTION_ARG_NONE, &pure, "No mix rules: every matrix at the default type", NULL },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Threads, 0..1024 (default 0: all cores)", "N" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &vocab, "Safetensors input: copy the tokenizer from this GGUF", "FILE" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "One line per tensor", NULL },
    { "list", 0, 0, G_OPTION_ARG_NONE, &list, "List the file types", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("IN OUT [TYPE] — quantize a GGUF file or safetensors folder");
  g_option_context_add_main_entries (oc, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error))
    {
      hz_cli_print_error ("quantize", error->message);
      return 2;
    }
  if (!hz_cli_check_threads ("quantize", "--threads", threads))
    return 2;
  if (list)
    {
      list_types (stdout);
      return 0;
    }
  if (argc == 4 && !type)
    type = g_strdup (argv[3]);
  else if (argc != 3)
    {
      fprintf (stderr, "hanzo quantize: expected IN OUT and --type T (see --help, --list)\n");
      return 2;
    }
  if (!type)
    {
      fprintf (stderr, "hanzo quantize: no target type (--type T)\n");
      return 2;
    }
  const HzFtypeInfo *fi = hz_ftype_from_name (type);
  if (!fi)
    {
      fprintf (stderr, "hanzo quantize: unknown or unsupported type '%s'\n", type);
      list_types (stderr);
      return 2;
    }
  const char *miss = hz_ftype_missing_format (fi->ftype);
  if (miss)
    {
      fprintf (stderr, "hanzo quantize: %s needs format %s, which the quant table cannot encode yet\n",
               fi->name, miss);
      return 1;
    }
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = fi->ftype;
  p.pure = pure;
  p.n_threads = (guint) threads;
  p.verbose = verbose;
  p.vocab_gguf = vocab;
  HzQuantizeStats st;
  gint64 t0 = g_get_monotonic_time ();
  if (!hz_quantize_file (argv[1], argv[2], &p, &st, &error))
    {
      /* the input's own errors begin with its path: said as every command says them */
      const gsize n = strlen (argv[1]);
      if (strncmp (error->message, argv[1], n) == 0 && g_str_has_prefix (error->message + n, ": "))
        hz_cli_print_load_error ("quantize", argv[1], error);
      else
        hz_cli_print_error ("quantize", error->message);
      return 1;
    }
  double secs = (g_get_monotonic_time () - t0) / 1e6;
  printf ("%s -> %s (%s): %u tensors, %u quantized, %u fallback; %.2f MiB (%.2f BPW) -> %.2f MiB "
          "(%.2f BPW) in %.1f s\n", argv[1], argv[2], fi->name, st.n_tensors, st.n_quantized,
          st.n_fallback, st.bytes_in / 1048576.0,
          st.n_elements ? st.bytes_in * 8.0 / st.n_elements : 0.0, st.bytes_out / 1048576.0,
          st.n_elements ? st.bytes_out * 8.0 / st.n_elements : 0.0, secs);
  return 0;
}
