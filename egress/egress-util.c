/* egress/egress-util.c — helpers shared by egress.c and hub.c (egress-private.h). */
#include "egress-private.h"

#include <math.h>
#include <string.h>

gboolean
hz_egress_loopback_host (const char *host)
{
  if (!host)
    return FALSE;
  if (g_ascii_strcasecmp (host, "localhost") == 0)
    return TRUE;
  g_autofree char *bare = g_strdup (host);
  if (bare[0] == '[')   /* GUri keeps IPv6 brackets out, but be lenient */
    {
      memmove (bare, bare + 1, strlen (bare));
      char *end = strchr (bare, ']');
      if (end)
        *end = 0;
    }
  g_autoptr (GInetAddress) addr = g_inet_address_new_from_string (bare);
  return addr && g_inet_address_get_is_loopback (addr);
}

gboolean
hz_egress_uri_allowed (GUri *uri)
{
  const char *scheme = uri ? g_uri_get_scheme (uri) : NULL;
  const char *host = uri ? g_uri_get_host (uri) : NULL;
  return host && *host && scheme && !g_uri_get_userinfo (uri) &&
         (g_ascii_strcasecmp (scheme, "https") == 0 ||
          (g_ascii_strcasecmp (scheme, "http") == 0 && hz_egress_loopback_host (host)));
}

char *
hz_egress_check_endpoint (const char *endpoint, const char *what, GQuark domain, int code,
                          GError **error)
{
  g_autoptr (GUri) uri = endpoint ? g_uri_parse (endpoint, G_URI_FLAGS_NONE, NULL) : NULL;
  if (!hz_egress_uri_allowed (uri) || g_uri_get_query (uri) || g_uri_get_fragment (uri))
    {
      g_set_error (error, domain, code,
                   "%s '%s' must be an https:// URL (plain http only to a loopback address), "
                   "without query, fragment or credentials", what,
                   endpoint ? endpoint : "(null)");
      return NULL;
    }
  char *base = g_strdup (endpoint);
  gsize len = strlen (base);
  while (len > 0 && base[len - 1] == '/')
    base[--len] = 0;
  return base;
}

static int
effective_port (GUri *u)
{
  int port = g_uri_get_port (u);
  if (port > 0)
    return port;
  return g_ascii_strcasecmp (g_uri_get_scheme (u), "https") == 0 ? 443 : 80;
}

gboolean
hz_egress_same_origin (GUri *a, GUri *b)
{
  return a && b && g_uri_get_host (a) && g_uri_get_host (b) &&
         g_ascii_strcasecmp (g_uri_get_scheme (a), g_uri_get_scheme (b)) == 0 &&
         g_ascii_strcasecmp (g_uri_get_host (a), g_uri_get_host (b)) == 0 &&
         effective_port (a) == effective_port (b);
}

char *
hz_egress_excerpt (GBytes *reply)
{
  if (!reply || g_bytes_get_size (reply) == 0)
    return g_strdup ("(empty reply)");
  gsize n = MIN (g_bytes_get_size (reply), 200);
  g_autofree char *valid = g_utf8_make_valid (g_bytes_get_data (reply, NULL), (gssize) n);
  for (char *p = valid; *p; p++)
    if (g_ascii_iscntrl (*p))
      *p = ' ';
  return g_strstrip (g_steal_pointer (&valid));
}

GBytes *
hz_egress_read_limited (GInputStream *in, gsize limit, GCancellable *cancellable,
                        GError **error)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  guint8 chunk[65536];
  for (;;)
    {
      gssize r = g_input_stream_read (in, chunk, sizeof chunk, cancellable, error);
      if (r < 0)
        return NULL;
      if (r == 0)
        break;
      if (buf->len + (gsize) r > limit)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                       "reply larger than %" G_GSIZE_FORMAT " bytes", limit);
          return NULL;
        }
      g_byte_array_append (buf, chunk, (guint) r);
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&buf));
}

gboolean
hz_egress_backoff_sleep (guint ms, GCancellable *cancellable)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;
  for (gint64 now; (now = g_get_monotonic_time ()) < end;)
    {
      if (g_cancellable_is_cancelled (cancellable))
        return FALSE;
      g_usleep ((gulong) MIN (end - now, 20000));
    }
  return !g_cancellable_is_cancelled (cancellable);
}

guint
hz_egress_backoff_ms (const HzEgressRetry *r, int attempt)
{
  double ms = r->initial_backoff_ms * pow (2.0, attempt - 1);
  ms = MIN (ms, (double) r->max_backoff_ms);
  return (guint) (ms * g_random_double_range (0.75, 1.25));
}

gboolean
hz_egress_status_retryable (guint status)
{
  return status < 100 || status == 408 || status == 429 || status >= 500;
}

SoupSession *
hz_egress_session_new (guint timeout_s, gboolean decode)
{
  SoupSession *s = soup_session_new_with_options ("timeout", timeout_s, "idle-timeout",
                                                  timeout_s, "user-agent",
                                                  "hanzo-desktop/" "0.1", NULL);
  if (!decode)
    soup_session_remove_feature_by_type (s, SOUP_TYPE_CONTENT_DECODER);
  return s;
}

JsonObject *
hz_egress_parse_json_object (const char *data, gsize len, JsonParser *parser)
{
  if (!data || len > G_MAXSSIZE || !json_parser_load_from_data (parser, data, (gssize) len, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  return root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
}

const char *
hz_egress_member_string (JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

gboolean
hz_egress_member_int (JsonObject *o, const char *name, gint64 *out)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (n);
  return TRUE;
}

gboolean
hz_egress_token_ok (const char *token)
{
  if (!token || !*token || !g_utf8_validate (token, -1, NULL))
    return FALSE;
  for (const char *p = token; *p; p++)
    if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p))
      return FALSE;
  return TRUE;
}
