/* tools/hanzo-redact.c — `hanzo redact`: find and scrub personal data (libhzredact).
 *
 *   hanzo redact [--mode=mask|numbered|pseudonym] [--json] [TEXT...]   (stdin if no TEXT)
 *   hanzo redact --jsonl IN.jsonl     records with predicted spans
 *   hanzo redact --eval FILE.jsonl [--eval ...] [--pred PRED.jsonl]  P/R/F1/F2 tables
 *   --model MODEL.gguf [--model-tokens N]: also run the model-based pass on the local engine
 *   (hanzo/redact-engine.h); every span the model returns is verified against the text.
 *   -o/--output FILE: where any of the three modes writes (default stdout). A regular or
 *   new file is written whole or not at all (common/hanzo/atomic-file.h: a failure or Ctrl-C
 *   leaves the previous file); an existing device or FIFO is written directly and never
 *   removed. Options that the chosen mode would ignore are usage errors (exit 2).
 *
 * The JSONL format and the scoring rules are those of ../shared/redactor-eval/README.md:
 * spans on code points, one-to-one matching within a record and label, exact match and
 * IoU >= 0.9. */
#include <glib.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cli-util.h"
#include "hanzo/redact-engine.h"
#include "hanzo/redact.h"
#include "hanzo-cmd.h"
#include "hanzo-redact-records.h"
#include "hanzo-gen-common.h"
#include "hanzo/atomic-file.h"
#include "hanzo/json-out.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- scoring ------------------------------------------------------------------------- */

typedef struct {
  guint gold, pred, tp_exact, tp_iou;
} Counts;

static double
iou (const HzEvalSpan *a, const HzEvalSpan *b)
{
  gint64 inter = MIN (a->e, b->e) - MAX (a->s, b->s);
  if (inter <= 0)
    return 0;
  gint64 uni = MAX (a->e, b->e) - MIN (a->s, b->s);
  return (double) inter / (double) uni;
}

/* One-to-one matching of gold and predicted spans of one label in one record. `agnostic`
 * ignores labels. Adds to counts[label] (or counts[0] when agnostic). */
static void
match_record (GArray *gold, GArray *pred, Counts *counts, gboolean agnostic)
{
  for (gsize l = 0; l < (agnostic ? 1 : HZ_EVAL_N_LABELS); l++)
    {
      GArray *g = g_array_new (FALSE, FALSE, sizeof (HzEvalSpan)), *p = g_array_new (FALSE, FALSE, sizeof (HzEvalSpan));
      for (guint i = 0; i < gold->len; i++)
        if (agnostic || g_array_index (gold, HzEvalSpan, i).label == (int) l)
          g_array_append_val (g, g_array_index (gold, HzEvalSpan, i));
      for (guint i = 0; i < pred->len; i++)
        if (agnostic || g_array_index (pred, HzEvalSpan, i).label == (int) l)
          g_array_append_val (p, g_array_index (pred, HzEvalSpan, i));
      Counts *c = &counts[l];
      c->gold += g->len;
      c->pred += p->len;
      /* exact */
      gboolean *used = g_new0 (gboolean, p->len + 1);
      for (guint i = 0; i < g->len; i++)
        for (guint j = 0; j < p->len; j++)
          {
            HzEvalSpan *a = &g_array_index (g, HzEvalSpan, i), *b = &g_array_index (p, HzEvalSpan, j);
            if (!used[j] && a->s == b->s && a->e == b->e)
              {
                used[j] = TRUE;
                c->tp_exact++;
                break;
              }
          }
      /* IoU >= 0.9: greedy on the best pairs first */
      memset (used, 0, sizeof (gboolean) * (p->len + 1));
      gboolean *gused = g_new0 (gboolean, g->len + 1);
      for (;;)
        {
          double best = 0;
          guint bi = 0, bj = 0;
          for (guint i = 0; i < g->len; i++)
            for (guint j = 0; j < p->len; j++)
              if (!gused[i] && !used[j])
                {
                  double v = iou (&g_array_index (g, HzEvalSpan, i), &g_array_index (p, HzEvalSpan, j));
                  if (v > best)
                    best = v, bi = i, bj = j;
                }
          if (best < 0.9)
            break;
          gused[bi] = used[bj] = TRUE;
          c->tp_iou++;
        }
      g_free (used);
      g_free (gused);
      g_array_free (g, TRUE);
      g_array_free (p, TRUE);
    }
}

static void
prf (guint tp, guint gold, guint pred, double *p, double *r, double *f1, double *f2)
{
  *p = pred ? (double) tp / pred : (gold ? 0.0 : 1.0);
  *r = gold ? (double) tp / gold : (pred ? 0.0 : 1.0);
  *f1 = (*p + *r) > 0 ? 2 * *p * *r / (*p + *r) : 0;
  *f2 = (4 * *p + *r) > 0 ? 5 * *p * *r / (4 * *p + *r) : 0;
}

static void
print_row (FILE *out, const char *name, const Counts *c)
{
  double p, r, f1, f2, p2, r2, f12, f22;
  prf (c->tp_exact, c->gold, c->pred, &p, &r, &f1, &f2);
  prf (c->tp_iou, c->gold, c->pred, &p2, &r2, &f12, &f22);
  fprintf (out, "| %-22s | %5u | %5u | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", name,
          c->gold, c->pred, p, r, f1, f2, p2, r2, f12, f22);
}

static GArray *
predict_spans (const HzRedactor *r, HzRedactFlags flags, const char *text)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (HzEvalSpan));
  HzRedaction *res = hz_redactor_analyze (r, text, -1, HZ_REDACT_UTF8_REPLACE | flags, NULL);
  for (guint i = 0; res && i < res->n_spans; i++)
    {
      HzEvalSpan e = { (gint64) res->spans[i].start_cp, (gint64) res->spans[i].end_cp,
                  hz_eval_label_index (hz_entity_type_name (res->spans[i].type)) };
      g_array_append_val (a, e);
    }
  hz_redaction_free (res);
  return a;
}

/* The records of a --pred file, in file order, each matched to at most one gold record:
 * by "id" when the gold record has one, else by position (the n-th gold record over all
 * --eval files, in order, to the n-th prediction). */
typedef struct {
  char *id;        /* "" when the record has none */
  GArray *spans;   /* HzEvalSpan */
  guint index;     /* 1-based record number in the --pred file, for messages */
  gboolean used;
} PredRecord;

typedef struct {
  const char *path;
  GPtrArray *records;   /* PredRecord *, file order */
  GHashTable *by_id;    /* id -> PredRecord * (records with an id) */
  guint n_loaded;       /* while loading */
} PredSet;

static void
pred_record_free (PredRecord *p)
{
  g_free (p->id);
  g_array_unref (p->spans);
  g_free (p);
}

static void
pred_set_free (PredSet *ps)
{
  g_ptr_array_unref (ps->records);
  g_hash_table_unref (ps->by_id);
  g_free (ps);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PredSet, pred_set_free)

typedef struct {
  const HzRedactor *r;
  HzRedactFlags flags; /* HZ_REDACT_MODEL with --model */
  PredSet *pred;       /* from --pred, or NULL to run the redactor */
  guint position;      /* gold records seen over all --eval files */
  Counts by_label[HZ_EVAL_N_LABELS];
  Counts agnostic;
  guint records;
} EvalState;

/* The prediction for the gold record with `id` ("" = none) at `position`; FALSE with a
 * message naming the --pred file when it has none or it was already matched. */
static gboolean
find_pred (EvalState *st, const char *id, GArray **out, GError **error)
{
  PredSet *ps = st->pred;
  PredRecord *p = NULL;
  if (*id)
    {
      if (!(p = g_hash_table_lookup (ps->by_id, id)))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "%s has no record with \"id\" \"%s\" (the gold and the predicted "
                       "records must be the same set)", ps->path, id);
          return FALSE;
        }
    }
  else if (st->position < ps->records->len)
    p = ps->records->pdata[st->position];
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "%s has %u records, fewer than the gold records (this one has no \"id\", "
                   "so it is matched by position: record %u)", ps->path, ps->records->len,
                   st->position + 1);
      return FALSE;
    }
  if (p->used)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: record %u is matched by two gold records", ps->path, p->index);
      return FALSE;
    }
  p->used = TRUE;
  *out = g_array_copy (p->spans);
  return TRUE;
}

static gboolean
eval_record (JsonObject *o, gpointer user, GError **error)
{
  EvalState *st = user;
  const char *text, *id;
  GArray *gold, *pred;
  if (!hz_eval_record_string (o, "text", &text, error) || !hz_eval_record_string (o, "id", &id, error)
      || !hz_eval_record_spans (o, &gold, error))
    return FALSE;
  if (st->pred)
    {
      if (!find_pred (st, id, &pred, error))
        {
          g_array_free (gold, TRUE);
          return FALSE;
        }
    }
  else
    pred = predict_spans (st->r, st->flags, text);
  st->position++;
  match_record (gold, pred, st->by_label, FALSE);
  match_record (gold, pred, &st->agnostic, TRUE);
  st->records++;
  g_array_free (gold, TRUE);
  g_array_free (pred, TRUE);
  return TRUE;
}

static gboolean
load_pred (JsonObject *o, gpointer user, GError **error)
{
  PredSet *ps = user;
  const char *id;
  GArray *spans;
  if (!hz_eval_record_string (o, "id", &id, error) || !hz_eval_record_spans (o, &spans, error))
    return FALSE;
  PredRecord *p = g_new0 (PredRecord, 1);
  p->id = g_strdup (id);
  p->spans = spans;
  p->index = ++ps->n_loaded;
  if (*id && g_hash_table_contains (ps->by_id, id))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "\"id\" \"%s\" appears twice", id);
      pred_record_free (p);
      return FALSE;
    }
  g_ptr_array_add (ps->records, p);
  if (*id)
    g_hash_table_insert (ps->by_id, p->id, p);
  return TRUE;
}

static void
print_eval (FILE *out, const char *path, EvalState *st)
{
  g_autofree char *base = g_path_get_basename (path);
  fprintf (out, "## %s (%u records)\n\n", base, st->records);
  fprintf (out, "| label | gold | pred | exact P | exact R | exact F1 | exact F2 | IoU0.9 P | IoU0.9 R | IoU0.9 F1 | IoU0.9 F2 |\n");
  fprintf (out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  Counts pii = { 0 }, all = { 0 };
  for (gsize l = 0; l < HZ_EVAL_N_LABELS; l++)
    {
      Counts *c = &st->by_label[l];
      if (c->gold == 0 && c->pred == 0)
        continue;
      print_row (out, hz_eval_labels[l], c);
      all.gold += c->gold, all.pred += c->pred, all.tp_exact += c->tp_exact, all.tp_iou += c->tp_iou;
      if (hz_eval_label_is_pii (l))
        pii.gold += c->gold, pii.pred += c->pred, pii.tp_exact += c->tp_exact, pii.tp_iou += c->tp_iou;
    }
  print_row (out, "micro (personal data)", &pii);
  print_row (out, "micro (all labels)", &all);
  print_row (out, "label-agnostic", &st->agnostic);
  fprintf (out, "\nmicro (personal data) excludes ORGANIZATION and OTHER, which the redactor does not "
           "predict (not personal data in themselves); micro (all labels) counts them as misses.\n\n");
}

/* Scores every gold file; with `pred_path`, its records must be exactly the gold records
 * (matched as PredRecord says): a missing, extra or doubly matched prediction is an error
 * naming the file, found before anything is printed. */
static int
run_eval (FILE *out, const HzRedactor *r, HzRedactFlags flags, char **files, const char *pred_path)
{
  g_autoptr (PredSet) pred = NULL;
  GError *err = NULL;
  if (pred_path)
    {
      pred = g_new0 (PredSet, 1);
      pred->path = pred_path;
      pred->records = g_ptr_array_new_with_free_func ((GDestroyNotify) pred_record_free);
      pred->by_id = g_hash_table_new (g_str_hash, g_str_equal);
      if (!hz_eval_for_each_record (pred_path, load_pred, pred, &err))
        {
          hz_cli_print_error ("redact", err->message);
          g_error_free (err);
          return 1;
        }
    }
  guint n_files = g_strv_length (files);
  g_autofree EvalState *st = g_new0 (EvalState, MAX (n_files, 1));
  for (guint i = 0; i < n_files; i++)
    {
      st[i] = (EvalState) { r, flags, pred, i ? st[i - 1].position : 0 };
      if (!hz_eval_for_each_record (files[i], eval_record, &st[i], &err))
        {
          hz_cli_print_error ("redact", err->message);
          g_error_free (err);
          return 1;
        }
      if (st[i].records == 0)
        {
          /* scores over nothing (P = R = 1) would read as a perfect result */
          fprintf (stderr, "hanzo redact: %s: no records to score\n", files[i]);
          return 1;
        }
    }
  for (guint i = 0; pred && i < pred->records->len; i++)
    {
      const PredRecord *p = pred->records->pdata[i];
      if (!p->used)
        {
          fprintf (stderr, "hanzo redact: %s: record %u (%s%s%s) matches no gold record (the "
                   "gold and the predicted records must be the same set)\n", pred_path, p->index,
                   *p->id ? "\"id\" \"" : "", *p->id ? p->id : "without \"id\"",
                   *p->id ? "\"" : "");
          return 1;
        }
    }
  for (guint i = 0; i < n_files; i++)
    print_eval (out, files[i], &st[i]);
  return 0;
}

/* ---- JSON output --------------------------------------------------------------------- */

/* One span as a JSON object (`details`: with its text). */
static void
add_span_json (JsonBuilder *b, const HzRedaction *res, guint i, gboolean details)
{
  const HzSpan *s = &res->spans[i];
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "start");
  json_builder_add_int_value (b, s->start_cp);
  json_builder_set_member_name (b, "end");
  json_builder_add_int_value (b, s->end_cp);
  json_builder_set_member_name (b, "start_byte");
  json_builder_add_int_value (b, s->start_byte);
  json_builder_set_member_name (b, "end_byte");
  json_builder_add_int_value (b, s->end_byte);
  json_builder_set_member_name (b, "label");
  json_builder_add_string_value (b, hz_entity_type_name (s->type));
  json_builder_set_member_name (b, "score");
  json_builder_add_double_value (b, ((int) (s->score * 1000 + 0.5)) / 1000.0);
  json_builder_set_member_name (b, "recognizer");
  json_builder_add_string_value (b, s->recognizer);
  if (details)
    {
      g_autofree char *t = g_strndup (res->text + s->start_byte, s->end_byte - s->start_byte);
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, t);
    }
  json_builder_end_object (b);
}

static void
add_spans_json (JsonBuilder *b, const HzRedaction *res, gboolean details)
{
  json_builder_set_member_name (b, "spans");
  json_builder_begin_array (b);
  for (guint i = 0; i < res->n_spans; i++)
    add_span_json (b, res, i, details);
  json_builder_end_array (b);
}

static char *
to_json_line (JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  return hz_json_generator_to_data (gen, NULL);
}

/* `s` (valid UTF-8 without NUL, `len` bytes) as a JSON string literal, byte for byte as
 * hz_json_node_to_string() writes one (its escaping goes character by character), converted in
 * slices of 64 KiB cut at character boundaries: no escaped copy of a large text is made. */
static void
write_json_string (FILE *out, const char *s, gsize len)
{
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_VALUE);
  fputc ('"', out);
  for (gsize pos = 0; pos < len;)
    {
      gsize n = MIN ((gsize) 65536, len - pos);
      while (pos + n < len && ((guchar) s[pos + n] & 0xC0) == 0x80)
        n++;
      g_autofree char *piece = g_strndup (s + pos, n);
      json_node_set_string (node, piece);
      g_autofree char *lit = hz_json_node_to_string (node, FALSE);   /* "..." */
      fwrite (lit + 1, 1, strlen (lit) - 2, out);
      pos += n;
    }
  fputc ('"', out);
}

/* `hanzo redact --json`: {"text":..,"scrubbed":..,"spans":[..]} and a newline, written as
 * it is made (one span object at a time): the same bytes as building the whole object with
 * json-glib and generating it, without a tree and an output buffer many times the size of
 * the text (that made --json take about 37 times its input in memory). */
static void
write_redaction_json (FILE *out, const HzRedaction *res, const char *scrubbed)
{
  fputs ("{\"text\":", out);
  write_json_string (out, res->text, res->len);
  fputs (",\"scrubbed\":", out);
  write_json_string (out, scrubbed, strlen (scrubbed));
  fputs (",\"spans\":[", out);
  for (guint i = 0; i < res->n_spans; i++)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      add_span_json (b, res, i, TRUE);
      g_autofree char *obj = to_json_line (b);
      if (i > 0)
        fputc (',', out);
      fputs (obj, out);
    }
  fputs ("]}\n", out);
}

typedef struct {
  const HzRedactor *r;
  HzRedactFlags flags;
  FILE *out;
} JsonlState;

static gboolean
jsonl_record (JsonObject *o, gpointer user, GError **error)
{
  JsonlState *st = user;
  const char *text;
  if (!hz_eval_record_string (o, "text", &text, error))
    return FALSE;
  HzRedaction *res = hz_redactor_analyze (st->r, text, -1, HZ_REDACT_UTF8_REPLACE | st->flags, error);
  if (!res)
    return FALSE;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  /* keep every member of the input record except its spans, in order */
  GList *members = json_object_get_members (o);
  for (GList *m = members; m; m = m->next)
    {
      if (strcmp (m->data, "spans") == 0)
        continue;
      json_builder_set_member_name (b, m->data);
      json_builder_add_value (b, json_node_copy (json_object_get_member (o, m->data)));
    }
  g_list_free (members);
  add_spans_json (b, res, FALSE);
  json_builder_end_object (b);
  g_autofree char *line = to_json_line (b);
  fprintf (st->out, "%s\n", line);
  hz_redaction_free (res);
  return TRUE;
}

/* All of stdin as bytes. A NUL byte would end the text for the redactor (and for the
 * output): rather than drop what follows it silently, refuse the input. NULL (message
 * printed) on failure. */
static char *
read_stdin (void)
{
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  char *s = hz_cli_read_all ("-", &len, &error);
  if (!s)
    {
      hz_cli_print_error ("redact", error->message);
      return NULL;
    }
  const char *nul = memchr (s, '\0', len);
  if (nul)
    {
      fprintf (stderr, "hanzo redact: stdin: NUL byte at offset %" G_GSIZE_FORMAT
               "; the input must be text without NUL bytes\n", (gsize) (nul - s));
      g_free (s);
      return NULL;
    }
  return s;
}

/* ---- output (-o) --------------------------------------------------------------------- */

/* Where a mode writes: stdout; an existing device or FIFO (e.g. /dev/null), written
 * directly and never removed; or a regular or new file, written through HzAtomicFile so
 * that a failure, Ctrl-C or a kill leaves the previous file (or none), never a cut one. */
typedef struct {
  const char *path;   /* NULL: stdout */
  FILE *fp;
  HzAtomicFile *af;   /* a regular or new file, else NULL */
  int fd;             /* what fp writes to (not stdout), closed with it */
  int err;            /* the errno of the first failed write, else 0 */
} Output;

/* fp's writes (fopencookie): stdio's ferror() says only that a write failed, so a long
 * text that fills the disk was "write error"; the errno is kept here for the message. */
static ssize_t
output_write (void *cookie, const char *buf, size_t size)
{
  Output *o = cookie;
  size_t done = 0;
  while (done < size)
    {
      const ssize_t n = write (o->fd, buf + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (o->err == 0)
            o->err = n < 0 ? errno : EIO;
          return done > 0 ? (ssize_t) done : -1;
        }
      done += (size_t) n;
    }
  return (ssize_t) done;
}

static int
output_cookie_close (void *cookie)
{
  Output *o = cookie;
  const int rc = close (o->fd);
  o->fd = -1;
  return rc;
}

/* fp on `fd` (taken: closed by fclose), through output_write. */
static gboolean
output_stream (Output *o, int fd)
{
  static const cookie_io_functions_t io = { NULL, output_write, NULL, output_cookie_close };
  o->fd = fd;
  if ((o->fp = fopencookie (o, "w", io)))
    return TRUE;
  close (fd);
  o->fd = -1;
  return FALSE;
}

static gboolean
output_open (Output *o, const char *path, GError **error)
{
  *o = (Output) { path, stdout, NULL, -1, 0 };
  if (!path)
    return TRUE;
  GStatBuf st;
  if (*path && g_stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "cannot write %s: it is a directory",
                       path);
          return FALSE;
        }
      const int dev = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (dev < 0 || !output_stream (o, dev))
        {
          const int e = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write %s: %s",
                       path, g_strerror (e));
          return FALSE;
        }
      return TRUE;
    }
  if (!(o->af = hz_atomic_file_create (path, 0666, error)))
    return FALSE;
  const int fd = dup (hz_atomic_file_fd (o->af));
  if (fd < 0 || !output_stream (o, fd))
    {
      const int e = errno;
      g_clear_pointer (&o->af, hz_atomic_file_discard);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write %s: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

/* Ends the output of a command that has succeeded so far when `ok`: flushes, closes and (a
 * file) puts it in place, else drops it. Returns whether everything was written (a failure
 * is printed); stdout is checked by hanzo.c's main(). */
static gboolean
output_close (Output *o, gboolean ok)
{
  if (o->fp == stdout)
    return ok;
  const gboolean flushed = fflush (o->fp) == 0;
  int e = o->err ? o->err : flushed ? 0 : errno;
  const gboolean werr = !flushed || ferror (o->fp);
  if (fclose (o->fp) != 0 && e == 0)
    e = errno;
  if ((werr || e) && ok)
    {
      fprintf (stderr, "hanzo redact: cannot write %s: %s\n", o->path,
               e ? g_strerror (e) : "write error");
      ok = FALSE;
    }
  if (o->af && ok)
    {
      GError *err = NULL;
      if (!hz_atomic_file_commit (g_steal_pointer (&o->af), &err))
        {
          hz_cli_print_error ("redact", err->message);
          g_error_free (err);
          ok = FALSE;
        }
    }
  g_clear_pointer (&o->af, hz_atomic_file_discard);
  return ok;
}

/* A usage error (exit 2). */
static int
usage_error (const char *msg)
{
  fprintf (stderr, "hanzo redact: %s (see hanzo redact --help)\n", msg);
  return 2;
}

int
hz_cmd_redact (int argc, char **argv)
{
  g_autofree char *mode_str = NULL, *jsonl = NULL, *output = NULL, *pred = NULL, *model_path = NULL;
  int model_tokens = G_MININT;   /* not given */
  g_auto (GStrv) eval = NULL;
  gboolean json = FALSE;
  g_autofree char *seed_str = NULL;
  GOptionEntry entries[] = {
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &mode_str, "Scrub mode: mask (default), numbered, pseudonym", "MODE" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_str, "With -m pseudonym: the same fakes for the same SEED (default: a random seed, other fakes on every run)", "SEED" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the spans and the scrubbed text as JSON", NULL },
    { "jsonl", 0, 0, G_OPTION_ARG_FILENAME, &jsonl, "Read redactor-eval records, write them with predicted spans", "IN.jsonl" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the output (of any mode) to FILE instead of stdout; a regular file is replaced only when complete", "FILE" },
    { "eval", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &eval, "Score the redactor on gold records (repeatable)", "FILE.jsonl" },
    { "pred", 0, 0, G_OPTION_ARG_FILENAME, &pred, "With --eval: score this prediction file instead of running the redactor (records matched by \"id\", else by position; both sets must be the same)", "PRED.jsonl" },
    { "model", 0, 0, G_OPTION_ARG_FILENAME, &model_path, "Also ask this local model (GGUF) for spans; each one is verified against the text", "MODEL.gguf" },
    { "model-tokens", 0, 0, G_OPTION_ARG_INT, &model_tokens, "With --model: most tokens of one answer (default 256)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[TEXT...] - find and scrub personal data");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Modes: TEXT (or stdin) is scrubbed (--mode, --json); --jsonl IN writes records with "
    "predicted spans; --eval FILE prints scores. Options of another mode are refused.\n"
    "Environment: HZ_REDACT_PERSON_TAGGER=FILE|none (the learned PERSON tagger's weights, or "
    "the rules alone), HZ_REDACT_PROSE_TAGGER=FILE|none (the tagger of encyclopedic prose, or "
    "the PERSON tagger for every text); a file that cannot be loaded gives a warning.");
  GError *err = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &err))
    {
      hz_cli_print_error ("redact", err->message);
      g_error_free (err);
      return 2;
    }
  /* options that the chosen mode would ignore */
  if (jsonl && eval)
    return usage_error ("--jsonl and --eval are different modes: give one");
  if (json && (jsonl || eval))
    return usage_error (jsonl ? "--json is for TEXT; --jsonl writes JSON lines already"
                              : "--json is for TEXT, not --eval");
  if (mode_str && (jsonl || eval))
    return usage_error ("--mode is for TEXT; --jsonl and --eval do not scrub");
  if (argc > 1 && (jsonl || eval))
    return usage_error ("TEXT arguments cannot be given with --jsonl or --eval");
  if (pred && !eval)
    return usage_error ("--pred needs --eval");
  if (model_tokens != G_MININT && !model_path)
    return usage_error ("--model-tokens needs --model");
  if (model_tokens == G_MININT)
    model_tokens = 256;
  if (model_tokens < 1 || model_tokens > 65536)
    {
      fprintf (stderr, "hanzo redact: --model-tokens must be in 1..65536, not %d\n", model_tokens);
      return 2;
    }
  if (output && pred && g_strcmp0 (output, pred) == 0)
    return usage_error ("-o must not be the --pred file");
  guint64 seed = 0;
  if (seed_str)
    {
      if (jsonl || eval || g_strcmp0 (mode_str, "pseudonym") != 0)
        return usage_error ("--seed is for -m pseudonym");
      if (!g_ascii_string_to_unsigned (seed_str, 10, 0, G_MAXUINT64, &seed, &err))
        {
          fprintf (stderr, "hanzo redact: --seed: %s\n", err->message);
          g_error_free (err);
          return 2;
        }
    }
  else
    /* a fixed seed would give every user the same fakes, and a table from fakes back to
     * low-entropy originals (a national id, a birth date) could be built from the binary */
    seed = (guint64) g_random_int () << 32 | g_random_int ();
  HzScrubMode mode = HZ_SCRUB_MASK;
  if (mode_str)
    {
      if (strcmp (mode_str, "mask") == 0)
        mode = HZ_SCRUB_MASK;
      else if (strcmp (mode_str, "numbered") == 0)
        mode = HZ_SCRUB_NUMBERED;
      else if (strcmp (mode_str, "pseudonym") == 0)
        mode = HZ_SCRUB_PSEUDONYM;
      else
        {
          fprintf (stderr, "hanzo redact: unknown mode '%s'\n", mode_str);
          return 2;
        }
    }
  /* the text mode reads stdin before the output is opened: `-o FILE < FILE` keeps working */
  g_autofree char *text = NULL;
  if (!jsonl && !eval && !(text = argc > 1 ? g_strjoinv (" ", argv + 1) : read_stdin ()))
    return 1;
  HzRedactor *r = hz_redactor_new (&err);
  if (!r)
    {
      hz_cli_print_error ("redact", err->message);
      g_error_free (err);
      return 1;
    }
  /* the model outlives the redactor that uses it */
  g_autoptr (HzModel) model = NULL;
  HzRedactFlags flags = 0;
  if (model_path)
    {
      if (!(model = hz_model_load (model_path, NULL, &err))
          || !hz_redactor_set_engine_model (r, model, 0, model_tokens, &err))
        {
          hz_cli_print_load_error ("redact", model_path, err);
          g_error_free (err);
          hz_redactor_free (r);
          return 1;
        }
      flags = HZ_REDACT_MODEL;
    }
  Output out;
  if (!output_open (&out, output, &err))
    {
      hz_cli_print_error ("redact", err->message);
      g_error_free (err);
      hz_redactor_free (r);
      return 1;
    }
  int rc = 0;
  if (eval)
    rc = run_eval (out.fp, r, flags, eval, pred);
  else if (jsonl)
    {
      JsonlState st = { r, flags, out.fp };
      if (!hz_eval_for_each_record (jsonl, jsonl_record, &st, &err))
        {
          hz_cli_print_error ("redact", err->message);
          g_error_free (err);
          rc = 1;
        }
    }
  else
    {
      /* invalid UTF-8 is redacted as U+FFFD (offsets then refer to the repaired text, which
       * --json prints as "text"): say so rather than change the input silently */
      const char *bad_at = NULL;
      if (!g_utf8_validate (text, -1, &bad_at))
        fprintf (stderr, "hanzo redact: warning: the input is not valid UTF-8 (first bad byte "
                 "at offset %" G_GSIZE_FORMAT "); invalid bytes are replaced by U+FFFD\n",
                 (gsize) (bad_at - text));
      HzRedaction *res = hz_redactor_analyze (r, text, -1, HZ_REDACT_UTF8_REPLACE | flags, &err);
      g_clear_pointer (&text, g_free);   /* res->text is the (repaired) copy */
      HzScrubber *sc = hz_scrubber_new (mode, seed);
      g_autofree char *scrubbed = hz_scrubber_scrub (sc, res);
      if (json)
        write_redaction_json (out.fp, res, scrubbed);
      else
        fputs (scrubbed, out.fp);
      if (!json && argc > 1)
        fputc ('\n', out.fp);
      hz_scrubber_free (sc);
      hz_redaction_free (res);
    }
  if (!output_close (&out, rc == 0))
    rc = 1;
  hz_redactor_free (r);
  return rc;
}
