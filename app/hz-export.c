/* hz-export.c — conversation export (see hz-export.h). */
#include "hz-export.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "hz-message-item.h"
#include "hanzo/json-out.h"

const char *
hz_export_format_suffix (HzExportFormat format)
{
  return format == HZ_EXPORT_JSON ? "json" : "md";
}

gboolean
hz_export_format_from_string (const char *str, HzExportFormat *out_format)
{
  if (g_strcmp0 (str, "markdown") == 0)
    *out_format = HZ_EXPORT_MARKDOWN;
  else if (g_strcmp0 (str, "json") == 0)
    *out_format = HZ_EXPORT_JSON;
  else
    return FALSE;
  return TRUE;
}

static GBytes *
export_markdown (const char *title, const char *system_prompt, GListModel *messages)
{
  GString *out = g_string_new (NULL);
  guint n = g_list_model_get_n_items (messages);

  g_string_append_printf (out, "# %s\n\n", title);
  if (system_prompt != NULL && *system_prompt)
    g_string_append_printf (out, "## %s\n\n%s\n\n", _("System Prompt"), system_prompt);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzMessageItem) item = g_list_model_get_item (messages, i);
      g_string_append_printf (out, "## %s\n\n%s\n\n",
                              hz_role_get_display_name (hz_message_item_get_role (item)),
                              hz_message_item_get_text (item));
    }
  while (out->len > 0 && out->str[out->len - 1] == '\n')
    g_string_truncate (out, out->len - 1);
  g_string_append_c (out, '\n');
  return g_string_free_to_bytes (out);
}

static GBytes *
export_json (const char *title, const char *system_prompt, const char *model_path,
             GListModel *messages)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint n = g_list_model_get_n_items (messages);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "hanzo-conversation");
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "title");
  json_builder_add_string_value (b, title);
  json_builder_set_member_name (b, "system_prompt");
  if (system_prompt != NULL && *system_prompt)
    json_builder_add_string_value (b, system_prompt);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "model");
  if (model_path != NULL)
    json_builder_add_string_value (b, model_path);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "messages");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzMessageItem) item = g_list_model_get_item (messages, i);
      double tps = -1;
      gint64 n_tokens = hz_message_item_get_n_tokens (item, &tps);
      int rating = hz_message_item_get_rating (item);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, hz_role_to_string (hz_message_item_get_role (item)));
      json_builder_set_member_name (b, "content");
      json_builder_add_string_value (b, hz_message_item_get_text (item));
      if (n_tokens > 0)
        {
          json_builder_set_member_name (b, "tokens");
          json_builder_add_int_value (b, n_tokens);
        }
      if (tps > 0 && isfinite (tps))
        {
          json_builder_set_member_name (b, "tokens_per_second");
          json_builder_add_double_value (b, tps);
        }
      if (rating != 0)
        {
          json_builder_set_member_name (b, "rating");
          json_builder_add_int_value (b, rating);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  gsize len = 0;
  char *text = hz_json_generator_to_data (gen, &len);
  return g_bytes_new_take (text, len);
}

GBytes *
hz_export_conversation (HzExportFormat format, const char *title, const char *system_prompt,
                        const char *model_path, GListModel *messages)
{
  g_return_val_if_fail (G_IS_LIST_MODEL (messages), NULL);
  if (title == NULL || *title == '\0')
    title = _("New Chat");
  if (format == HZ_EXPORT_JSON)
    return export_json (title, system_prompt, model_path, messages);
  return export_markdown (title, system_prompt, messages);
}

char *
hz_export_file_name (HzExportFormat format, const char *title)
{
  g_autofree char *base = g_strdup (title && *title ? title : _("Conversation"));

  for (char *p = base; *p; p++)
    if (strchr ("/\\:*?\"<>|", *p) != NULL || (guchar) *p < 0x20)
      *p = '_';
  g_strstrip (base);
  if (*base == '\0' || *base == '.')
    {
      g_free (base);
      base = g_strdup (_("Conversation"));
    }
  return g_strconcat (base, ".", hz_export_format_suffix (format), NULL);
}
