/* hz-message-row.c — HzMessageRow (see hz-message-row.h).
 *
 * The row's buttons activate the window's message actions (win.copy-message,
 * win.edit-message, win.regenerate-message, win.rate-good, win.rate-bad,
 * win.previous-alternative, win.next-alternative) with the message's store id as target.
 */
#include "hz-message-row.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hz-lazy.h"
#include "hz-markdown.h"
#include "hz-markdown-view.h"

struct _HzMessageRow {
  GtkWidget       parent_instance;
  GtkWidget      *column;        /* the notice above the bubble */
  GtkWidget      *bubble;
  GtkLabel       *notice_label;
  GtkLabel       *role_label;
  GtkSpinner     *spinner;
  GtkExpander    *reasoning_expander;
  GtkLabel       *reasoning_label;
  gboolean        thinking;      /* the reasoning streams in (no answer yet): expanded */
  GtkLabel       *text_label;
  HzMarkdownView *markdown;
  GtkWidget      *footer;
  GtkWidget      *pager;
  GtkLabel       *pager_label;
  GtkWidget      *previous_button;
  GtkWidget      *next_button;
  GtkLabel       *details_label;
  GtkLevelBar    *context_gauge;
  GtkWidget      *actions;
  GtkWidget      *copy_button;
  GtkWidget      *edit_button;
  GtkWidget      *regenerate_button;
  GtkWidget      *good_button;
  GtkWidget      *bad_button;
  HzMessageItem  *item;
  gulong          notify_id;
  /* Made lazily (hz-lazy.h): until the row comes near the visible part, the template is
   * not instantiated (the pointers above are NULL) and the row reports an estimated size. */
  gboolean        built;
  HzLazy         *lazy;
  GPtrArray      *estimate_blocks;  /* the reply's Markdown blocks (not built), or NULL */
};

G_DEFINE_FINAL_TYPE (HzMessageRow, hz_message_row, GTK_TYPE_WIDGET)

static void
set_pressed (GtkWidget *button, gboolean pressed)
{
  if (pressed)
    gtk_widget_add_css_class (button, "rated");
  else
    gtk_widget_remove_css_class (button, "rated");
  gtk_accessible_update_state (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_STATE_PRESSED,
                               pressed ? GTK_ACCESSIBLE_TRISTATE_TRUE
                                       : GTK_ACCESSIBLE_TRISTATE_FALSE, -1);
}

/* The message's text: Markdown for replies (a streamed one renders once per frame, see
 * HzMarkdownView), plain for the rest. */
static void
sync_text (HzMessageRow *self)
{
  HzMessageItem *item = self->item;
  const char *text = hz_message_item_get_text (item);
  gboolean markdown = hz_message_item_get_role (item) == HZ_ROLE_ASSISTANT;

  if (markdown)
    {
      hz_markdown_view_set_streaming (self->markdown, hz_message_item_get_streaming (item));
      hz_markdown_view_set_text (self->markdown, text);
    }
  else
    gtk_label_set_text (self->text_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->text_label), !markdown);
  gtk_widget_set_visible (GTK_WIDGET (self->markdown), markdown && *text != '\0');
}

/* A thinking model's reasoning, folded above the answer: "Thinking…" and open while it
 * streams in, "Reasoning" and folded from the moment the answer starts (and when shown
 * later); the user may open or fold it at any time after. */
static void
sync_reasoning (HzMessageRow *self, gboolean text_changed)
{
  HzMessageItem *item = self->item;
  const char *reasoning = hz_message_item_get_reasoning (item);
  gboolean thinking = hz_message_item_get_streaming (item) &&
                      *hz_message_item_get_text (item) == '\0' && *reasoning != '\0';

  gtk_widget_set_visible (GTK_WIDGET (self->reasoning_expander), *reasoning != '\0');
  if (thinking != self->thinking)
    {
      self->thinking = thinking;
      gtk_expander_set_label (self->reasoning_expander,
                              thinking ? _("Thinking…") : _("Reasoning"));
      gtk_expander_set_expanded (self->reasoning_expander, thinking);
    }
  if (!text_changed)
    gtk_label_set_text (self->reasoning_label, reasoning);
}

/* What a screen reader says for the row: who wrote it and, as its description, the
 * message (a reply as plain text: its Markdown rendered, no `**` read out), busy while a
 * reply is written. (GTK before 4.14 tells AT-SPI about these changes only for rows an
 * assistive technology has already looked at; a finished reply is spoken through the
 * window, see announce_reply() in hz-window.c.) */
static void
sync_accessible (HzMessageRow *self)
{
  HzMessageItem *item = self->item;
  gboolean streaming = hz_message_item_get_streaming (item);
  const char *who = hz_role_get_display_name (hz_message_item_get_role (item));
  g_autofree char *label = NULL;
  g_autofree char *text = NULL;

  if (streaming)
    /* TRANSLATORS: accessible name of a reply being written; %s is "Assistant" */
    label = g_strdup_printf (_("%s, writing"), who);
  else
    label = g_strdup (who);
  if (!streaming && hz_message_item_get_role (item) == HZ_ROLE_ASSISTANT)
    {
      if (self->built)
        text = hz_markdown_view_get_plain_text (self->markdown);
      else
        text = hz_md_blocks_to_plain (self->estimate_blocks);
    }
  else if (!streaming)
    text = g_strdup (hz_message_item_get_text (item));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text ? text : "",
                                  -1);
  gtk_accessible_update_state (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_STATE_BUSY, streaming, -1);
}

static void
sync_from_item (HzMessageRow *self)
{
  HzMessageItem *item = self->item;
  HzRole role = hz_message_item_get_role (item);
  gboolean streaming = hz_message_item_get_streaming (item);
  const char *details = hz_message_item_get_details (item);
  guint n_alts = 0, n_ctx = 0;
  guint alt = hz_message_item_get_alternative (item, &n_alts);
  guint ctx_used = hz_message_item_get_context (item, &n_ctx);
  int rating = hz_message_item_get_rating (item);

  sync_text (self);
  sync_reasoning (self, FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->spinner), streaming);
  gtk_spinner_set_spinning (self->spinner, streaming);
  sync_accessible (self);

  gtk_widget_set_visible (GTK_WIDGET (self->notice_label),
                          hz_message_item_get_context_notice (item));
  gtk_label_set_text (self->details_label, details ? details : "");
  gtk_widget_set_visible (GTK_WIDGET (self->details_label), details != NULL && *details);

  gtk_widget_set_visible (GTK_WIDGET (self->context_gauge), n_ctx > 0 && !streaming);
  if (n_ctx > 0)
    {
      g_autofree char *tip = g_strdup_printf (_("Context: %u of %u tokens used (%.0f%%)"),
                                              ctx_used, n_ctx, 100.0 * ctx_used / n_ctx);
      gtk_level_bar_set_value (self->context_gauge, MIN (1.0, (double) ctx_used / n_ctx));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->context_gauge), tip);
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->context_gauge),
                                      GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, tip, -1);
    }

  gtk_widget_set_visible (self->pager, n_alts > 1 && !streaming);
  if (n_alts > 1)
    {
      /* TRANSLATORS: version 2 of 3 of a message */
      g_autofree char *page = g_strdup_printf (_("%u/%u"), alt + 1, n_alts);
      gtk_label_set_text (self->pager_label, page);
    }

  gtk_widget_set_visible (self->actions, !streaming);
  gtk_widget_set_visible (self->edit_button, role == HZ_ROLE_USER);
  gtk_widget_set_visible (self->regenerate_button, role == HZ_ROLE_ASSISTANT);
  gtk_widget_set_visible (self->good_button, role == HZ_ROLE_ASSISTANT);
  gtk_widget_set_visible (self->bad_button, role == HZ_ROLE_ASSISTANT);
  set_pressed (self->good_button, rating > 0);
  set_pressed (self->bad_button, rating < 0);
}

static void ensure_built (HzMessageRow *self);
static void sync_estimate (HzMessageRow *self);

static void
on_item_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  HzMessageRow *self = HZ_MESSAGE_ROW (user_data);

  if (!self->built)
    {
      if (hz_message_item_get_streaming (self->item))
        ensure_built (self);  /* (a reply being written is in view) */
      else
        {
          sync_estimate (self);
          return;
        }
    }

  /* A token of a streamed reply: only the text (rendered at the next frame) or the
   * reasoning; the rest of the row stays as it is until the reply ends. */
  const char *name = g_param_spec_get_name (pspec);
  const gboolean text = strcmp (name, "text") == 0;
  if ((text || strcmp (name, "reasoning") == 0) && hz_message_item_get_streaming (self->item))
    {
      if (text)
        sync_text (self);
      sync_reasoning (self, text);
    }
  else
    sync_from_item (self);
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

/* Point the row's buttons at `item` and show it (built). */
static void
bind_item (HzMessageRow *self)
{
  HzMessageItem *item = self->item;
  HzRole role = hz_message_item_get_role (item);
  GVariant *target = g_variant_new_int64 (hz_message_item_get_id (item));
  GtkWidget *buttons[] = { self->previous_button, self->next_button, self->copy_button,
                           self->edit_button, self->regenerate_button, self->good_button,
                           self->bad_button };
  static const char *const actions[] = { "win.previous-alternative", "win.next-alternative",
                                         "win.copy-message", "win.edit-message",
                                         "win.regenerate-message", "win.rate-good",
                                         "win.rate-bad" };
  G_STATIC_ASSERT (G_N_ELEMENTS (actions) == 7);
  g_variant_ref_sink (target);
  for (guint i = 0; i < G_N_ELEMENTS (buttons); i++)
    {
      gtk_actionable_set_action_target_value (GTK_ACTIONABLE (buttons[i]), target);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (buttons[i]), actions[i]);
    }
  g_variant_unref (target);

  gtk_widget_add_css_class (self->bubble, hz_role_to_string (role));
  gtk_widget_set_halign (self->bubble, role == HZ_ROLE_USER ? GTK_ALIGN_END : GTK_ALIGN_FILL);
  gtk_label_set_text (self->role_label, hz_role_get_display_name (role));
  /* another message's reasoning starts folded */
  self->thinking = FALSE;
  gtk_expander_set_label (self->reasoning_expander, _("Reasoning"));
  gtk_expander_set_expanded (self->reasoning_expander, FALSE);
  sync_from_item (self);
}

/* Not built: what the estimate and the accessible description need (a reply's blocks). */
static void
sync_estimate (HzMessageRow *self)
{
  g_clear_pointer (&self->estimate_blocks, g_ptr_array_unref);
  if (hz_message_item_get_role (self->item) == HZ_ROLE_ASSISTANT)
    self->estimate_blocks = hz_markdown_parse (hz_message_item_get_text (self->item), -1);
  sync_accessible (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

/* Instantiate the template and show the item (HzLazy's build function). */
static void
build (GtkWidget *widget)
{
  ensure_built (HZ_MESSAGE_ROW (widget));
}

static void
ensure_built (HzMessageRow *self)
{
  if (self->built)
    return;
  hz_lazy_unwatch (self->lazy);
  self->built = TRUE;
  g_clear_pointer (&self->estimate_blocks, g_ptr_array_unref);
  gtk_widget_init_template (GTK_WIDGET (self));
  if (self->item != NULL)
    bind_item (self);
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
      if (self->built)
        gtk_widget_remove_css_class (self->bubble,
                                     hz_role_to_string (hz_message_item_get_role (self->item)));
      g_clear_object (&self->item);
    }
  g_clear_pointer (&self->estimate_blocks, g_ptr_array_unref);
  if (item == NULL)
    return;

  self->item = g_object_ref (item);
  self->notify_id = g_signal_connect (item, "notify", G_CALLBACK (on_item_notify), self);
  if (!self->built && (hz_message_item_get_streaming (item) || hz_lazy_is_near (GTK_WIDGET (self))))
    ensure_built (self);  /* (binds the item) */
  else if (self->built)
    bind_item (self);
  else
    sync_estimate (self);
}

gboolean
hz_message_row_get_built (HzMessageRow *self)
{
  g_return_val_if_fail (HZ_IS_MESSAGE_ROW (self), FALSE);
  return self->built;
}

/* ---- size while not built: the bubble's margins (hz-message-row.ui), the role line, the
 * text (a reply's Markdown estimated, see hz_markdown_estimate_size()) and the footer's
 * buttons. */

#define ROW_MARGIN_X 36   /* margin-start + margin-end of the bubble */
#define ROW_MARGIN_Y 12
#define ROW_CHROME_Y 50   /* role line, footer (a row of buttons), spacing */

static void
estimate (HzMessageRow *self, int for_width, int *min_width, int *nat_width, int *height)
{
  int cw, lh;

  *min_width = *nat_width = *height = 0;
  if (self->item == NULL)
    return;
  hz_lazy_font_metrics (GTK_WIDGET (self), &cw, &lh);
  int text_width = for_width > 0 ? MAX (for_width - ROW_MARGIN_X, cw) : -1;
  if (self->estimate_blocks != NULL)
    hz_markdown_estimate_size (self->estimate_blocks, cw, lh, text_width, min_width, nat_width,
                               height);
  else
    {
      /* plain text, wrapped */
      glong per_line = text_width > 0 ? MAX (1, text_width / cw) : G_MAXLONG / 2;
      glong lines = 0, longest = 0;
      for (const char *p = hz_message_item_get_text (self->item); ; )
        {
          const char *nl = strchr (p, '\n');
          glong n = g_utf8_strlen (p, nl ? nl - p : -1);
          longest = MAX (longest, n);
          lines += MAX (1, (n + per_line - 1) / per_line);
          if (nl == NULL)
            break;
          p = nl + 1;
        }
      *min_width = (int) MIN (longest, HZ_MARKDOWN_VIEW_MIN_CHARS) * cw;
      *nat_width = (int) MIN (longest * cw, G_MAXINT / 4);
      *height = (int) MIN (lines * lh, G_MAXINT / 4);
    }
  *min_width += ROW_MARGIN_X;
  *nat_width += ROW_MARGIN_X;
  *height += ROW_MARGIN_Y + ROW_CHROME_Y;
  if (hz_message_item_get_context_notice (self->item))
    *height += ROW_MARGIN_Y / 2 + lh;   /* the notice line above the bubble */
  if (*hz_message_item_get_reasoning (self->item) != '\0')
    *height += lh + ROW_MARGIN_Y / 2;   /* the folded reasoning's line */
}

/* (with the template built, its layout manager measures and allocates instead) */
static GtkSizeRequestMode
hz_message_row_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
hz_message_row_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                        int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  int min_width, nat_width, height;

  estimate (HZ_MESSAGE_ROW (widget), orientation == GTK_ORIENTATION_VERTICAL ? for_size : -1,
            &min_width, &nat_width, &height);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = min_width;
      *natural = nat_width;
    }
  else
    *minimum = *natural = height;
}

static void
hz_message_row_map (GtkWidget *widget)
{
  HzMessageRow *self = HZ_MESSAGE_ROW (widget);

  GTK_WIDGET_CLASS (hz_message_row_parent_class)->map (widget);
  if (!self->built)
    hz_lazy_watch (self->lazy);
}

static void
hz_message_row_unmap (GtkWidget *widget)
{
  HzMessageRow *self = HZ_MESSAGE_ROW (widget);

  hz_lazy_unwatch (self->lazy);
  GTK_WIDGET_CLASS (hz_message_row_parent_class)->unmap (widget);
}

static void
hz_message_row_dispose (GObject *object)
{
  HzMessageRow *self = HZ_MESSAGE_ROW (object);

  hz_message_row_set_item (self, NULL);
  g_clear_pointer (&self->lazy, hz_lazy_free);
  if (self->built)
    gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_MESSAGE_ROW);
  G_OBJECT_CLASS (hz_message_row_parent_class)->dispose (object);
}

static void
hz_message_row_class_init (HzMessageRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_message_row_dispose;
  widget_class->get_request_mode = hz_message_row_get_request_mode;
  widget_class->measure = hz_message_row_measure;
  widget_class->map = hz_message_row_map;
  widget_class->unmap = hz_message_row_unmap;

  g_type_ensure (HZ_TYPE_MARKDOWN_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/ai/hanzo/Desktop/hz-message-row.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, HzMessageRow, name)
  CHILD (column);
  CHILD (bubble);
  CHILD (notice_label);
  CHILD (role_label);
  CHILD (spinner);
  CHILD (reasoning_expander);
  CHILD (reasoning_label);
  CHILD (text_label);
  CHILD (markdown);
  CHILD (footer);
  CHILD (pager);
  CHILD (pager_label);
  CHILD (previous_button);
  CHILD (next_button);
  CHILD (details_label);
  CHILD (context_gauge);
  CHILD (actions);
  CHILD (copy_button);
  CHILD (edit_button);
  CHILD (regenerate_button);
  CHILD (good_button);
  CHILD (bad_button);
#undef CHILD
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
hz_message_row_init (HzMessageRow *self)
{
  /* the template is instantiated once the row comes near the visible part (ensure_built) */
  self->lazy = hz_lazy_new (GTK_WIDGET (self), build);
}
