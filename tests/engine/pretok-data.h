/* tests/engine/pretok-data.h — test helper: the Hugging Face reference data of
 * tests/engine/pretok/ (written by tests/reference/pretok_reference.js): texts.json, the
 * expected ids, and tokenizer.json files to put in a model folder. */
#pragma once
#include <json-glib/json-glib.h>
#include "tokenizer.h"

/** $HZ_SOURCE_DIR/tests/engine/pretok/NAME (free with g_free). */
char     *hz_pretok_data_path (const char *name);
/** The parsed file pretok/NAME (free with json_node_unref); fails the test on an error. */
JsonNode *hz_pretok_load_json (const char *name);
/** A new temporary folder holding pretok/BASE.tokenizer.json as tokenizer.json and, when
 *  there is one, pretok/BASE.tokenizer_config.json as tokenizer_config.json. Remove it with
 *  hz_test_rm_dir (hf-folder.h). */
char     *hz_pretok_make_folder (const char *base);
/** Tokenize every string of `texts` (no BOS/EOS, no special-token parsing) and compare
 *  with `ids` (one array per string); differences are reported with g_test_message,
 *  labelled. Returns the number of strings whose ids are exact. */
guint     hz_pretok_check_ids (const HzTokenizer *t, JsonArray *texts, JsonArray *ids,
                               const char *label);
