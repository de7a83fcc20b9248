/* hz-gate.c — the redaction gate (hanzo/redact-gate.h): redact messages from the store
 * into placeholder copies plus a per-conversation vault. */
#include "hanzo/redact-gate.h"

#include <gio/gio.h>
#include <string.h>

char *
hz_redaction_spans_to_json (const HzRedaction *redaction)
{
  GString *j = g_string_new ("[");
  for (guint i = 0; i < redaction->n_spans; i++)
    {
      const HzSpan *s = &redaction->spans[i];
      char score[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (score, sizeof score, "%.3f", s->score);
      g_string_append_printf (j, "%s{\"start\":%" G_GSIZE_FORMAT ",\"end\":%" G_GSIZE_FORMAT
                              ",\"start_byte\":%" G_GSIZE_FORMAT ",\"end_byte\":%" G_GSIZE_FORMAT
                              ",\"label\":\"%s\",\"score\":%s,\"recognizer\":\"%s\"}",
                              i ? "," : "", s->start_cp, s->end_cp, s->start_byte, s->end_byte,
                              hz_entity_type_name (s->type), score, s->recognizer ? s->recognizer : "");
    }
  g_string_append_c (j, ']');
  return g_string_free (j, FALSE);
}

typedef struct {
  HzStore *store;
  gint64 conversation_id;
  GHashTable *known;   /* placeholders already in the vault */
  GError **error;
  gboolean ok;
} NewEntries;

static void
save_new (HzEntityType type, const char *original, const char *replacement, gpointer user)
{
  NewEntries *ne = user;
  if (!ne->ok || g_hash_table_contains (ne->known, replacement))
    return;
  ne->ok = hz_store_vault_add (ne->store, ne->conversation_id, replacement,
                               hz_entity_type_name (type), original, ne->error);
}

/* How often a message is redone when another connection added vault entries to its
 * conversation between our analysis and our write (each attempt re-reads the vault). */
#define GATE_ATTEMPTS 4

/* Analyse `msg` against the conversation's `vault` and return the scrubbed copy; `sc`
 * receives the vault's mappings plus the new ones, `known` the vault's placeholders. */
static HzRedaction *
analyse (const HzRedactor *redactor, const HzMessage *msg, GPtrArray *vault, HzRedactFlags flags,
         HzScrubber *sc, GHashTable *known, GError **error)
{
  for (guint i = 0; i < vault->len; i++)
    {
      HzVaultEntry *e = vault->pdata[i];
      hz_scrubber_add_mapping (sc, hz_entity_type_from_name (e->entity_type), e->original, e->placeholder);
      g_hash_table_add (known, e->placeholder);
    }
  /* stored content is valid UTF-8 (the store checks), so analysis cannot fail */
  HzRedaction *res = hz_redactor_analyze (redactor, msg->content, -1,
                                          (flags & HZ_REDACT_MODEL) | HZ_REDACT_UTF8_REPLACE, error);
  if (!res)
    return NULL;
  /* what the conversation already revealed is found again in any case, and a person's
   * surname on its own ("Okafor" after "Dr. Ines Okafor") */
  for (guint i = 0; i < vault->len; i++)
    {
      HzVaultEntry *e = vault->pdata[i];
      HzEntityType type = hz_entity_type_from_name (e->entity_type);
      /* short surfaces ("NO", "Al") would match ordinary words in any case */
      if (strlen (e->original) >= 4)
        hz_redaction_mark_known (res, e->original, type);
      const char *last = strrchr (e->original, ' ');
      if (type == HZ_ENTITY_PERSON && last && strlen (last + 1) >= 4)
        hz_redaction_mark_known (res, last + 1, type);
    }
  /* and the same within this message for the names it introduces */
  g_autoptr (GPtrArray) surnames = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < res->n_spans; i++)
    if (res->spans[i].type == HZ_ENTITY_PERSON)
      {
        const char *s = res->text + res->spans[i].start_byte;
        gsize n = res->spans[i].end_byte - res->spans[i].start_byte;
        g_autofree char *name = g_strndup (s, n);
        const char *last = strrchr (name, ' ');
        if (last && strlen (last + 1) >= 4)
          g_ptr_array_add (surnames, g_strdup (last + 1));
      }
  for (guint i = 0; i < surnames->len; i++)   /* marking re-sorts res->spans */
    hz_redaction_mark_known (res, surnames->pdata[i], HZ_ENTITY_PERSON);
  return res;
}

/* One attempt: analyse against the vault as read now, then write in one transaction
 * unless the vault grew meanwhile (*raced = TRUE, nothing written). */
static gboolean
gate_attempt (const HzRedactor *redactor, HzStore *store, const HzMessage *msg,
              HzRedactFlags flags, gboolean last_attempt, gboolean *raced, GError **error)
{
  *raced = FALSE;
  g_autoptr (GPtrArray) vault = hz_store_vault_list (store, msg->conversation_id, error);
  if (!vault)
    return FALSE;
  HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
  g_autoptr (GHashTable) known = g_hash_table_new (g_str_hash, g_str_equal);
  HzRedaction *res = analyse (redactor, msg, vault, flags, sc, known, error);
  if (!res)
    {
      hz_scrubber_free (sc);
      return FALSE;
    }
  g_autofree char *redacted = hz_scrubber_scrub (sc, res);
  g_autofree char *spans = hz_redaction_spans_to_json (res);
  HzMessageRedaction copy = {
    .message_id = msg->id,
    .redacted = redacted,
    .spans_json = spans,
    .n_spans = res->n_spans,
    .redactor_version = hz_redact_gate_copy_version ((flags & HZ_REDACT_MODEL) != 0),
    .source_updated_us = msg->updated_us,
  };
  /* one transaction: the vault entries and the copy that uses them */
  gboolean ok = hz_store_begin (store, error);
  if (ok)
    {
      /* entries are only ever added (and deleted with the conversation): a longer vault
       * means another connection numbered new names after we read it */
      g_autoptr (GPtrArray) now = hz_store_vault_list (store, msg->conversation_id, error);
      ok = now != NULL;
      if (ok && now->len != vault->len && !last_attempt)
        {
          hz_store_rollback (store);
          *raced = TRUE;
          hz_redaction_free (res);
          hz_scrubber_free (sc);
          return TRUE;
        }
      NewEntries ne = { store, msg->conversation_id, known, error, ok };
      if (ok)
        hz_scrubber_foreach_mapping (sc, save_new, &ne);
      ok = ne.ok && hz_store_put_message_redaction (store, &copy, error);
      if (ok)
        ok = hz_store_commit (store, error);
      else
        hz_store_rollback (store);
    }
  hz_redaction_free (res);
  hz_scrubber_free (sc);
  return ok;
}

gboolean
hz_redact_gate_message_full (const HzRedactor *redactor, HzStore *store, gint64 message_id,
                             HzRedactFlags flags, GError **error)
{
  g_return_val_if_fail (redactor != NULL && store != NULL, FALSE);
  g_autoptr (HzMessage) msg = hz_store_get_message (store, message_id, error);
  if (!msg)
    return FALSE;
  for (guint attempt = 1;; attempt++)
    {
      gboolean raced;
      if (!gate_attempt (redactor, store, msg, flags, attempt == GATE_ATTEMPTS, &raced, error))
        return FALSE;
      if (!raced)
        return TRUE;
    }
}

gboolean
hz_redact_gate_message (const HzRedactor *redactor, HzStore *store, gint64 message_id,
                        GError **error)
{
  return hz_redact_gate_message_full (redactor, store, message_id, 0, error);
}

gint
hz_redact_gate_run_full (const HzRedactor *redactor, HzStore *store,
                         const HzRedactGateOptions *options, GError **error)
{
  g_return_val_if_fail (redactor != NULL && store != NULL, -1);
  static const HzRedactGateOptions defaults = { 0 };
  const HzRedactGateOptions *o = options ? options : &defaults;
  const gboolean model = (o->flags & HZ_REDACT_MODEL) != 0;
  /* the ids only (8 bytes each): thousands of messages are listed at once, and what this
   * run does not reach stays pending for the next */
  g_autoptr (GArray) ids = hz_store_list_messages_to_redact (store,
                                                             hz_redact_gate_copy_version (model),
                                                             o->max_messages ? o->max_messages : G_MAXUINT,
                                                             error);
  if (!ids)
    return -1;
  if (o->progress && !o->progress (0, ids->len, o->user_data))
    return 0;
  gint done = 0;
  for (guint i = 0; i < ids->len; i++)
    {
      if (g_cancellable_set_error_if_cancelled (o->cancellable, error))
        return -1;
      const gint64 id = g_array_index (ids, gint64, i);
      g_autoptr (GError) local = NULL;
      if (!hz_redact_gate_message_full (redactor, store, id, o->flags, &local))
        {
          /* deleted by the user since the listing: nothing left to redact */
          if (!g_error_matches (local, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return -1;
            }
        }
      else
        done++;
      if (o->progress && !o->progress (i + 1, ids->len, o->user_data))
        break;
    }
  return done;
}

gint
hz_redact_gate_run (const HzRedactor *redactor, HzStore *store, guint max_messages,
                    GCancellable *cancellable, GError **error)
{
  if (max_messages == 0)
    return 0;
  const HzRedactGateOptions o = { .max_messages = max_messages, .cancellable = cancellable };
  return hz_redact_gate_run_full (redactor, store, &o, error);
}

char *
hz_redact_gate_restore (HzStore *store, gint64 conversation_id, const char *redacted,
                        GError **error)
{
  g_return_val_if_fail (store != NULL && redacted != NULL, NULL);
  g_autoptr (GPtrArray) vault = hz_store_vault_list (store, conversation_id, error);
  if (!vault)
    return NULL;
  g_autoptr (GHashTable) map = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < vault->len; i++)
    {
      HzVaultEntry *e = vault->pdata[i];
      g_hash_table_insert (map, e->placeholder, e->original);
    }
  /* placeholders are "[TYPE_N]": find each bracketed token and look it up */
  GString *out = g_string_sized_new (strlen (redacted) + 16);
  const char *p = redacted;
  while (*p)
    {
      const char *open = strchr (p, '[');
      if (!open)
        break;
      const char *close = strchr (open, ']');
      if (!close)
        break;
      g_string_append_len (out, p, open - p);
      g_autofree char *ph = g_strndup (open, close + 1 - open);
      const char *orig = g_hash_table_lookup (map, ph);
      if (orig)
        {
          g_string_append (out, orig);
          p = close + 1;
        }
      else
        {
          g_string_append_c (out, '[');
          p = open + 1;
        }
    }
  g_string_append (out, p);
  return g_string_free (out, FALSE);
}
