/* hz-message-item.c — HzMessageItem (see hz-message-item.h). */
#include "hz-message-item.h"

#include <glib/gi18n.h>
#include <string.h>

struct _HzMessageItem {
  GObject  parent_instance;
  gint64   id;
  HzRole   role;
  GString *text;
  GString *reasoning;
  char    *details;
  gboolean streaming;
  gint64   parent_id;
  guint    alt_index;
  guint    n_alts;
  int      rating;
  gint64   n_tokens;
  double   tokens_per_s;
  guint    ctx_used;
  guint    n_ctx;
  gint64   n_unseen;
  gboolean cut;
  gboolean context_notice;
};

G_DEFINE_FINAL_TYPE (HzMessageItem, hz_message_item, G_TYPE_OBJECT)

enum { PROP_0, PROP_TEXT, PROP_REASONING, PROP_ROLE, PROP_STREAMING, PROP_DETAILS, PROP_ALTERNATIVES,
       PROP_RATING, PROP_CONTEXT, PROP_CONTEXT_NOTICE, N_PROPS };
static GParamSpec *props[N_PROPS];

HzMessageItem *
hz_message_item_new (gint64 id, HzRole role, const char *text)
{
  HzMessageItem *self = g_object_new (HZ_TYPE_MESSAGE_ITEM, NULL);
  self->id = id;
  self->role = role;
  g_string_assign (self->text, text ? text : "");
  return self;
}

gint64
hz_message_item_get_id (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  return self->id;
}

HzRole
hz_message_item_get_role (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), HZ_ROLE_USER);
  return self->role;
}

const char *
hz_message_item_get_text (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), NULL);
  return self->text->str;
}

/* Set (append: add to) the string property `prop` held in `str`; notify when it changed. */
static void
set_string (HzMessageItem *self, GString *str, guint prop, const char *value, gboolean append)
{
  value = value ? value : "";
  if (append ? *value == '\0' : strcmp (str->str, value) == 0)
    return;
  if (append)
    g_string_append (str, value);
  else
    g_string_assign (str, value);
  g_object_notify_by_pspec (G_OBJECT (self), props[prop]);
}

void
hz_message_item_set_text (HzMessageItem *self, const char *text)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  set_string (self, self->text, PROP_TEXT, text, FALSE);
}

void
hz_message_item_append_text (HzMessageItem *self, const char *text)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  set_string (self, self->text, PROP_TEXT, text, TRUE);
}

const char *
hz_message_item_get_reasoning (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), NULL);
  return self->reasoning->str;
}

void
hz_message_item_set_reasoning (HzMessageItem *self, const char *reasoning)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  set_string (self, self->reasoning, PROP_REASONING, reasoning, FALSE);
}

void
hz_message_item_append_reasoning (HzMessageItem *self, const char *reasoning)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  set_string (self, self->reasoning, PROP_REASONING, reasoning, TRUE);
}

gboolean
hz_message_item_get_streaming (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), FALSE);
  return self->streaming;
}

void
hz_message_item_set_streaming (HzMessageItem *self, gboolean streaming)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  streaming = !!streaming;
  if (self->streaming == streaming)
    return;
  self->streaming = streaming;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STREAMING]);
}

const char *
hz_message_item_get_details (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), NULL);
  return self->details;
}

void
hz_message_item_set_details (HzMessageItem *self, const char *details)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  if (g_strcmp0 (self->details, details) == 0)
    return;
  g_free (self->details);
  self->details = g_strdup (details);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DETAILS]);
}

gint64
hz_message_item_get_parent_id (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  return self->parent_id;
}

void
hz_message_item_set_parent_id (HzMessageItem *self, gint64 parent_id)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  self->parent_id = parent_id;
}

guint
hz_message_item_get_alternative (HzMessageItem *self, guint *n_alternatives)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  if (n_alternatives)
    *n_alternatives = self->n_alts;
  return self->alt_index;
}

void
hz_message_item_set_alternative (HzMessageItem *self, guint index, guint n)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  if (self->alt_index == index && self->n_alts == n)
    return;
  self->alt_index = index;
  self->n_alts = n;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_ALTERNATIVES]);
}

int
hz_message_item_get_rating (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  return self->rating;
}

void
hz_message_item_set_rating (HzMessageItem *self, int rating)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  rating = CLAMP (rating, -1, 1);
  if (self->rating == rating)
    return;
  self->rating = rating;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_RATING]);
}

gint64
hz_message_item_get_n_tokens (HzMessageItem *self, double *tokens_per_s)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  if (tokens_per_s)
    *tokens_per_s = self->tokens_per_s;
  return self->n_tokens;
}

void
hz_message_item_set_stats (HzMessageItem *self, gint64 n_tokens, double tokens_per_s)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  self->n_tokens = n_tokens;
  self->tokens_per_s = tokens_per_s;
}

guint
hz_message_item_get_context (HzMessageItem *self, guint *n_ctx)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  if (n_ctx)
    *n_ctx = self->n_ctx;
  return self->ctx_used;
}

void
hz_message_item_set_context (HzMessageItem *self, guint used, guint n_ctx)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  if (self->ctx_used == used && self->n_ctx == n_ctx)
    return;
  self->ctx_used = used;
  self->n_ctx = n_ctx;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_CONTEXT]);
}

gint64
hz_message_item_get_n_unseen (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), 0);
  return self->n_unseen;
}

void
hz_message_item_set_n_unseen (HzMessageItem *self, gint64 n_unseen)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  self->n_unseen = MAX (n_unseen, 0);
}

gboolean
hz_message_item_get_cut (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), FALSE);
  return self->cut;
}

void
hz_message_item_set_cut (HzMessageItem *self, gboolean cut)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  self->cut = !!cut;
}

gboolean
hz_message_item_get_context_notice (HzMessageItem *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ITEM (self), FALSE);
  return self->context_notice;
}

void
hz_message_item_set_context_notice (HzMessageItem *self, gboolean notice)
{
  g_return_if_fail (HZ_IS_MESSAGE_ITEM (self));
  notice = !!notice;
  if (self->context_notice == notice)
    return;
  self->context_notice = notice;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_CONTEXT_NOTICE]);
}

static void
hz_message_item_get_property (GObject *object, guint prop_id, GValue *value,
                              GParamSpec *pspec)
{
  HzMessageItem *self = HZ_MESSAGE_ITEM (object);

  switch (prop_id)
    {
    case PROP_TEXT:
      g_value_set_string (value, self->text->str);
      break;
    case PROP_REASONING:
      g_value_set_string (value, self->reasoning->str);
      break;
    case PROP_ROLE:
      g_value_set_string (value, hz_role_to_string (self->role));
      break;
    case PROP_STREAMING:
      g_value_set_boolean (value, self->streaming);
      break;
    case PROP_DETAILS:
      g_value_set_string (value, self->details);
      break;
    case PROP_ALTERNATIVES:
      g_value_set_uint (value, self->n_alts);
      break;
    case PROP_RATING:
      g_value_set_int (value, self->rating);
      break;
    case PROP_CONTEXT:
      g_value_set_uint (value, self->ctx_used);
      break;
    case PROP_CONTEXT_NOTICE:
      g_value_set_boolean (value, self->context_notice);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hz_message_item_finalize (GObject *object)
{
  HzMessageItem *self = HZ_MESSAGE_ITEM (object);
  g_string_free (self->text, TRUE);
  g_string_free (self->reasoning, TRUE);
  g_free (self->details);
  G_OBJECT_CLASS (hz_message_item_parent_class)->finalize (object);
}

static void
hz_message_item_class_init (HzMessageItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_message_item_get_property;
  object_class->finalize = hz_message_item_finalize;

  props[PROP_TEXT] = g_param_spec_string ("text", NULL, NULL, "",
                                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                          G_PARAM_STATIC_STRINGS);
  props[PROP_REASONING] = g_param_spec_string ("reasoning", NULL, NULL, "",
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                               G_PARAM_STATIC_STRINGS);
  props[PROP_ROLE] = g_param_spec_string ("role", NULL, NULL, "user",
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_STREAMING] = g_param_spec_boolean ("streaming", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                G_PARAM_STATIC_STRINGS);
  props[PROP_DETAILS] = g_param_spec_string ("details", NULL, NULL, NULL,
                                             G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                             G_PARAM_STATIC_STRINGS);
  props[PROP_ALTERNATIVES] = g_param_spec_uint ("alternatives", NULL, NULL, 0, G_MAXUINT, 0,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                G_PARAM_STATIC_STRINGS);
  props[PROP_RATING] = g_param_spec_int ("rating", NULL, NULL, -1, 1, 0,
                                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                         G_PARAM_STATIC_STRINGS);
  props[PROP_CONTEXT] = g_param_spec_uint ("context", NULL, NULL, 0, G_MAXUINT, 0,
                                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                           G_PARAM_STATIC_STRINGS);
  props[PROP_CONTEXT_NOTICE] = g_param_spec_boolean ("context-notice", NULL, NULL, FALSE,
                                                     G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                     G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
hz_message_item_init (HzMessageItem *self)
{
  self->text = g_string_new (NULL);
  self->reasoning = g_string_new (NULL);
  self->n_alts = 1;
  self->tokens_per_s = -1;
}

const char *
hz_role_get_display_name (HzRole role)
{
  switch (role)
    {
    case HZ_ROLE_USER:
      return _("You");
    case HZ_ROLE_ASSISTANT:
      return _("Assistant");
    case HZ_ROLE_SYSTEM:
    default:
      return _("System");
    }
}
