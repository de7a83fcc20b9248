/* hz-conversation-item.c — HzConversationItem (see hz-conversation-item.h). */
#include "hz-conversation-item.h"

#include <glib/gi18n.h>

struct _HzConversationItem {
  GObject  parent_instance;
  gint64   id;
  char    *title;
  gboolean pinned;
  char    *snippet;
  gint64   message_id;
};

G_DEFINE_FINAL_TYPE (HzConversationItem, hz_conversation_item, G_TYPE_OBJECT)

enum { PROP_0, PROP_TITLE, PROP_PINNED, PROP_SNIPPET, N_PROPS };
static GParamSpec *props[N_PROPS];

HzConversationItem *
hz_conversation_item_new (gint64 id, const char *title)
{
  HzConversationItem *self = g_object_new (HZ_TYPE_CONVERSATION_ITEM, NULL);
  self->id = id;
  self->title = g_strdup (title && *title ? title : _("New Chat"));
  return self;
}

gint64
hz_conversation_item_get_id (HzConversationItem *self)
{
  g_return_val_if_fail (HZ_IS_CONVERSATION_ITEM (self), 0);
  return self->id;
}

const char *
hz_conversation_item_get_title (HzConversationItem *self)
{
  g_return_val_if_fail (HZ_IS_CONVERSATION_ITEM (self), NULL);
  return self->title;
}

void
hz_conversation_item_set_title (HzConversationItem *self, const char *title)
{
  g_return_if_fail (HZ_IS_CONVERSATION_ITEM (self));
  const char *shown = title && *title ? title : _("New Chat");
  if (g_strcmp0 (self->title, shown) == 0)
    return;
  g_free (self->title);
  self->title = g_strdup (shown);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_TITLE]);
}

gboolean
hz_conversation_item_get_pinned (HzConversationItem *self)
{
  g_return_val_if_fail (HZ_IS_CONVERSATION_ITEM (self), FALSE);
  return self->pinned;
}

void
hz_conversation_item_set_pinned (HzConversationItem *self, gboolean pinned)
{
  g_return_if_fail (HZ_IS_CONVERSATION_ITEM (self));
  if (self->pinned == !!pinned)
    return;
  self->pinned = !!pinned;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_PINNED]);
}

const char *
hz_conversation_item_get_snippet (HzConversationItem *self)
{
  g_return_val_if_fail (HZ_IS_CONVERSATION_ITEM (self), NULL);
  return self->snippet;
}

gint64
hz_conversation_item_get_message_id (HzConversationItem *self)
{
  g_return_val_if_fail (HZ_IS_CONVERSATION_ITEM (self), 0);
  return self->message_id;
}

void
hz_conversation_item_set_match (HzConversationItem *self, const char *snippet_markup,
                                gint64 message_id)
{
  g_return_if_fail (HZ_IS_CONVERSATION_ITEM (self));
  g_free (self->snippet);
  self->snippet = g_strdup (snippet_markup);
  self->message_id = message_id;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SNIPPET]);
}

static void
hz_conversation_item_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  HzConversationItem *self = HZ_CONVERSATION_ITEM (object);

  switch (prop_id)
    {
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_PINNED:
      g_value_set_boolean (value, self->pinned);
      break;
    case PROP_SNIPPET:
      g_value_set_string (value, self->snippet);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hz_conversation_item_finalize (GObject *object)
{
  HzConversationItem *self = HZ_CONVERSATION_ITEM (object);
  g_free (self->title);
  g_free (self->snippet);
  G_OBJECT_CLASS (hz_conversation_item_parent_class)->finalize (object);
}

static void
hz_conversation_item_class_init (HzConversationItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_conversation_item_get_property;
  object_class->finalize = hz_conversation_item_finalize;
  props[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                           G_PARAM_STATIC_STRINGS);
  props[PROP_PINNED] = g_param_spec_boolean ("pinned", NULL, NULL, FALSE,
                                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                             G_PARAM_STATIC_STRINGS);
  props[PROP_SNIPPET] = g_param_spec_string ("snippet", NULL, NULL, NULL,
                                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                             G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
hz_conversation_item_init (HzConversationItem *self)
{
}
