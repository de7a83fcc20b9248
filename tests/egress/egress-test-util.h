/* tests/egress/egress-test-util.h — loopback servers on their own thread and small helpers
 * shared by the egress network tests (header-only). */
#pragma once

#include <gio/gio.h>
#include <string.h>
#include "aggregator.h"
#include "dp.h"

#define HZT_BASE "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A server thread with its own GMainContext. `setup` runs in that thread (with the
 * context pushed as thread-default), starts listening and returns the port. */
typedef guint (*HztSetup) (gpointer user_data);

typedef struct {
  GThread      *thread;
  GMainContext *ctx;
  GMainLoop    *loop;
  HztSetup      setup;
  gpointer      user_data;
  guint         port;
  GMutex        m;
  GCond         c;
  gboolean      ready;
} HztServer;

static gpointer
hzt_server_main (gpointer p)
{
  HztServer *s = p;
  g_main_context_push_thread_default (s->ctx);
  guint port = s->setup (s->user_data);
  g_mutex_lock (&s->m);
  s->port = port;
  s->ready = TRUE;
  g_cond_signal (&s->c);
  g_mutex_unlock (&s->m);
  g_main_loop_run (s->loop);
  g_main_context_pop_thread_default (s->ctx);
  return NULL;
}

static inline HztServer *
hzt_server_start (HztSetup setup, gpointer user_data)
{
  HztServer *s = g_new0 (HztServer, 1);
  s->ctx = g_main_context_new ();
  s->loop = g_main_loop_new (s->ctx, FALSE);
  s->setup = setup;
  s->user_data = user_data;
  g_mutex_init (&s->m);
  g_cond_init (&s->c);
  s->thread = g_thread_new ("hzt-server", hzt_server_main, s);
  g_mutex_lock (&s->m);
  while (!s->ready)
    g_cond_wait (&s->c, &s->m);
  g_mutex_unlock (&s->m);
  g_assert_cmpuint (s->port, >, 0);
  return s;
}

typedef struct {
  GSourceFunc fn;
  gpointer    data;
  gboolean    done;
  GMutex      m;
  GCond       c;
} HztCall;

static gboolean
hzt_call_cb (gpointer p)
{
  HztCall *call = p;
  call->fn (call->data);
  g_mutex_lock (&call->m);
  call->done = TRUE;
  g_cond_signal (&call->c);
  g_mutex_unlock (&call->m);
  return G_SOURCE_REMOVE;
}

/* Run fn(data) in the server thread and wait for it. */
static inline void
hzt_server_call (HztServer *s, GSourceFunc fn, gpointer data)
{
  HztCall call = { fn, data, FALSE };
  g_mutex_init (&call.m);
  g_cond_init (&call.c);
  g_main_context_invoke (s->ctx, hzt_call_cb, &call);
  g_mutex_lock (&call.m);
  while (!call.done)
    g_cond_wait (&call.c, &call.m);
  g_mutex_unlock (&call.m);
  g_mutex_clear (&call.m);
  g_cond_clear (&call.c);
}

static gboolean
hzt_quit (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* Stop the loop; `teardown` (may be NULL) then runs in the server thread's context. */
static inline void
hzt_server_stop (HztServer *s, GSourceFunc teardown, gpointer data)
{
  if (teardown)
    hzt_server_call (s, teardown, data);
  g_main_context_invoke (s->ctx, hzt_quit, s->loop);
  g_thread_join (s->thread);
  g_main_loop_unref (s->loop);
  g_main_context_unref (s->ctx);
  g_free (s);
}

static inline char *
hzt_url (guint port)
{
  return g_strdup_printf ("http://127.0.0.1:%u", port);
}

static inline HzStore *
hzt_tmp_store (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hz-egress-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "hanzo.db", NULL);
  HzStore *store = hz_store_open (path, &error);
  g_assert_no_error (error);
  return store;
}

/* A small adapter config: 2 layers x q,v projections of a hidden-16 model, rank 2. */
static inline HzDeltaConfig *
hzt_config (void)
{
  HzDeltaConfig *cfg = hz_delta_config_new (2, 4);
  for (int l = 0; l < 2; l++)
    for (int p = 0; p < 2; p++)
      {
        g_autofree char *a = g_strdup_printf ("layers.%d.%s.lora_A.weight", l, p ? "v" : "q");
        g_autofree char *b = g_strdup_printf ("layers.%d.%s.lora_B.weight", l, p ? "v" : "q");
        const int64_t sa[2] = { 2, 16 }, sb[2] = { 16, 2 };
        g_assert_true (hz_delta_config_add_tensor (cfg, a, 2, sa, NULL));
        g_assert_true (hz_delta_config_add_tensor (cfg, b, 2, sb, NULL));
      }
  return cfg;
}

/* Every upload in the log has its release in the ledger (privacy invariant). */
static inline void
hzt_assert_uploads_ledgered (HzStore *store)
{
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (hz_store_count_unledgered_uploads (store, &error), ==, 0);
  g_autoptr (GPtrArray) log = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < log->len; i++)
    {
      const HzEgressLogEntry *e = log->pdata[i];
      if (e->direction != HZ_EGRESS_UPLOAD)
        continue;
      g_autoptr (HzPrivacyLedgerEntry) l = hz_store_get_privacy_release (store, e->release_id, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (l->payload_sha256, ==, e->payload_sha256);
      g_assert_cmpfloat_with_epsilon (l->epsilon, e->epsilon, 1e-9);
    }
}

/* Register n clients "<prefix>-i" whose bearer tokens are "token-i" (stored hashed, as the
 * aggregator keeps them), listen on a free loopback port and return it. Call in the
 * server thread. */
static inline guint
hzt_aggregator_start (HzAggregator *agg, const char *prefix, int n)
{
  g_autoptr (GError) error = NULL;
  for (int i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("%s-%d", prefix, i);
      g_autofree char *tok = g_strdup_printf ("token-%d", i);
      g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, tok, -1);
      g_assert_true (hz_aggregator_add_client (agg, id, sha, &error));
    }
  g_assert_true (hz_aggregator_listen (agg, "127.0.0.1", 0, NULL, &error));
  g_assert_no_error (error);
  return hz_aggregator_get_port (agg);
}
