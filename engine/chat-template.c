/* engine/chat-template.c — built-in chat templates: detection and rendering.
 *
 * Like llama.cpp's llama_chat_apply_template() (src/llama-chat.cpp), this is not a Jinja
 * interpreter: a model's tokenizer.chat_template is recognised by distinctive substrings
 * (llm_chat_detect_template) and rendered by a hand-written formatter per family. The
 * formatters reproduce the expected outputs of llama.cpp's tests/test-chat-template.cpp for
 * the conversation used there (see tests/engine/test-chat-template.c).
 *
 * Conventions shared by all formatters:
 *  - the output is an HzPrompt: the template's own text (control-token texts such as
 *    <|im_start|>, [INST], </s> included) and plain role names are markup pieces, the
 *    messages' contents content pieces, so that hz_model_tokenize_prompt() makes control
 *    tokens of the markup only (issue 20: typed "<|im_end|>" stays text);
 *  - the output never starts with the BOS text: the tokenizer adds BOS (add_special);
 *  - a NULL role counts as "user", a NULL content as "".
 */
#include "hanzo/engine.h"

#include <string.h>

static const char *const template_names[] = {
  [HZ_CHAT_TEMPLATE_NONE]   = "none",
  [HZ_CHAT_TEMPLATE_CHATML] = "chatml",
  [HZ_CHAT_TEMPLATE_LLAMA3] = "llama3",
  [HZ_CHAT_TEMPLATE_LLAMA2] = "llama2",
  [HZ_CHAT_TEMPLATE_GEMMA]  = "gemma",
  [HZ_CHAT_TEMPLATE_PHI3]   = "phi3",
  [HZ_CHAT_TEMPLATE_ZEPHYR] = "zephyr",
};

/**
 * hz_chat_template_name:
 * @t: a template
 *
 * Returns: (transfer none): the short name of @t ("none", "chatml", "llama3", "llama2",
 * "gemma", "phi3", "zephyr" — llama.cpp's names for the same formats), or "unknown" for a
 * value outside the enum. hz_chat_template_detect() accepts these names as the template
 * string. Static storage; thread-safe.
 */
const char *
hz_chat_template_name (HzChatTemplate t)
{
  if ((guint) t < G_N_ELEMENTS (template_names))
    return template_names[t];
  return "unknown";
}

/* ------------------------------------------------------------- detection */

/* From the Jinja source, in llama.cpp's order of checks (llm_chat_detect_template), limited
 * to the families rendered here. Returns FALSE when nothing matches. */
static gboolean
detect_from_jinja (const char *j, HzChatTemplate *out)
{
#define HAS(s) (strstr (j, (s)) != NULL)
  for (guint i = 0; i < G_N_ELEMENTS (template_names); i++)
    if (strcmp (j, template_names[i]) == 0)
      {
        *out = (HzChatTemplate) i;
        return TRUE;
      }

  if (HAS ("<|im_start|>"))
    {
      /* Phi-4 (<|im_sep|>) and SmolVLM (<end_of_utterance>) borrow the ChatML markers but are
       * laid out differently; they are not rendered here. */
      if (HAS ("<|im_sep|>") || HAS ("<end_of_utterance>"))
        return FALSE;
      *out = HZ_CHAT_TEMPLATE_CHATML;
      return TRUE;
    }
  if (g_str_has_prefix (j, "mistral") || HAS ("[INST]"))
    {
      /* Llama 2 and every Mistral [INST] variant (v1, v3, v3-tekken, v7) share one layout
       * here; see render_llama2(). */
      *out = HZ_CHAT_TEMPLATE_LLAMA2;
      return TRUE;
    }
  if (HAS ("<|assistant|>") && HAS ("<|end|>"))
    {
      *out = HZ_CHAT_TEMPLATE_PHI3;
      return TRUE;
    }
  if (HAS ("[gMASK]"))
    return FALSE;  /* ChatGLM: <|user|>/<|assistant|> too, but another layout */
  if (HAS ("<|user|>") && (HAS ("<|assistant|>") || HAS ("<|endoftext|>")))
    {
      /* Zephyr (HuggingFaceH4/zephyr-7b-beta, TinyLlama-Chat, stablelm-zephyr). */
      *out = HZ_CHAT_TEMPLATE_ZEPHYR;
      return TRUE;
    }
  if (HAS ("<start_of_turn>"))
    {
      *out = HZ_CHAT_TEMPLATE_GEMMA;
      return TRUE;
    }
  if (HAS ("<|start_header_id|>") && HAS ("<|end_header_id|>"))
    {
      *out = HZ_CHAT_TEMPLATE_LLAMA3;
      return TRUE;
    }
  return FALSE;
#undef HAS
}

/* TRUE if `word` occurs in `s` (lower case) not followed by an ASCII letter or digit and not
 * preceded by one: "it" in "gemma-2b-it" but not in "italian". */
static gboolean
has_word (const char *s, const char *word)
{
  const gsize n = strlen (word);
  for (const char *p = strstr (s, word); p; p = strstr (p + 1, word))
    {
      gboolean start_ok = p == s || !g_ascii_isalnum (p[-1]);
      gboolean end_ok = !g_ascii_isalnum (p[n]);
      if (start_ok && end_ok)
        return TRUE;
    }
  return FALSE;
}

/* From the model name (general.name or file name), for GGUF files without a template.
 * Only names that say the model is tuned for chat ("instruct", "chat", "-it") match —
 * except Zephyr, which exists only as a chat model — so base models (stories260K,
 * "Llama-2-7b", "Qwen2.5-0.5B") stay in plain completion mode. */
static gboolean
detect_from_name (const char *name, HzChatTemplate *out)
{
  g_autofree char *n = g_ascii_strdown (name, -1);
  if (strstr (n, "zephyr"))
    {
      *out = HZ_CHAT_TEMPLATE_ZEPHYR;
      return TRUE;
    }
  const gboolean chat = strstr (n, "instruct") || strstr (n, "chat") || has_word (n, "it");
  if (!chat)
    return FALSE;
  static const struct { const char *needle; HzChatTemplate t; } table[] = {
    { "tinyllama", HZ_CHAT_TEMPLATE_ZEPHYR },  /* TinyLlama-1.1B-Chat uses Zephyr's format */
    { "qwen",      HZ_CHAT_TEMPLATE_CHATML },
    { "smollm",    HZ_CHAT_TEMPLATE_CHATML },
    { "llama-3",   HZ_CHAT_TEMPLATE_LLAMA3 },
    { "llama3",    HZ_CHAT_TEMPLATE_LLAMA3 },
    { "llama 3",   HZ_CHAT_TEMPLATE_LLAMA3 },
    { "llama-2",   HZ_CHAT_TEMPLATE_LLAMA2 },
    { "llama2",    HZ_CHAT_TEMPLATE_LLAMA2 },
    { "llama 2",   HZ_CHAT_TEMPLATE_LLAMA2 },
    { "mistral",   HZ_CHAT_TEMPLATE_LLAMA2 },
    { "mixtral",   HZ_CHAT_TEMPLATE_LLAMA2 },
    { "gemma",     HZ_CHAT_TEMPLATE_GEMMA },
    { "phi-3",     HZ_CHAT_TEMPLATE_PHI3 },
    { "phi3",      HZ_CHAT_TEMPLATE_PHI3 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (strstr (n, table[i].needle))
      {
        *out = table[i].t;
        return TRUE;
      }
  return FALSE;
}

/**
 * hz_chat_template_detect:
 * @jinja: (nullable): the model's tokenizer.chat_template (UTF-8 Jinja source), or one of
 *   the names returned by hz_chat_template_name()
 * @model_name: (nullable): general.name or the file name, used when @jinja is NULL, empty or
 *   not recognised
 *
 * Recognise the chat format, as llama.cpp's llm_chat_detect_template() does: by markers
 * such as "<|im_start|>" (ChatML), "[INST]" (Llama 2 / Mistral), "<|assistant|>" with
 * "<|end|>" (Phi-3), "<|user|>" (Zephyr), "<start_of_turn>" (Gemma), "<|start_header_id|>"
 * (Llama 3). Templates of other families (Phi-4, ChatGLM, Command-R, ...) are not
 * recognised. The name fallback matches only chat-tuned names (see detect_from_name()).
 *
 * Returns: the template, or HZ_CHAT_TEMPLATE_NONE (plain completion) when neither argument
 * identifies one. Never fails; pure function, thread-safe.
 */
HzChatTemplate
hz_chat_template_detect (const char *jinja, const char *model_name)
{
  HzChatTemplate t = HZ_CHAT_TEMPLATE_NONE;
  if (jinja && *jinja && detect_from_jinja (jinja, &t))
    return t;
  if (model_name && *model_name && detect_from_name (model_name, &t))
    return t;
  return HZ_CHAT_TEMPLATE_NONE;
}

/* -------------------------------------------------------------- rendering */

static const char *
msg_role (const HzChatMessage *m)
{
  return m->role ? m->role : "user";
}

static const char *
msg_content (const HzChatMessage *m)
{
  return m->content ? m->content : "";
}

static gboolean
role_is (const HzChatMessage *m, const char *role)
{
  return strcmp (msg_role (m), role) == 0;
}

static void
markup (HzPrompt *out, const char *s)
{
  hz_prompt_append (out, s, -1, TRUE);
}

static void
content (HzPrompt *out, const char *s)
{
  hz_prompt_append (out, s, -1, FALSE);
}

/* A role name is markup when it is a plain name ("user", "tool_call"); anything else a
 * caller passes as a role is written as content, so that no role can carry control text. */
static void
role_name (HzPrompt *out, const char *role)
{
  gboolean name = *role != '\0';
  for (const char *c = role; *c && name; c++)
    name = g_ascii_islower (*c) || *c == '_';
  hz_prompt_append (out, role, -1, name);
}

/* Append `s` as content without leading and trailing ASCII whitespace (llama.cpp's
 * trim()). */
static void
content_trimmed (HzPrompt *out, const char *s)
{
  const char *b = s, *e = s + strlen (s);
  while (b < e && g_ascii_isspace (*b))
    b++;
  while (e > b && g_ascii_isspace (e[-1]))
    e--;
  hz_prompt_append (out, b, e - b, FALSE);
}

/* Families whose every turn is  <prefix><role><middle><content><suffix>  and whose
 * generation prompt is the same header with role "assistant". */
typedef struct {
  const char *prefix, *middle, *suffix;
  gboolean    trim;  /* content trimmed (Llama 3) */
} HzTurnFormat;

static void
render_turns (HzPrompt *out, const HzTurnFormat *f, const HzChatMessage *msgs, gsize n,
              gboolean add_generation_prompt)
{
  for (gsize i = 0; i < n; i++)
    {
      markup (out, f->prefix);
      role_name (out, msg_role (&msgs[i]));
      markup (out, f->middle);
      if (f->trim)
        content_trimmed (out, msg_content (&msgs[i]));
      else
        content (out, msg_content (&msgs[i]));
      markup (out, f->suffix);
    }
  if (add_generation_prompt)
    {
      markup (out, f->prefix);
      markup (out, "assistant");
      markup (out, f->middle);
    }
}

/* ChatML (Qwen, SmolLM, OpenHermes): <|im_start|>role\ncontent<|im_end|>\n */
static const HzTurnFormat chatml_format = { "<|im_start|>", "\n", "<|im_end|>\n", FALSE };
/* Llama 3: <|start_header_id|>role<|end_header_id|>\n\ncontent(trimmed)<|eot_id|> */
static const HzTurnFormat llama3_format = {
  "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", TRUE };
/* Phi-3: <|role|>\ncontent<|end|>\n */
static const HzTurnFormat phi3_format = { "<|", "|>\n", "<|end|>\n", FALSE };
/* Zephyr: <|role|>\ncontent</s>\n. HuggingFaceH4/zephyr-7b-beta and TinyLlama-Chat end a
 * turn with eos_token = "</s>" (the Llama tokenizer these architectures use); llama.cpp's
 * "zephyr" writes "<|endoftext|>", the EOS of stablelm-2-zephyr, which is not a supported
 * architecture here. */
static const HzTurnFormat zephyr_format = { "<|", "|>\n", "</s>\n", FALSE };

/* Llama 2 chat (Meta's layout; llama.cpp "llama2-sys-bos"): the system prompt is folded into
 * the next user turn as "<<SYS>>\n...\n<</SYS>>\n\n"; a user turn is "[INST] content [/INST]";
 * an assistant reply is " content </s>" and the turn after it starts with "<s>" (each
 * exchange is a BOS ... EOS sequence). Contents are kept verbatim (Meta's reference code
 * strips them). For the llama.cpp test conversation this is the expected Jinja rendering of
 * the TheBloke/FusionNet_34Bx2_MoE-AWQ case. Mistral [INST] models accept the same layout.
 * add_generation_prompt adds nothing: a prompt ending in "[/INST]" already asks for the
 * reply. */
static void
render_llama2 (HzPrompt *out, const HzChatMessage *msgs, gsize n)
{
  g_autoptr (HzPrompt) sys = hz_prompt_new ();
  gboolean have_sys = FALSE;
  gboolean after_reply = FALSE;  /* previous turn ended with </s> */
  for (gsize i = 0; i < n; i++)
    {
      const char *text = msg_content (&msgs[i]);
      if (role_is (&msgs[i], "system"))
        {
          if (have_sys)
            markup (sys, "\n");
          content (sys, text);
          have_sys = TRUE;
        }
      else if (role_is (&msgs[i], "assistant"))
        {
          markup (out, " ");
          content (out, text);
          markup (out, " </s>");
          after_reply = TRUE;
        }
      else
        {
          if (after_reply)
            markup (out, "<s>");
          markup (out, "[INST] ");
          if (have_sys)
            {
              markup (out, "<<SYS>>\n");
              hz_prompt_append_prompt (out, sys);
              markup (out, "\n<</SYS>>\n\n");
              g_clear_pointer (&sys, hz_prompt_free);
              sys = hz_prompt_new ();
              have_sys = FALSE;
            }
          content (out, text);
          markup (out, " [/INST]");
          after_reply = FALSE;
        }
    }
  if (have_sys)
    {
      /* A system prompt with no user turn after it: give it its own (empty) instruction. */
      if (after_reply)
        markup (out, "<s>");
      markup (out, "[INST] <<SYS>>\n");
      hz_prompt_append_prompt (out, sys);
      markup (out, "\n<</SYS>>\n\n [/INST]");
    }
}

/* Gemma (google/gemma-7b-it; llama.cpp "gemma"): roles "user" and "model" ("assistant" is
 * renamed); there is no system role, so system contents (trimmed) are prepended to the next
 * user turn followed by a blank line; every content is trimmed:
 * <start_of_turn>role\ncontent<end_of_turn>\n */
static void
render_gemma (HzPrompt *out, const HzChatMessage *msgs, gsize n, gboolean add_generation_prompt)
{
  g_autoptr (HzPrompt) sys = hz_prompt_new ();
  for (gsize i = 0; i < n; i++)
    {
      if (role_is (&msgs[i], "system"))
        {
          content_trimmed (sys, msg_content (&msgs[i]));
          continue;
        }
      const gboolean model = role_is (&msgs[i], "assistant");
      markup (out, "<start_of_turn>");
      role_name (out, model ? "model" : msg_role (&msgs[i]));
      markup (out, "\n");
      if (!model && hz_prompt_n_pieces (sys) > 0)
        {
          hz_prompt_append_prompt (out, sys);
          markup (out, "\n\n");
          g_clear_pointer (&sys, hz_prompt_free);
          sys = hz_prompt_new ();
        }
      content_trimmed (out, msg_content (&msgs[i]));
      markup (out, "<end_of_turn>\n");
    }
  if (add_generation_prompt)
    markup (out, "<start_of_turn>model\n");
}

/* Plain completion (base models): the contents concatenated, nothing added. */
static void
render_none (HzPrompt *out, const HzChatMessage *msgs, gsize n)
{
  for (gsize i = 0; i < n; i++)
    content (out, msg_content (&msgs[i]));
}

/**
 * hz_chat_template_render:
 * @t: the template (from hz_model_chat_template() or hz_chat_template_detect())
 * @msgs: (array length=n) (nullable): the conversation; roles "system", "user",
 *   "assistant" (other roles are written as given where the format names roles, and
 *   treated as "user" by Llama 2 and Gemma's system folding)
 * @n: number of messages
 * @add_generation_prompt: end with the header of an assistant turn
 *
 * Render the conversation in the model's chat format (llama.cpp llm_chat_apply_template()
 * layouts): ChatML, Llama 3 (contents trimmed), Llama 2 / Mistral [INST] (system folded
 * into <<SYS>>), Gemma (system merged into the first user turn, "assistant" -> "model",
 * contents trimmed), Phi-3, Zephyr, or NONE (contents concatenated; add_generation_prompt
 * ignored). The BOS text is never included (the tokenizer adds it). The template's own
 * text and plain role names are markup pieces, the contents content pieces: tokenize
 * with hz_model_tokenize_prompt().
 *
 * Returns: (transfer full): a new prompt (hz_prompt_free); empty for an empty
 * conversation or a NULL @msgs. An unknown @t renders as NONE. Never fails; thread-safe.
 */
HzPrompt *
hz_chat_template_render (HzChatTemplate t, const HzChatMessage *msgs, gsize n,
                         gboolean add_generation_prompt)
{
  if (msgs == NULL)
    n = 0;
  HzPrompt *out = hz_prompt_new ();
  switch (t)
    {
    case HZ_CHAT_TEMPLATE_CHATML:
      render_turns (out, &chatml_format, msgs, n, add_generation_prompt);
      break;
    case HZ_CHAT_TEMPLATE_LLAMA3:
      render_turns (out, &llama3_format, msgs, n, add_generation_prompt);
      break;
    case HZ_CHAT_TEMPLATE_PHI3:
      render_turns (out, &phi3_format, msgs, n, add_generation_prompt);
      break;
    case HZ_CHAT_TEMPLATE_ZEPHYR:
      render_turns (out, &zephyr_format, msgs, n, add_generation_prompt);
      break;
    case HZ_CHAT_TEMPLATE_LLAMA2:
      render_llama2 (out, msgs, n);
      break;
    case HZ_CHAT_TEMPLATE_GEMMA:
      render_gemma (out, msgs, n, add_generation_prompt);
      break;
    case HZ_CHAT_TEMPLATE_NONE:
    default:
      render_none (out, msgs, n);
      break;
    }
  return out;
}

/**
 * hz_chat_template_apply:
 * @t: the template
 * @msgs: (array length=n) (nullable): the conversation
 * @n: number of messages
 * @add_generation_prompt: end with the header of an assistant turn
 *
 * The text of hz_chat_template_render() (same arguments): for display, logs and tests.
 * It no longer says which control-token texts are markup, so a model's prompt is never
 * tokenized from it (hz_model_tokenize_prompt() on the rendered prompt is).
 *
 * Returns: (transfer full): a newly allocated UTF-8 string (g_free); "" for an empty
 * conversation or a NULL @msgs. Never fails; thread-safe.
 */
char *
hz_chat_template_apply (HzChatTemplate t, const HzChatMessage *msgs, gsize n,
                        gboolean add_generation_prompt)
{
  g_autoptr (HzPrompt) p = hz_chat_template_render (t, msgs, n, add_generation_prompt);
  return g_strdup (hz_prompt_text (p, NULL));
}
