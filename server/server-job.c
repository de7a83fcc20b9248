/* server/server-job.c — one generation request (server-job.h).
 *
 * Life of a job (main context unless said): hz_job_start pauses the message and asks for
 * the model -> on_model (the model is loaded) runs `prepare` on a worker thread (render,
 * tokenize) -> on_prepared submits to the HzServe and opens the reply (the event stream's
 * headers and first event) -> on_token / on_logprobs / on_done (stepping thread) queue what
 * comes under `lock` and schedule one `drain` -> drain writes it; when the generation is
 * done it writes the end of the reply and ends the job (the model's use, the open count,
 * the log line).
 *
 * References: the message's (dropped when libsoup finishes it), the HzServe request's
 * (dropped in on_done), one per scheduled drain, one for the model wait and one for the
 * worker thread. The last one may go on the stepping thread: job_free touches no libsoup
 * or main-context object. */
#include "server-job.h"

#include <string.h>
#include "server-guard.h"
#include "server-log.h"
#include "server-reply.h"
#include "server-tools.h"

typedef struct {
  gint          ref;
  HzJobEnv      env;
  GMainContext *context;
  SoupServerMessage *msg;     /* a reference; NULL once libsoup finished it */
  HzApiRequest *req;
  HzModelSlot  *slot;
  HzModel      *model;        /* while the slot is used */
  HzServe      *serve;
  guint64       serve_id;     /* 0 until submitted */
  char         *id;
  HzReplyInfo   info;
  gint64        t_start;
  gboolean      used, started, ended;
  gboolean      streaming;    /* the event stream's headers are set */
  gsize         text_sent;    /* bytes of text sent (completion logprobs' text_offset) */
  GString      *text;         /* the whole text, when not streaming */
  GArray       *lps;          /* HzReplyLogprob, the whole reply's, when not streaming */
  HzApiTools    tools;        /* the request's tools (prepare) */
  HzToolStream *calls;        /* the reply split into content and tool calls, when the
                               * template got tools (server-tools.h) */
  gboolean      special;      /* the reply's text has control tokens (harmony with tools) */
  HzJsonSchema *forced;       /* tool_choice "required" / named: the call's constraint */
  const char   *fail_param;   /* the member a failed prepare names (NULL: "tools") */

  /* shared with the stepping thread, under `lock` */
  GMutex        lock;
  GString      *pending;
  GArray       *pending_lp;   /* HzReplyLogprob */
  gboolean      drain_queued, done, gone;
  guint         n_tokens, n_at_gone;
  HzStopReason  stop;
  guint         n_prompt, n_cached, n_generated;
  double        ttft;
} Job;

static Job *
job_ref (Job *job)
{
  g_atomic_int_inc (&job->ref);
  return job;
}

static void
job_unref (gpointer p)
{
  Job *job = p;
  if (!g_atomic_int_dec_and_test (&job->ref))
    return;
  hz_api_request_free (job->req);
  g_free (job->id);
  g_string_free (job->text, TRUE);
  g_string_free (job->pending, TRUE);
  g_array_unref (job->lps);
  g_array_unref (job->pending_lp);
  hz_api_tools_clear (&job->tools);
  hz_tool_stream_free (job->calls);
  hz_json_schema_unref (job->forced);
  g_main_context_unref (job->context);
  g_mutex_clear (&job->lock);
  g_free (job);
}

/* A log line about this job: "ID KIND MODEL: ...". */
#define say(job, fmt, ...)                                                                 \
  hz_server_say ((job)->env.log, (job)->env.log_data, "%s %s %s: " fmt, (job)->id,          \
                 (job)->req->kind == HZ_API_CHAT ? "chat" : "completion", (job)->req->model, \
                 __VA_ARGS__)

static const char *
finish_reason (HzStopReason r)
{
  return r == HZ_STOP_LENGTH || r == HZ_STOP_CONTEXT_FULL ? "length" : "stop";
}

/* The end of a job: after its generation is done, or when it failed before one started. */
static void
job_end (Job *job)
{
  if (job->ended)
    return;
  job->ended = TRUE;
  if (job->msg)
    hz_guard_unwatch (job->msg);
  if (job->used)
    hz_models_unuse (job->env.models, job->slot);
  (*job->env.n_open)--;
  const double secs = (g_get_monotonic_time () - job->t_start) / 1e6;
  if (job->serve_id == 0)
    return;
  if (job->gone)
    say (job, "the client left after %u tokens; generation stopped at %u tokens (%.3f s)",
          job->n_at_gone, job->n_generated, secs);
  else
    say (job, "%u prompt tokens (%u cached), %u generated, finish %s, first token %.3f s, "
          "%.3f s", job->n_prompt, job->n_cached, job->n_generated, finish_reason (job->stop),
          job->ttft, secs);
}

/* Answer with an error (when the client is still there) and end. */
static void
job_fail (Job *job, guint status, const char *code, const char *param, const char *message)
{
  if (job->msg)
    {
      hz_reply_send_error (job->msg, status, code, param, message);
      soup_server_message_unpause (job->msg);
    }
  say (job, "%u %s", status, message);
  job_end (job);
}

/* ------------------------------------------------------------------- writing */

static void
send_event (Job *job, char *json)
{
  g_autofree char *owned = json;
  char *event = g_strdup_printf ("data: %s\n\n", json);
  const gsize len = strlen (event);
  soup_message_body_append (soup_server_message_get_response_body (job->msg), SOUP_MEMORY_TAKE,
                            event, len);
  hz_guard_queued (job->msg, len);
}

static HzReplyUsage
usage (Job *job)
{
  return (HzReplyUsage) { job->n_prompt, job->n_generated, job->n_cached };
}

/* The event stream's headers and, for chat, the first event (the assistant's role). */
static void
open_stream (Job *job)
{
  SoupServerMessage *msg = job->msg;
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_message_headers_set_content_type (h, "text/event-stream", NULL);
  soup_message_headers_replace (h, "Cache-Control", "no-cache");
  soup_message_headers_set_encoding (h, SOUP_ENCODING_CHUNKED);
  soup_message_body_set_accumulate (soup_server_message_get_response_body (msg), FALSE);
  job->streaming = TRUE;
  if (job->req->kind == HZ_API_CHAT)
    send_event (job, hz_reply_chunk (&job->info, TRUE, NULL, NULL, NULL, 0, 0, NULL,
                                     job->req->include_usage));
  soup_server_message_unpause (msg);
}

static void
write_stream (Job *job, const GString *text, const GArray *lps, gboolean done)
{
  const gboolean with_lp = job->req->logprobs;
  const gboolean null_usage = job->req->include_usage;
  /* with tools, only the text that cannot begin a call goes out now */
  g_autofree char *content = job->calls ? hz_tool_stream_push (job->calls, text->str, text->len)
                                        : g_strdup (text->str);
  if (*content || lps->len > 0)
    {
      send_event (job, hz_reply_chunk (&job->info, FALSE, *content ? content : NULL, NULL,
                                       with_lp ? (const HzReplyLogprob *) (void *) lps->data : NULL,
                                       lps->len, job->text_sent, NULL, null_usage));
      job->text_sent += strlen (content);
    }
  /* a forced call's pieces as they come (its arguments streamed) */
  g_autoptr (GPtrArray) pieces = job->calls ? hz_tool_stream_take_deltas (job->calls) : NULL;
  if (pieces && pieces->len > 0)
    send_event (job, hz_reply_chunk_call_pieces (&job->info, pieces, null_usage));
  if (done)
    {
      const char *finish = finish_reason (job->stop);
      g_autofree char *rest = NULL;
      g_autoptr (GPtrArray) calls = job->calls ? hz_tool_stream_finish (job->calls, &rest) : NULL;
      if (rest && *rest)
        send_event (job, hz_reply_chunk (&job->info, FALSE, rest, NULL, NULL, 0, 0, NULL,
                                         null_usage));
      if (job->calls && hz_tool_stream_n_streamed (job->calls) > 0)
        finish = "tool_calls";   /* sent as pieces */
      else if (calls && calls->len > 0)
        {
          send_event (job, hz_reply_chunk_calls (&job->info, calls, null_usage));
          finish = "tool_calls";
        }
      send_event (job, hz_reply_chunk (&job->info, FALSE, NULL, finish, NULL,
                                       0, 0, NULL, null_usage));
      if (job->req->include_usage)
        {
          const HzReplyUsage u = usage (job);
          send_event (job, hz_reply_chunk (&job->info, FALSE, NULL, NULL, NULL, 0, 0, &u, FALSE));
        }
      static const char done_event[] = "data: [DONE]\n\n";
      soup_message_body_append (soup_server_message_get_response_body (job->msg),
                                SOUP_MEMORY_STATIC, done_event, sizeof done_event - 1);
      hz_guard_queued (job->msg, sizeof done_event - 1);
      soup_message_body_complete (soup_server_message_get_response_body (job->msg));
    }
  soup_server_message_unpause (job->msg);
}

static void
write_whole (Job *job)
{
  const HzReplyUsage u = usage (job);
  g_autofree char *content = NULL;
  g_autoptr (GPtrArray) calls = NULL;
  if (job->calls)
    {
      /* the content the stream releases at once, then what the split leaves after it */
      g_autofree char *head = hz_tool_stream_push (job->calls, job->text->str, job->text->len);
      g_autofree char *rest = NULL;
      calls = hz_tool_stream_finish (job->calls, &rest);
      content = g_strconcat (head, rest, NULL);
    }
  const gboolean with_calls = calls && calls->len > 0;
  char *body = hz_reply_completion (&job->info, content ? content : job->text->str, calls,
                                    with_calls ? "tool_calls" : finish_reason (job->stop),
                                    job->req->logprobs ? (const HzReplyLogprob *) (void *) job->lps->data
                                                       : NULL,
                                    job->lps->len, &u);
  const gsize len = strlen (body);
  soup_server_message_set_status (job->msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (job->msg, "application/json", SOUP_MEMORY_TAKE, body, len);
  hz_guard_queued (job->msg, len);
  soup_server_message_unpause (job->msg);
}

/* Write what the stepping thread queued. */
static gboolean
drain (gpointer user_data)
{
  Job *job = user_data;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GArray) lps = g_array_new (FALSE, FALSE, sizeof (HzReplyLogprob));
  g_mutex_lock (&job->lock);
  job->drain_queued = FALSE;
  if (!job->started || job->ended)
    {
      g_mutex_unlock (&job->lock);
      return G_SOURCE_REMOVE;   /* on_prepared drains once started */
    }
  g_string_append_len (text, job->pending->str, (gssize) job->pending->len);
  g_string_truncate (job->pending, 0);
  g_array_append_vals (lps, job->pending_lp->data, job->pending_lp->len);
  g_array_set_size (job->pending_lp, 0);
  const gboolean done = job->done;
  g_mutex_unlock (&job->lock);

  if (job->msg && !job->gone)
    {
      if (job->req->stream)
        write_stream (job, text, lps, done);
      else
        {
          g_string_append_len (job->text, text->str, (gssize) text->len);
          g_array_append_vals (job->lps, lps->data, lps->len);
          if (done)
            write_whole (job);
        }
    }
  if (done)
    job_end (job);
  return G_SOURCE_REMOVE;
}

/* Schedule a drain on the main context unless one is pending; lock held. */
static void
queue_drain (Job *job)
{
  if (job->drain_queued)
    return;
  job->drain_queued = TRUE;
  GSource *idle = g_idle_source_new ();
  g_source_set_priority (idle, G_PRIORITY_DEFAULT);
  g_source_set_callback (idle, drain, job_ref (job), job_unref);
  g_source_set_static_name (idle, "hz-server-job-drain");
  g_source_attach (idle, job->context);
  g_source_unref (idle);
}

/* ------------------------------------------------------ the stepping thread */

static gboolean
on_token (guint64 request, guint sample, HzToken token, const char *text, gpointer user_data)
{
  Job *job = user_data;
  g_mutex_lock (&job->lock);
  const gboolean go_on = !job->gone;
  if (go_on)
    {
      job->n_tokens++;
      g_string_append (job->pending, text);
      queue_drain (job);
    }
  g_mutex_unlock (&job->lock);
  return go_on;
}

static void
on_logprobs (guint64 request, guint sample, const HzTokenLogprob *chosen,
             const HzTokenLogprob *top, guint n_top, gpointer user_data)
{
  Job *job = user_data;
  HzReplyLogprob lp = { .chosen = *chosen, .n_top = MIN (n_top, HZ_API_MAX_TOP_LOGPROBS) };
  memcpy (lp.top, top, lp.n_top * sizeof *top);
  g_mutex_lock (&job->lock);
  g_array_append_val (job->pending_lp, lp);
  g_mutex_unlock (&job->lock);
}

static void
on_done (const HzServeResult *r, gpointer user_data)
{
  Job *job = user_data;
  g_mutex_lock (&job->lock);
  job->done = TRUE;
  job->stop = r->stop_reason;
  job->n_prompt = r->n_prompt;
  job->n_cached = r->n_prompt_cached;
  job->n_generated = r->n_generated;
  job->ttft = r->ttft_seconds;
  queue_drain (job);
  g_mutex_unlock (&job->lock);
  job_unref (job);   /* the request's reference */
}

/* ----------------------------------------------------------------- the client */

/* The client left (guard) or libsoup ended the message: stop the generation. */
static void
on_gone (gpointer user_data)
{
  Job *job = user_data;
  g_mutex_lock (&job->lock);
  const gboolean was = job->gone, done = job->done;
  job->gone = TRUE;
  if (!was)
    job->n_at_gone = job->n_tokens;
  g_mutex_unlock (&job->lock);
  if (was || job->ended)
    return;
  if (job->serve_id && !done)   /* done: the HzServe may be gone already (shutdown) */
    hz_serve_cancel (job->serve, job->serve_id);
  if (job->msg == NULL)
    return;
  /* let libsoup end the message: its next write fails on the closed socket */
  GSocket *sock = soup_server_message_get_socket (job->msg);
  if (sock)
    g_socket_shutdown (sock, TRUE, TRUE, NULL);
  if (job->streaming)
    soup_message_body_complete (soup_server_message_get_response_body (job->msg));
  else
    soup_server_message_set_status (job->msg, SOUP_STATUS_SERVICE_UNAVAILABLE, NULL);
  soup_server_message_unpause (job->msg);
  /* a job still waiting for its model or its prompt ends when that step comes back */
}

static void
on_finished (SoupServerMessage *msg, gpointer user_data)
{
  Job *job = user_data;
  /* libsoup is done with the message (a reset connection ends it before the guard sees the
   * hang-up): on_gone only stops the generation, it must not unpause or write to it */
  g_clear_object (&job->msg);
  if (!job->ended)
    on_gone (job);
  job_unref (job);   /* the message's reference */
}

/* --------------------------------------------------------------- preparing */

/* Worker thread: the prompt's tokens. */
static void
prepare (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  const HzApiRequest *req = job->req;
  GError *error = NULL;
  gsize n = 0;
  HzToken *tokens = NULL;
  /* tools (checked when the request came, server.c): the template renders them, and the
   * reply is parsed in its format */
  if (req->kind == HZ_API_CHAT && hz_api_tools_check (req, &job->tools, NULL, &error))
    {
      const HzToolFormat format = hz_model_tool_format (job->model);
      if (job->tools.tools_json && format == HZ_TOOL_FORMAT_NONE)
        g_set_error (&error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED,
                     "the chat template of the model '%s' has no tool-call format that this "
                     "server knows ('tools' cannot be used with it)", req->model);
      else if (job->tools.tools_json)
        {
          job->calls = hz_tool_stream_new (format, req->single_tool_call ? 1 : 0);
          job->forced = hz_api_tools_forced (req, &job->tools, format, job->model,
                                             req->stream ? job->calls : NULL, &error);
          if (error)
            job->fail_param = "tool_choice";
        }
      /* harmony's markers are control tokens: the reply's text must show them */
      job->special = job->calls && format == HZ_TOOL_FORMAT_HARMONY;
      g_autoptr (HzPrompt) p = error ? NULL
                                     : hz_model_render_chat_tools (job->model, req->messages,
                                                                   req->n_messages,
                                                                   job->tools.tools_json, TRUE,
                                                                   &error);
      if (p)
        tokens = hz_model_tokenize_prompt (job->model, p, TRUE, &n);
    }
  else if (req->kind == HZ_API_COMPLETION)
    tokens = hz_model_tokenize (job->model, req->prompt, -1, TRUE, FALSE, &n);
  if (req->json || job->forced)
    hz_serve_prepare_json (job->serve);   /* the JSON tables here, not on the stepping thread */
  if (error)
    {
      g_task_return_error (task, error);
      return;
    }
  GArray *a = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_array_append_vals (a, tokens, (guint) n);
  g_free (tokens);
  g_task_return_pointer (task, a, (GDestroyNotify) g_array_unref);
}

static void
submit (Job *job, GArray *tokens)
{
  const HzApiRequest *req = job->req;
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.sampler = req->sampler;
  if (!req->seeded)
    rp.sampler.seed = ((guint64) g_random_int () << 32) | g_random_int ();
  rp.n_predict = req->max_tokens > 0 ? (int32_t) req->max_tokens : -1;
  rp.ignore_eog = req->ignore_eos;
  rp.special = job->special;
  rp.stop_strings = (const char *const *) req->stop;
  /* a forced tool call, or response_format (referenced by the submit) */
  rp.json = job->forced ? job->forced : req->json;
  if (req->logprobs)
    {
      rp.on_logprobs = on_logprobs;
      rp.n_top_logprobs = req->top_logprobs;
    }
  g_autoptr (GError) error = NULL;
  job_ref (job);   /* the request's, dropped by on_done */
  job->serve_id = hz_serve_submit (job->serve, (const HzToken *) (void *) tokens->data,
                                   tokens->len, &rp, on_token, on_done, job, &error);
  if (job->serve_id != 0)
    return;
  job_unref (job);
  if (g_error_matches (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_TOO_LONG))
    job_fail (job, SOUP_STATUS_BAD_REQUEST, "context_length_exceeded",
              req->kind == HZ_API_CHAT ? "messages" : "prompt", error->message);
  else
    job_fail (job, SOUP_STATUS_BAD_REQUEST, "invalid_value",
              req->kind == HZ_API_CHAT ? "messages" : "prompt", error->message);
}

static void
on_prepared (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Job *job = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) tokens = g_task_propagate_pointer (G_TASK (res), &error);
  if (job->ended)
    return;
  if (tokens == NULL)
    {
      /* the model's template refused the conversation (a Jinja error it raises), or has
       * no tool-call format */
      const gboolean tools = g_error_matches (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED);
      job_fail (job, SOUP_STATUS_BAD_REQUEST, tools ? "unsupported_parameter" : "invalid_value",
                tools ? (job->fail_param ? job->fail_param : "tools") : "messages",
                error->message);
      return;
    }
  if (job->gone)
    {
      job_end (job);
      return;
    }
  submit (job, tokens);
  if (job->ended)
    return;
  if (job->req->stream && job->msg)
    open_stream (job);
  g_mutex_lock (&job->lock);
  job->started = TRUE;
  g_mutex_unlock (&job->lock);
  drain (job);   /* what came before the reply was open */
}

static void
on_model (HzModel *model, HzServe *serve, const GError *error, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  Job *job = user_data;
  if (error)
    {
      job->used = FALSE;   /* hz_models_use uncounted it */
      g_autofree char *msg = g_strdup_printf ("the model '%s' cannot be loaded: %s",
                                              job->req->model, error->message);
      job_fail (job, SOUP_STATUS_INTERNAL_SERVER_ERROR, "model_not_loaded", "model", msg);
    }
  else if (job->gone)
    job_end (job);
  else
    {
      job->model = model;
      job->serve = serve;
      job->info.tokens = model;
      task = g_task_new (NULL, NULL, on_prepared, NULL);
      g_task_set_task_data (task, job_ref (job), job_unref);
      g_task_set_name (task, "hz-server-prepare");
      g_task_run_in_thread (task, prepare);
    }
  job_unref (job);   /* the model wait's reference */
}

void
hz_job_start (SoupServerMessage *msg, HzApiRequest *req, HzModelSlot *slot, const HzJobEnv *env)
{
  Job *job = g_new0 (Job, 1);
  job->ref = 1;   /* the message's */
  job->env = *env;
  job->context = g_main_context_ref_thread_default ();
  job->msg = g_object_ref (msg);
  job->req = req;
  job->slot = slot;
  job->t_start = g_get_monotonic_time ();
  g_autofree char *uuid = g_uuid_string_random ();
  g_autoptr (GString) id = g_string_new (req->kind == HZ_API_CHAT ? "chatcmpl-" : "cmpl-");
  for (const char *c = uuid; *c; c++)
    if (*c != '-')
      g_string_append_c (id, *c);
  job->id = g_string_free (g_steal_pointer (&id), FALSE);
  job->info = (HzReplyInfo) { req->kind, job->id, g_get_real_time () / G_USEC_PER_SEC, req->model,
                              NULL };
  job->text = g_string_new (NULL);
  job->pending = g_string_new (NULL);
  job->lps = g_array_new (FALSE, FALSE, sizeof (HzReplyLogprob));
  job->pending_lp = g_array_new (FALSE, FALSE, sizeof (HzReplyLogprob));
  g_mutex_init (&job->lock);
  (*env->n_open)++;
  soup_server_message_pause (msg);
  g_signal_connect (msg, "finished", G_CALLBACK (on_finished), job);
  hz_guard_watch (msg, on_gone, job);
  job->used = TRUE;
  hz_models_use (env->models, slot, on_model, job_ref (job));
}
