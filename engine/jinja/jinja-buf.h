/* engine/jinja/jinja-buf.h — text that remembers which of its bytes came from caller data.
 *
 * The chat-template renderer tags every byte of its output "markup" (template literals,
 * values the caller declared markup such as bos_token) or "data" (message contents, tool
 * descriptions: anything else the caller passed). A string carries the byte ranges that
 * are data as a sorted list of runs; HzjBuf builds such text piece by piece. Every helper
 * works on byte lengths (a string may hold NUL bytes) and, for the code-point helpers,
 * on valid UTF-8 (the renderer refuses templates and variables that are not).
 *
 * Plain data structures: no locking; one buffer is used by one thread at a time. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Bytes [start, end) of a text that came from caller data. */
typedef struct {
  gsize start, end;
} HzjRun;

/**
 * HzjBuf:
 * @text: the bytes so far (NUL-terminated, may hold NUL bytes before @text->len)
 * @runs: the data runs of @text (HzjRun, sorted, disjoint, never touching: adjacent runs
 *   are merged)
 * @limit: the most bytes @text may hold; an append that would pass it appends nothing and
 *   sets @overflow (the renderer turns that into an error)
 * @overflow: whether an append was refused for @limit
 */
typedef struct {
  GString *text;
  GArray *runs;
  gsize limit;
  gboolean overflow;
} HzjBuf;

/** Starts an empty buffer of at most @limit bytes (G_MAXSIZE: unbounded). */
void hzj_buf_init (HzjBuf *b, gsize limit);
/** Frees what @b holds (a cleared buffer can be cleared again). */
void hzj_buf_clear (HzjBuf *b);
/** Appends @len bytes of @s, all data when @data, else all markup. FALSE on overflow. */
gboolean hzj_buf_append (HzjBuf *b, const char *s, gsize len, gboolean data);
/** Appends bytes [@from, @to) of a text @s whose data runs are @runs (@n_runs of them,
 *  offsets relative to @s), keeping their tagging. FALSE on overflow. */
gboolean hzj_buf_append_slice (HzjBuf *b, const char *s, const HzjRun *runs, guint n_runs,
                               gsize from, gsize to);
/** Appends the UTF-8 encoding of code point @c, tagged data when @data. */
gboolean hzj_buf_append_unichar (HzjBuf *b, gunichar c, gboolean data);
/** printf into @b, tagged markup. */
gboolean hzj_buf_printf (HzjBuf *b, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/** Whether byte @off of a text with data runs @runs is data (binary search). */
gboolean hzj_runs_is_data (const HzjRun *runs, guint n_runs, gsize off);
/** Whether any byte of [@from, @to) is data. */
gboolean hzj_runs_any_data (const HzjRun *runs, guint n_runs, gsize from, gsize to);

/* -- UTF-8 helpers (valid UTF-8 assumed; a NUL byte is a 1-byte character) -- */

/** Decodes the code point at @s (of the @len bytes left) and stores its length in *@n. */
gunichar hzj_utf8_get (const char *s, gsize len, gsize *n);
/** Number of code points in @len bytes of @s. */
gsize hzj_utf8_count (const char *s, gsize len);
/** Byte offset of code point @index (0..count) in @s, or @len when @index >= count. */
gsize hzj_utf8_offset (const char *s, gsize len, gsize index);
/** Python's str.isspace() for one code point (ASCII and Unicode white space). */
gboolean hzj_unichar_is_py_space (gunichar c);
/** Whether @len bytes of @s are valid UTF-8 (NUL bytes allowed). */
gboolean hzj_utf8_valid (const char *s, gsize len);

G_END_DECLS
