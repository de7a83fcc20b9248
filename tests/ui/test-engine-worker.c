/* test-engine-worker.c — HzEngineWorker without a window: signals arrive on the main
 * context, streamed text equals the final text and the engine's own output, cancel,
 * errors (bad file, no model, prompt longer than the context), shutdown mid-reply;
 * switching models through the registry (a model still loaded comes back without a load;
 * a budget for one model unloads the other), title requests after every reply; control
 * text typed into a message is text for every chat family of tests/family-vocab.h, and
 * a conversation longer than the context is answered from its newest turns ("trimmed")
 * (issue 20).
 */
#include <glib/gstdio.h>
#include <hanzo/engine.h>

#include "engine-worker.h"
#include "family-vocab.h"
#include "hz-test-util.h"

typedef struct {
  GThread *main_thread;
  guint    n_loaded, n_model_errors, n_tokens, n_finished, n_errors;
  GString *streamed;
  char    *final_text;
  HzStopReason stop_reason;
  guint    n_prompt;       /* of the last finished reply */
  guint    n_trimmed, n_dropped;   /* "trimmed" signals, the last one's count */
  gboolean trimmed_before_token;   /* every "trimmed" came before its reply's tokens */
  guint    tokens_of_request;      /* tokens since the last request began */
  guint    last_request;
  guint    n_generated;        /* of the last "token" signal of the current request */
  guint    stats_n_generated;  /* of the last "finished" */
  GError  *error;
} Events;

static void
check_thread (Events *ev)
{
  g_assert_true (g_thread_self () == ev->main_thread);
}

static void
on_loaded (HzEngineWorker *w, const char *path, const char *name, Events *ev)
{
  check_thread (ev);
  ev->n_loaded++;
}

static void
on_model_error (HzEngineWorker *w, const char *path, GError *error, Events *ev)
{
  check_thread (ev);
  ev->n_model_errors++;
  g_clear_error (&ev->error);
  ev->error = g_error_copy (error);
}

static void
on_token (HzEngineWorker *w, guint request, const char *text, guint n_generated, Events *ev)
{
  check_thread (ev);
  g_assert_cmpuint (request, ==, ev->last_request);
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_cmpuint (n_generated, >, ev->n_generated);   /* new text: new tokens */
  ev->n_generated = n_generated;
  ev->n_tokens++;
  ev->tokens_of_request++;
  g_string_append (ev->streamed, text);
}

static void
on_finished (HzEngineWorker *w, guint request, const char *text, gpointer stats, Events *ev)
{
  check_thread (ev);
  g_assert_cmpuint (request, ==, ev->last_request);
  ev->n_finished++;
  g_free (ev->final_text);
  ev->final_text = g_strdup (text);
  ev->stop_reason = ((const HzGenerateStats *) stats)->stop_reason;
  ev->stats_n_generated = ((const HzGenerateStats *) stats)->n_generated;
  g_assert_cmpuint (ev->n_generated, <=, ev->stats_n_generated);
  ev->n_prompt = ((const HzGenerateStats *) stats)->n_prompt;
}

static void
on_trimmed (HzEngineWorker *w, guint request, guint n_dropped, Events *ev)
{
  check_thread (ev);
  g_assert_cmpuint (request, ==, ev->last_request);
  ev->n_trimmed++;
  ev->n_dropped = n_dropped;
  ev->trimmed_before_token = ev->tokens_of_request == 0;
}

static void
on_error (HzEngineWorker *w, guint request, GError *error, Events *ev)
{
  check_thread (ev);
  g_assert_cmpuint (request, ==, ev->last_request);
  ev->n_errors++;
  g_clear_error (&ev->error);
  ev->error = g_error_copy (error);
}

static HzEngineWorker *
new_worker (Events *ev)
{
  HzEngineWorker *w = hz_engine_worker_new ();
  ev->main_thread = g_thread_self ();
  ev->streamed = g_string_new (NULL);
  g_signal_connect (w, "model-loaded", G_CALLBACK (on_loaded), ev);
  g_signal_connect (w, "model-error", G_CALLBACK (on_model_error), ev);
  g_signal_connect (w, "token", G_CALLBACK (on_token), ev);
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), ev);
  g_signal_connect (w, "error", G_CALLBACK (on_error), ev);
  g_signal_connect (w, "trimmed", G_CALLBACK (on_trimmed), ev);
  return w;
}

static void
events_clear (Events *ev)
{
  g_string_free (ev->streamed, TRUE);
  g_free (ev->final_text);
  g_clear_error (&ev->error);
}

static void
wait_until (guint *counter, guint value)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (*counter < value)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

static guint
generate (HzEngineWorker *w, Events *ev, const char *prompt)
{
  HzChatMessage msg = { "user", prompt };
  HzGenerateParams params;
  hz_generate_params_init (&params);
  params.n_predict = 64;
  g_string_truncate (ev->streamed, 0);
  ev->n_generated = 0;
  ev->last_request = hz_engine_worker_generate (w, &msg, 1, &params);
  g_assert_cmpuint (ev->last_request, >, 0);
  return ev->last_request;
}

static char *
engine_reply (const char *model_path, const char *prompt)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(HzContext) ctx = hz_context_new (model, NULL, &error);
  g_assert_no_error (error);
  gsize n = 0;
  g_autofree HzToken *tokens = hz_model_tokenize (model, prompt, -1, TRUE, FALSE, &n);
  HzGenerateParams params;
  hz_generate_params_init (&params);
  params.n_predict = 64;
  char *text = hz_context_generate (ctx, tokens, n, &params, NULL, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static void
test_errors_without_model (void)
{
  Events ev = { 0 };
  g_autoptr(HzEngineWorker) w = new_worker (&ev);
  g_autofree char *dir = g_dir_make_tmp ("hz-worker-XXXXXX", NULL);
  g_autofree char *bad = g_build_filename (dir, "x.gguf", NULL);
  g_assert_true (g_file_set_contents (bad, "not a model", -1, NULL));

  /* Generating with no model: an error, not a crash. */
  generate (w, &ev, "hello");
  wait_until (&ev.n_errors, 1);
  g_assert_cmpuint (ev.n_finished, ==, 0);

  /* A text file named .gguf: model-error with the engine's message. */
  hz_engine_worker_load_model (w, bad);
  g_assert_false (hz_engine_worker_is_model_loaded (w));
  wait_until (&ev.n_model_errors, 1);
  g_assert_nonnull (ev.error);
  g_assert_cmpstr (ev.error->message, !=, "");
  g_test_message ("bad model: %s", ev.error->message);
  g_assert_false (hz_engine_worker_is_model_loaded (w));
  g_assert_cmpuint (ev.n_loaded, ==, 0);

  g_unlink (bad);
  g_rmdir (dir);
  events_clear (&ev);
}

/* A copy of the first `n` bytes (G_MAXSIZE: all) of `src` as `name` in the new temporary
 * folder *dir (g_free both; the file's path is returned). *size: the source's size. */
static char *
copy_model (const char *src, const char *name, gsize n, char **dir, gsize *size)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  *dir = g_dir_make_tmp ("hz-worker-XXXXXX", NULL);
  char *path = g_build_filename (*dir, name, NULL);
  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  g_assert_true (g_file_set_contents (path, data, (gssize) MIN (n, len), NULL));
  if (size)
    *size = len;
  return path;
}

/* A file that cannot be loaded, asked for while a model serves (the app's --model sent to
 * the running instance): model-error for it, then model-loaded for the model used before,
 * which serves on without a load; a reply still comes. */
static void
test_bad_model_keeps_previous (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autofree char *dir = NULL;
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_autofree char *bad = copy_model (path, "bad.gguf", (gsize) st.st_size / 2, &dir, NULL);   /* cut */

  Events ev = { 0 };
  HzEngineWorker *w = new_worker (&ev);
  g_autofree char *expected = engine_reply (path, "Once upon a time");
  hz_engine_worker_load_model_full (w, path, 96);
  wait_until (&ev.n_loaded, 1);
  g_assert_cmpuint (hz_engine_worker_get_context_length (w), ==, 96);

  hz_engine_worker_load_model_full (w, bad, 128);
  g_assert_cmpstr (hz_engine_worker_get_model_path (w), ==, bad);
  wait_until (&ev.n_model_errors, 1);
  g_test_message ("bad model: %s", ev.error->message);
  g_assert_nonnull (strstr (ev.error->message, "incomplete"));
  wait_until (&ev.n_loaded, 2);
  g_assert_cmpuint (ev.n_model_errors, ==, 1);
  g_assert_cmpstr (hz_engine_worker_get_model_path (w), ==, path);
  g_assert_true (hz_engine_worker_is_model_loaded (w));
  g_assert_cmpuint (hz_engine_worker_get_context_length (w), ==, 96);
  /* the first model and the attempt at the cut file; the way back was no load */
  g_assert_cmpuint (hz_engine_worker_get_n_loads (w), ==, 2);

  g_clear_error (&ev.error);
  generate (w, &ev, "Once upon a time");
  wait_until (&ev.n_finished, 1);
  g_assert_no_error (ev.error);
  g_assert_cmpstr (ev.final_text, ==, expected);

  /* with no model before, a bad file leaves none */
  HzEngineWorker *w2 = new_worker (&ev);
  hz_engine_worker_load_model (w2, bad);
  wait_until (&ev.n_model_errors, 2);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_false (hz_engine_worker_is_model_loaded (w2));
  g_assert_cmpstr (hz_engine_worker_get_model_path (w2), ==, bad);
  g_assert_cmpuint (ev.n_loaded, ==, 2);
  g_object_unref (w2);
  g_object_unref (w);
  events_clear (&ev);
  g_unlink (bad);
  g_rmdir (dir);
}

static void
test_generate_cancel_context_full (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;

  Events ev = { 0 };
  HzEngineWorker *w = new_worker (&ev);
  g_autofree char *expected = engine_reply (path, "Once upon a time");

  hz_engine_worker_load_model (w, path);
  wait_until (&ev.n_loaded, 1);
  g_assert_true (hz_engine_worker_is_model_loaded (w));
  g_assert_cmpstr (hz_engine_worker_get_model_path (w), ==, path);

  /* A reply streams in and equals the engine's own output. */
  generate (w, &ev, "Once upon a time");
  wait_until (&ev.n_finished, 1);
  g_assert_cmpuint (ev.n_tokens, >, 0);
  g_assert_cmpstr (ev.streamed->str, ==, ev.final_text);
  g_assert_cmpstr (ev.final_text, ==, expected);
  g_assert_cmpint (ev.stop_reason, !=, HZ_STOP_CANCELLED);
  /* "token" counts the tokens so far: by the end all but at most the last (an end of
   * generation token has no text, so no emission of its own) */
  g_assert_cmpuint (ev.n_generated + 1, >=, ev.stats_n_generated);
  g_assert_cmpuint (ev.n_generated, >=, ev.n_tokens);

  /* Cancel right away: finished, with a (possibly empty) prefix of the reply. */
  generate (w, &ev, "Once upon a time");
  hz_engine_worker_cancel (w);
  wait_until (&ev.n_finished, 2);
  g_assert_cmpint (ev.stop_reason, ==, HZ_STOP_CANCELLED);
  g_assert_true (g_str_has_prefix (expected, ev.final_text));
  g_assert_cmpuint (strlen (ev.final_text), <, strlen (expected));
  g_assert_cmpstr (ev.streamed->str, ==, ev.final_text);

  /* A prompt longer than the context (128 tokens): an error, then it still works. */
  g_autoptr(GString) lng = g_string_new (NULL);
  for (int i = 0; i < 100; i++)
    g_string_append (lng, "the dog and the cat ");
  generate (w, &ev, lng->str);
  wait_until (&ev.n_errors, 1);
  g_assert_error (ev.error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL);
  g_assert_cmpuint (ev.n_finished, ==, 2);

  generate (w, &ev, "Once upon a time");
  wait_until (&ev.n_finished, 3);
  g_assert_cmpstr (ev.final_text, ==, expected);

  /* Shut down mid-reply: no signal arrives afterwards (handlers check the counters). */
  generate (w, &ev, "Once upon a time");
  generate (w, &ev, "Once upon a time");
  guint finished = ev.n_finished, errors = ev.n_errors;
  g_object_unref (w);
  gint64 end = g_get_monotonic_time () + G_USEC_PER_SEC / 2;
  while (g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (ev.n_finished, ==, finished);
  g_assert_cmpuint (ev.n_errors, ==, errors);
  events_clear (&ev);
}

typedef struct {
  GString *order;   /* "F" per finished reply, "T" per title answer */
  guint    n_titles;
  char    *title;
  gboolean title_null;
} Order;

static void
on_order_finished (HzEngineWorker *w, guint request, const char *text, gpointer stats, Order *o)
{
  g_string_append_c (o->order, 'F');
}

static void
on_title (HzEngineWorker *w, guint request, const char *text, Order *o)
{
  g_string_append_c (o->order, 'T');
  o->n_titles++;
  o->title_null = text == NULL;
}

/* Load `path` and wait for it. */
static void
switch_to (HzEngineWorker *w, Events *ev, const char *path)
{
  guint before = ev->n_loaded;
  hz_engine_worker_load_model (w, path);
  wait_until (&ev->n_loaded, before + 1);
  g_assert_cmpstr (hz_engine_worker_get_model_path (w), ==, path);
  g_assert_true (hz_engine_worker_is_model_loaded (w));
}

static void
test_registry_and_titles (void)
{
  g_autofree char *a = hz_test_shared_path ("models/stories260K.gguf");
  if (a == NULL)
    return;
  g_autofree char *dir = NULL;
  gsize size;
  g_autofree char *b = copy_model (a, "copy.gguf", G_MAXSIZE, &dir, &size);

  /* no budget: both stay loaded, switching back costs no load */
  {
    Events ev = { 0 };
    g_autoptr(HzEngineWorker) w = new_worker (&ev);
    switch_to (w, &ev, a);
    switch_to (w, &ev, b);
    switch_to (w, &ev, a);
    g_assert_cmpuint (hz_engine_worker_get_n_loads (w), ==, 2);
    g_assert_cmpuint (hz_engine_worker_get_loaded_bytes (w), ==, 2 * size);
    events_clear (&ev);
  }

  /* a budget for one of them: the one not in use is unloaded (LRU), so it reloads */
  {
    Events ev = { 0 };
    g_autoptr(HzEngineWorker) w = hz_engine_worker_new_full (size + size / 2);
    ev.main_thread = g_thread_self ();
    ev.streamed = g_string_new (NULL);
    g_signal_connect (w, "model-loaded", G_CALLBACK (on_loaded), &ev);
    switch_to (w, &ev, a);
    switch_to (w, &ev, b);
    switch_to (w, &ev, a);
    g_assert_cmpuint (hz_engine_worker_get_n_loads (w), ==, 3);
    g_assert_cmpuint (hz_engine_worker_get_loaded_bytes (w), ==, size);

    /* titles wait for every reply queued: reply, title, reply answer F F T; a base model
     * (no chat template) answers NULL, and the app keeps its own title */
    Order o = { g_string_new (NULL), 0, NULL, FALSE };
    g_signal_connect (w, "finished", G_CALLBACK (on_order_finished), &o);
    g_signal_connect (w, "title", G_CALLBACK (on_title), &o);
    HzChatMessage msg = { "user", "Once upon a time" };
    HzGenerateParams params;
    hz_generate_params_init (&params);
    params.n_predict = 32;
    g_assert_cmpuint (hz_engine_worker_generate (w, &msg, 1, &params), >, 0);
    g_assert_cmpuint (hz_engine_worker_generate_title (w, "Write a title"), >, 0);
    g_assert_cmpuint (hz_engine_worker_generate (w, &msg, 1, &params), >, 0);
    wait_until (&o.n_titles, 1);
    g_assert_cmpstr (o.order->str, ==, "FFT");
    g_assert_true (o.title_null);
    g_string_free (o.order, TRUE);
    events_clear (&ev);
  }
  g_unlink (b);
  g_rmdir (dir);
}

/* Ask for a reply to `msgs` (n_predict tokens) and wait for "finished" or "error". */
static void
generate_msgs (HzEngineWorker *w, Events *ev, const HzChatMessage *msgs, gsize n, int n_predict)
{
  HzGenerateParams params;
  hz_generate_params_init (&params);
  params.n_predict = n_predict;
  g_string_truncate (ev->streamed, 0);
  ev->tokens_of_request = 0;
  ev->n_generated = 0;
  guint done = ev->n_finished + ev->n_errors;
  ev->last_request = hz_engine_worker_generate (w, msgs, n, &params);
  g_assert_cmpuint (ev->last_request, >, 0);
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (ev->n_finished + ev->n_errors == done)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

/* Control text typed into a message reaches the model as text: the prompt the worker
 * evaluates has the family oracle's token count (tests/family-vocab.h), not the count of
 * the rendered text parsed whole. */
static void
test_typed_controls (gconstpointer data)
{
  const HzFamily *f = data;
  g_autofree char *dir = g_dir_make_tmp ("hz-worker-XXXXXX", NULL);
  g_autofree char *path = hz_family_model_write (f, dir, 1024);
  if (path == NULL)
    return;
  g_autoptr(HzModel) vocab = hz_family_load_vocab (path);

  Events ev = { 0 };
  g_autoptr(HzEngineWorker) w = new_worker (&ev);
  hz_engine_worker_load_model (w, path);
  wait_until (&ev.n_loaded, 1);
  g_autofree char *sixty = hz_family_sixty (f);
  const char *typed[] = { f->typed, sixty };
  for (guint i = 0; i < G_N_ELEMENTS (typed); i++)
    {
      const HzChatMessage msgs[] = { { "system", "Be brief." }, { "user", typed[i] } };
      generate_msgs (w, &ev, msgs, 2, 2);
      g_assert_no_error (ev.error);
      gsize n_whole = 0;
      const guint want = hz_family_prompt_count (vocab, f, msgs, 2, &n_whole);
      g_test_message ("%s: %u prompt tokens (oracle %u); parsed whole %zu", f->name,
                      ev.n_prompt, want, n_whole);
      g_assert_cmpuint (ev.n_prompt, ==, want);
      g_assert_cmpuint (n_whole, <, want);
    }
  g_assert_cmpuint (ev.n_trimmed, ==, 0);
  g_clear_object (&w);
  events_clear (&ev);
  g_unlink (path);
  g_rmdir (dir);
}

/* A conversation three times the context (ChatML, 256 tokens): answered from the system
 * prompt and the newest turns, "trimmed" first; a message longer than the context alone
 * is the one error, and says so. */
static void
test_long_conversation (void)
{
  const HzFamily *f = hz_family_get ("chatml");
  g_autofree char *dir = g_dir_make_tmp ("hz-worker-XXXXXX", NULL);
  g_autofree char *path = hz_family_model_write (f, dir, 256);
  if (path == NULL)
    return;
  Events ev = { 0 };
  g_autoptr(HzEngineWorker) w = new_worker (&ev);
  hz_engine_worker_load_model (w, path);
  wait_until (&ev.n_loaded, 1);
  g_assert_cmpuint (hz_engine_worker_get_context_length (w), ==, 256);

  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, 64);
  gsize n = 0;
  msgs[n++] = (HzChatMessage) { "system", "You are a helpful assistant." };
  for (guint i = 0; i < 30; i++)
    {
      char *q = g_strdup_printf ("Question %u: what comes after %u?", i, 7 * i);
      g_ptr_array_add (texts, q);
      msgs[n++] = (HzChatMessage) { "user", q };
      if (i < 29)
        msgs[n++] = (HzChatMessage) { "assistant", "It is the next number." };
    }
  generate_msgs (w, &ev, msgs, n, 16);
  g_assert_no_error (ev.error);
  g_assert_cmpuint (ev.n_trimmed, ==, 1);
  g_assert_true (ev.trimmed_before_token);
  g_assert_cmpuint (ev.n_dropped, >, 0);
  g_assert_cmpuint (ev.n_dropped % 2, ==, 0);   /* whole turns */
  g_assert_cmpuint (ev.n_prompt, <=, 256 - 16);
  g_test_message ("%zu messages in a context of 256: %u left out, prompt %u tokens", n,
                  ev.n_dropped, ev.n_prompt);

  /* a short conversation is not trimmed */
  const HzChatMessage one[] = { msgs[0], msgs[1] };
  generate_msgs (w, &ev, one, 2, 16);
  g_assert_cmpuint (ev.n_trimmed, ==, 1);

  /* one message longer than the context: the error says so */
  g_autoptr(GString) lng = g_string_new (NULL);
  for (int i = 0; i < 200; i++)
    g_string_append (lng, "the dog and the cat ");
  const HzChatMessage big[] = { msgs[0], msgs[1], msgs[2], { "user", lng->str } };
  generate_msgs (w, &ev, big, 4, 16);
  g_assert_error (ev.error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL);
  g_assert_nonnull (strstr (ev.error->message, "the message is too long"));
  g_test_message ("%s", ev.error->message);
  g_clear_object (&w);
  events_clear (&ev);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char *argv[])
{
  /* 5 ms a token: a reply lasts long enough that cancelling it is never a race. */
  g_setenv ("HZ_WORKER_TOKEN_DELAY_US", "5000", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/app/engine-worker/errors-without-model", test_errors_without_model);
  g_test_add_func ("/app/engine-worker/bad-model-keeps-previous", test_bad_model_keeps_previous);
  g_test_add_func ("/app/engine-worker/generate-cancel-context-full",
                   test_generate_cancel_context_full);
  g_test_add_func ("/app/engine-worker/registry-and-titles", test_registry_and_titles);
  for (guint i = 0; i < G_N_ELEMENTS (hz_families); i++)
    {
      g_autofree char *name = g_strdup_printf ("/app/engine-worker/typed-controls/%s",
                                               hz_families[i].name);
      g_test_add_data_func (name, &hz_families[i], test_typed_controls);
    }
  g_test_add_func ("/app/engine-worker/long-conversation", test_long_conversation);
  return g_test_run ();
}
