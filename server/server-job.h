/* server/server-job.h — one generation request, from its parsed body to the last byte of
 * its reply (private to server/).
 *
 * A job pauses its message, has its model loaded (server-models.h), renders and tokenizes
 * the prompt on a worker thread (chat: hz_model_render_chat() with the model's template,
 * then hz_model_tokenize_prompt(), so the messages' text never becomes control tokens;
 * completion: hz_model_tokenize() without parsing special-token texts, as `hanzo generate`
 * does), submits it to the model's HzServe and writes the reply: server-sent events as
 * tokens arrive (one event per main-loop turn, carrying every token that came meanwhile),
 * or one JSON object at the end.
 *
 * Threads: tokens and the end of a generation arrive on the HzServe's stepping thread; they
 * are queued under the job's lock and written by the main context. A client that goes away
 * (server-guard.h) sets a flag that the next token callback sees: the generation stops
 * within one token, and the log line says after how many tokens the client left and at how
 * many the generation stopped. */
#pragma once

#include <libsoup/soup.h>
#include "hanzo-server.h"
#include "server-models.h"
#include "server-request.h"

G_BEGIN_DECLS

typedef struct {
  HzModels       *models;
  HzServerLogFunc log;       /* may be NULL */
  gpointer        log_data;
  guint          *n_open;    /* requests open: + 1 at start, - 1 when the job ends */
} HzJobEnv;

/** Answer `msg` for `req` (taken) with the model of `slot`; `env` is copied and must stay
 *  valid (its pointers) until the job ends. */
void hz_job_start (SoupServerMessage *msg, HzApiRequest *req, HzModelSlot *slot,
                   const HzJobEnv *env);

G_END_DECLS
