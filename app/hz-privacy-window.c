/* hz-privacy-window.c — HzPrivacyWindow (see hz-privacy-window.h). Its frame is
 * hz-privacy-window.ui; the rows of its lists come from the store. Nothing here calls the network: egress is used only for
 * its accounting (hz_dp_spent(), a pure computation over the store's ledger), for the
 * shapes of the active adapter (hz_delta_config_new_from_peft(): what the learner would
 * send) and for the federation endpoint and token, which go to the Secret Service
 * (egress/credentials.h, in a GTask thread: libsecret blocks on D-Bus) and never to the
 * database or GSettings. The release parameters shown are learner.ini's [federation]
 * clip_norm / noise_multiplier, else HZ_DP_RELEASE_DEFAULT_*. The chosen message's
 * redaction is shown again whenever the app's background redaction (hz-redact-worker.h)
 * stores new copies, so "Not redacted yet" turns into its spans without reopening. */
#include "hz-privacy-window.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>

#include <hanzo-store-learner.h>
#include <hanzo-store-privacy.h>
#include <hanzo-store-redactions.h>
#include "hanzo/egress.h"
#include "hz-learner.h"
#include "hz-redact-worker.h"

struct _HzPrivacyWindow {
  AdwPreferencesWindow parent_instance;

  HzChatSession *session;    /* the app's chats: "Delete Everything" goes through it */
  HzStore       *store;      /* the app's; may be NULL */
  HzLearner     *learner;
  GSettings     *settings;
  gulong         learner_notify_id;

  /* kept */
  GtkLabel      *conversations_value;
  GtkLabel      *messages_value;
  GtkLabel      *size_value;
  GtkWidget     *delete_button;
  guint          n_conversations, n_messages;
  guint64        bytes;

  /* redactions */
  AdwComboRow   *message_combo;
  GArray        *message_ids;     /* gint64, parallel to the combo's model */
  GtkTextView   *redaction_view;
  GtkTextBuffer *redaction_buffer;
  GtkLabel      *redaction_status;
  HzRedactWorker *redact_worker;  /* the app's background redaction, or NULL (no store) */
  gulong         redact_finished_id;

  /* learner */
  GtkListBox    *runs_list;
  GtkListBox    *adapters_list;
  GtkWidget     *rollback_button;
  guint          n_runs;

  /* federation */
  GtkSwitch     *federation_switch;
  GtkWidget     *federation_details;
  GtkLabel      *federation_text;
  GtkLabel      *epsilon_value;
  GtkLabel      *training_epsilon_value;
  GtkListBox    *egress_list;
  guint          n_egress;
  double         release_spent;   /* composed release epsilon in the budget year */
  /* what will be sent (visible while the switch is on) */
  AdwActionRow  *send_shapes_row;
  AdwActionRow  *send_bytes_row;
  AdwActionRow  *send_epsilon_row;
  AdwActionRow  *budget_left_row;
  /* endpoint and token: kept in the Secret Service (credentials.h) only */
  AdwEntryRow   *endpoint_row;
  AdwPasswordEntryRow *token_row;
  GtkWidget     *save_credentials_button;
  GtkWidget     *forget_credentials_button;
  GtkLabel      *credentials_status;
  GCancellable  *cancellable;     /* keyring calls in flight; cancelled at dispose */
};

G_DEFINE_FINAL_TYPE (HzPrivacyWindow, hz_privacy_window, ADW_TYPE_PREFERENCES_WINDOW)

/* ------------------------------------------------------------------ helpers */

static void
list_clear (GtkListBox *list)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (list))) != NULL)
    gtk_list_box_remove (list, child);
}

static GtkWidget *
info_row (const char *title, const char *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  /* plain text before the text is set (libadwaita parses it when set): URLs hold '&' */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  return row;
}

static char *
format_time (gint64 us)
{
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local (us / G_USEC_PER_SEC);
  return dt ? g_date_time_format (dt, "%x %X") : g_strdup ("?");
}

static char *
format_loss (double v)
{
  return isnan (v) ? g_strdup ("–") : g_strdup_printf ("%.3f", v);
}

static guint64
file_size (const char *path)
{
  GStatBuf st;
  return g_stat (path, &st) == 0 ? (guint64) st.st_size : 0;
}

/* ------------------------------------------------------------------ kept */

static void
reload_kept (HzPrivacyWindow *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) convs = NULL;
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);

  self->n_conversations = self->n_messages = 0;
  self->bytes = 0;
  g_array_set_size (self->message_ids, 0);
  if (self->store != NULL && (convs = hz_store_list_conversations (self->store, &error)) != NULL)
    {
      for (guint i = 0; i < convs->len; i++)
        {
          HzConversation *c = convs->pdata[i];
          g_autoptr(GPtrArray) msgs = hz_store_list_messages (self->store, c->id, NULL);
          self->n_conversations++;
          for (guint j = 0; msgs != NULL && j < msgs->len; j++)
            {
              HzMessage *m = msgs->pdata[j];
              g_autofree char *one_line = g_strdup (m->content);
              g_strdelimit (one_line, "\n\t", ' ');
              g_autofree char *label = NULL;
              self->n_messages++;
              if (g_utf8_strlen (one_line, -1) > 60)
                {
                  char *cut = g_utf8_offset_to_pointer (one_line, 60);
                  *cut = '\0';
                  label = g_strdup_printf ("%s · %s…", *c->title ? c->title : _("Untitled"), one_line);
                }
              else
                label = g_strdup_printf ("%s · %s", *c->title ? c->title : _("Untitled"), one_line);
              if (self->message_ids->len < 500)
                {
                  g_array_append_val (self->message_ids, m->id);
                  gtk_string_list_append (labels, label);
                }
            }
        }
      const char *path = hz_store_get_path (self->store);
      g_autofree char *wal = g_strconcat (path, "-wal", NULL);
      self->bytes = file_size (path) + file_size (wal);
    }
  else if (error != NULL)
    g_warning ("privacy page: %s", error->message);

  g_autofree char *nc = g_strdup_printf ("%u", self->n_conversations);
  g_autofree char *nm = g_strdup_printf ("%u", self->n_messages);
  g_autofree char *sz = g_format_size (self->bytes);
  gtk_label_set_text (self->conversations_value, nc);
  gtk_label_set_text (self->messages_value, nm);
  gtk_label_set_text (self->size_value, sz);
  gtk_widget_set_sensitive (self->delete_button, self->store != NULL && self->n_conversations > 0);

  adw_combo_row_set_model (self->message_combo, G_LIST_MODEL (labels));
  gtk_widget_set_sensitive (GTK_WIDGET (self->message_combo), self->message_ids->len > 0);
}

/* The session stops its reply, deletes the conversations waiting for Undo, then all of
 * them, and shows a new chat (the window follows its signals). */
static void
delete_everything (HzPrivacyWindow *self)
{
  g_autoptr(GError) error = NULL;

  if (self->store == NULL)
    return;
  if (!hz_chat_session_delete_everything (self->session, &error))
    adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self),
                                      adw_toast_new (error->message));
  else
    adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self),
                                      adw_toast_new (_("All conversations were deleted")));
  hz_privacy_window_reload (self);
}

static void
on_delete_response (AdwMessageDialog *dialog, const char *response, HzPrivacyWindow *self)
{
  if (g_strcmp0 (response, "delete") == 0)
    delete_everything (self);
}

void
hz_privacy_window_ask_delete_everything (HzPrivacyWindow *self)
{
  g_return_if_fail (HZ_IS_PRIVACY_WINDOW (self));
  GtkWidget *dialog = adw_message_dialog_new (
    GTK_WINDOW (self), _("Delete Everything?"),
    _("All conversations and their messages, redacted copies and ratings are deleted from "
      "this computer. This cannot be undone. The privacy ledger is kept, so the privacy "
      "budget already spent still counts."));
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "delete", _("_Delete Everything"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "delete",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect_object (dialog, "response", G_CALLBACK (on_delete_response), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
on_delete_clicked (GtkButton *button, HzPrivacyWindow *self)
{
  hz_privacy_window_ask_delete_everything (self);
}

/* ------------------------------------------------------------------ redactions */

static void
show_redaction (HzPrivacyWindow *self, gint64 message_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzMessage) msg = NULL;
  g_autoptr(HzMessageRedaction) red = NULL;
  GtkTextIter start, end;

  gtk_text_buffer_set_text (self->redaction_buffer, "", 0);
  if (self->store == NULL || message_id <= 0 ||
      (msg = hz_store_get_message (self->store, message_id, NULL)) == NULL)
    {
      gtk_label_set_text (self->redaction_status, _("No message chosen"));
      return;
    }
  gtk_text_buffer_set_text (self->redaction_buffer, msg->content, -1);
  red = hz_store_get_message_redaction (self->store, message_id, &error);
  if (red == NULL)
    {
      gtk_label_set_text (self->redaction_status, _("Not redacted yet"));
      return;
    }

  g_autoptr(JsonParser) parser = json_parser_new ();
  guint n = 0;
  if (json_parser_load_from_data (parser, red->spans_json, -1, NULL) &&
      JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)))
    {
      JsonArray *spans = json_node_get_array (json_parser_get_root (parser));
      int n_chars = gtk_text_buffer_get_char_count (self->redaction_buffer);
      for (guint i = 0; i < json_array_get_length (spans); i++)
        {
          JsonObject *o = json_array_get_object_element (spans, i);
          if (o == NULL || !json_object_has_member (o, "start") || !json_object_has_member (o, "end"))
            continue;
          int s = (int) json_object_get_int_member (o, "start");
          int e = (int) json_object_get_int_member (o, "end");
          if (s < 0 || e <= s || e > n_chars)
            continue;
          gtk_text_buffer_get_iter_at_offset (self->redaction_buffer, &start, s);
          gtk_text_buffer_get_iter_at_offset (self->redaction_buffer, &end, e);
          gtk_text_buffer_apply_tag_by_name (self->redaction_buffer, "redacted", &start, &end);
          n++;
        }
    }
  g_autofree char *status = NULL;
  if (red->source_updated_us < msg->updated_us)
    status = g_strdup_printf (ngettext ("%u span redacted (the message changed since)",
                                        "%u spans redacted (the message changed since)", n), n);
  else
    status = g_strdup_printf (ngettext ("%u span redacted", "%u spans redacted", n), n);
  gtk_label_set_text (self->redaction_status, n == 0 ? _("Redacted: nothing personal found") : status);
}

static void
on_message_selected (AdwComboRow *combo, GParamSpec *pspec, HzPrivacyWindow *self)
{
  guint i = adw_combo_row_get_selected (combo);
  show_redaction (self, i < self->message_ids->len ? g_array_index (self->message_ids, gint64, i) : 0);
}

gboolean
hz_privacy_window_show_message (HzPrivacyWindow *self, gint64 message_id)
{
  g_return_val_if_fail (HZ_IS_PRIVACY_WINDOW (self), FALSE);
  for (guint i = 0; i < self->message_ids->len; i++)
    if (g_array_index (self->message_ids, gint64, i) == message_id)
      {
        adw_combo_row_set_selected (self->message_combo, i);
        show_redaction (self, message_id);
        return TRUE;
      }
  return FALSE;
}

/* The app's background redaction stored new copies: show the chosen message's again (it
 * may have been "Not redacted yet", or changed since its copy). */
static void
on_redact_finished (HzRedactWorker *worker, guint n_redacted, const char *error_message,
                    HzPrivacyWindow *self)
{
  if (n_redacted > 0)
    on_message_selected (self->message_combo, NULL, self);
}

/* ------------------------------------------------------------------ learner */

static void
reload_learner (HzPrivacyWindow *self)
{
  g_autoptr(GPtrArray) runs = self->store ? hz_store_learner_run_list (self->store, 50, NULL) : NULL;
  g_autoptr(GPtrArray) adapters = self->store ? hz_store_adapter_list (self->store, NULL) : NULL;

  list_clear (self->runs_list);
  list_clear (self->adapters_list);
  self->n_runs = runs ? runs->len : 0;
  for (guint i = 0; runs != NULL && i < runs->len; i++)
    {
      HzLearnerRun *r = runs->pdata[i];
      const char *status;
      switch (r->status)
        {
        case HZ_LEARNER_RUN_RUNNING: status = _("running"); break;
        case HZ_LEARNER_RUN_PROMOTED: status = _("promoted"); break;
        case HZ_LEARNER_RUN_REJECTED: status = _("not promoted"); break;
        case HZ_LEARNER_RUN_INTERRUPTED: status = _("interrupted"); break;
        default: status = _("failed"); break;
        }
      g_autofree char *when = format_time (r->started_us);
      g_autofree char *kind = g_ascii_strup (r->kind, -1);
      g_autofree char *title = g_strdup_printf ("%s · %s · %s", when, kind, status);
      g_autofree char *l1 = format_loss (r->train_loss);
      g_autofree char *l2 = format_loss (r->heldout_before);
      g_autofree char *l3 = format_loss (r->heldout_after);
      g_autofree char *steps = g_strdup_printf ("%" G_GINT64_FORMAT, r->steps);
      g_autofree char *sub = g_strdup_printf (_("%s steps · training loss %s · held-out loss %s → %s"),
                                              steps, l1, l2, l3);
      gtk_list_box_append (self->runs_list, info_row (title, sub));
    }
  if (self->n_runs == 0)
    gtk_list_box_append (self->runs_list, info_row (_("No learning runs yet"), NULL));

  for (guint i = 0; adapters != NULL && i < adapters->len; i++)
    {
      HzLearnerAdapter *a = adapters->pdata[i];
      g_autofree char *name = g_path_get_basename (a->path);
      g_autofree char *loss = format_loss (a->heldout_loss);
      g_autofree char *when = format_time (a->created_us);
      g_autofree char *sub = g_strdup_printf (_("held-out loss %s · %s"), loss, when);
      GtkWidget *row = info_row (name, sub);
      if (a->active)
        {
          GtkWidget *tag = gtk_label_new (_("In use"));
          gtk_widget_add_css_class (tag, "accent");
          adw_action_row_add_suffix (ADW_ACTION_ROW (row), tag);
        }
      gtk_list_box_append (self->adapters_list, row);
    }
  if (adapters == NULL || adapters->len == 0)
    gtk_list_box_append (self->adapters_list, info_row (_("No adapters yet"), NULL));
}

static void
sync_rollback (HzPrivacyWindow *self)
{
  gtk_widget_set_visible (self->rollback_button,
                          self->learner != NULL && hz_learner_is_present (self->learner));
}

static void
on_learner_notify (HzLearner *learner, GParamSpec *pspec, HzPrivacyWindow *self)
{
  sync_rollback (self);
}

static void
rollback_done (const char *path, const GError *error, gpointer data)
{
  g_autoptr(HzPrivacyWindow) self = data;
  g_autofree char *text = NULL;

  if (path == NULL)
    text = g_strdup_printf (_("Could not roll back: %s"), error ? error->message : "?");
  else if (*path == '\0')
    text = g_strdup (_("Rolled back: the base model is used without an adapter"));
  else
    {
      g_autofree char *name = g_path_get_basename (path);
      text = g_strdup_printf (_("Rolled back to %s"), name);
    }
  adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self), adw_toast_new (text));
  reload_learner (self);
}

static void
on_rollback_clicked (GtkButton *button, HzPrivacyWindow *self)
{
  hz_learner_rollback (self->learner, rollback_done, g_object_ref (self));
}

/* What an egress log row was for, then its URL (g_free): a federation round (with the
 * release's ε for an upload), or what the model download channel asked the Hub for. */
static char *
egress_row_subtitle (const HzEgressLogEntry *e)
{
  switch (e->purpose)
    {
    case HZ_EGRESS_PURPOSE_MODEL_SEARCH:
      /* TRANSLATORS: %s is the text searched for, then the URL */
      return g_strdup_printf (_("Model search “%s” · %s"), e->subject, e->endpoint);
    case HZ_EGRESS_PURPOSE_MODEL_FILES:
      /* TRANSLATORS: %s is a Hugging Face repository "owner/name", then the URL */
      return g_strdup_printf (_("File list of %s · %s"), e->subject, e->endpoint);
    case HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD:
      /* TRANSLATORS: %s is "owner/name/file.gguf", then the URL */
      return g_strdup_printf (_("Model file %s · %s"), e->subject, e->endpoint);
    case HZ_EGRESS_PURPOSE_FEDERATION:
    default:
      break;
    }
  g_autofree char *round = g_strdup_printf ("%" G_GINT64_FORMAT, e->round_id);
  if (e->direction == HZ_EGRESS_UPLOAD)
    return g_strdup_printf (_("%s · round %s · ε %.2f"), e->endpoint, round, e->epsilon);
  return e->round_id > 0 ? g_strdup_printf (_("%s · round %s"), e->endpoint, round)
                         : g_strdup (e->endpoint);
}

/* ------------------------------------------------------------------ federation */

static void
reload_federation (HzPrivacyWindow *self)
{
  g_autoptr(GError) error = NULL;
  HzDpBudget budget = HZ_DP_BUDGET_DEFAULT;
  HzDpSpent spent = { 0 }, trained = { 0 };
  g_autofree char *text = NULL, *train_text = NULL;

  self->release_spent = 0;
  if (self->store != NULL && hz_dp_spent (self->store, &budget, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE,
                                          &spent, &error))
    {
      self->release_spent = spent.epsilon;
      text = g_strdup_printf (ngettext ("ε = %.2f of %.0f (%u release)", "ε = %.2f of %.0f (%u releases)",
                                        spent.n_entries),
                              spent.epsilon, budget.epsilon, spent.n_entries);
    }
  else
    text = g_strdup (_("unknown"));
  g_clear_error (&error);
  if (self->store != NULL && hz_dp_spent (self->store, &budget, HZ_PRIVACY_MECH_DP_SGD,
                                          &trained, &error) && trained.n_entries > 0)
    train_text = g_strdup_printf (ngettext ("ε = %.2f (%u night)", "ε = %.2f (%u nights)",
                                            trained.n_entries),
                                  trained.epsilon, trained.n_entries);
  else
    train_text = g_strdup (_("none"));
  gtk_label_set_text (self->epsilon_value, text);
  gtk_label_set_text (self->training_epsilon_value, train_text);

  list_clear (self->egress_list);
  g_autoptr(GPtrArray) log = self->store ? hz_store_list_egress_log (self->store, 0, 0, NULL) : NULL;
  self->n_egress = log ? log->len : 0;
  /* newest first */
  for (guint k = 0; log != NULL && k < log->len; k++)
    {
      HzEgressLogEntry *e = log->pdata[log->len - 1 - k];
      g_autofree char *when = format_time (e->time_us);
      g_autofree char *size = g_format_size (e->bytes);
      const char *dir = e->direction == HZ_EGRESS_UPLOAD ? _("Sent") : _("Received");
      g_autofree char *title = g_strdup_printf ("%s · %s · %s · %s", when, dir, size,
                                                hz_egress_status_to_string (e->status));
      g_autofree char *sub = egress_row_subtitle (e);
      gtk_list_box_append (self->egress_list, info_row (title, sub));
    }
  if (self->n_egress == 0)
    gtk_list_box_append (self->egress_list, info_row (_("Nothing has been sent"), NULL));
}

/* The release parameters the learner daemon will use: learner.ini [federation]
 * (learner/daemon-app.c), else egress' defaults. */
static void
release_params (double *clip_norm, double *noise_multiplier)
{
  *clip_norm = HZ_DP_RELEASE_DEFAULT_CLIP_NORM;
  *noise_multiplier = HZ_DP_RELEASE_DEFAULT_NOISE_MULTIPLIER;
  g_autofree char *path = g_build_filename (g_get_user_config_dir (), "hanzo", "learner.ini", NULL);
  g_autoptr(GKeyFile) k = g_key_file_new ();
  if (!g_key_file_load_from_file (k, path, G_KEY_FILE_NONE, NULL))
    return;
  g_autoptr(GError) e1 = NULL, e2 = NULL;
  const double c = g_key_file_get_double (k, "federation", "clip_norm", &e1);
  const double z = g_key_file_get_double (k, "federation", "noise_multiplier", &e2);
  if (e1 == NULL && c > 0)
    *clip_norm = c;
  if (e2 == NULL && z > 0)
    *noise_multiplier = z;
}

/* "70 tensors, rank 8: 35 × [8, 64], 35 × [64, 8]" for the active adapter's config. */
static char *
describe_shapes (HzDeltaConfig *cfg)
{
  g_autoptr(GHashTable) counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  for (guint i = 0; i < hz_delta_config_n_tensors (cfg); i++)
    {
      const int64_t *sh = hz_delta_config_tensor_shape (cfg, i);
      g_autoptr(GString) key = g_string_new ("[");
      for (guint d = 0; d < hz_delta_config_tensor_n_dims (cfg, i); d++)
        g_string_append_printf (key, "%s%" G_GINT64_FORMAT, d ? ", " : "", sh[d]);
      g_string_append_c (key, ']');
      gpointer old;
      if (g_hash_table_lookup_extended (counts, key->str, NULL, &old))
        g_hash_table_insert (counts, g_strdup (key->str), GUINT_TO_POINTER (GPOINTER_TO_UINT (old) + 1));
      else
        {
          char *k = g_strdup (key->str);
          g_hash_table_insert (counts, k, GUINT_TO_POINTER (1));
          g_ptr_array_add (order, k);
        }
    }
  g_autoptr(GString) out = g_string_new (NULL);
  g_string_printf (out, ngettext ("%u tensor, rank %u: ", "%u tensors, rank %u: ",
                                  hz_delta_config_n_tensors (cfg)),
                   hz_delta_config_n_tensors (cfg), hz_delta_config_rank (cfg));
  for (guint i = 0; i < order->len; i++)
    g_string_append_printf (out, "%s%u × %s", i ? ", " : "",
                            GPOINTER_TO_UINT (g_hash_table_lookup (counts, order->pdata[i])),
                            (const char *) order->pdata[i]);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
reload_what_is_sent (HzPrivacyWindow *self)
{
  HzDpBudget budget = HZ_DP_BUDGET_DEFAULT;
  double clip_norm, z;
  release_params (&clip_norm, &z);
  g_autoptr(HzLearnerAdapter) active = self->store ? hz_store_adapter_get_active (self->store, NULL) : NULL;
  g_autoptr(HzDeltaConfig) cfg = active ? hz_delta_config_new_from_peft (active->path, NULL) : NULL;
  if (cfg != NULL)
    {
      g_autofree char *shapes = describe_shapes (cfg);
      /* bf16: 2 bytes a value, plus a header of a few kB */
      g_autofree char *size = g_format_size (2 * (guint64) hz_delta_config_n_elements (cfg));
      g_autofree char *bytes = g_strdup_printf (_("About %s per upload (%zu values in bfloat16)"),
                                                size, hz_delta_config_n_elements (cfg));
      adw_action_row_set_subtitle (self->send_shapes_row, shapes);
      adw_action_row_set_subtitle (self->send_bytes_row, bytes);
    }
  else
    {
      adw_action_row_set_subtitle (self->send_shapes_row,
                                   _("No adapter yet: the first upload follows a night of learning"));
      adw_action_row_set_subtitle (self->send_bytes_row, "–");
    }
  const double eps = hz_dp_release_epsilon (z, budget.delta);
  g_autofree char *eps_text = g_strdup_printf (_("ε = %.2f at δ = %g (clipped to norm %g, noise multiplier %g)"),
                                               eps, budget.delta, clip_norm, z);
  adw_action_row_set_subtitle (self->send_epsilon_row, eps_text);
  g_autofree char *left = g_strdup_printf (_("ε = %.2f of %.0f left this year"),
                                           MAX (0.0, budget.epsilon - self->release_spent),
                                           budget.epsilon);
  adw_action_row_set_subtitle (self->budget_left_row, left);
}

static void
sync_federation (HzPrivacyWindow *self)
{
  gboolean on = gtk_switch_get_active (self->federation_switch);
  gtk_widget_set_visible (self->federation_details, on);
  if (on)
    reload_what_is_sent (self);
}

/* --- credentials: libsecret calls block on D-Bus, so they run in a GTask thread */

typedef enum { CRED_LOOKUP, CRED_STORE, CRED_CLEAR } CredOp;

typedef struct {
  CredOp op;
  char  *endpoint;
  char  *token;
} CredTask;

static void
cred_task_free (gpointer data)
{
  CredTask *t = data;
  g_free (t->endpoint);
  hz_credentials_free_token (t->token);
  g_free (t);
}

static void
cred_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CredTask *t = data;
  GError *error = NULL;
  gboolean ok = FALSE;
  switch (t->op)
    {
    case CRED_LOOKUP:
      g_clear_pointer (&t->endpoint, g_free);
      ok = hz_credentials_lookup (&t->endpoint, &t->token, cancellable, &error);
      break;
    case CRED_STORE:
      ok = hz_credentials_store (t->endpoint, t->token, cancellable, &error);
      break;
    case CRED_CLEAR:
      ok = hz_credentials_clear (cancellable, &error);
      break;
    }
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
set_credentials_busy (HzPrivacyWindow *self, gboolean busy)
{
  gtk_widget_set_sensitive (self->save_credentials_button, !busy);
  gtk_widget_set_sensitive (self->forget_credentials_button, !busy);
}

static void
cred_done (GObject *source, GAsyncResult *result, gpointer data)
{
  HzPrivacyWindow *self = HZ_PRIVACY_WINDOW (source);
  CredTask *t = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  const gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;   /* the window is being closed */
  set_credentials_busy (self, FALSE);
  g_autofree char *text = NULL;
  if (t->op == CRED_LOOKUP)
    {
      if (ok)
        {
          gtk_editable_set_text (GTK_EDITABLE (self->endpoint_row), t->endpoint);
          text = g_strdup (_("A token is stored in your keyring"));
        }
      else if (g_error_matches (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND))
        text = g_strdup (_("No server set up: nothing can be sent"));
      else
        text = g_strdup_printf (_("Keyring not available: %s"), error->message);
    }
  else if (!ok)
    text = g_strdup_printf (_("Could not update the keyring: %s"), error->message);
  else if (t->op == CRED_STORE)
    {
      gtk_editable_set_text (GTK_EDITABLE (self->token_row), "");
      text = g_strdup (_("Saved in your keyring"));
    }
  else
    {
      gtk_editable_set_text (GTK_EDITABLE (self->endpoint_row), "");
      gtk_editable_set_text (GTK_EDITABLE (self->token_row), "");
      text = g_strdup (_("Server and token removed from your keyring"));
    }
  gtk_label_set_text (self->credentials_status, text);
}

static void
run_cred_task (HzPrivacyWindow *self, CredOp op, const char *endpoint, const char *token)
{
  CredTask *t = g_new0 (CredTask, 1);
  *t = (CredTask) { op, g_strdup (endpoint), g_strdup (token) };
  g_autoptr(GTask) task = g_task_new (self, self->cancellable, cred_done, NULL);
  g_task_set_task_data (task, t, cred_task_free);
  set_credentials_busy (self, TRUE);
  g_task_run_in_thread (task, cred_thread);
}

static void
on_save_credentials (GtkButton *button, HzPrivacyWindow *self)
{
  const char *endpoint = gtk_editable_get_text (GTK_EDITABLE (self->endpoint_row));
  const char *token = gtk_editable_get_text (GTK_EDITABLE (self->token_row));
  if (*endpoint == '\0' || *token == '\0')
    {
      gtk_label_set_text (self->credentials_status, _("Enter both the server address and the token"));
      return;
    }
  run_cred_task (self, CRED_STORE, endpoint, token);
}

static void
on_forget_credentials (GtkButton *button, HzPrivacyWindow *self)
{
  run_cred_task (self, CRED_CLEAR, NULL, NULL);
}

static void
on_federation_active (GtkSwitch *sw, GParamSpec *pspec, HzPrivacyWindow *self)
{
  sync_federation (self);
}

/* ------------------------------------------------------------------ public API */

GtkWidget *
hz_privacy_window_new (HzAppContext *ctx, HzChatSession *session, GtkWindow *parent)
{
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (session), NULL);
  HzPrivacyWindow *self = g_object_new (HZ_TYPE_PRIVACY_WINDOW,
                                        "transient-for", parent,
                                        "modal", parent != NULL,
                                        "title", _("Privacy"),
                                        "default-width", 640,
                                        "default-height", 720,
                                        "search-enabled", FALSE,
                                        NULL);
  self->session = g_object_ref (session);
  self->store = hz_app_context_get_store (ctx);
  self->settings = g_object_ref (hz_app_context_get_settings (ctx));
  self->learner = hz_app_context_get_learner (ctx);
  if (self->learner != NULL)
    {
      g_object_ref (self->learner);
      self->learner_notify_id = g_signal_connect (self->learner, "notify::present",
                                                  G_CALLBACK (on_learner_notify), self);
    }
  g_settings_bind (self->settings, "federation-enabled", self->federation_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  /* (created at start-up by the main window when there is a store) */
  self->redact_worker = hz_redact_worker_get_for_application (hz_app_context_get_application (ctx));
  if (self->redact_worker != NULL)
    {
      g_object_ref (self->redact_worker);
      self->redact_finished_id = g_signal_connect (self->redact_worker, "finished",
                                                   G_CALLBACK (on_redact_finished), self);
    }
  sync_rollback (self);
  hz_privacy_window_reload (self);
  run_cred_task (self, CRED_LOOKUP, NULL, NULL);
  return GTK_WIDGET (self);
}

void
hz_privacy_window_reload (HzPrivacyWindow *self)
{
  g_return_if_fail (HZ_IS_PRIVACY_WINDOW (self));
  reload_kept (self);
  on_message_selected (self->message_combo, NULL, self);
  reload_learner (self);
  reload_federation (self);
  sync_federation (self);
}

void
hz_privacy_window_get_counts (HzPrivacyWindow *self, guint *n_conversations, guint *n_messages,
                              guint64 *bytes)
{
  g_return_if_fail (HZ_IS_PRIVACY_WINDOW (self));
  if (n_conversations) *n_conversations = self->n_conversations;
  if (n_messages) *n_messages = self->n_messages;
  if (bytes) *bytes = self->bytes;
}

GtkTextBuffer *
hz_privacy_window_get_redaction_buffer (HzPrivacyWindow *self)
{
  return self->redaction_buffer;
}

const char *
hz_privacy_window_get_redaction_status (HzPrivacyWindow *self)
{
  return gtk_label_get_text (self->redaction_status);
}

GtkSwitch *
hz_privacy_window_get_federation_switch (HzPrivacyWindow *self)
{
  return self->federation_switch;
}

gboolean
hz_privacy_window_get_federation_details_visible (HzPrivacyWindow *self)
{
  return gtk_widget_get_visible (self->federation_details);
}

guint
hz_privacy_window_get_n_learner_runs (HzPrivacyWindow *self)
{
  return self->n_runs;
}

guint
hz_privacy_window_get_n_egress_rows (HzPrivacyWindow *self)
{
  return self->n_egress;
}

const char *
hz_privacy_window_get_epsilon_text (HzPrivacyWindow *self)
{
  return gtk_label_get_text (self->epsilon_value);
}

const char *
hz_privacy_window_get_release_epsilon_text (HzPrivacyWindow *self)
{
  g_return_val_if_fail (HZ_IS_PRIVACY_WINDOW (self), NULL);
  return adw_action_row_get_subtitle (self->send_epsilon_row);
}

const char *
hz_privacy_window_get_credentials_status (HzPrivacyWindow *self)
{
  g_return_val_if_fail (HZ_IS_PRIVACY_WINDOW (self), NULL);
  return gtk_label_get_text (self->credentials_status);
}

gboolean
hz_privacy_window_get_rollback_visible (HzPrivacyWindow *self)
{
  return gtk_widget_get_visible (self->rollback_button);
}

/* ------------------------------------------------------------------ GObject */

static void
hz_privacy_window_dispose (GObject *object)
{
  HzPrivacyWindow *self = HZ_PRIVACY_WINDOW (object);

  if (self->learner != NULL)
    g_clear_signal_handler (&self->learner_notify_id, self->learner);
  g_clear_object (&self->learner);
  if (self->redact_worker != NULL)
    g_clear_signal_handler (&self->redact_finished_id, self->redact_worker);
  g_clear_object (&self->redact_worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->session);
  g_clear_object (&self->redaction_buffer);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_PRIVACY_WINDOW);
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (hz_privacy_window_parent_class)->dispose (object);
}

static void
hz_privacy_window_finalize (GObject *object)
{
  HzPrivacyWindow *self = HZ_PRIVACY_WINDOW (object);

  g_array_unref (self->message_ids);
  G_OBJECT_CLASS (hz_privacy_window_parent_class)->finalize (object);
}

static void
hz_privacy_window_class_init (HzPrivacyWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_privacy_window_dispose;
  object_class->finalize = hz_privacy_window_finalize;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/ai/hanzo/Desktop/hz-privacy-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, HzPrivacyWindow, name)
  CHILD (conversations_value);
  CHILD (messages_value);
  CHILD (size_value);
  CHILD (delete_button);
  CHILD (message_combo);
  CHILD (redaction_view);
  CHILD (redaction_status);
  CHILD (runs_list);
  CHILD (adapters_list);
  CHILD (rollback_button);
  CHILD (federation_switch);
  CHILD (federation_details);
  CHILD (federation_text);
  CHILD (send_shapes_row);
  CHILD (send_bytes_row);
  CHILD (send_epsilon_row);
  CHILD (budget_left_row);
  CHILD (endpoint_row);
  CHILD (token_row);
  CHILD (credentials_status);
  CHILD (forget_credentials_button);
  CHILD (save_credentials_button);
  CHILD (epsilon_value);
  CHILD (training_epsilon_value);
  CHILD (egress_list);
#undef CHILD
  gtk_widget_class_bind_template_callback (widget_class, on_delete_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_message_selected);
  gtk_widget_class_bind_template_callback (widget_class, on_rollback_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_federation_active);
  gtk_widget_class_bind_template_callback (widget_class, on_forget_credentials);
  gtk_widget_class_bind_template_callback (widget_class, on_save_credentials);
}

static void
hz_privacy_window_init (HzPrivacyWindow *self)
{
  HzDpBudget budget = HZ_DP_BUDGET_DEFAULT;

  self->message_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->cancellable = g_cancellable_new ();
  gtk_widget_init_template (GTK_WIDGET (self));

  self->redaction_buffer = gtk_text_buffer_new (NULL);
  gtk_text_buffer_create_tag (self->redaction_buffer, "redacted",
                              "background", "#f6d32d", "foreground", "#000000",
                              "weight", PANGO_WEIGHT_BOLD, NULL);
  gtk_text_view_set_buffer (self->redaction_view, self->redaction_buffer);
  g_autofree char *details = g_strdup_printf (
    _("What will be sent: only the adapter update learned on this computer (LoRA weights), "
      "clipped and with random noise added (differential privacy), never your messages. "
      "Every upload is written to the log below. Privacy budget: at most ε = %.0f at "
      "δ = %g per year; uploads stop when it is spent."),
    budget.epsilon, budget.delta);
  gtk_label_set_text (self->federation_text, details);
}
