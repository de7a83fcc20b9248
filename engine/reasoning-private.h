/* engine/reasoning-private.h — what the engine's prompt builders use of reasoning.c
 * (private to engine/; the public API is in hanzo/engine.h, "reasoning"). */
#pragma once

#include "hanzo/engine.h"

G_BEGIN_DECLS

/** The messages `msgs[0..n)` with every assistant message's reasoning part left out
 *  (hz_reasoning_strip() in the model's format, hz_model_reasoning_format()): `msgs`
 *  itself when nothing changes, else a copy (every field as in `msgs`) whose memory and
 *  changed contents are added to `owned` (a GPtrArray with g_free as its free function),
 *  valid as long as it and `msgs` are. Thread-safe. */
const HzChatMessage *hz_reasoning_strip_messages (const HzModel *m, const HzChatMessage *msgs,
                                                  gsize n, GPtrArray *owned);

G_END_DECLS
