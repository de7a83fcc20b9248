/* hanzo/egress-dp.h — the public face of libhzdp (issue 26 item 6): egress/'s differential
 * privacy without any network code, for the learner's DP-SGD and federation pass, the app's
 * privacy page and the CLI. Linking it never links libsoup (tests/egress/test-no-network.sh).
 *
 *   lora-delta.h   HzDeltaConfig (an adapter's tensors, rank and alpha; its sha256 identity)
 *                  and HzLoraDelta (one f32 per element), the bf16 safetensors wire format;
 *   dp.h           hz_dp_release(): clip, Gaussian noise, bf16, ledger row (the only maker of
 *                  an HzDpRelease), the privacy budget and its settings;
 *   noise.h        the exact discrete Gaussian (Canonne-Kamath-Steinke 2020) from getrandom;
 *   accountant.h   RDP of the subsampled Gaussian, RDP -> (epsilon, delta), the analytic
 *                  Gaussian mechanism.
 *
 * Thread safety: as documented in each header.
 */
#pragma once

#include "../lora-delta.h"
#include "../dp.h"
#include "../noise.h"
#include "../accountant.h"
