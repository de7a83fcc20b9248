/* tools/hanzo-redact-records.h — the JSONL records of `hanzo redact --jsonl/--eval/--pred`
 * (../shared/redactor-eval/README.md): one JSON object per line with a "text" string and
 * "spans" [{"start", "end", "label"}] on code points. Shared by the CLI and the fuzz target
 * tests/fuzz/fuzz-redact-records.c. Plain functions of their arguments: reentrant. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/** Labels of the eval taxonomy plus the redactor's extra ones, in table order. */
#define HZ_EVAL_N_LABELS 16
extern const char *const hz_eval_labels[HZ_EVAL_N_LABELS];

/** Whether label `l` (an index into hz_eval_labels) is personal data in itself
 *  (ORGANIZATION and OTHER are not: they are left out of the headline micro average). */
gboolean hz_eval_label_is_pii (int l);
/** Index of a label name in hz_eval_labels, or -1. */
int      hz_eval_label_index (const char *name);

/** A span on code points [s, e) with a label index. */
typedef struct {
  gint64 s, e;
  int label;
} HzEvalSpan;

/** The string member `name` of a record in *out (borrowed from `o`): "" when absent or
 *  null; FALSE (G_IO_ERROR_INVALID_DATA) when it holds anything else than a string. */
gboolean hz_eval_record_string (JsonObject *o, const char *name, const char **out,
                                GError **error);

/** Spans of a record ("spans": [{start, end, label}], absent or null: none) in *out, a new
 *  GArray of HzEvalSpan. Each span needs integers 0 <= start < end, end within the record's
 *  "text" (in code points) when it has one, and a string label (unknown labels count as
 *  OTHER). FALSE with G_IO_ERROR_INVALID_DATA (and *out NULL) on anything else. */
gboolean hz_eval_record_spans (JsonObject *o, GArray **out, GError **error);

/** Called for each record; FALSE with `error` set stops the walk. */
typedef gboolean (*HzEvalRecordFn) (JsonObject *o, gpointer user, GError **error);

/** Call `fn` for every line of `len` bytes of JSONL `data`, each parsed as a JSON object;
 *  blank lines (empty or white space only) are skipped. Errors name `name` and the line ("NAME:LINE: ..."): a NUL byte in a line
 *  (G_FILE_ERROR_INVAL), invalid JSON (json-glib's error), a line that is not an object
 *  (G_IO_ERROR_INVALID_DATA), or `fn`'s error. */
gboolean hz_eval_for_each_record_in_data (const char *data, gsize len, const char *name,
                                          HzEvalRecordFn fn, gpointer user, GError **error);
/** hz_eval_for_each_record_in_data() over the file at `path` (read whole). Errors: also
 *  G_FILE_ERROR from reading it. */
gboolean hz_eval_for_each_record (const char *path, HzEvalRecordFn fn, gpointer user,
                                  GError **error);

G_END_DECLS
