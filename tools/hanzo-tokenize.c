/* tools/hanzo-tokenize.c — `hanzo tokenize`: print the token ids of a text.
 *
 *   hanzo tokenize -m MODEL [--no-bos] [--special] [--file F] [TEXT]
 *
 * Prints the ids space-separated on one line. BOS/EOS are added as the model's GGUF asks
 * (tokenizer.ggml.add_bos_token / add_eos_token) unless --no-bos; --special parses
 * control/user-defined token texts such as "<|im_start|>". --file reads the text byte for
 * byte. Works on vocab-only GGUF files (only tokenizer.ggml.* metadata is read).
 * Exit status: 0 ok, 1 runtime error (message on stderr), 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "hanzo-cmd.h"
#include "gguf.h"
#include "tokenizer.h"
#include "hanzo-gen-common.h"

int
hz_cmd_tokenize (int argc, char **argv)
{
  g_autofree char *model = NULL, *file = NULL;
  gboolean no_bos = FALSE, special = FALSE, pieces = FALSE;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model, "GGUF model or vocab file", "MODEL" },
    { "no-bos", 0, 0, G_OPTION_ARG_NONE, &no_bos, "Do not add BOS/EOS tokens", NULL },
    { "special", 0, 0, G_OPTION_ARG_NONE, &special,
      "Parse special token texts (e.g. <|im_start|>)", NULL },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file, "Read the text from FILE (- for stdin)", "FILE" },
    { "pieces", 0, 0, G_OPTION_ARG_NONE, &pieces,
      "Also print each token's text, one per line, after the ids", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new ("[TEXT] — print the token ids of a text");
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
      fprintf (stderr, "hanzo tokenize: %s\n", error->message);
      return 2;
    }
  if (model == NULL || (file == NULL && argc != 2) || (file != NULL && argc != 1))
    {
      fprintf (stderr, "hanzo tokenize: need -m MODEL and either TEXT or --file FILE\n"
                       "Usage: hanzo tokenize -m MODEL [--no-bos] [--special] "
                       "[--file F] [TEXT]\n");
      return 2;
    }
  if (file != NULL)
    {
      if (!(contents = hz_cli_read_all (file, &len, &error)))
        {
          fprintf (stderr, "hanzo tokenize: %s\n", error->message);
          return 1;
        }
      text = contents;
    }
  else
    {
      text = argv[1];
      len = strlen (text);
    }

  gguf = hz_gguf_open (model, &error);
  if (gguf != NULL)
    tok = hz_tokenizer_new_from_gguf (gguf, &error);
  if (tok == NULL)
    {
      fprintf (stderr, "hanzo tokenize: %s: %s\n", model, error->message);
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
