/* hz-message-row.c — HzMessageRow (see hz-message-row.h). */
#include "hz-message-row.h"

#include <glib/gi18n.h>

struct _HzMessageRow {
  GtkWidget      parent_instance;
  GtkWidget     *bubble;
  GtkLabel      *role_label;
  GtkSpinner    *spinner;
  GtkLabel      *text_label;
  GtkLabel      *details_label;
  HzMessageItem *item;
  gulong         notify_id;
};

G_DEFINE_FINAL_TYPE (HzMessageRow, hz_message_row, GTK_TYPE_WIDGET)

static void
sync_from_item (HzMessageRow *self)
{
  HzMessageItem *item = self->item;
  gboolean streaming = hz_message_item_get_streaming (item);
  const char *text = hz_message_item_get_text (item);
  const char *details = hz_message_item_get_details (item);

  gtk_label_set_text (self->text_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->text_label), *text != '\0' || !streaming);
  gtk_widget_set_visible (GTK_WIDGET (self->spinner), streaming);
  gtk_spinner_set_spinning (self->spinner, streaming);
  gtk_label_set_text (self->details_label, details ? details : "");
  gtk_widget_set_visible (GTK_WIDGET (self->details_label), details != NULL && *details);
}

static void
on_item_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  sync_from_item (HZ_MESSAGE_ROW (user_data));
}

GtkWidget *
hz_message_row_new (void)
{
  return g_object_new (HZ_TYPE_MESSAGE_ROW, NULL);
}

HzMessageItem *
hz_message_row_get_item (HzMessageRow *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ROW (self), NULL);
  return self->item;
}

void
hz_message_row_set_item (HzMessageRow *self, HzMessageItem *item)
{
  g_return_if_fail (HZ_IS_MESSAGE_ROW (self));
  g_return_if_fail (item == NULL || HZ_IS_MESSAGE_ITEM (item));

  if (self->item == item)
    return;
  if (self->item != NULL)
    {
      g_clear_signal_handler (&self->notify_id, self->item);
      gtk_widget_remove_css_class (self->bubble,
                                   hz_role_to_string (hz_message_item_get_role (self->item)));
      g_clear_object (&self->item);
    }
  if (item == NULL)
    return;

  self->item = g_object_ref (item);
  self->notify_id = g_signal_connect (item, "notify", G_CALLBACK (on_item_notify), self);

  HzRole role = hz_message_item_get_role (item);
  gtk_widget_add_css_class (self->bubble, hz_role_to_string (role));
  gtk_widget_set_halign (self->bubble, role == HZ_ROLE_USER ? GTK_ALIGN_END : GTK_ALIGN_FILL);
  switch (role)
    {
    case HZ_ROLE_USER:
      gtk_label_set_text (self->role_label, _("You"));
      break;
    case HZ_ROLE_ASSISTANT:
      gtk_label_set_text (self->role_label, _("Assistant"));
      break;
    case HZ_ROLE_SYSTEM:
    default:
      gtk_label_set_text (self->role_label, _("System"));
      break;
    }
  sync_from_item (self);
}

static void
hz_message_row_dispose (GObject *object)
{
  HzMessageRow *self = HZ_MESSAGE_ROW (object);

  hz_message_row_set_item (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_MESSAGE_ROW);
  G_OBJECT_CLASS (hz_message_row_parent_class)->dispose (object);
}

static void
hz_message_row_class_init (HzMessageRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_message_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/ai/hanzo/Desktop/hz-message-row.ui");
  gtk_widget_class_bind_template_child (widget_class, HzMessageRow, bubble);
  gtk_widget_class_bind_template_child (widget_class, HzMessageRow, role_label);
  gtk_widget_class_bind_template_child (widget_class, HzMessageRow, spinner);
  gtk_widget_class_bind_template_child (widget_class, HzMessageRow, text_label);
  gtk_widget_class_bind_template_child (widget_class, HzMessageRow, details_label);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
hz_message_row_init (HzMessageRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
