/* hz-window-private.h — HzWindow's instance struct and the functions its files share:
 * hz-window-layout.c (the frame: adaptive layout, panes, toasts and error dialogs; the
 * bottom), hz-window-sidebar.c (the conversation list: search, rename, pin, delete with
 * undo, export, system prompt) and hz-window-models.c (model switcher, drops), under
 * hz-window.c (the class, the chat view, the composer and the public API), which renders
 * the application's HzChatSession (hz-chat-session.h). The files below hz-window.c do not
 * call into it: what they change goes through the session, whose signals hz-window.c
 * follows. Not for use outside these files. Main thread only.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"
#include "hz-chat-session.h"
#include "hz-conversation-item.h"
#include "hz-export.h"
#include "hz-message-item.h"

G_BEGIN_DECLS

typedef enum { MODEL_NONE, MODEL_LOADING, MODEL_READY, MODEL_FAILED } ModelState;

typedef struct _HzWindow HzWindow;   /* (also declared by hz-window.h) */

struct _HzWindow {
  AdwApplicationWindow parent_instance;

  /* template: sidebar */
  GtkWidget         *sidebar_pane;
  GtkWidget         *sidebar_header;
  GtkListView       *conversation_list;
  GtkListView       *search_list;
  GtkSearchBar      *search_bar;
  GtkSearchEntry    *search_entry;
  GtkToggleButton   *search_button;
  GtkStack          *sidebar_stack;
  /* template: chat */
  GtkWidget         *chat_pane;
  GtkWidget         *chat_header;
  GtkWidget         *back_button;
  GtkWidget         *conversation_menu_button;
  GtkListView       *message_list;
  GtkScrolledWindow *message_scroller;
  GtkTextView       *composer;
  GtkWidget         *composer_placeholder;
  GtkStack          *content_stack;
  GtkStack          *action_stack;
  AdwStatusPage     *status_page;
  GtkWidget         *status_spinner;
  GtkWidget         *status_open_button;
  GtkWidget         *status_find_button;   /* Find Models (app.find-models), with no model */
  GtkListBox        *status_models;   /* the library's models to open, with no model */
  AdwWindowTitle    *window_title;
  AdwToastOverlay   *toast_overlay;
  GtkRevealer       *edit_revealer;
  GtkMenuButton     *model_button;     /* the model switcher */
  GtkLabel          *model_label;      /* its label: the model in use, ellipsized */
  GtkWidget         *open_model_button;
  GtkWidget         *serve_indicator;  /* shown while serving to other apps */
  GMenu             *model_menu;
  GSimpleAction     *model_action;     /* chat.model (s): the model of the chat, by path */
  gulong             library_changed_id;

  GtkWidget         *layout;          /* AdwLeaflet or AdwNavigationSplitView */
  AdwToast          *info_toast;      /* the short notice shown now (weak), or NULL */

  /* app objects (owned by the application) */
  HzAppContext   *ctx;
  HzChatSession  *session;
  HzEngineWorker *worker;
  GSettings      *settings;
  gulong          worker_handlers[6];
  gulong          session_handlers[7];
  char           *adapter_error_path; /* the adapter whose failure was last told (toast) */

  /* sidebar */
  GtkSingleSelection *conversation_selection;  /* over the session's conversations */
  gulong              conversations_changed[2];
  GListStore         *search_results;  /* HzConversationItem with a snippet */
  guint               search_serial;   /* bumped by every search: older results are dropped */
  GSimpleActionGroup *conv_actions;    /* "conv": acts on the shown conversation */
  gboolean            syncing_selection;
  gboolean            select_blocking; /* hz_window_select_conversation(): read on this thread */

  /* the shown conversation (the session's; this is its view) */
  GListStore *messages;              /* HzMessageItem: the shown branch */
  gint64      edit_message_id;       /* user message being edited, 0 = none */
  guint       fill_id;               /* tick callback (of the message list) that puts the loaded
                                        rows in, a batch per frame */
  guint       fill_batch;            /* rows it puts in at once (sized from the frame cost) */
  guint       fill_taken;            /* rows put in at the current frame, 0 = none */
  gint64      fill_start_us;         /* when that frame's batch went in */
  GdkFrameClock *fill_clock;         /* whose after-paint measures the frame's cost */
  gulong      fill_paint_id;
  gboolean    stick_to_bottom;
  guint       stick_id;        /* idle that scrolls to the end after a layout */
  double      last_scroll;     /* the message list's last scroll position */

  ModelState model_state;

  GtkWidget     *learner_bar;     /* HzLearnerBar in the sidebar footer */
  gulong         learner_failed_id;
};

/* hz-window-layout.c */
void     hz_window_setup_layout (HzWindow *self, GCallback folded_changed);
/* whether one pane (sidebar or chat) is shown at a time */
gboolean hz_window_folded (HzWindow *self);
void     hz_window_show_chat_pane (HzWindow *self);
void     hz_window_show_sidebar_pane (HzWindow *self);
/* A short notice ("Message copied"); while one is on screen its text is replaced. */
void     hz_window_notify (HzWindow *self, const char *text);
void     hz_window_report_store_error (HzWindow *self, const GError *error);
void     hz_window_alert (HzWindow *self, const char *heading, const char *body);

/* hz-window-models.c */
void     hz_window_models_attach (HzWindow *self);
void     hz_window_models_dispose (HzWindow *self);
void     hz_window_models_sync (HzWindow *self);
/* The chat header's "open model" button shows only while the window is not folded or the
 * model menu (which then offers Open Model…) is hidden: a narrow window keeps its width. */
void     hz_window_models_update_header (HzWindow *self);
/* The empty page's list of the library's models: shown when `offer` (no model in use) and
 * the library has models. Returns whether it has any. */
gboolean hz_window_models_offer (HzWindow *self, gboolean offer);

/* hz-window-sidebar.c */
void     hz_window_sidebar_class_init (GtkWidgetClass *widget_class);
void     hz_window_sidebar_init (HzWindow *self);
/* (the list follows the session's conversations from here on) */
void     hz_window_sidebar_attach (HzWindow *self);
void     hz_window_sidebar_dispose (HzWindow *self);
void     hz_window_select_conversation_silently (HzWindow *self, guint position);
/* select the shown conversation in the list (none for a new chat), silently */
void     hz_window_sync_selection (HzWindow *self);
void     hz_window_sync_conversation_actions (HzWindow *self);
/* A new chat, shown, with the keyboard in the composer. */
void     hz_window_start_new_chat (HzWindow *self);
/* Select conversation `position` and show it, its messages read before this returns. */
void     hz_window_select_conversation_now (HzWindow *self, guint position);
/* Write the shown conversation to `file` as `format` (asynchronously; a toast says when it
 * is done, a dialog if it failed). */
void     hz_window_export (HzWindow *self, HzExportFormat format, GFile *file);

G_END_DECLS
