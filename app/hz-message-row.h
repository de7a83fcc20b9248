/* hz-message-row.h — HzMessageRow: the widget that shows one HzMessageItem in the chat
 * view's GtkListView (recycled: set_item() rebinds it to another message). Its widgets
 * (a template: bubble, Markdown, buttons) are made only once it comes within a page of the
 * visible part of the list (hz-lazy.h) or shows a reply being written; until then it
 * reports a size estimated from the text and carries only its accessible name and
 * description. Main thread.
 */
#pragma once

#include <gtk/gtk.h>
#include "hz-message-item.h"

G_BEGIN_DECLS

#define HZ_TYPE_MESSAGE_ROW (hz_message_row_get_type ())
G_DECLARE_FINAL_TYPE (HzMessageRow, hz_message_row, HZ, MESSAGE_ROW, GtkWidget)

/** A new, unbound row. */
GtkWidget     *hz_message_row_new (void);
/** Show `item` (NULL unbinds); follows its "text", "streaming" and "details". */
void           hz_message_row_set_item (HzMessageRow *self, HzMessageItem *item);
/** Whether the row's widgets were made (see above). */
gboolean       hz_message_row_get_built (HzMessageRow *self);
/** The item shown, or NULL. */
HzMessageItem *hz_message_row_get_item (HzMessageRow *self);

G_END_DECLS
