/* hz-window-private.h — HzWindow's instance struct and the functions that hz-window.c
 * (the chat: messages, sending, alternatives, model, layout) and hz-window-sidebar.c (the
 * conversation list: search, rename, pin, delete with undo, export, system prompt) share.
 * hz-window-models.c (model switcher, model-written titles) also uses it. Not for use
 * outside these files. Main thread only.
 */
#pragma once

#include "hz-window.h"
#include "hz-conversation-item.h"
#include "hz-message-item.h"

G_BEGIN_DECLS

typedef enum { MODEL_NONE, MODEL_LOADING, MODEL_READY, MODEL_FAILED } ModelState;

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
  HzApplication  *app;
  HzStore        *store;
  HzEngineWorker *worker;
  GSettings      *settings;
  gulong          worker_handlers[11];
  char           *adapter_error_path; /* the adapter whose failure was last told (toast) */
  gboolean        syncing_model;     /* the model drop-down follows the worker */
  GHashTable     *title_requests;    /* worker title request id -> gint64* conversation */

  /* sidebar */
  GListStore         *conversations;   /* HzConversationItem */
  GtkSingleSelection *conversation_selection;
  GListStore         *search_results;  /* HzConversationItem with a snippet */
  guint               search_serial;
  GSimpleActionGroup *conv_actions;    /* "conv": acts on the shown conversation */
  GPtrArray          *pending_deletes; /* PendingDelete*, waiting for their undo toast */
  struct _SearchConn *search_conn;     /* the reader connection (search, opening) */
  gboolean            syncing_selection;

  /* the shown conversation */
  gint64      conversation_id;       /* 0 = a new chat (not stored yet) */
  char       *system_prompt;         /* of the shown conversation (or the new chat) */
  GListStore *messages;              /* HzMessageItem: the shown branch */
  GHashTable *nodes;                 /* gint64* id -> HzMessageItem: every version */
  GHashTable *children;              /* gint64* parent id -> GPtrArray of HzMessageItem */
  GHashTable *choices;               /* gint64* parent id -> gint64* chosen child id */
  gint64      next_local_id;         /* ids of messages kept in memory only (< 0) */
  gint64      edit_message_id;       /* user message being edited, 0 = none */
  GCancellable *load_cancellable;    /* the conversation being read off the main thread */
  guint       load_serial;           /* bumped by every show: older loads are dropped */
  guint       fill_id;               /* tick callback (of the message list) that puts the loaded
                                        rows in, a batch per frame */
  guint       fill_batch;            /* rows it puts in at once (sized from the frame cost) */
  guint       fill_taken;            /* rows put in at the current frame, 0 = none */
  gint64      fill_start_us;         /* when that frame's batch went in */
  GdkFrameClock *fill_clock;         /* whose after-paint measures the frame's cost */
  gulong      fill_paint_id;
  gboolean    select_blocking;       /* hz_window_select_conversation(): read on this thread */
  gboolean    stick_to_bottom;
  guint       stick_id;        /* idle that scrolls to the end after a layout */
  double      last_scroll;     /* the message list's last scroll position */

  ModelState model_state;

  /* the reply being generated */
  guint          request_id;      /* 0 = none */
  HzMessageItem *reply_item;
  gint64         reply_message_id;
  gboolean       reply_dirty;     /* text not yet saved */
  gint64         reply_n_tokens;  /* tokens generated so far (the last "token" signal) */
  guint          save_timeout_id;
  gboolean       learner_held;    /* hz_learner_hold() called for this reply */

  GtkWidget     *learner_bar;     /* HzLearnerBar in the sidebar footer */
  gulong         learner_failed_id;
};

/* hz-window.c */
void     hz_window_report_store_error (HzWindow *self, GError *error);
void     hz_window_notify (HzWindow *self, const char *text);
void     hz_window_update_state (HzWindow *self);
void     hz_window_show_conversation (HzWindow *self, gint64 conversation_id);
void     hz_window_start_new_chat (HzWindow *self);
void     hz_window_reveal_message (HzWindow *self, gint64 message_id);
void     hz_window_show_chat_pane (HzWindow *self);
gboolean hz_window_generating (HzWindow *self);

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
void     hz_window_request_title (HzWindow *self, gint64 conversation_id, const char *expected,
                                  const char *user, const char *assistant);
void     hz_window_on_worker_title (HzEngineWorker *worker, guint request, const char *text,
                                    HzWindow *self);

/* hz-window.c: read the conversation on a worker thread and show it when read (the user
 * picking a conversation); hz_window_show_conversation() reads it on the main thread */
void     hz_window_open_conversation (HzWindow *self, gint64 conversation_id);
/* the same for a search hit: then scroll to its message `message_id` */
void     hz_window_open_search_hit (HzWindow *self, gint64 conversation_id, gint64 message_id);

/* hz-window-sidebar.c */
void     hz_window_sidebar_class_init (GtkWidgetClass *widget_class);
void     hz_window_sidebar_init (HzWindow *self);
void     hz_window_sidebar_attach (HzWindow *self);
void     hz_window_sidebar_dispose (HzWindow *self);
void     hz_window_load_conversations (HzWindow *self);
HzConversationItem *hz_window_find_conversation (HzWindow *self, gint64 id, guint *position);
void     hz_window_add_conversation (HzWindow *self, HzConversationItem *item);
void     hz_window_bump_conversation (HzWindow *self, gint64 id);
void     hz_window_select_conversation_silently (HzWindow *self, guint position);
void     hz_window_sync_conversation_actions (HzWindow *self);

/* hz-window-sidebar.c: the window's reader connection, an HzStore of its own (opened on the
 * store's path by the first worker thread that needs it), shared by the search and the
 * loading of conversations, one at a time. hz_window_reader_ref() is NULL without a store.
 * hz_window_reader_lock() takes the lock and returns the connection (opening it if needed),
 * or NULL with `error` set (still locked); every lock needs an unlock. Any thread. */
struct _SearchConn *hz_window_reader_ref (HzWindow *self);
void     hz_window_reader_unref (struct _SearchConn *reader);
HzStore *hz_window_reader_lock (struct _SearchConn *reader, GError **error);
void     hz_window_reader_unlock (struct _SearchConn *reader);

G_END_DECLS
