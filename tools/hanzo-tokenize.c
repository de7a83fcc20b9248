/* tools/hanzo-tokenize.c — `hanzo tokenize`: print the token ids of a text.
 *
 *   hanzo tokenize -m MODEL [--vocab V.gguf] [--no-bos] [--special] [--raw-bytes] [--pieces]
 *                  [--file F] [TEXT]
 *
 * MODEL is a GGUF file or a Hugging Face folder (its tokenizer.json, or with --vocab the
 * tokenizer of that GGUF, as `hanzo generate --vocab`).
 *
 * Prints the ids space-separated on one line. BOS/EOS are added as the model's GGUF asks
 * (tokenizer.ggml.add_bos_token / add_eos_token) unless --no-bos; --special parses
 * control/user-defined token texts such as "<|im_start|>". --file reads the text byte for
 * byte; text that is not valid UTF-8 (or holds NUL bytes) is tokenized with U+FFFD for
 * the bad bytes, after a warning on stderr, as `hanzo chat` does, unless --raw-bytes
 * (the bytes as they are: byte tokens such as <0xFF> or <0x00> where the vocabulary has
 * them, as llama.cpp's tokenizer does). Works on vocab-only GGUF files (only tokenizer.ggml.* metadata is read).
 * Exit status: 0 ok, 1 runtime error (message on stderr), 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "gguf.h"
#include "tokenizer.h"
#include "quantize.h"
#include "hanzo-gen-common.h"

int
hz_cmd_tokenize (int argc, char **argv)
{
  g_autofree char *model = NULL, *file = NULL, *vocab = NULL;
  gboolean no_bos = FALSE, special = FALSE, pieces = FALSE, raw = FALSE;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
      "GGUF model or vocab file, or Hugging Face folder", "MODEL" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &vocab, HZ_CLI_VOCAB_HELP, "FILE" },
    { "no-bos", 0, 0, G_OPTION_ARG_NONE, &no_bos, "Do not add BOS/EOS tokens", NULL },
    { "special", 0, 0, G_OPTION_ARG_NONE, &special,
      "Parse special token texts (e.g. <|im_start|>)", NULL },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file, "Read the text from FILE (- for stdin)", "FILE" },
    { "raw-bytes", 0, 0, G_OPTION_ARG_NONE, &raw,
      "Tokenize the bytes as they are, also when not UTF-8 (byte tokens; no U+FFFD)", NULL },
    { "pieces", 0, 0, G_OPTION_ARG_NONE, &pieces,
      "Also print each token's text, one per line, after the ids", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new ("{TEXT | -f FILE | -f -} — print the "
                                                        "token ids of a text");
  g_autoptr(GError) error = NULL;
  g_autoptr(HzGguf) gguf = NULL;
  g_autoptr(HzTokenizer) tok = NULL;
  g_autofree char *contents = NULL;
  g_autofree HzToken *ids = NULL;
  const char *text;
  gsize len, n;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      hz_cli_print_error ("tokenize", error->message);
      return 2;
    }
  if (model == NULL || (file == NULL && argc != 2) || (file != NULL && argc != 1))
    {
      fprintf (stderr, "hanzo tokenize: need -m MODEL and either TEXT or --file FILE "
                       "(-f - reads stdin)\n"
                       "Usage: hanzo tokenize -m MODEL [--vocab V.gguf] [--no-bos] [--special] "
                       "[--raw-bytes] [--pieces] {TEXT | -f FILE | -f -}\n");
      return 2;
    }
  if (file != NULL)
    {
      if (!(contents = hz_cli_read_all (file, &len, &error)))
        {
          hz_cli_print_error ("tokenize", error->message);
          return 1;
        }
      text = contents;
    }
  else
    {
      text = argv[1];
      len = strlen (text);
    }

  /* like `hanzo chat`: bytes that are not UTF-8 (or NUL) go on as U+FFFD, with a warning;
   * --raw-bytes keeps them for the tokenizer's byte fallback */
  g_autofree char *valid = raw ? NULL : hz_cli_utf8_repair ("tokenize",
                                               file == NULL ? "the text"
                                               : strcmp (file, "-") == 0 ? "stdin" : file,
                                               text, len, &len);
  if (valid)
    text = valid;

  /* a Hugging Face folder: only its metadata (tokenizer.json, or --vocab's keys) is read,
   * no tensor is converted */
  g_autoptr(HzIsqModel) hf = NULL;
  if (g_file_test (model, G_FILE_TEST_IS_DIR))
    {
      hf = hz_isq_open (model, vocab, &error);
      if (hf != NULL)
        tok = hz_tokenizer_new_from_gguf (hz_isq_model_gguf (hf), &error);
    }
  else if (vocab != NULL)
    {
      fprintf (stderr, "hanzo tokenize: --vocab is for a Hugging Face folder without "
                       "tokenizer.json; tokenize with -m %s instead\n", vocab);
      return 2;
    }
  else if ((gguf = hz_gguf_open (model, &error)) != NULL)
    tok = hz_tokenizer_new_from_gguf (gguf, &error);
  if (tok == NULL)
    {
      hz_cli_print_load_error ("tokenize", model, error);
      return 1;
    }

  ids = hz_tokenizer_encode (tok, text, (gssize) len, !no_bos, special, &n);
  for (gsize i = 0; i < n; i++)
    printf (i ? " %d" : "%d", ids[i]);
  printf ("\n");
  if (pieces)
    for (gsize i = 0; i < n; i++)
      {
        char buf[512];
        gsize m = hz_tokenizer_piece (tok, ids[i], TRUE, buf, sizeof buf);
        /* g_strescape stops at a NUL byte: escape the pieces between NULs, NUL as \x00 */
        g_autoptr(GString) esc = g_string_new (NULL);
        const gsize end = MIN (m, sizeof buf);
        for (gsize s = 0; s <= end;)
          {
            const char *nul = memchr (buf + s, '\0', end - s);
            const gsize e = nul ? (gsize) (nul - buf) : end;
            g_autofree char *seg = g_strndup (buf + s, e - s);
            g_autofree char *seg_esc = g_strescape (seg, NULL);
            g_string_append (esc, seg_esc);
            if (!nul)
              break;
            g_string_append (esc, "\\x00");
            s = e + 1;
          }
        printf ("%d\t'%s'\n", ids[i], esc->str);
      }
  return 0;
}
