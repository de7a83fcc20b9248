/* hz-markdown-view.c — HzMarkdownView (see hz-markdown-view.h). */
#include "hz-markdown-view.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hz-markdown.h"

struct _HzMarkdownView {
  GtkWidget  parent_instance;
  GString   *text;
  GPtrArray *blocks;      /* HzMdBlock shown, parallel to `widgets` */
  GPtrArray *widgets;     /* GtkWidget* (children, unowned) */
  gboolean   streaming;
  gsize      final_len;   /* text[0, final_len) gave blocks[0, n_final): final */
  guint      n_final;
  gboolean   pending;     /* text changed since the last render */
  guint      tick_id;     /* frame-clock callback of a pending streaming render */
  guint      wait_id;     /* timeout until a streaming render may come again */
  gint64     last_render_us;
  GtkWidget     *scroller;   /* the scrolled window we are shown in (while mapped) */
  GtkAdjustment *vadj;       /* its vertical adjustment, watched while mapped */
};

/* Blocks further than this above or below the visible part of the scrolled window are
 * not drawn (pixels). */
#define CULL_MARGIN 256

G_DEFINE_FINAL_TYPE (HzMarkdownView, hz_markdown_view, GTK_TYPE_WIDGET)

/* ------------------------------------------------------------------ block widgets */

/* Show `markup` in a text block's label and set its minimum width. GtkLabel's minimum
 * width is its text laid out at `width-chars` wide; left unset, at width 0, which with
 * word-char wrapping is one character per line: measured 28 ms for a 1,200-character
 * paragraph against 3 ms at 20 characters, paid again each time a streamed paragraph
 * grows. GTK 4.8 warns (and reports a natural width below the minimum) when a label whose
 * text is narrower than width-chars is measured width-for-height, so only text with a
 * line of at least 3 x HZ_MARKDOWN_VIEW_MIN_CHARS characters (wider than the minimum in
 * any font) gets it; shorter text is cheap to lay out either way. */
static void
text_label_set_markup (GtkLabel *label, const char *markup)
{
  glong longest = 0, line = 0;

  gtk_label_set_markup (label, markup);
  for (const char *p = gtk_label_get_text (label); *p != '\0'; p = g_utf8_next_char (p))
    if (*p == '\n')
      {
        longest = MAX (longest, line);
        line = 0;
      }
    else
      line++;
  longest = MAX (longest, line);
  gtk_label_set_width_chars (label, longest >= 3 * HZ_MARKDOWN_VIEW_MIN_CHARS
                                    ? HZ_MARKDOWN_VIEW_MIN_CHARS : -1);
}

/* A label for a text block (`min_width`: see text_label_set_markup; not for table cells,
 * a wide table would not shrink) or a table cell. */
static GtkWidget *
text_label_new (const char *markup, gboolean min_width)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
#if GTK_CHECK_VERSION (4, 6, 0)
  gtk_label_set_natural_wrap_mode (GTK_LABEL (label), GTK_NATURAL_WRAP_NONE);
#endif
  if (min_width)
    text_label_set_markup (GTK_LABEL (label), markup);
  else
    gtk_label_set_markup (GTK_LABEL (label), markup);
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
    gtk_grid_attach (GTK_GRID (grid), text_label_new (block->cells->pdata[i], FALSE),
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
      text_label_set_markup (GTK_LABEL (widget), block->markup);
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

/* Show `blocks` (taken) as blocks[first, …): blocks that did not change keep their widgets,
 * a changed one is updated in place when it can be, the rest are replaced. */
static void
show_blocks (HzMarkdownView *self, guint first, GPtrArray *blocks)
{
  guint i;

  for (i = 0; i < blocks->len; i++)
    {
      guint k = first + i;
      HzMdBlock *block = blocks->pdata[i];
      if (k < self->blocks->len)
        {
          HzMdBlock *old = self->blocks->pdata[k];
          GtkWidget *widget = self->widgets->pdata[k];
          if (!hz_md_block_equal (old, block) && !block_widget_update (widget, old, block))
            {
              GtkWidget *fresh = block_widget_new (block);
              gtk_widget_insert_after (fresh, GTK_WIDGET (self), widget);
              gtk_widget_unparent (widget);
              self->widgets->pdata[k] = fresh;
            }
          hz_md_block_free (old);
          self->blocks->pdata[k] = block;
        }
      else
        {
          GtkWidget *fresh = block_widget_new (block);
          gtk_widget_insert_before (fresh, GTK_WIDGET (self), NULL);
          g_ptr_array_add (self->widgets, fresh);
          g_ptr_array_add (self->blocks, block);
        }
    }
  for (guint j = self->widgets->len; j > first + i; j--)
    gtk_widget_unparent (self->widgets->pdata[j - 1]);
  g_ptr_array_set_size (self->widgets, first + i);
  g_ptr_array_set_size (self->blocks, first + i);  /* frees the dropped blocks */

  /* The blocks now belong to self->blocks. */
  g_ptr_array_set_free_func (blocks, NULL);
  g_ptr_array_unref (blocks);
}

/* Parse the whole text again (any change; the end of a stream). */
static void
render_all (HzMarkdownView *self)
{
  self->pending = FALSE;
  self->final_len = 0;
  self->n_final = 0;
  show_blocks (self, 0, hz_markdown_parse (self->text->str, self->text->len));
}

/* Parse only what follows the final blocks: the part of it up to the last cut becomes
 * final, the rest (the block still growing) is parsed again at the next render. */
static void
render_tail (HzMarkdownView *self)
{
  const char *text = self->text->str;
  gsize cut = hz_markdown_find_cut (text, self->final_len, self->text->len);

  self->pending = FALSE;
  if (cut > self->final_len)
    {
      GPtrArray *done = hz_markdown_parse (text + self->final_len, cut - self->final_len);
      guint n_done = done->len;
      show_blocks (self, self->n_final, done);
      self->n_final += n_done;
      self->final_len = cut;
    }
  show_blocks (self, self->n_final, hz_markdown_parse (text + cut, self->text->len - cut));
}

static gboolean
render_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (widget);

  self->tick_id = 0;
  if (self->pending)
    {
      render_tail (self);
      self->last_render_us = g_get_monotonic_time ();
    }
  return G_SOURCE_REMOVE;
}

static gboolean
wait_over (gpointer data)
{
  HzMarkdownView *self = data;

  self->wait_id = 0;
  if (self->tick_id == 0)
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), render_tick, NULL, NULL);
  return G_SOURCE_REMOVE;
}

/* A streaming render at the next frame, or at the first frame once the interval since
 * the last one is over. */
static void
schedule_render (HzMarkdownView *self)
{
  if (self->tick_id != 0 || self->wait_id != 0)
    return;
  gint64 wait_ms = HZ_MARKDOWN_VIEW_INTERVAL_MS -
                   (g_get_monotonic_time () - self->last_render_us) / 1000;
  if (wait_ms > 0)
    self->wait_id = g_timeout_add ((guint) wait_ms, wait_over, self);
  else
    self->tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (self), render_tick, NULL, NULL);
}

static void
cancel_render (HzMarkdownView *self)
{
  g_clear_handle_id (&self->wait_id, g_source_remove);
  if (self->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->tick_id);
      self->tick_id = 0;
    }
}

/* ------------------------------------------------------------------ size estimate */

/* Calls `line (n_chars, data)` for each line of a block's text as shown (Pango markup: tags
 * skipped, an entity counts as one character). */
static void
for_each_line (const char *s, gboolean markup, void (*line) (glong, gpointer), gpointer data)
{
  glong n = 0;

  for (const char *p = s; p != NULL && *p != '\0'; p = g_utf8_next_char (p))
    {
      if (markup && *p == '<')
        {
          const char *end = strchr (p, '>');
          if (end == NULL)
            break;
          p = end;
          continue;
        }
      if (markup && *p == '&')
        {
          const char *end = strchr (p, ';');
          if (end != NULL)
            p = end;
        }
      if (*p == '\n')
        {
          line (n, data);
          n = 0;
        }
      else
        n++;
    }
  line (n, data);
}

typedef struct {
  glong per_line;   /* characters that fit on a line */
  glong longest;
  glong n_lines;    /* lines laid out (wrapped) */
} LineCount;

static void
count_line (glong n, gpointer data)
{
  LineCount *c = data;
  c->longest = MAX (c->longest, n);
  c->n_lines += MAX (1, (n + c->per_line - 1) / c->per_line);
}

void
hz_markdown_estimate_size (GPtrArray *blocks, int cw, int lh, int for_width,
                           int *min_width, int *nat_width, int *height_out)
{
  glong longest = 0, height = 0;

  cw = MAX (cw, 1);
  for (guint i = 0; i < blocks->len; i++)
    {
      const HzMdBlock *b = blocks->pdata[i];
      LineCount c = { for_width > 0 ? MAX (1, for_width / cw) : G_MAXLONG / 2, 0, 0 };
      switch (b->kind)
        {
        case HZ_MD_BLOCK_TEXT:
          for_each_line (b->markup, TRUE, count_line, &c);
          height += c.n_lines * lh;
          break;
        case HZ_MD_BLOCK_CODE:
          c.per_line = G_MAXLONG / 2;  /* scrolls sideways */
          for_each_line (b->text, FALSE, count_line, &c);
          height += 34 + c.n_lines * lh + 14;
          break;
        case HZ_MD_BLOCK_TABLE:
          {
            guint rows = b->cells->len / MAX (b->n_columns, 1);
            for (guint k = 0; k < b->cells->len; k++)
              for_each_line (b->cells->pdata[k], TRUE, count_line, &c);
            c.longest *= MAX (b->n_columns, 1);
            height += rows * lh + (rows > 0 ? (rows - 1) * 6 : 0) + 14;
          }
          break;
        case HZ_MD_BLOCK_RULE:
        default:
          height += 1;
          break;
        }
      longest = MAX (longest, c.longest);
      if (i > 0)
        height += 8;
    }
  *min_width = (int) MIN (longest, HZ_MARKDOWN_VIEW_MIN_CHARS) * cw;
  *nat_width = (int) MIN (longest * cw, G_MAXINT / 2);
  *height_out = (int) MIN (height, G_MAXINT / 2);
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
  gsize len = strlen (markdown);
  gboolean extends = len >= self->text->len &&
                     memcmp (markdown, self->text->str, self->text->len) == 0;
  if (extends && len == self->text->len)
    return;  /* unchanged */

  if (self->streaming && extends)
    {
      /* A streamed reply grew: one render at the next frame shows all that arrived. */
      g_string_append_len (self->text, markdown + self->text->len, len - self->text->len);
      self->pending = TRUE;
      schedule_render (self);
      return;
    }
  g_string_assign (self->text, markdown);
  cancel_render (self);
  render_all (self);
}

const char *
hz_markdown_view_get_text (HzMarkdownView *self)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), NULL);
  return self->text->str;
}

void
hz_markdown_view_set_streaming (HzMarkdownView *self, gboolean streaming)
{
  g_return_if_fail (HZ_IS_MARKDOWN_VIEW (self));

  streaming = !!streaming;
  if (self->streaming == streaming)
    return;
  self->streaming = streaming;
  if (!streaming && (self->pending || self->final_len > 0))
    {
      cancel_render (self);
      /* Once complete, the whole text (reference definitions resolve everywhere). */
      render_all (self);
    }
}

void
hz_markdown_view_flush (HzMarkdownView *self)
{
  g_return_if_fail (HZ_IS_MARKDOWN_VIEW (self));
  if (!self->pending)
    return;
  cancel_render (self);
  render_tail (self);
  self->last_render_us = g_get_monotonic_time ();
}

char *
hz_markdown_view_get_plain_text (HzMarkdownView *self)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), NULL);
  if (self->pending)
    {
      /* (a streaming view between renders: the blocks shown lag the text) */
      g_autoptr(GPtrArray) blocks = hz_markdown_parse (self->text->str, self->text->len);
      return hz_md_blocks_to_plain (blocks);
    }
  return hz_md_blocks_to_plain (self->blocks);
}

guint
hz_markdown_view_get_n_final_blocks (HzMarkdownView *self)
{
  g_return_val_if_fail (HZ_IS_MARKDOWN_VIEW (self), 0);
  return self->n_final;
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

/* ------------------------------------------------------------------ drawing */

/* Draw only the blocks in (or near) the visible part of the scrolled window: GTK draws
 * every child of a widget, and a reply of 20,000 tokens is ~150 blocks, most of them far
 * outside the window, whose glyphs the renderer would go through at every frame. */
static void
hz_markdown_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (widget);
  double top = -G_MAXDOUBLE, bottom = G_MAXDOUBLE;
  graphene_point_t origin;

  if (self->scroller != NULL &&
      gtk_widget_compute_point (self->scroller, widget, &GRAPHENE_POINT_INIT (0, 0), &origin))
    {
      top = origin.y - CULL_MARGIN;
      bottom = origin.y + gtk_widget_get_height (self->scroller) + CULL_MARGIN;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      graphene_rect_t b;
      if (gtk_widget_compute_bounds (child, widget, &b) &&
          (b.origin.y + b.size.height < top || b.origin.y > bottom))
        continue;
      gtk_widget_snapshot_child (widget, child, snapshot);
    }
}

/* Scrolling moves us without redrawing us: draw again to show the blocks that came into
 * view (only when we are taller than the window, else nothing was left out). */
static void
on_scrolled (GtkAdjustment *adj, HzMarkdownView *self)
{
  if (gtk_widget_get_height (GTK_WIDGET (self)) > gtk_adjustment_get_page_size (adj))
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
hz_markdown_view_map (GtkWidget *widget)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (widget);

  GTK_WIDGET_CLASS (hz_markdown_view_parent_class)->map (widget);
  self->scroller = gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW);
  if (self->scroller != NULL)
    {
      self->vadj = g_object_ref (
        gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->scroller)));
      g_signal_connect (self->vadj, "value-changed", G_CALLBACK (on_scrolled), self);
    }
}

static void
hz_markdown_view_unmap (GtkWidget *widget)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (widget);

  if (self->vadj != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->vadj, on_scrolled, self);
      g_clear_object (&self->vadj);
    }
  self->scroller = NULL;
  GTK_WIDGET_CLASS (hz_markdown_view_parent_class)->unmap (widget);
}

/* ------------------------------------------------------------------ GObject */

static void
hz_markdown_view_dispose (GObject *object)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (object);
  GtkWidget *child;

  cancel_render (self);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_ptr_array_set_size (self->widgets, 0);
  G_OBJECT_CLASS (hz_markdown_view_parent_class)->dispose (object);
}

static void
hz_markdown_view_finalize (GObject *object)
{
  HzMarkdownView *self = HZ_MARKDOWN_VIEW (object);

  g_string_free (self->text, TRUE);
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
  widget_class->snapshot = hz_markdown_view_snapshot;
  widget_class->map = hz_markdown_view_map;
  widget_class->unmap = hz_markdown_view_unmap;
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
  self->text = g_string_new (NULL);
  self->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_md_block_free);
  self->widgets = g_ptr_array_new ();
  self->last_render_us = G_MININT64 / 2;
}
