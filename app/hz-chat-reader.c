/* hz-chat-reader.c — HzChatReader and HzChatMessages (see hz-chat-reader.h). */
#include "hz-chat-reader.h"

struct _HzChatReader {
  gatomicrefcount refcount;
  GMutex          lock;
  char           *path;
  HzStore        *store;   /* opened by the first thread that needs it */
};

void
hz_chat_messages_free (HzChatMessages *messages)
{
  g_clear_pointer (&messages->messages, g_ptr_array_unref);
  g_clear_pointer (&messages->feedback, g_ptr_array_unref);
  g_clear_pointer (&messages->limits, g_ptr_array_unref);
  g_free (messages);
}

HzChatMessages *
hz_chat_messages_read (HzStore *store, gint64 conversation_id, GError **error)
{
  g_autoptr(HzChatMessages) read = g_new0 (HzChatMessages, 1);

  read->messages = hz_store_list_messages (store, conversation_id, error);
  if (read->messages == NULL)
    return NULL;
  read->feedback = hz_store_list_feedback (store, conversation_id, 0, NULL);
  read->limits = hz_store_list_message_limits (store, conversation_id, NULL);
  return g_steal_pointer (&read);
}

HzChatReader *
hz_chat_reader_new (const char *path)
{
  g_return_val_if_fail (path != NULL, NULL);
  HzChatReader *r = g_new0 (HzChatReader, 1);
  g_atomic_ref_count_init (&r->refcount);
  g_mutex_init (&r->lock);
  r->path = g_strdup (path);
  return r;
}

HzChatReader *
hz_chat_reader_ref (HzChatReader *r)
{
  g_atomic_ref_count_inc (&r->refcount);
  return r;
}

void
hz_chat_reader_unref (HzChatReader *r)
{
  if (!g_atomic_ref_count_dec (&r->refcount))
    return;
  g_clear_pointer (&r->store, hz_store_close);
  g_mutex_clear (&r->lock);
  g_free (r->path);
  g_free (r);
}

/* Take the lock and return the connection (opening it if needed), or NULL with `error`
 * (still locked); every lock needs an unlock. Any thread. */
static HzStore *
reader_lock (HzChatReader *r, GError **error)
{
  g_mutex_lock (&r->lock);
  if (r->store == NULL)
    r->store = hz_store_open (r->path, error);
  return r->store;
}

static void
reader_unlock (HzChatReader *r)
{
  g_mutex_unlock (&r->lock);
}

typedef struct {
  HzChatReader *reader;
  char         *query;             /* a search, or */
  guint         limit;
  gint64        conversation_id;   /* a conversation to read */
} Job;

static void
job_free (Job *job)
{
  hz_chat_reader_unref (job->reader);
  g_free (job->query);
  g_free (job);
}

static GTask *
job_task (HzChatReader *reader, gpointer source, GCancellable *cancellable,
          GAsyncReadyCallback callback, gpointer data, gpointer tag, Job **job)
{
  GTask *task = g_task_new (source, cancellable, callback, data);
  g_task_set_source_tag (task, tag);
  *job = g_new0 (Job, 1);
  (*job)->reader = hz_chat_reader_ref (reader);
  g_task_set_task_data (task, *job, (GDestroyNotify) job_free);
  return task;
}

static void
search_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  GPtrArray *hits = NULL;

  HzStore *store = reader_lock (job->reader, &error);
  if (store != NULL)
    hits = hz_store_search_messages (store, job->query, job->limit, &error);
  reader_unlock (job->reader);
  if (hits == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, hits, (GDestroyNotify) g_ptr_array_unref);
}

void
hz_chat_reader_search_async (HzChatReader *reader, gpointer source, const char *query,
                             guint limit, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer data)
{
  Job *job;
  g_autoptr(GTask) task = job_task (reader, source, cancellable, callback, data,
                                    hz_chat_reader_search_async, &job);
  job->query = g_strdup (query);
  job->limit = limit;
  g_task_run_in_thread (task, search_thread);
}

GPtrArray *
hz_chat_reader_search_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
read_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  HzChatMessages *read = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  HzStore *store = reader_lock (job->reader, &error);
  if (store != NULL)
    read = hz_chat_messages_read (store, job->conversation_id, &error);
  reader_unlock (job->reader);
  if (read == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, read, (GDestroyNotify) hz_chat_messages_free);
}

void
hz_chat_reader_read_async (HzChatReader *reader, gpointer source, gint64 conversation_id,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer data)
{
  Job *job;
  g_autoptr(GTask) task = job_task (reader, source, cancellable, callback, data,
                                    hz_chat_reader_read_async, &job);
  job->conversation_id = conversation_id;
  g_task_run_in_thread (task, read_thread);
}

HzChatMessages *
hz_chat_reader_read_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
