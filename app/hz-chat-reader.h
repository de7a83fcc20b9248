/* hz-chat-reader.h — reads of the chats off the main thread (HzChatSession's searches and
 * the conversations it opens): HzChatReader is a second connection to the store, an
 * HzStore of its own opened on the store's path by the first thread that needs it and used
 * by one thread at a time (SQLite's WAL lets it read while the main connection writes).
 * Refcounted; the async calls run a GTask thread each and call back on the thread default
 * main context of the caller. HzChatMessages is one conversation as read.
 */
#pragma once

#include <gio/gio.h>
#include <hanzo-store.h>
#include <hanzo-store-feedback.h>
#include <hanzo-store-limits.h>

G_BEGIN_DECLS

/** A conversation's messages with their ratings and limits, as read from the store. */
typedef struct {
  GPtrArray *messages;   /* HzMessage*, oldest first */
  GPtrArray *feedback;   /* HzMessageFeedback*, or NULL (the ratings could not be read) */
  GPtrArray *limits;     /* HzMessageLimits*, or NULL (could not be read) */
} HzChatMessages;

void            hz_chat_messages_free (HzChatMessages *messages);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzChatMessages, hz_chat_messages_free)

/** Read conversation `conversation_id` on `store` (the caller's connection, any thread);
 *  NULL with `error` when its messages cannot be read (missing ratings or limits are left
 *  NULL). */
HzChatMessages *hz_chat_messages_read (HzStore *store, gint64 conversation_id,
                                       GError **error);

typedef struct _HzChatReader HzChatReader;

/** A reader of the store file at `path` (not opened yet). */
HzChatReader   *hz_chat_reader_new (const char *path);
HzChatReader   *hz_chat_reader_ref (HzChatReader *reader);
void            hz_chat_reader_unref (HzChatReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzChatReader, hz_chat_reader_unref)

/** Search all messages for `query` (the store's FTS5 index, best `limit` first) on a
 *  thread; `source` (nullable) is the GTask's source object. Finish: a GPtrArray of
 *  HzSearchHit, or NULL with `error` (the store could not be opened or searched). */
void            hz_chat_reader_search_async (HzChatReader *reader, gpointer source,
                                             const char *query, guint limit,
                                             GCancellable *cancellable,
                                             GAsyncReadyCallback callback, gpointer data);
GPtrArray      *hz_chat_reader_search_finish (GAsyncResult *result, GError **error);

/** hz_chat_messages_read() on a thread with the reader's connection; `source` as above.
 *  Finish: the messages, or NULL with `error` (also G_IO_ERROR_CANCELLED). */
void            hz_chat_reader_read_async (HzChatReader *reader, gpointer source,
                                           gint64 conversation_id, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer data);
HzChatMessages *hz_chat_reader_read_finish (GAsyncResult *result, GError **error);

G_END_DECLS
