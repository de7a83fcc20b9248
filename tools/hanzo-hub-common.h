/* tools/hanzo-hub-common.h — what `hanzo pull` and `hanzo search` share: the Hub client
 * with its endpoint, token and egress log (egress/hub.h). */
#pragma once

#include "hanzo/egress.h"
#include "hanzo-store-privacy.h"

G_BEGIN_DECLS

/** Exit status after Ctrl-C or SIGTERM: 128 + SIGINT, as a shell reports it. */
#define HZ_CLI_EXIT_INTERRUPTED 130

/** A Hub client for `endpoint` (NULL: $HF_ENDPOINT, else https://huggingface.co) with the
 *  token of $HF_TOKEN (or the older $HUGGING_FACE_HUB_TOKEN) when set, logging every
 *  request into the store at its default place ($XDG_DATA_HOME/hanzo/hanzo.db, opened into
 *  *store: close it after freeing the client). NULL after printing "hanzo CMD: ..." to
 *  stderr. */
HzHub *hz_cli_hub_open (const char *cmd, const char *endpoint, HzStore **store);

/** Prints "hanzo CMD: MESSAGE" (escaped: it may quote the server or the user's input) and,
 *  for HZ_HUB_ERROR_AUTH, how to give a token (`hanzo hub-login`, HF_TOKEN). */
void hz_cli_hub_print_error (const char *cmd, const GError *error);

G_END_DECLS
