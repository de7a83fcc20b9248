/* hz-window.h — HzWindow: the main window (conversation sidebar, chat view, composer).
 *
 * Streams replies from the application's HzEngineWorker into the chat view and saves
 * conversations and messages to the application's store (the streamed reply at least once
 * a second). All functions are for the main thread.
 */
#pragma once

#include <adwaita.h>
#include "hz-application.h"

G_BEGIN_DECLS

#define HZ_TYPE_WINDOW (hz_window_get_type ())
G_DECLARE_FINAL_TYPE (HzWindow, hz_window, HZ, WINDOW, AdwApplicationWindow)

/** A new window for `app` (after its startup). */
HzWindow   *hz_window_new (HzApplication *app);

/** The composer's text view (for tests and accessibility tooling). */
GtkTextView *hz_window_get_composer (HzWindow *self);

/** The conversations shown in the sidebar (HzConversationItem), newest first. */
GListModel *hz_window_get_conversations (HzWindow *self);

/** The messages of the shown conversation (HzMessageItem), oldest first. */
GListModel *hz_window_get_messages (HzWindow *self);

/** Show conversation number `position` of hz_window_get_conversations(). */
void        hz_window_select_conversation (HzWindow *self, guint position);

/** Whether a reply is being generated. */
gboolean    hz_window_is_generating (HzWindow *self);

/** Whether a model is loaded and ready to answer. */
gboolean    hz_window_is_model_ready (HzWindow *self);

/** Show an error dialog with `heading` and `body` (transient for the window). */
void        hz_window_show_error (HzWindow *self, const char *heading, const char *body);

G_END_DECLS
