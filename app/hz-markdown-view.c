/* hz-markdown-view.c — HzMarkdownView (see hz-markdown-view.h). */
#include "hz-markdown-view.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hz-markdown.h"

struct _HzMarkdownView {
  GtkWidget  parent_instance;
  char      *text;
  GPtrArray *blocks;    /* HzMdBlock shown, parallel to `widgets` */
  GPtrArray *widgets;   /* GtkWidget* (children, unowned) */
  gint64     last_render_us;
  guint      render_id;
};

G_DEFINE_FINAL_TYPE (HzMarkdownView, hz_markdown_view, GTK_TYPE_WIDGET)

/* ------------------------------------------------------------------ block widgets */

static GtkWidget *
text_label_new (const char *markup, gboolean wrap)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_markup (GTK_LABEL (label), markup);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  if (wrap)
    {
      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
#if GTK_CHECK_VERSION (4, 6, 0)
      gtk_label_set_natural_wrap_mode (GTK_LABEL (label), GTK_NATURAL_WRAP_NONE);
#endif
    }
  return label;
}

static void
on_copy_code (GtkButton *button, gpointer user_data)
{
  GtkWidget *box = user_data;  /* the code block, an ancestor of the button */
  const char *text = g_object_get_data (G_OBJECT (box), "hz-code");
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (button)), text ? text : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (button), _("Copied"));
}

/* Fill a code block's widgets from `block`. */
static void
code_block_update (GtkWidget *box, const HzMdBlock *block)
{
  GtkLabel *lang = g_object_get_data (G_OBJECT (box), "hz-lang");
  GtkLabel *code = g_object_get_data (G_OBJECT (box), "hz-code-label");

  gtk_label_set_text (lang, block->lang ? block->lang : _("Code"));
  gtk_label_set_text (code, block->text);
  g_object_set_data_full (G_OBJECT (box), "hz-code", g_strdup (block->text), g_free);
}

static GtkWidget *
code_block_new (const HzMdBlock *block)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *lang = gtk_label_new (NULL);
  GtkWidget *copy = gtk_button_new_from_icon_name ("edit-copy-symbolic");
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *code = gtk_label_new (NULL);

  gtk_widget_add_css_class (box, "md-code");
  gtk_widget_add_css_class (header, "md-code-header");
  gtk_label_set_xalign (GTK_LABEL (lang), 0);
  gtk_widget_set_hexpand (lang, TRUE);
  gtk_widget_add_css_class (lang, "caption");
  gtk_widget_add_css_class (lang, "dim-label");
  gtk_widget_add_css_class (copy, "flat");
  gtk_widget_set_tooltip_text (copy, _("Copy Code"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (copy), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Copy Code"), -1);
  g_signal_connect (copy, "clicked", G_CALLBACK (on_copy_code), box);
  gtk_box_append (GTK_BOX (header), lang);
  gtk_box_append (GTK_BOX (header), copy);

  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_AUTOMATIC,
                                  GTK_POLICY_NEVER);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_label_set_xalign (GTK_LABEL (code), 0);
  gtk_label_set_selectable (GTK_LABEL (code), TRUE);
  gtk_widget_add_css_class (code, "monospace");
  gtk_widget_add_css_class (code, "md-code-text");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), code);

  gtk_box_append (GTK_BOX (box), header);
  gtk_box_append (GTK_BOX (box), scroller);
  g_object_set_data (G_OBJECT (box), "hz-lang", lang);
  g_object_set_data (G_OBJECT (box), "hz-code-label", code);
  code_block_update (box, block);
  return box;
}

static GtkWidget *
table_new (const HzMdBlock *block)
{
  GtkWidget *grid = gtk_grid_new ();
  guint cols = MAX (block->n_columns, 1);

  gtk_widget_add_css_class (grid, "md-table");
  gtk_grid_set_column_spacing (GTK_GRID (grid), 18);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  for (guint i = 0; i < block->cells->len; i++)
    gtk_grid_attach (GTK_GRID (grid), text_label_new (block->cells->pdata[i], TRUE),
                     i % cols, i / cols, 1, 1);
  return grid;
}

static GtkWidget *
block_widget_new (const HzMdBlock *block)
{
  switch (block->kind)
    {
    case HZ_MD_BLOCK_TEXT:
      {
        GtkWidget *label = text_label_new (block->markup, TRUE);
        gtk_widget_add_css_class (label, "md-text");
        return label;
      }
    case HZ_MD_BLOCK_CODE:
      return code_block_new (block);
    case HZ_MD_BLOCK_TABLE:
      return table_new (block);
    case HZ_MD_BLOCK_RULE:
    default:
      return gtk_separator_new (GTK_ORIENTATION_HORIZONTAL);
    }
}

/* Show `block` in `widget` (made for `old`) if it can be updated in place. */
static gboolean
block_widget_update (GtkWidget *widget, const HzMdBlock *old, const HzMdBlock *block)
{
  if (old->kind != block->kind)
    return FALSE;
  switch (block->kind)
    {
    case HZ_MD_BLOCK_TEXT:
      gtk_label_set_markup (GTK_LABEL (widget), block->markup);
      return TRUE;
    case HZ_MD_BLOCK_CODE:
      code_block_update (widget, block);
      return TRUE;
    case HZ_MD_BLOCK_TABLE:
    case HZ_MD_BLOCK_RULE:
    default:
      return FALSE;
    }
}

/* ------------------------------------------------------------------ rendering */

static void
render (HzMarkdownView *self)
{
  g_autoptr(GPtrArray) blocks = hz_markdown_parse (self->text, -1);
  guint i;

  self->last_render_us = g_get_monotonic_time ();
  for (i = 0; i < blocks->len; i++)
    {
      HzMdBlock *block = blocks->pdata[i];
      if (i < self->blocks->len)
        {
          HzMdBlock *old = self->blocks->pdata[i];
          GtkWidget *widget = self->widgets->pdata[i];
          if (hz_md_block_equal (old, block))
            continue;
          if (!block_widget_update (widget, old, block))
            {
              GtkWidget *fresh = block_widget_new (block);
              gtk_widget_insert_after (fresh, GTK_WIDGET (self), widget);
              gtk_widget_unparent (widget);
              self->widgets->pdata[i] = fresh;
            }
        }
      else
        {
          GtkWidget *fresh = block_widget_new (block);
          gtk_widget_insert_before (fresh, GTK_WIDGET (self), NULL);
          g_ptr_array_add (self->widgets, fresh);
        }
    }
  for (guint j = self->widgets->len; j > i; j--)
    gtk_widget_unparent (self->widgets->pdata[j - 1]);
  g_ptr_array_set_size (self->widgets, i);

  /* Keep the new blocks (the array's free function goes with them). */
  g_ptr_array_unref (self->blocks);
  self->blocks = g_steal_pointer (&blocks);
}

static gboolean
render_timeout (gpointer data)
{
  HzMarkdownView *self = data;

  self->render_id = 0;
  render (self);
  return G_SOURCE_REMOVE;
}

/* ------------------------------------------------------------------ public API */

GtkWidget *
hz_markdown_view_new (void)
{
  return g_object_new (HZ_TYPE_MARKDOWN_VIEW, NULL);
}

void
hz_markdown_view_set_text (HzMarkdownView *self, const char *markdown)
{
  g_return_if_fail (HZ_IS_MARKDOWN_VIEW (self));

  if (markdown == NULL)
    markdown = "";
  if (g_strcmp0 (self->text, markdown) == 0)
    return;
  g_free (self->text);
  self->text = g_strdup (markdown);

  if (self->render_id != 0)
    return;  /* already scheduled */
  /* Long texts cost more to lay out again: render them less often (50 ms, plus 1 ms per
   * 2 KB: a 100 KB reply is redrawn about 10 times a second). */
  gint64 interval_ms = HZ_MARKDOWN_VIEW_INTERVAL_MS + (gint64) (strlen (self->text) / 2048);
  gint64 elapsed_ms = (g_get_monotonic_time () - self->last_render_us) / 1000;
  if (elapsed_ms >= interval_ms)
    render (self);
  else
    self->render_id = g_timeout_add ((guint) (interval_ms - elapsed_ms), render_timeout, self);
}

const char *
hz_markdown_view_get_text (HzMarkdownView *self)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), NULL);
  return self->text;
}

void
hz_markdown_view_flush (HzMarkdownView *self)
{
  g_return_if_fail (HZ_IS_MARKDOWN_VIEW (self));
  if (self->render_id == 0)
    return;
  g_clear_handle_id (&self->render_id, g_source_remove);
  render (self);
}

guint
hz_markdown_view_get_n_blocks (HzMarkdownView *self)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), 0);
  return self->widgets->len;
}

GtkWidget *
hz_markdown_view_get_block_widget (HzMarkdownView *self, guint i)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), NULL);
  return i < self->widgets->len ? self->widgets->pdata[i] : NULL;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_markdown_view_dispose (GObject *object)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (object);
  GtkWidget *child;

  g_clear_handle_id (&self->render_id, g_source_remove);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_ptr_array_set_size (self->widgets, 0);
  G_OBJECT_CLASS (hz_markdown_view_parent_class)->dispose (object);
}

static void
hz_markdown_view_finalize (GObject *object)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (object);

  g_free (self->text);
  g_ptr_array_unref (self->blocks);
  g_ptr_array_unref (self->widgets);
  G_OBJECT_CLASS (hz_markdown_view_parent_class)->finalize (object);
}

static void
hz_markdown_view_class_init (HzMarkdownViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_markdown_view_dispose;
  object_class->finalize = hz_markdown_view_finalize;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "markdown");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
hz_markdown_view_init (HzMarkdownView *self)
{
  GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));

  gtk_orientable_set_orientation (GTK_ORIENTABLE (layout), GTK_ORIENTATION_VERTICAL);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 8);
  self->text = g_strdup ("");
  self->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_md_block_free);
  self->widgets = g_ptr_array_new ();
  self->last_render_us = G_MININT64 / 2;
}
