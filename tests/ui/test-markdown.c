/* test-markdown.c — Markdown rendering (app/hz-markdown.c, app/hz-markdown-view.c):
 * headings, lists, tables, links, inline code, emphasis, code blocks, LaTeX kept as
 * source; every piece of markup valid Pango markup, also for every prefix of a document
 * (a reply streaming in); the cuts of a growing text (hz_markdown_find_cut) split it into
 * parts whose blocks are those of the whole; the view re-renders incrementally (unchanged
 * blocks keep their widgets; streaming, it re-parses only the end after the last cut) and a
 * long streamed reply never makes one render take long (the time of the slowest render is
 * printed: a benchmark, not a timed assertion); the plain text a screen reader gets has no
 * Markdown syntax left; the size estimate of rows not built yet (hz-lazy.h) is close to the
 * laid-out size. Screenshot: markdown-streamed.
 */
#include <gtk/gtk.h>

#include "hz-lazy.h"
#include "hz-markdown.h"
#include "hz-markdown-view.h"
#include "ui-test-util.h"

static const char doc[] =
  "# Title\n"
  "\n"
  "Some *emphasis*, **strong**, ~~gone~~, `code & <tags>` and a [link](https://example.org/?a=1&b=2).\n"
  "\n"
  "- one\n"
  "- two\n"
  "  1. nested\n"
  "- [x] done\n"
  "\n"
  "> quoted <text>\n"
  "\n"
  "```c\n"
  "int main (void) { return 1 < 2; }\n"
  "```\n"
  "\n"
  "| a | b |\n"
  "|---|---|\n"
  "| 1 | **2** |\n"
  "\n"
  "Math $e^{i\\pi} + 1 = 0$ and $$\\int_0^1 x\\,dx$$ &copy; &#x263A; &bogus;\n"
  "\n"
  "---\n";

/* Valid for a GtkLabel: Pango markup plus GtkLabel's <a href="..."> links. */
static void
assert_markup_valid (const char *markup)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRegex) links = g_regex_new ("<a href=\"[^\"<>]*\">|</a>", 0, 0, NULL);
  g_autofree char *pango = g_regex_replace_literal (links, markup, -1, 0, "", 0, NULL);
  if (!pango_parse_markup (pango, -1, 0, NULL, NULL, NULL, &error))
    g_error ("invalid markup %s: %s", markup, error->message);
}

static void
assert_blocks_valid (GPtrArray *blocks)
{
  for (guint i = 0; i < blocks->len; i++)
    {
      HzMdBlock *b = blocks->pdata[i];
      if (b->kind == HZ_MD_BLOCK_TEXT)
        assert_markup_valid (b->markup);
      if (b->kind == HZ_MD_BLOCK_TABLE)
        for (guint j = 0; j < b->cells->len; j++)
          assert_markup_valid (b->cells->pdata[j]);
      if (b->kind == HZ_MD_BLOCK_CODE)
        g_assert_true (g_utf8_validate (b->text, -1, NULL));
    }
}

static void
test_parse (void)
{
  g_autoptr(GPtrArray) blocks = hz_markdown_parse (doc, -1);
  HzMdBlock *b;

  assert_blocks_valid (blocks);
  g_assert_cmpuint (blocks->len, ==, 8);

  b = blocks->pdata[0];
  g_assert_cmpint (b->kind, ==, HZ_MD_BLOCK_TEXT);
  g_assert_nonnull (strstr (b->markup, "weight=\"bold\">Title</span>"));

  b = blocks->pdata[1];
  g_assert_nonnull (strstr (b->markup, "<i>emphasis</i>"));
  g_assert_nonnull (strstr (b->markup, "<b>strong</b>"));
  g_assert_nonnull (strstr (b->markup, "<s>gone</s>"));
  g_assert_nonnull (strstr (b->markup, "<tt>code &amp; &lt;tags&gt;</tt>"));
  g_assert_nonnull (strstr (b->markup, "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>"));

  b = blocks->pdata[2];
  g_assert_cmpstr (b->markup, ==, "• one\n• two\n    1. nested\n☑ done");

  b = blocks->pdata[3];
  g_assert_nonnull (strstr (b->markup, "quoted &lt;text&gt;"));

  b = blocks->pdata[4];
  g_assert_cmpint (b->kind, ==, HZ_MD_BLOCK_CODE);
  g_assert_cmpstr (b->lang, ==, "c");
  g_assert_cmpstr (b->text, ==, "int main (void) { return 1 < 2; }");

  b = blocks->pdata[5];
  g_assert_cmpint (b->kind, ==, HZ_MD_BLOCK_TABLE);
  g_assert_cmpuint (b->n_columns, ==, 2);
  g_assert_cmpuint (b->cells->len, ==, 4);
  g_assert_cmpstr (b->cells->pdata[0], ==, "<b>a</b>");
  g_assert_cmpstr (b->cells->pdata[3], ==, "<b>2</b>");

  b = blocks->pdata[6];
  g_assert_nonnull (strstr (b->markup, "<tt>$e^{i\\pi} + 1 = 0$</tt>"));
  g_assert_nonnull (strstr (b->markup, "<tt>$$\\int_0^1 x\\,dx$$</tt>"));
  g_assert_nonnull (strstr (b->markup, "©"));
  g_assert_nonnull (strstr (b->markup, "☺"));
  g_assert_nonnull (strstr (b->markup, "&amp;bogus;"));

  b = blocks->pdata[7];
  g_assert_cmpint (b->kind, ==, HZ_MD_BLOCK_RULE);
}

/* Every prefix of the document (as a reply streams in) gives valid markup. */
static void
test_prefixes (void)
{
  for (gsize len = 0; len <= sizeof doc - 1; len++)
    {
      if (!g_utf8_validate (doc, len, NULL))
        continue;  /* the engine never cuts a character */
      g_autoptr(GPtrArray) blocks = hz_markdown_parse (doc, len);
      assert_blocks_valid (blocks);
    }
  /* An unclosed fence is a code block to the end. */
  g_autoptr(GPtrArray) open = hz_markdown_parse ("text\n\n```py\nprint(1)\n", -1);
  g_assert_cmpuint (open->len, ==, 2);
  g_assert_cmpint (((HzMdBlock *) open->pdata[1])->kind, ==, HZ_MD_BLOCK_CODE);
  g_assert_cmpstr (((HzMdBlock *) open->pdata[1])->text, ==, "print(1)");
}

static void
test_view_incremental (void)
{
  GtkWidget *window = gtk_window_new ();
  HzMarkdownView *view = HZ_MARKDOWN_VIEW (hz_markdown_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));

  hz_markdown_view_set_text (view, "# Head\n\nfirst para");
  hz_markdown_view_flush (view);
  g_assert_cmpuint (hz_markdown_view_get_n_blocks (view), ==, 2);
  GtkWidget *head = hz_markdown_view_get_block_widget (view, 0);
  GtkWidget *para = hz_markdown_view_get_block_widget (view, 1);

  /* Appending text updates the last block in place and keeps the first one. */
  hz_markdown_view_set_text (view, "# Head\n\nfirst paragraph grows\n\n```\ncode");
  hz_markdown_view_flush (view);
  g_assert_cmpuint (hz_markdown_view_get_n_blocks (view), ==, 3);
  g_assert_true (hz_markdown_view_get_block_widget (view, 0) == head);
  g_assert_true (hz_markdown_view_get_block_widget (view, 1) == para);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (para)), ==, "first paragraph grows");

  /* Shorter text drops blocks. */
  hz_markdown_view_set_text (view, "plain");
  hz_markdown_view_flush (view);
  g_assert_cmpuint (hz_markdown_view_get_n_blocks (view), ==, 1);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Cuts of a growing text: the blocks of the parts are those of the whole text, and no cut
 * falls inside a fenced code block, a list or a paragraph. */
static void
test_find_cut (void)
{
  static const struct { const char *text; const char *after_cut; } cases[] = {
    { "# Head\n\nPara one\n", "Para one\n" },
    { "Para one\nstill one\n\nPara two grows", "Para two grows" },
    { "```\ncode\n\nnot a cut\n```\n\nAfter", "After" },
    { "~~~~ py\na\n~~~\n\nstill code\n~~~~\n\nAfter", "After" },
    { "- one\n\n- two\n\n  more of two\n", NULL },
    { "1. one\n\n2. two", NULL },
    { "text\n\n    indented code\n", NULL },
    { "``` not a fence ```\n\nnext", "next" },
    { "no blank line\nat all", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *text = cases[i].text;
      gsize len = strlen (text);
      gsize cut = hz_markdown_find_cut (text, 0, len);
      if (cases[i].after_cut == NULL)
        g_assert_cmpuint (cut, ==, 0);
      else
        g_assert_cmpstr (text + cut, ==, cases[i].after_cut);

      /* Parsing the two parts gives the blocks of the whole. */
      g_autoptr(GPtrArray) whole = hz_markdown_parse (text, len);
      g_autoptr(GPtrArray) head = hz_markdown_parse (text, cut);
      g_autoptr(GPtrArray) tail = hz_markdown_parse (text + cut, len - cut);
      g_assert_cmpuint (head->len + tail->len, ==, whole->len);
      for (guint k = 0; k < whole->len; k++)
        g_assert_true (hz_md_block_equal (whole->pdata[k], k < head->len ? head->pdata[k]
                                                                         : tail->pdata[k - head->len]));
      /* A later scan starting at the cut finds nothing before it. */
      g_assert_cmpuint (hz_markdown_find_cut (text, cut, len), >=, cut);
    }
}

/* A streamed view shows, at every step and at the end, the blocks a full parse gives, and
 * keeps the widgets of final blocks. */
static void
test_view_streaming (void)
{
  GtkWidget *window = gtk_window_new ();
  HzMarkdownView *view = HZ_MARKDOWN_VIEW (hz_markdown_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  static const char *const pieces[] = {
    "# Title\n\n", "Some ", "*text*", " here.\n\n", "```c\nint x;\n\n", "int y;\n```\n\n",
    "- a\n", "- b\n\n", "  still b\n\n", "After the list, a [link](https://x.y).\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n", "Last para",
  };
  g_autoptr(GString) text = g_string_new (NULL);
  GtkWidget *first = NULL;

  hz_markdown_view_set_streaming (view, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (pieces); i++)
    {
      g_string_append (text, pieces[i]);
      hz_markdown_view_set_text (view, text->str);
      hz_markdown_view_flush (view);
      g_autoptr(GPtrArray) whole = hz_markdown_parse (text->str, -1);
      g_assert_cmpuint (hz_markdown_view_get_n_blocks (view), ==, whole->len);
      if (first == NULL)
        first = hz_markdown_view_get_block_widget (view, 0);
      g_assert_true (hz_markdown_view_get_block_widget (view, 0) == first);
    }
  g_assert_cmpuint (hz_markdown_view_get_n_final_blocks (view), >=, 4);
  hz_markdown_view_set_streaming (view, FALSE);
  g_assert_cmpuint (hz_markdown_view_get_n_final_blocks (view), ==, 0);
  g_assert_true (hz_markdown_view_get_block_widget (view, 0) == first);
  GtkWidget *last = hz_markdown_view_get_block_widget (view, hz_markdown_view_get_n_blocks (view) - 1);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (last)), ==, "Last para");
  gtk_window_set_default_size (GTK_WINDOW (window), 600, 700);
  gtk_window_present (GTK_WINDOW (window));
  hz_ui_spin (0.5);
  g_autofree char *shot = hz_ui_screenshot (window, "markdown-streamed");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A long reply streamed a few tokens at a time: the slowest single render, printed. */
static void
test_view_streaming_cost (void)
{
  GtkWidget *window = gtk_window_new ();
  HzMarkdownView *view = HZ_MARKDOWN_VIEW (hz_markdown_view_new ());
  g_autoptr(GString) text = g_string_new (NULL);
  gint64 worst = 0, total = 0;
  guint renders = 0;

  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_set_default_size (GTK_WINDOW (window), 600, 400);
  gtk_window_present (GTK_WINDOW (window));
  hz_markdown_view_set_streaming (view, TRUE);
  /* ~20,000 tokens: paragraphs, lists and code, rendered every 50 tokens. */
  for (guint i = 0; i < 20000; i++)
    {
      switch (i % 400)
        {
        case 0: g_string_append (text, "\n\n## Part\n\n"); break;
        case 100: g_string_append (text, "\n\n- item"); break;
        case 150: g_string_append (text, "\n\n```c\nint x = 1;"); break;
        case 200: g_string_append (text, "\n```\n\n"); break;
        default: g_string_append (text, (i % 17) ? " word" : " **bold**"); break;
        }
      if (i % 50 != 49)
        continue;
      gint64 t0 = g_get_monotonic_time ();
      hz_markdown_view_set_text (view, text->str);
      hz_markdown_view_flush (view);
      gint64 dt = g_get_monotonic_time () - t0;
      worst = MAX (worst, dt);
      total += dt;
      renders++;
    }
  g_test_message ("markdown view: %u renders of a growing %zu-byte reply, mean %.2f ms, "
                  "worst %.2f ms (parse + widget update, without layout)",
                  renders, text->len, total / 1000.0 / renders, worst / 1000.0);
  g_assert_cmpuint (hz_markdown_view_get_n_blocks (view), >, 100);
  gint64 t0 = g_get_monotonic_time ();
  hz_markdown_view_set_streaming (view, FALSE);
  g_test_message ("markdown view: the final full parse of the %zu-byte reply: %.2f ms",
                  text->len, (g_get_monotonic_time () - t0) / 1000.0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* What a screen reader reads: the text, no Markdown syntax. */
static void
test_plain (void)
{
  g_autoptr(GPtrArray) blocks = hz_markdown_parse (
    "# Head\n\nSome **bold** and `x < y` with a [link](https://e.org).\n\n"
    "```c\nint x;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\nEnd", -1);
  g_autofree char *plain = hz_md_blocks_to_plain (blocks);
  g_assert_cmpstr (plain, ==,
                   "Head\n\nSome bold and x < y with a link.\n\nint x;\n\na\tb\n1\t2\n\nEnd");
}

/* The estimated height of a reply (rows not built yet) is within a factor of two of the
 * height its view takes when laid out at the same width. */
static void
test_estimate (void)
{
  static const char *const texts[] = {
    "A short answer.",
    "Answer with **bold**, a list:\n\n- one\n- two\n\n```\ncode 1\ncode 2\n```",
    "A long paragraph that wraps over several lines when the view is narrow enough, and "
    "then some more words so that it really does wrap at four hundred pixels wide.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |",
  };
  GtkWidget *window = gtk_window_new ();
  HzMarkdownView *view = HZ_MARKDOWN_VIEW (hz_markdown_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  int cw, lh;
  hz_lazy_font_metrics (GTK_WIDGET (view), &cw, &lh);
  g_assert_cmpint (cw, >, 0);
  g_assert_cmpint (lh, >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(GPtrArray) blocks = hz_markdown_parse (texts[i], -1);
      int min_w, nat_w, est, real_min, real_nat;
      hz_markdown_estimate_size (blocks, cw, lh, 400, &min_w, &nat_w, &est);
      hz_markdown_view_set_text (view, texts[i]);
      gtk_widget_measure (GTK_WIDGET (view), GTK_ORIENTATION_VERTICAL, 400, &real_min, &real_nat,
                          NULL, NULL);
      g_test_message ("text %u: estimated %d px, laid out %d px", i, est, real_nat);
      g_assert_cmpint (est, >=, real_nat / 2);
      g_assert_cmpint (est, <=, real_nat * 2);
      g_assert_cmpint (min_w, <=, nat_w);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char *argv[])
{
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/markdown/parse", test_parse);
  g_test_add_func ("/markdown/prefixes", test_prefixes);
  g_test_add_func ("/markdown/find-cut", test_find_cut);
  g_test_add_func ("/markdown/view-incremental", test_view_incremental);
  g_test_add_func ("/markdown/plain", test_plain);
  g_test_add_func ("/markdown/estimate", test_estimate);
  g_test_add_func ("/markdown/view-streaming", test_view_streaming);
  g_test_add_func ("/markdown/view-streaming-cost", test_view_streaming_cost);
  return g_test_run ();
}
