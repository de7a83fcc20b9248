/* hz-export.h — a conversation as a Markdown or JSON document (for "Export…").
 *
 * Both formats hold what the chat view shows: the title, the system prompt and the
 * messages of the shown branch (one version of each regenerated or edited message), with
 * the reply statistics and ratings where known. Pure functions of their arguments; main
 * thread (they read HzMessageItems).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  HZ_EXPORT_MARKDOWN,
  HZ_EXPORT_JSON,
} HzExportFormat;

/** The file name suffix of `format` without the dot ("md" or "json"). */
const char *hz_export_format_suffix (HzExportFormat format);

/** Parse "markdown" or "json"; FALSE for anything else. */
gboolean    hz_export_format_from_string (const char *str, HzExportFormat *out_format);

/**
 * hz_export_conversation:
 * @format: the format
 * @title: the conversation's title
 * @system_prompt: (nullable): its system prompt
 * @model_path: (nullable): the model file it used
 * @messages: (element-type HzMessageItem): the messages, oldest first
 *
 * Returns: (transfer full): the document, UTF-8
 */
GBytes     *hz_export_conversation (HzExportFormat format,
                                    const char    *title,
                                    const char    *system_prompt,
                                    const char    *model_path,
                                    GListModel    *messages);

/** A file name for exporting a conversation titled `title` (g_free): the title without
 *  characters that file systems refuse, plus the format's suffix. */
char       *hz_export_file_name (HzExportFormat format, const char *title);

G_END_DECLS
