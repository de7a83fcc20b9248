/* hz-privacy-window.h — HzPrivacyWindow: what Hanzo keeps and what it has shared (issue 9,
 * "Privacy page"), all read from the store; nothing on this page sends anything.
 *
 *  - Kept on this computer: conversations, messages, database size on disk, and "Delete
 *    Everything" (confirmation dialog; deletes every conversation through the store, which
 *    removes their messages, redacted copies, vault entries and feedback with them).
 *  - Redactions: pick a message; its redacted spans (message_redactions.spans_json) are
 *    highlighted in its text, or "Not redacted yet".
 *  - On-device learning: learner runs (loss, promoted or not) and adapters (held-out loss,
 *    active); "Roll Back" calls the learner daemon's Rollback over D-Bus and is shown only
 *    while the daemon is on the bus.
 *  - Federated learning: the switch (GSettings federation-enabled, off by default); when on
 *    it says what would be sent (the active adapter's tensor shapes, the upload size, the
 *    epsilon of one release, the budget left) and shows the server address and access
 *    token fields, kept in the Secret Service only; the epsilon spent (egress's
 *    hz_dp_spent() over the privacy ledger) and the egress log.
 * Main thread only.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"
#include "hz-chat-session.h"

G_BEGIN_DECLS

#define HZ_TYPE_PRIVACY_WINDOW (hz_privacy_window_get_type ())
G_DECLARE_FINAL_TYPE (HzPrivacyWindow, hz_privacy_window, HZ, PRIVACY_WINDOW,
                      AdwPreferencesWindow)

/** The privacy page of `ctx`'s store, learner and settings; "Delete Everything" asks
 *  `session` (hz_chat_session_delete_everything()). Transient for `parent` (nullable). */
GtkWidget *hz_privacy_window_new (HzAppContext *ctx, HzChatSession *session,
                                  GtkWindow *parent);

/** Read everything from the store again. */
void       hz_privacy_window_reload (HzPrivacyWindow *self);

/* For tests and accessibility tooling. */
void       hz_privacy_window_get_counts (HzPrivacyWindow *self, guint *n_conversations,
                                         guint *n_messages, guint64 *bytes);
/** Open the confirmation dialog of "Delete Everything" (as its button does). */
void       hz_privacy_window_ask_delete_everything (HzPrivacyWindow *self);
/** Show the redactions of message `message_id` (as picking it does); FALSE if not listed. */
gboolean   hz_privacy_window_show_message (HzPrivacyWindow *self, gint64 message_id);
GtkTextBuffer *hz_privacy_window_get_redaction_buffer (HzPrivacyWindow *self);
/** The text under the redaction view ("Not redacted yet", "3 spans", ...). */
const char *hz_privacy_window_get_redaction_status (HzPrivacyWindow *self);
GtkSwitch *hz_privacy_window_get_federation_switch (HzPrivacyWindow *self);
/** Whether the "what will be sent" explanation is visible. */
gboolean   hz_privacy_window_get_federation_details_visible (HzPrivacyWindow *self);
guint      hz_privacy_window_get_n_learner_runs (HzPrivacyWindow *self);
guint      hz_privacy_window_get_n_egress_rows (HzPrivacyWindow *self);
/** The "epsilon spent" row's text. */
const char *hz_privacy_window_get_epsilon_text (HzPrivacyWindow *self);
/** The "Privacy cost of one upload" line of the federation section (epsilon per release,
 *  clip norm and noise multiplier the learner will use). */
const char *hz_privacy_window_get_release_epsilon_text (HzPrivacyWindow *self);
/** The status line under the federation server fields (keyring state, Save/Forget result). */
const char *hz_privacy_window_get_credentials_status (HzPrivacyWindow *self);
/** Whether "Roll Back" is shown (the learner daemon is present). */
gboolean   hz_privacy_window_get_rollback_visible (HzPrivacyWindow *self);

G_END_DECLS
