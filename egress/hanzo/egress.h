/* hanzo/egress.h — the public face of libhzegress (issue 26 item 6), the only code that
 * connects out: what the app, the CLI and the learner's daemon may use of egress/. Other
 * folders include this header (or hanzo/egress-dp.h for the part without network code),
 * never egress/'s own headers.
 *
 *   hanzo/egress-dp.h  LoRA deltas, DP releases, noise and accounting (libhzdp, no network);
 *   egress.h           the federation client's typed channels: upload an HzDpRelease, fetch
 *                      a round's aggregate, the current round;
 *   credentials.h      the federation endpoint and token, Hugging Face access tokens, in the
 *                      Secret Service keyring;
 *   hub.h              the model download channel (Hugging Face Hub API: search, listings,
 *                      resumable downloads);
 *   hub-select.h       which GGUF file(s) of a repository to download (pure functions).
 *
 * Thread safety: as documented in each header.
 */
#pragma once

#include "egress-dp.h"
#include "../egress.h"
#include "../credentials.h"
#include "../hub.h"
#include "../hub-select.h"
