/* hz-chat-list.c — HzChatList (see hz-chat-list.h). */
#include "hz-chat-list.h"

typedef struct {
  guint               handle;     /* > 0, unique in the list */
  HzConversationItem *item;
  guint               position;
  gboolean            undone;     /* Undo: keep it */
  gboolean            committed;  /* deleted from the store already */
} PendingDelete;

struct _HzChatList {
  GObject       parent_instance;
  HzAppContext *ctx;
  GListStore   *items;            /* HzConversationItem */
  GPtrArray    *pending;          /* PendingDelete*, waiting for commit or undo */
  guint         last_handle;
};

G_DEFINE_FINAL_TYPE (HzChatList, hz_chat_list, G_TYPE_OBJECT)

static HzStore *
store_of (HzChatList *self)
{
  return hz_app_context_get_store (self->ctx);
}

static guint
n_pinned (HzChatList *self, HzConversationItem *except)
{
  GListModel *list = G_LIST_MODEL (self->items);
  guint n = g_list_model_get_n_items (list), pinned = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzConversationItem) item = g_list_model_get_item (list, i);
      if (item != except && hz_conversation_item_get_pinned (item))
        pinned++;
    }
  return pinned;
}

static gboolean
is_pending (HzChatList *self, gint64 id)
{
  for (guint i = 0; i < self->pending->len; i++)
    {
      PendingDelete *pd = self->pending->pdata[i];
      if (hz_conversation_item_get_id (pd->item) == id && !pd->undone)
        return TRUE;
    }
  return FALSE;
}

/* Conversation `id` of the list, or NULL with `error`. */
static HzConversationItem *
find_listed (HzChatList *self, gint64 id, GError **error)
{
  HzConversationItem *item = hz_chat_list_find (self, id, NULL);
  if (item == NULL)
    g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND,
                 "conversation %" G_GINT64_FORMAT " is not listed", id);
  return item;
}

/* Whether conversation `id` is in the store (not kept in memory only). */
static gboolean
stored (HzChatList *self, gint64 id)
{
  return store_of (self) != NULL && id > 0;
}

HzChatList *
hz_chat_list_new (HzAppContext *ctx)
{
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  HzChatList *self = g_object_new (HZ_TYPE_CHAT_LIST, NULL);
  self->ctx = g_object_ref (ctx);
  return self;
}

GListModel *
hz_chat_list_get_model (HzChatList *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), NULL);
  return G_LIST_MODEL (self->items);
}

HzConversationItem *
hz_chat_list_find (HzChatList *self, gint64 id, guint *position)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), NULL);
  GListModel *list = G_LIST_MODEL (self->items);
  guint n = g_list_model_get_n_items (list);
  for (guint i = 0; id != 0 && i < n; i++)
    {
      g_autoptr(HzConversationItem) item = g_list_model_get_item (list, i);
      if (hz_conversation_item_get_id (item) == id)
        {
          if (position)
            *position = i;
          return item;  /* the list keeps its reference */
        }
    }
  return NULL;
}

gboolean
hz_chat_list_load (HzChatList *self, GError **error)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  if (store_of (self) == NULL)
    return TRUE;
  g_autoptr(GPtrArray) convs = hz_store_list_conversations (store_of (self), error);
  if (convs == NULL)
    return FALSE;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < convs->len; i++)
    {
      HzConversation *c = convs->pdata[i];
      if (is_pending (self, c->id))
        continue;
      HzConversationItem *item = hz_conversation_item_new (c->id, c->title);
      hz_conversation_item_set_pinned (item, c->pinned);
      g_ptr_array_add (items, item);
    }
  g_list_store_splice (self->items, 0, g_list_model_get_n_items (G_LIST_MODEL (self->items)),
                       items->pdata, items->len);
  return TRUE;
}

void
hz_chat_list_add (HzChatList *self, HzConversationItem *item)
{
  g_return_if_fail (HZ_IS_CHAT_LIST (self));
  guint position = hz_conversation_item_get_pinned (item) ? 0 : n_pinned (self, item);
  g_list_store_insert (self->items, position, item);
}

void
hz_chat_list_bump (HzChatList *self, gint64 id)
{
  guint position;
  g_return_if_fail (HZ_IS_CHAT_LIST (self));
  HzConversationItem *found = hz_chat_list_find (self, id, &position);
  if (found == NULL)
    return;
  g_autoptr(HzConversationItem) item = g_object_ref (found);
  g_list_store_remove (self->items, position);
  hz_chat_list_add (self, item);
}

gboolean
hz_chat_list_rename (HzChatList *self, gint64 id, const char *title, GError **error)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  HzConversationItem *item = find_listed (self, id, error);
  if (item == NULL ||
      (stored (self, id) && !hz_store_rename_conversation (store_of (self), id, title, error)))
    return FALSE;
  hz_conversation_item_set_title (item, title);
  return TRUE;
}

gboolean
hz_chat_list_set_pinned (HzChatList *self, gint64 id, gboolean pinned, GError **error)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  HzConversationItem *item = find_listed (self, id, error);
  if (item == NULL ||
      (stored (self, id) &&
       !hz_store_set_conversation_pinned (store_of (self), id, pinned, error)))
    return FALSE;
  hz_conversation_item_set_pinned (item, pinned);
  hz_chat_list_bump (self, id);
  return TRUE;
}

guint
hz_chat_list_delete (HzChatList *self, gint64 id)
{
  guint position;

  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), 0);
  HzConversationItem *item = hz_chat_list_find (self, id, &position);
  if (item == NULL)
    return 0;
  PendingDelete *pd = g_new0 (PendingDelete, 1);
  pd->handle = ++self->last_handle;
  pd->item = g_object_ref (item);
  pd->position = position;
  g_ptr_array_add (self->pending, pd);
  g_list_store_remove (self->items, position);
  return pd->handle;
}

gboolean
hz_chat_list_undo_delete (HzChatList *self, gint64 id, guint *position)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  for (guint i = 0; i < self->pending->len; i++)
    {
      PendingDelete *pd = self->pending->pdata[i];
      if (hz_conversation_item_get_id (pd->item) != id || pd->undone || pd->committed)
        continue;
      pd->undone = TRUE;
      guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
      g_list_store_insert (self->items, MIN (pd->position, n), pd->item);
      if (position != NULL)
        *position = MIN (pd->position, n);
      return TRUE;
    }
  return FALSE;
}

/* Delete the conversation of `pd` from the store, once, unless it was undone. */
static gboolean
commit_pending (HzChatList *self, PendingDelete *pd, GError **error)
{
  gint64 id = hz_conversation_item_get_id (pd->item);

  if (pd->undone || pd->committed)
    return TRUE;
  pd->committed = TRUE;
  return !stored (self, id) || hz_store_delete_conversation (store_of (self), id, error);
}

gboolean
hz_chat_list_commit_delete (HzChatList *self, guint handle, GError **error)
{
  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  for (guint i = 0; i < self->pending->len; i++)
    {
      PendingDelete *pd = self->pending->pdata[i];
      if (pd->handle == handle)
        {
          gboolean ok = commit_pending (self, pd, error);
          g_ptr_array_remove_index (self->pending, i);
          return ok;
        }
    }
  return TRUE;
}

gboolean
hz_chat_list_commit_deletes (HzChatList *self, GError **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (HZ_IS_CHAT_LIST (self), FALSE);
  for (guint i = 0; i < self->pending->len; i++)
    {
      g_autoptr(GError) local = NULL;
      if (commit_pending (self, self->pending->pdata[i], &local))
        continue;
      if (ok)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_warning ("store: %s", local->message);   /* (the first one is the caller's) */
      ok = FALSE;
    }
  g_ptr_array_set_size (self->pending, 0);
  return ok;
}

static void
pending_delete_free (PendingDelete *pd)
{
  g_object_unref (pd->item);
  g_free (pd);
}

static void
hz_chat_list_finalize (GObject *object)
{
  HzChatList *self = HZ_CHAT_LIST (object);

  g_clear_object (&self->ctx);
  g_clear_object (&self->items);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  G_OBJECT_CLASS (hz_chat_list_parent_class)->finalize (object);
}

static void
hz_chat_list_class_init (HzChatListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = hz_chat_list_finalize;
}

static void
hz_chat_list_init (HzChatList *self)
{
  self->items = g_list_store_new (HZ_TYPE_CONVERSATION_ITEM);
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_delete_free);
}
