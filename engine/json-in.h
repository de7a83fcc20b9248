/* engine/json-in.h — reading the JSON files of a Hugging Face model folder (config.json,
 * tokenizer.json, tokenizer_config.json, the safetensors index) with json-glib.
 *
 * Lookups are lenient: a missing member, or one of another type, gives the default, so a
 * caller decides which absences are errors. Thread safety: plain functions of their
 * arguments (a JsonObject must not be used by two threads at once). */
#pragma once

#include <json-glib/json-glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/** Parse the JSON file at `path`; its root must be an object. Returns the root object, owned
 *  by `*parser_out` (unref it when done). A missing file, when not `required`, gives NULL
 *  with no error; a parse error, or a root that is not an object (HZ_GGUF_ERROR_INVALID,
 *  naming the path), gives NULL with `error` set. */
JsonObject *hz_json_read_object (const char *path, JsonParser **parser_out, gboolean required,
                                 GError **error);

/** Member `k` of `o` (NULL allowed) as an integer (an integral or floating JSON number,
 *  truncated), else `def`. */
int64_t     hz_json_int (JsonObject *o, const char *k, int64_t def);
/** Member `k` of `o` (NULL allowed) as a double, else `def`. */
double      hz_json_dbl (JsonObject *o, const char *k, double def);
/** Member `k` of `o` (NULL allowed) as a string (owned by `o`), else NULL. */
const char *hz_json_str (JsonObject *o, const char *k);
/** Member `k` of `o` (NULL allowed) as a boolean, else `def`. */
gboolean    hz_json_bool (JsonObject *o, const char *k, gboolean def);
/** Member `k` of `o` (NULL allowed) as an object / array, else NULL. */
JsonObject *hz_json_obj (JsonObject *o, const char *k);
JsonArray  *hz_json_arr (JsonObject *o, const char *k);

G_END_DECLS
