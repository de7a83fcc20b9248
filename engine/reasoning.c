/* engine/reasoning.c — a thinking model's reply as its reasoning part and its answer
 * (issue 23 item 2; API in hanzo/engine.h, "reasoning").
 *
 * Formats: a pair of tags around the reasoning at the start of the reply ("<think>" and
 * "</think>" for Qwen3, QwQ, DeepSeek-R1 and most others; "<seed:think>", "[THINK]"), or
 * OpenAI's harmony messages (gpt-oss: "<|channel|>analysis<|message|>…<|end|>" then
 * "<|start|>assistant<|channel|>final<|message|>…", https://cookbook.openai.com/articles/
 * openai-harmony). Which one a model writes is read from its chat template (the tags it
 * writes or parses) and, for a model without one, from its vocabulary (the tags as tokens).
 *
 * One splitter, HzReasoningStream, does every split: it is fed the reply in pieces of any
 * size and hands out the bytes it has decided, holding back only what could still be the
 * start of a marker (a tag cut between two tokens) or white space around the reasoning
 * (which is trimmed). The whole-text split and the prompt-side strip run the same stream,
 * so the streamed parts of a reply always add up to its whole split. */
#include "hanzo/engine-error.h"

#include <string.h>
#include "gguf.h"
#include "model-private.h"
#include "reasoning-private.h"
#include "tokenizer.h"

/* ------------------------------------------------------------------ the formats */

typedef struct {
  HzReasoningFormat format;
  const char       *name;
  const char       *open;    /* tag formats: the tags; harmony: NULL */
  const char       *close;
} Format;

static const Format formats[] = {
  { HZ_REASONING_NONE, "none", NULL, NULL },
  { HZ_REASONING_THINK, "think", "<think>", "</think>" },
  { HZ_REASONING_SEED_THINK, "seed-think", "<seed:think>", "</seed:think>" },
  { HZ_REASONING_BRACKET_THINK, "bracket-think", "[THINK]", "[/THINK]" },
  { HZ_REASONING_HARMONY, "harmony", NULL, NULL },
};

/* harmony's markers (the o200k_harmony vocabulary's control tokens) */
#define H_START   "<|start|>"
#define H_CHANNEL "<|channel|>"
#define H_MESSAGE "<|message|>"
#define H_END     "<|end|>"
#define H_RETURN  "<|return|>"
#define H_CALL    "<|call|>"
/* what ends a message body: its end markers, or the next message's header */
static const char *const harmony_body_ends[] = { H_END, H_RETURN, H_CALL, H_START, H_CHANNEL,
                                                 NULL };
/* a header longer than this without "<|message|>" is not harmony markup: it is answer */
#define HARMONY_MAX_HEADER 256

static const Format *
format_get (HzReasoningFormat f)
{
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].format == f)
      return &formats[i];
  return &formats[0];
}

const char *
hz_reasoning_format_name (HzReasoningFormat f)
{
  return format_get (f)->name;
}

HzReasoningFormat
hz_reasoning_format_from_template (const char *chat_template)
{
  if (chat_template == NULL)
    return HZ_REASONING_NONE;
  if (strstr (chat_template, H_CHANNEL) != NULL)
    return HZ_REASONING_HARMONY;
  /* the closing tag: a template that writes or parses the reasoning of earlier turns
   * needs it (the opening one alone could be prose) */
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].close && strstr (chat_template, formats[i].close) != NULL)
      return formats[i].format;
  return HZ_REASONING_NONE;
}

/* TRUE when every one of the texts is a token of the vocabulary. */
static gboolean
all_tokens (const HzTokenizer *tok, const char *const *texts)
{
  for (gsize i = 0; texts[i]; i++)
    if (hz_tokenizer_find (tok, texts[i]) < 0)
      return FALSE;
  return TRUE;
}

HzReasoningFormat
hz_model_reasoning_format (const HzModel *m)
{
  g_return_val_if_fail (m != NULL, HZ_REASONING_NONE);
  g_autofree char *tmpl = hz_gguf_get_str (hz_model_get_gguf (m), "tokenizer.chat_template");
  const HzReasoningFormat f = hz_reasoning_format_from_template (tmpl);
  if (f != HZ_REASONING_NONE)
    return f;
  const HzTokenizer *tok = hz_model_get_tokenizer (m);
  static const char *const harmony[] = { H_CHANNEL, H_MESSAGE, NULL };
  if (all_tokens (tok, harmony))
    return HZ_REASONING_HARMONY;
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].open)
      {
        const char *const tags[] = { formats[i].open, formats[i].close, NULL };
        if (all_tokens (tok, tags))
          return formats[i].format;
      }
  return HZ_REASONING_NONE;
}

gboolean
hz_model_reasoning_special (const HzModel *m)
{
  g_return_val_if_fail (m != NULL, FALSE);
  const Format *f = format_get (hz_model_reasoning_format (m));
  const char *const harmony[] = { H_START, H_CHANNEL, H_MESSAGE, H_END, NULL };
  const char *const tags[] = { f->open, f->close, NULL };
  const char *const *markers = f->format == HZ_REASONING_HARMONY ? harmony : tags;
  const HzTokenizer *tok = hz_model_get_tokenizer (m);
  for (gsize i = 0; f->format != HZ_REASONING_NONE && markers[i]; i++)
    {
      const HzToken id = hz_tokenizer_find (tok, markers[i]);
      if (id >= 0 && (hz_tokenizer_attr (tok, id) & HZ_TOKEN_CONTROL))
        return TRUE;
    }
  return FALSE;
}

static gboolean
is_space (char c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

gboolean
hz_reasoning_prompt_opens (HzReasoningFormat f, const char *prompt, gssize len)
{
  const Format *fm = format_get (f);
  if (fm->open == NULL || prompt == NULL)
    return FALSE;
  gsize n = len < 0 ? strlen (prompt) : (gsize) len;
  while (n > 0 && is_space (prompt[n - 1]))
    n--;
  const gsize k = strlen (fm->open);
  return n >= k && memcmp (prompt + n - k, fm->open, k) == 0;
}

/* prompt tokens read back to find an opened tag (a tag and the white space after it are a
 * few tokens in every vocabulary) */
#define OPENED_TAIL_TOKENS 16

gboolean
hz_model_reasoning_opened (const HzModel *m, const HzToken *prompt, gsize n)
{
  g_return_val_if_fail (m != NULL && (prompt != NULL || n == 0), FALSE);
  const HzReasoningFormat f = hz_model_reasoning_format (m);
  if (format_get (f)->open == NULL || n == 0)
    return FALSE;
  const gsize k = MIN (n, OPENED_TAIL_TOKENS);
  g_autofree char *tail = hz_model_detokenize (m, prompt + n - k, k, TRUE);
  return hz_reasoning_prompt_opens (f, tail, -1);
}

/* ------------------------------------------------------------------ the splitter */

typedef enum {
  S_START,          /* tags: before the opening tag (or, opened, the reasoning) */
  S_REASON_START,   /* tags: white space before the reasoning is dropped */
  S_REASON,         /* tags: reasoning, until the closing tag */
  S_ANSWER_START,   /* white space before the answer is dropped */
  S_ANSWER,         /* answer to the end */
  S_HEADER,         /* harmony: a message header, until "<|message|>" */
  S_BODY,           /* harmony: a message's text, until its end */
} State;

struct _HzReasoningStream {
  const Format *format;
  State         state;
  gboolean      opened;    /* S_START: the prompt opened the tag already */
  gboolean      analysis;  /* S_BODY: the message is on the analysis channel */
  GString      *held;      /* bytes not decided yet */
};

HzReasoningStream *
hz_reasoning_stream_new (HzReasoningFormat format, gboolean opened)
{
  HzReasoningStream *s = g_new0 (HzReasoningStream, 1);
  s->format = format_get (format);
  s->opened = opened;
  s->state = s->format->format == HZ_REASONING_NONE  ? S_ANSWER
             : s->format->format == HZ_REASONING_HARMONY ? S_HEADER
                                                         : S_START;
  s->held = g_string_new (NULL);
  return s;
}

void
hz_reasoning_stream_free (HzReasoningStream *s)
{
  if (s == NULL)
    return;
  g_string_free (s->held, TRUE);
  g_free (s);
}

gboolean
hz_reasoning_stream_in_reasoning (const HzReasoningStream *s)
{
  g_return_val_if_fail (s != NULL, FALSE);
  return s->state == S_REASON_START || s->state == S_REASON ||
         (s->state == S_BODY && s->analysis) || (s->state == S_START && s->opened);
}

/* TRUE when the n bytes at p are a proper prefix of `marker` (could still become it). */
static gboolean
is_partial (const char *p, gsize n, const char *marker)
{
  const gsize k = strlen (marker);
  return n < k && memcmp (p, marker, n) == 0;
}

/* Where in p[0..n) the first of `markers` starts (its index in *which), or n. */
static gsize
find_first (const char *p, gsize n, const char *const *markers, guint *which)
{
  gsize best = n;
  for (guint i = 0; markers[i]; i++)
    {
      const char *hit = g_strstr_len (p, (gssize) n, markers[i]);
      if (hit && (gsize) (hit - p) < best)
        {
          best = (gsize) (hit - p);
          *which = i;
        }
    }
  return best;
}

/* The length of the longest tail of p[0..n) that is a proper prefix of one of `markers`. */
static gsize
partial_tail (const char *p, gsize n, const char *const *markers)
{
  for (gsize start = 0; start < n; start++)
    for (guint i = 0; markers[i]; i++)
      if (is_partial (p + start, n - start, markers[i]))
        return n - start;
  return 0;
}

static gsize
skip_space (const char *p, gsize n)
{
  gsize i = 0;
  while (i < n && is_space (p[i]))
    i++;
  return i;
}

/* Move the first n held bytes to `out` (NULL: drop them). */
static void
take (HzReasoningStream *s, gsize n, GString *out)
{
  if (out)
    g_string_append_len (out, s->held->str, (gssize) n);
  g_string_erase (s->held, 0, (gssize) n);
}

/* One step of the tag formats; FALSE when the held bytes must wait for more. */
static gboolean
step_tags (HzReasoningStream *s, gboolean final, GString *reasoning, GString *answer)
{
  const char *p = s->held->str;
  const gsize n = s->held->len;
  const char *open = s->format->open, *close = s->format->close;
  switch (s->state)
    {
    case S_START:
      {
        /* white space, then the opening tag (again, when the prompt opened it) */
        const gsize ws = skip_space (p, n);
        if (n - ws >= strlen (open) && memcmp (p + ws, open, strlen (open)) == 0)
          {
            take (s, ws + strlen (open), NULL);
            s->state = S_REASON_START;
            return TRUE;
          }
        if (!final && (ws == n || is_partial (p + ws, n - ws, open)))
          return FALSE;
        s->state = s->opened ? S_REASON_START : S_ANSWER;
        return TRUE;
      }
    case S_REASON_START:
    case S_ANSWER_START:
      take (s, skip_space (p, n), NULL);
      if (s->held->len == 0)
        return FALSE;
      s->state = s->state == S_REASON_START ? S_REASON : S_ANSWER;
      return TRUE;
    case S_REASON:
      {
        const char *const closes[] = { close, NULL };
        guint which = 0;
        const gsize at = find_first (p, n, closes, &which);
        /* (a closing tag cut off at the end is held; at the end, dropped) */
        const gsize keep = at < n ? n - at : partial_tail (p, n, closes);
        /* white space before the closing tag (or the end) is not reasoning */
        gsize end = n - keep;
        while (end > 0 && is_space (p[end - 1]))
          end--;
        if (at < n || final)
          {
            take (s, end, reasoning);
            take (s, at < n ? at - end + strlen (close) : s->held->len, NULL);
            s->state = S_ANSWER_START;
            return at < n;
          }
        take (s, end, reasoning);
        return FALSE;
      }
    default:   /* S_ANSWER */
      take (s, n, answer);
      return FALSE;
    }
}

/* One step of harmony; FALSE when the held bytes must wait for more. */
static gboolean
step_harmony (HzReasoningStream *s, gboolean final, GString *reasoning, GString *answer)
{
  const char *p = s->held->str;
  const gsize n = s->held->len;
  if (s->state == S_ANSWER)
    {
      take (s, n, answer);
      return FALSE;
    }
  if (s->state == S_HEADER)
    {
      if (n == 0)
        return FALSE;
      /* text that does not start with harmony markup is answer, to the end */
      if (!(n < 2 ? p[0] == '<' : p[0] == '<' && p[1] == '|'))
        {
          s->state = S_ANSWER;
          return TRUE;
        }
      const char *msg = g_strstr_len (p, (gssize) n, H_MESSAGE);
      if (msg == NULL)
        {
          if (n <= HARMONY_MAX_HEADER && !final)
            return FALSE;
          /* a header cut off at the end is markup; anything else is not */
          if (n <= HARMONY_MAX_HEADER && (g_strstr_len (p, (gssize) n, H_START) ||
                                          g_strstr_len (p, (gssize) n, H_CHANNEL)))
            {
              take (s, n, NULL);
              return FALSE;
            }
          s->state = S_ANSWER;
          return TRUE;
        }
      /* the channel: the word after "<|channel|>" in the header */
      const char *ch = g_strstr_len (p, msg - p, H_CHANNEL);
      const char *name = ch ? ch + strlen (H_CHANNEL) : msg;
      s->analysis = msg - name >= 8 && strncmp (name, "analysis", 8) == 0 &&
                    (name + 8 == msg || is_space (name[8]) || name[8] == '<');
      take (s, (gsize) (msg - p) + strlen (H_MESSAGE), NULL);
      s->state = S_BODY;
      return TRUE;
    }
  /* S_BODY */
  guint which = 0;
  const gsize at = find_first (p, n, harmony_body_ends, &which);
  GString *out = s->analysis ? reasoning : answer;
  if (at == n)
    {
      /* (a marker cut off at the end is held; at the end, dropped) */
      const gsize part = partial_tail (p, n, harmony_body_ends);
      take (s, n - part, out);
      if (final)
        take (s, part, NULL);
      return FALSE;
    }
  take (s, at, out);
  /* an end marker ends the message; a header marker starts the next one */
  const char *marker = harmony_body_ends[which];
  if (strcmp (marker, H_START) != 0 && strcmp (marker, H_CHANNEL) != 0)
    take (s, strlen (marker), NULL);
  s->state = S_HEADER;
  return TRUE;
}

static void
run (HzReasoningStream *s, gboolean final, GString *reasoning, GString *answer)
{
  const gboolean harmony = s->format->format == HZ_REASONING_HARMONY;
  while (harmony ? step_harmony (s, final, reasoning, answer)
                 : step_tags (s, final, reasoning, answer))
    ;
}

void
hz_reasoning_stream_push (HzReasoningStream *s, const char *piece, gssize len,
                          GString *reasoning, GString *answer)
{
  g_return_if_fail (s != NULL && reasoning != NULL && answer != NULL);
  if (piece == NULL)
    return;
  g_string_append_len (s->held, piece, len < 0 ? (gssize) strlen (piece) : len);
  run (s, FALSE, reasoning, answer);
}

void
hz_reasoning_stream_finish (HzReasoningStream *s, GString *reasoning, GString *answer)
{
  g_return_if_fail (s != NULL && reasoning != NULL && answer != NULL);
  run (s, TRUE, reasoning, answer);
  /* whatever is left (white space around the reasoning, an unfinished tag) is dropped;
   * an answer never holds anything back */
  g_string_truncate (s->held, 0);
}

/* ------------------------------------------------------------------ whole texts */

void
hz_reasoning_split (HzReasoningFormat format, gboolean opened, const char *text, gssize len,
                    char **reasoning, char **answer)
{
  g_return_if_fail (text != NULL || len == 0);
  g_autoptr (HzReasoningStream) s = hz_reasoning_stream_new (format, opened);
  GString *r = g_string_new (NULL), *a = g_string_new (NULL);
  hz_reasoning_stream_push (s, text, len, r, a);
  hz_reasoning_stream_finish (s, r, a);
  if (reasoning)
    *reasoning = g_string_free (r, FALSE);
  else
    g_string_free (r, TRUE);
  if (answer)
    *answer = g_string_free (a, FALSE);
  else
    g_string_free (a, TRUE);
}

char *
hz_reasoning_strip (HzReasoningFormat format, const char *text, gssize len)
{
  g_return_val_if_fail (text != NULL || len == 0, NULL);
  const gsize n = len < 0 ? strlen (text) : (gsize) len;
  const Format *f = format_get (format);
  /* "reasoning</think>answer": the prompt had opened the tag (as Qwen3's template reads
   * an earlier turn: the text after the last closing tag is the answer) */
  gboolean opened = FALSE;
  if (f->open)
    {
      const char *close = g_strstr_len (text, (gssize) n, f->close);
      opened = close && !g_strstr_len (text, close - text, f->open);
    }
  char *answer = NULL;
  hz_reasoning_split (format, opened, text, (gssize) n, NULL, &answer);
  return answer;
}

const HzChatMessage *
hz_reasoning_strip_messages (const HzModel *m, const HzChatMessage *msgs, gsize n,
                             GPtrArray *owned)
{
  const HzReasoningFormat f = n > 0 ? hz_model_reasoning_format (m) : HZ_REASONING_NONE;
  if (f == HZ_REASONING_NONE)
    return msgs;
  HzChatMessage *out = NULL;
  for (gsize i = 0; i < n; i++)
    {
      if (g_strcmp0 (msgs[i].role, "assistant") != 0 || msgs[i].content == NULL)
        continue;
      char *answer = hz_reasoning_strip (f, msgs[i].content, -1);
      if (strcmp (answer, msgs[i].content) == 0)
        {
          g_free (answer);
          continue;
        }
      if (out == NULL)
        {
          out = g_memdup2 (msgs, n * sizeof *msgs);
          g_ptr_array_add (owned, out);
        }
      out[i].content = answer;
      g_ptr_array_add (owned, answer);
    }
  return out ? out : msgs;
}
