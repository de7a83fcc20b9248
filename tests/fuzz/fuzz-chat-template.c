/* tests/fuzz/fuzz-chat-template.c — libFuzzer target for the chat templates
 * (engine/chat-template.c): tokenizer.chat_template strings come from untrusted GGUF
 * files. The input is split at its first NUL byte into a Jinja template and a model name
 * for hz_chat_template_detect(); every template is then applied to messages made from
 * the input's bytes (invalid UTF-8 and control bytes included).
 *
 * Invariants: detection returns a known template with a name; apply returns a string that
 * contains the user's content (trimmed) and, with add_generation_prompt, is longer; the
 * prompt pieces (hz_chat_template_render) concatenate to that string, alternate between
 * markup and content, and the user's content lies inside one content piece (issue 20: what
 * a user typed is never markup). */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hanzo/engine.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-chat-template: invariant failed: %s (%s:%d)\n", #cond,         \
                    __FILE__, __LINE__);                                                 \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *nul = memchr (data, 0, size);
  g_autofree char *jinja = g_strndup ((const char *) data, nul ? (gsize) (nul - (const char *) data) : size);
  g_autofree char *name = nul ? g_strndup (nul + 1, size - (gsize) (nul + 1 - (const char *) data)) : NULL;
  HzChatTemplate t = hz_chat_template_detect (size ? jinja : NULL, name);
  CHECK (t >= HZ_CHAT_TEMPLATE_NONE && t <= HZ_CHAT_TEMPLATE_ZEPHYR);
  CHECK (hz_chat_template_name (t) != NULL);

  /* messages: the template text and the name as contents (C strings: up to a NUL) */
  const HzChatMessage msgs[] = {
    { "system", name ? name : "" },
    { "user", jinja },
    { "assistant", jinja },
    { "user", "" },
  };
  /* contents may be trimmed of ASCII whitespace (Llama 3, Gemma): look for the trimmed text */
  g_autofree char *core = g_strstrip (g_strdup (jinja));
  for (int k = HZ_CHAT_TEMPLATE_NONE; k <= HZ_CHAT_TEMPLATE_ZEPHYR; k++)
    {
      g_autofree char *a = hz_chat_template_apply ((HzChatTemplate) k, msgs, G_N_ELEMENTS (msgs), FALSE);
      g_autofree char *b = hz_chat_template_apply ((HzChatTemplate) k, msgs, G_N_ELEMENTS (msgs), TRUE);
      CHECK (a != NULL && b != NULL);
      CHECK (strstr (a, core) != NULL);
      CHECK (strlen (b) >= strlen (a));

      g_autoptr (HzPrompt) p = hz_chat_template_render ((HzChatTemplate) k, msgs,
                                                        G_N_ELEMENTS (msgs), FALSE);
      gsize len = 0;
      CHECK (strcmp (hz_prompt_text (p, &len), a) == 0 && len == strlen (a));
      gboolean inside = *core == '\0';
      for (guint i = 0; i < hz_prompt_n_pieces (p); i++)
        {
          HzPromptPiece pc = hz_prompt_get_piece (p, i);
          CHECK (pc.len > 0);
          CHECK (i == 0 || pc.markup != hz_prompt_get_piece (p, i - 1).markup);
          if (!pc.markup && !inside)
            {
              g_autofree char *piece = g_strndup (pc.text, pc.len);
              inside = strstr (piece, core) != NULL;
            }
        }
      CHECK (inside);
    }
  return 0;
}
