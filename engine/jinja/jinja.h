/* engine/jinja/jinja.h — chat templates: a sandboxed Jinja2 interpreter that renders a
 * GGUF's `tokenizer.chat_template` exactly as Hugging Face transformers'
 * apply_chat_template() does (Jinja2 3.1, ImmutableSandboxedEnvironment with trim_blocks,
 * lstrip_blocks and loop controls; tojson as json.dumps(..., ensure_ascii=False); the
 * globals raise_exception() and strftime_now()).
 *
 * The output comes as pieces tagged "markup" or "content": markup is what the template
 * itself wrote (its literals, and values the caller declares markup: bos_token, eos_token,
 * the messages' roles, ...); content is every byte derived from the rest of the caller's
 * data (message contents, tools, documents, other keyword arguments), through any
 * concatenation, filter, slicing or tojson. Only markup may become control tokens: a
 * message that says "<|im_end|>" stays text.
 *
 * Guarded like a parser: the template and every string must be valid UTF-8; nesting,
 * macro recursion, evaluation steps and the size of every string (output included) are
 * bounded (HzJinjaLimits); going past a bound is an error, never a truncated prompt. A
 * template that raises (raise_exception, an undefined attribute of an undefined value,
 * a type error, the sandbox) is refused with its message.
 *
 * Thread safety: a parsed HzJinjaTemplate is immutable; any number of threads may render it
 * at once. Errors: HZ_JINJA_ERROR; each message starts as Python's would
 * ("TemplateError: System role not supported", "TemplateSyntaxError: ...") and ends with
 * " (template line N)" when a line is known. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "jinja-error.h"

G_BEGIN_DECLS

/* HZ_JINJA_ERROR and its codes (HzJinjaError): jinja-error.h */

/**
 * HzJinjaLimits:
 * @max_output: the most bytes of the output and of any string built on the way (default
 *   16 MiB)
 * @max_steps: the most work: loop iterations, statements and expressions evaluated, and
 *   a step per item (or per 8 bytes of a string) of every value made, so that this also
 *   bounds the memory a template fills (default 20 000 000: a few seconds; real chat
 *   templates take about a thousand per message, Gemma 4's quadratic look-back 14 million
 *   for 2 000 messages)
 * @max_depth: the deepest nesting of macro calls (default 200; Python's recursion limit
 *   stops Jinja2 near there too)
 *
 * Zero fields take the default.
 */
typedef struct {
  gsize max_output;
  guint64 max_steps;
  guint max_depth;
} HzJinjaLimits;

/** One piece of rendered output: @len bytes of @text (NUL-terminated, valid UTF-8), which
 *  the template wrote itself (@markup) or which came from caller data (!@markup). */
typedef struct {
  char *text;
  gsize len;
  gboolean markup;
} HzJinjaPiece;

void hz_jinja_piece_free (HzJinjaPiece *piece);

typedef struct _HzJinjaTemplate HzJinjaTemplate;

/**
 * hz_jinja_template_new:
 * @source: the template text (@len bytes, or -1 when NUL-terminated)
 * @error: HZ_JINJA_ERROR_INPUT when @source is not UTF-8 or holds NUL bytes,
 *   HZ_JINJA_ERROR_SYNTAX when it does not parse (Jinja2's message, e.g. "Encountered
 *   unknown tag 'generation'. ...")
 *
 * Parses a template. Returns: (transfer full): the template, or NULL.
 */
HzJinjaTemplate *hz_jinja_template_new (const char *source, gssize len, GError **error);
void hz_jinja_template_free (HzJinjaTemplate *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzJinjaTemplate, hz_jinja_template_free)

/**
 * hz_jinja_default_markup_vars:
 * The variables whose strings are markup unless the caller says otherwise: the special
 * token texts transformers passes (bos_token, eos_token, unk_token, pad_token, sep_token,
 * cls_token, mask_token). The `role` of each message is markup as well (a fixed set the
 * application chooses, which some templates turn into tokens, "<|" + role + "|>").
 * Returns: (transfer none): a NULL-terminated list.
 */
const char *const *hz_jinja_default_markup_vars (void);

/**
 * hz_jinja_template_render_pieces:
 * @t: a template
 * @vars: the render variables (messages, tools, add_generation_prompt, bos_token, ...):
 *   JSON objects become dicts (in member order), arrays lists, numbers int or float as
 *   written
 * @markup_vars: (nullable): top-level variables whose strings are markup (NULL-terminated;
 *   NULL: hz_jinja_default_markup_vars()); every other string of @vars is content, except
 *   each message's `role`
 * @limits: (nullable): bounds (NULL: the defaults)
 * @error: HZ_JINJA_ERROR_RAISED / _RUNTIME / _LIMIT / _INPUT
 *
 * Renders @t. strftime_now() formats the time given by $SOURCE_DATE_EPOCH when it is set
 * (reproducible renders), else the current time, in the local time zone (as Python's
 * datetime.now()), with the C locale's names.
 * Returns: (transfer full) (element-type HzJinjaPiece): the output as pieces, adjacent
 * pieces of one kind merged, no empty piece; NULL on error.
 */
GPtrArray *hz_jinja_template_render_pieces (const HzJinjaTemplate *t, JsonObject *vars,
                                            const char *const *markup_vars,
                                            const HzJinjaLimits *limits, GError **error);

/**
 * hz_jinja_template_render:
 * As hz_jinja_template_render_pieces(), the pieces joined: the rendered prompt as
 * apply_chat_template(tokenize=False) returns it. @len (optional) gets its length.
 * Returns: (transfer full): NUL-terminated UTF-8 text, or NULL on error.
 */
char *hz_jinja_template_render (const HzJinjaTemplate *t, JsonObject *vars,
                                const HzJinjaLimits *limits, gsize *len, GError **error);

G_END_DECLS
