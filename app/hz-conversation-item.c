/* hz-conversation-item.c — HzConversationItem (see hz-conversation-item.h). */
#include "hz-conversation-item.h"

#include <glib/gi18n.h>

struct _HzConversationItem {
  GObject parent_instance;
  gint64  id;
  char   *title;
};

G_DEFINE_FINAL_TYPE (HzConversationItem, hz_conversation_item, G_TYPE_OBJECT)

enum { PROP_0, PROP_TITLE, N_PROPS };
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
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hz_conversation_item_finalize (GObject *object)
{
  g_free (HZ_CONVERSATION_ITEM (object)->title);
  G_OBJECT_CLASS (hz_conversation_item_parent_class)->finalize (object);
}

static void
hz_conversation_item_class_init (HzConversationItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_conversation_item_get_property;
  object_class->finalize = hz_conversation_item_finalize;
  props[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
hz_conversation_item_init (HzConversationItem *self)
{
}
