/* tests/fuzz/fuzz-egress-round.c — libFuzzer target for the JSON replies the federation
 * client (egress/egress.c) reads from the aggregation server, which may be broken or
 * hostile: GET /v1/rounds/current -> {"round": N} (hz_egress_parse_round_reply()) and
 * PUT /v1/rounds/N/update -> {"status", "round", "sha256"}
 * (hz_egress_reply_confirms_upload()). The input is the reply body.
 *
 * Invariants: a round is accepted only as an integer >= 1, and then it is the value of the
 * "round" member; an upload is confirmed only for the round and sha256 it names. A GLib
 * critical (a json-glib getter used on a member of another kind) aborts under
 * G_DEBUG=fatal-criticals, as a violation does. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-egress-round: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

/* Member "sha256" of the reply when it is a JSON object with a string there (parsed here
 * independently of egress.c), else NULL; *round_member: its "round" node or NULL. */
static const char *
reply_sha (JsonParser *p, const char *text, gsize size, JsonNode **round_member)
{
  *round_member = NULL;
  if (!json_parser_load_from_data (p, text, (gssize) size, NULL) || !json_parser_get_root (p) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p)))
    return NULL;
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  *round_member = json_object_get_member (o, "round");
  JsonNode *n = json_object_get_member (o, "sha256");
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *) data;
  if (size > G_MAXSSIZE)
    return 0;
  guint64 round = 0;
  const gboolean have_round = hz_egress_parse_round_reply (text, size, &round);
  g_autoptr (JsonParser) p = json_parser_new ();
  JsonNode *rn;
  const char *sha = reply_sha (p, text, size, &rn);
  if (have_round)
    CHECK (round >= 1 && rn && JSON_NODE_HOLDS_VALUE (rn) &&
           json_node_get_value_type (rn) == G_TYPE_INT64 && json_node_get_int (rn) == (gint64) round);

  /* an upload is confirmed only for the round and the sha256 the reply names */
  static const char other[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  const char *named = sha ? sha : other;
  if (!have_round)
    CHECK (!hz_egress_reply_confirms_upload (text, size, 1, named));
  else
    {
      if (round < G_MAXINT64)
        CHECK (!hz_egress_reply_confirms_upload (text, size, round + 1, named));
      (void) hz_egress_reply_confirms_upload (text, size, round, named);
    }
  if (sha == NULL || strcmp (sha, other) != 0)
    CHECK (!hz_egress_reply_confirms_upload (text, size, have_round ? round : 1, other));
  if (sha)
    {
      g_autofree char *longer = g_strconcat (sha, "0", NULL);
      CHECK (!hz_egress_reply_confirms_upload (text, size, have_round ? round : 1, longer));
    }
  return 0;
}
