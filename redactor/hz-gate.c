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

gboolean
hz_redact_gate_message (const HzRedactor *redactor, HzStore *store, gint64 message_id,
                        GError **error)
{
  g_return_val_if_fail (redactor != NULL && store != NULL, FALSE);
  g_autoptr (HzMessage) msg = hz_store_get_message (store, message_id, error);
  if (!msg)
    return FALSE;
  g_autoptr (GPtrArray) vault = hz_store_vault_list (store, msg->conversation_id, error);
  if (!vault)
    return FALSE;
  HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
  g_autoptr (GHashTable) known = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < vault->len; i++)
    {
      HzVaultEntry *e = vault->pdata[i];
      hz_scrubber_add_mapping (sc, hz_entity_type_from_name (e->entity_type), e->original, e->placeholder);
      g_hash_table_add (known, e->placeholder);
    }
  /* stored content is valid UTF-8 (the store checks), so analysis cannot fail */
  HzRedaction *res = hz_redactor_analyze (redactor, msg->content, -1, HZ_REDACT_UTF8_REPLACE, error);
  if (!res)
    {
      hz_scrubber_free (sc);
      return FALSE;
    }
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
  g_autofree char *redacted = hz_scrubber_scrub (sc, res);
  g_autofree char *spans = hz_redaction_spans_to_json (res);
  HzMessageRedaction copy = {
    .message_id = message_id,
    .redacted = redacted,
    .spans_json = spans,
    .n_spans = res->n_spans,
    .redactor_version = HZ_REDACT_GATE_VERSION,
    .source_updated_us = msg->updated_us,
  };
  /* one transaction: the vault entries and the copy that uses them */
  gboolean ok = hz_store_begin (store, error);
  if (ok)
    {
      NewEntries ne = { store, msg->conversation_id, known, error, TRUE };
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

gint
hz_redact_gate_run (const HzRedactor *redactor, HzStore *store, guint max_messages,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr (GArray) ids = hz_store_list_messages_to_redact (store, HZ_REDACT_GATE_VERSION,
                                                             max_messages, error);
  if (!ids)
    return -1;
  gint done = 0;
  for (guint i = 0; i < ids->len; i++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return -1;
      if (!hz_redact_gate_message (redactor, store, g_array_index (ids, gint64, i), error))
        return -1;
      done++;
    }
  return done;
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
