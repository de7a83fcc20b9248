/* tools/hanzo-info.c — `hanzo info`: show a GGUF file's metadata and tensors.
 *
 *   hanzo info [--max-elems N] [--isq TYPE] [--vocab FILE] MODEL
 *
 * MODEL may also be a Hugging Face folder: then the metadata and tensors are those the
 * engine converts it to (engine/quantize.h, hz_isq_open). With --isq, the tensors are
 * listed with the types and sizes that quantizing at load gives (the conversion is run).
 * Prints the GGUF version, alignment and data offset, every metadata key with its type and
 * value (arrays show their first N elements, default 8), then a table of the tensors
 * (index, name, ggml type, shape with ne[0] first as in ggml, bytes, offset in the data
 * section) and the totals. For a model of a supported architecture it then prints the KV
 * cache it needs (the window rule of engine/llm.h: a sliding-window layer keeps at most
 * its window, the others every position): the bytes per token of context of the global
 * layers and of the window layers (float32, as the CPU keeps it), and the totals at a few
 * context sizes. A file that does not validate prints
 * "hanzo: MODEL: <error>" on stderr (see engine/gguf.h for the checks).
 * Exit status: 0 ok, 1 unreadable or invalid file, 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cli-util.h"
#include "gguf.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "llm.h"
#include "quant.h"
#include "quantize.h"

/* A name from the file, with control characters and non-ASCII bytes escaped. */
static char *
printable (HzGgufStr s)
{
  g_autofree char *raw = g_strndup (s.ptr, s.len);
  char *esc = g_strescape (raw, NULL);
  if (strlen (raw) != s.len)  /* an embedded NUL: say so rather than cut silently */
    {
      char *with = g_strconcat (esc, "\\0...", NULL);
      g_free (esc);
      return with;
    }
  return esc;
}

static char *
type_label (const HzGguf *g, int64_t i)
{
  HzGgufType t = hz_gguf_kv_type (g, i);
  if (t != HZ_GGUF_TYPE_ARRAY)
    return g_strdup (hz_gguf_type_name (t));
  return g_strdup_printf ("%s[%" G_GUINT64_FORMAT "]",
                          hz_gguf_type_name (hz_gguf_arr_type (g, i)), hz_gguf_arr_n (g, i));
}

static char *
shape_label (const HzGgufTensor *t)
{
  GString *s = g_string_new ("[");
  for (uint32_t d = 0; d < t->n_dims; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->ne[d]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static void
print_metadata (const HzGguf *g, guint max_elems)
{
  int64_t n = hz_gguf_n_kv (g);
  printf ("\nMetadata: %" G_GINT64_FORMAT " key%s\n", n, n == 1 ? "" : "s");
  for (int64_t i = 0; i < n; i++)
    {
      g_autofree char *key = printable (hz_gguf_key (g, i));
      g_autofree char *type = type_label (g, i);
      g_autofree char *value = hz_gguf_value_to_string (g, i, max_elems);
      printf ("  %-40s %-14s %s\n", key, type, value);
    }
}

/* `n` tensors; offsets are relative to the data section (GGUF) or the conversion buffer. */
static void
print_tensors (const HzGgufTensor *const *tensors, int64_t n)
{
  printf ("\nTensors: %" G_GINT64_FORMAT "\n", n);
  if (n == 0)
    return;
  printf ("  %5s  %-36s %-8s %-22s %12s %12s\n", "#", "name", "type", "shape", "bytes",
          "offset");
  uint64_t total_bytes = 0, total_elems = 0;
  for (int64_t i = 0; i < n; i++)
    {
      const HzGgufTensor *t = tensors[i];
      const HzQuantTraits *tr = hz_quant_traits (t->type);  /* non-NULL: validated */
      g_autofree char *name = printable (t->name);
      g_autofree char *shape = shape_label (t);
      printf ("  %5" G_GINT64_FORMAT "  %-36s %-8s %-22s %12" G_GUINT64_FORMAT " %12"
              G_GUINT64_FORMAT "\n", i, name, tr->name, shape, t->n_bytes, t->offset);
      total_bytes += t->n_bytes;
      total_elems += (uint64_t) (t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
    }
  g_autofree char *human = g_format_size (total_bytes);
  printf ("Total: %" G_GINT64_FORMAT " tensor%s, %" G_GUINT64_FORMAT " elements, %"
          G_GUINT64_FORMAT " bytes (%s)\n", n, n == 1 ? "" : "s", total_elems, total_bytes,
          human);
}

/* The KV cache section: nothing for a file whose architecture the engine does not run. */
static void
print_kv (const HzGguf *g)
{
  HzHparams hp;
  if (!hz_hparams_read (&hp, g, NULL))
    return;
  const guint f32 = sizeof (float);
  const uint64_t per_cell = (uint64_t) hp.n_head_kv * (hp.head_dim_k + hp.head_dim_v) * f32;
  int n_swa_layers = 0;
  for (int il = 0; il < hp.n_layer; il++)
    n_swa_layers += hz_layer_swa (&hp, il);
  printf ("\nKV cache (float32): %" G_GUINT64_FORMAT " bytes per token of context in the %d "
          "global layer%s", per_cell * (uint64_t) (hp.n_layer - n_swa_layers),
          hp.n_layer - n_swa_layers, hp.n_layer - n_swa_layers == 1 ? "" : "s");
  if (n_swa_layers > 0)
    printf (", %" G_GUINT64_FORMAT " bytes per token of the last %d in the %d sliding-window "
            "layer%s", per_cell * (uint64_t) n_swa_layers, hp.n_swa, n_swa_layers,
            n_swa_layers == 1 ? "" : "s");
  printf ("\n  %10s %16s %14s\n", "context", "KV bytes", "bytes/token");
  const int64_t sizes[] = { 1024, 4096, 32768, hp.n_ctx_train };
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      if (i > 0 && sizes[i] <= sizes[i - 1])
        continue;   /* the training context when it is not above the others */
      const uint64_t b = hz_hparams_kv_bytes (&hp, sizes[i], f32);
      printf ("  %10" G_GINT64_FORMAT " %16" G_GUINT64_FORMAT " %14.1f%s\n", sizes[i], b,
              (double) b / (double) sizes[i], i == 3 ? " (training context)" : "");
    }
}

/* "hanzo info: cannot load model 'PATH': reason" on stderr (hz_cli_print_load_error);
 * returns 1. */
static int
info_fail (const char *path, const GError *error)
{
  hz_cli_print_load_error ("info", path, error);
  return 1;
}

int
hz_cmd_info (int argc, char **argv)
{
  int max_elems = 8;
  g_autofree char *isq = NULL, *vocab = NULL;
  GOptionEntry entries[] = {
    { "max-elems", 'n', 0, G_OPTION_ARG_INT, &max_elems,
      "Array elements shown per value (default 8)", "N" },
    { "isq", 0, 0, G_OPTION_ARG_STRING, &isq, HZ_CLI_ISQ_HELP, "TYPE" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &vocab, HZ_CLI_VOCAB_HELP, "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx =
    g_option_context_new ("MODEL — show a GGUF file's (or Hugging Face folder's) metadata and tensors");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      hz_cli_print_error ("info", error->message);
      return 2;
    }
  if (argc != 2 || max_elems < 0)
    {
      fprintf (stderr, "hanzo info: need exactly one MODEL (and --max-elems >= 0)\n"
                       "Usage: hanzo info [--max-elems N] [--isq TYPE] [--vocab FILE] MODEL\n");
      return 2;
    }
  const char *path = argv[1];
  if (isq || g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr (HzIsqModel) m = hz_isq_load (path, isq, vocab, 0, &error);
      if (!m)
        {
          return info_fail (path, error);
        }
      const HzIsqStats *st = hz_isq_model_stats (m);
      printf ("%s: %s, %s\n", path, g_file_test (path, G_FILE_TEST_IS_DIR)
              ? "Hugging Face folder as converted at load" : "GGUF as converted at load",
              isq ? isq : "types as stored");
      printf ("%u tensors, %u converted, %u fallback; %.2f MiB -> %.2f MiB in %.2f s\n",
              st->n_tensors, st->n_quantized, st->n_fallback, st->bytes_in / 1048576.0,
              st->bytes_out / 1048576.0, st->seconds);
      print_metadata (hz_isq_model_gguf (m), (guint) max_elems);
      GHashTable *tensors = hz_isq_model_tensors (m);
      guint n = g_hash_table_size (tensors);
      g_autofree gpointer *keys = g_hash_table_get_keys_as_array (tensors, NULL);
      hz_quantize_sort_names ((const char **) keys, n);
      g_autofree const HzGgufTensor **list = g_new (const HzGgufTensor *, n + 1);
      for (guint i = 0; i < n; i++)
        list[i] = g_hash_table_lookup (tensors, keys[i]);
      print_tensors (list, n);
      print_kv (hz_isq_model_gguf (m));
      return 0;
    }
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  if (!g)
    return info_fail (path, error);
  g_autofree char *size = g_format_size (hz_gguf_file_size (g));
  printf ("%s: GGUF version %" G_GUINT32_FORMAT ", %" G_GSIZE_FORMAT " bytes (%s)\n", path,
          hz_gguf_version (g), hz_gguf_file_size (g), size);
  printf ("alignment %" G_GUINT32_FORMAT ", data section at offset %" G_GUINT64_FORMAT "\n",
          hz_gguf_alignment (g), hz_gguf_data_offset (g));
  print_metadata (g, (guint) max_elems);
  const int64_t n = hz_gguf_n_tensors (g);
  g_autofree const HzGgufTensor **list = g_new (const HzGgufTensor *, n + 1);
  for (int64_t i = 0; i < n; i++)
    list[i] = hz_gguf_tensor (g, i);
  print_tensors (list, n);
  print_kv (g);
  return 0;
}
