/* tests/server/chat-model.h — a chat model for the server's tests (header-only): a copy of a
 * real GGUF (stories260K, which has no chat template) with tokenizer.chat_template set to
 * CHAT_MODEL_TEMPLATE, so that hz_model_render_chat() renders its conversations with a
 * Jinja template of the model's own, as for any chat model. The template writes "</s>",
 * the vocabulary's end-of-sequence control token, after each turn: markup that becomes the
 * control token, while the same text typed in a message stays text. */
#pragma once

#include <glib.h>
#include "gguf.h"

#define CHAT_MODEL_TEMPLATE                                                              \
  "{% for m in messages %}{{ m.role }}: {{ m.content }}</s>{% endfor %}"                 \
  "{% if add_generation_prompt %}assistant:{% endif %}"

/** Write `src` with the chat template to `dst`. FALSE with `error` on failure. */
static inline gboolean
hz_test_write_chat_model (const char *src, const char *dst, GError **error)
{
  g_autoptr (HzGguf) g = hz_gguf_open (src, error);
  if (g == NULL)
    return FALSE;
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  const int64_t skip = hz_gguf_find_key (g, "tokenizer.chat_template");
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    if (i != skip)
      hz_gguf_writer_copy_kv (w, g, i);
  hz_gguf_writer_set_str (w, "tokenizer.chat_template", CHAT_MODEL_TEMPLATE);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    if (!hz_gguf_writer_copy_tensor (w, g, i, FALSE, error))
      return FALSE;
  return hz_gguf_writer_write_file (w, dst, error);
}
