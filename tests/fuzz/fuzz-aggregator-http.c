/* tests/fuzz/fuzz-aggregator-http.c — libFuzzer target for hanzo-aggregator's HTTP side: the
 * input is what a client sends on one connection (request line, headers, body: plain,
 * chunked, "Expect: 100-continue", cut anywhere). It goes through libsoup's request parser
 * into the aggregator's handlers (egress/aggregator.c: bearer-token check, Content-Length
 * and size limits, path parsing, the upload's wire format and validation, the deadline
 * guards), served from memory streams by hz_aggregator_serve_stream() on this thread's
 * main context. The server knows clients "c-0" and "c-1" with tokens "token-0" and
 * "token-1"; round 1 is open; the adapter config is the one of shapes.c.
 *
 * Invariants: the server takes the stream; whatever it answers starts with an HTTP/1.x
 * status line; it accepts at most one update; the main loop goes idle (no request keeps the
 * server busy). Any violation aborts. GLib criticals abort too (tools/fuzz.sh). */
#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator.h"
#include "shapes.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond))                                                                            \
      {                                                                                     \
        g_printerr ("fuzz-aggregator-http: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                              \
        abort ();                                                                           \
      }                                                                                     \
  } while (0)

static HzDeltaConfig *cfg;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!cfg)
    cfg = fuzz_lora_delta_config ();
  HzAggregatorOptions o = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  HzAggregator *agg = hz_aggregator_new (cfg, &o, NULL);
  CHECK (agg != NULL);
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *id = g_strdup_printf ("c-%d", i);
      g_autofree char *tok = g_strdup_printf ("token-%d", i);
      g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, tok, -1);
      CHECK (hz_aggregator_add_client (agg, id, sha, NULL));
    }

  GInputStream *in = g_memory_input_stream_new_from_data (g_memdup2 (data, size), (gssize) size,
                                                          g_free);
  GOutputStream *out = g_memory_output_stream_new_resizable ();
  GIOStream *io = g_simple_io_stream_new (in, out);
  CHECK (hz_aggregator_serve_stream (agg, io, NULL));
  /* memory streams are always ready: every step of the exchange is dispatched at once; the
   * loop goes idle when the connection is done (only the 100 ms round timer is left) */
  guint steps = 0;
  while (g_main_context_iteration (NULL, FALSE))
    CHECK (++steps < 100000);

  gsize n = g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (out));
  const char *reply = g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (out));
  if (n > 0)
    CHECK (n >= 12 && (memcmp (reply, "HTTP/1.1 ", 9) == 0 || memcmp (reply, "HTTP/1.0 ", 9) == 0)
           && g_ascii_isdigit (reply[9]) && g_ascii_isdigit (reply[10])
           && g_ascii_isdigit (reply[11]));
  HzAggregatorStats st;
  hz_aggregator_get_stats (agg, &st);
  CHECK (st.accepted <= 1 && st.rounds_aggregated == 0);

  g_object_unref (io);
  g_object_unref (in);
  g_object_unref (out);
  hz_aggregator_free (agg);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  return 0;
}
