/* tests/fuzz/fuzz-lora-delta.c — libFuzzer target for what hanzo-aggregator parses from the
 * network: the body of PUT /v1/rounds/N/update, i.e. hz_lora_delta_from_wire()
 * (egress/lora-delta.c: safetensors + BF16 + metadata checks) against a fixed small
 * adapter config, and the adapter config JSON (hz_delta_config_new_from_json()).
 *
 * Invariants: an accepted upload has the expected config, finite values and a round id;
 * a rejected one carries an HZ_LORA_ERROR (or HZ_SAFETENSORS_ERROR) with a message; a
 * parsed config re-serialises to JSON that parses to the same hash. Any violation aborts. */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "lora-delta.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-lora-delta: invariant failed: %s (%s:%d)\n", #cond, __FILE__,  \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static HzDeltaConfig *cfg;

static void
fuzz_config_json (const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  GError *error = NULL;
  HzDeltaConfig *c = hz_delta_config_new_from_json (text, &error);
  if (!c)
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return;
    }
  CHECK (hz_delta_config_rank (c) >= 1);
  g_autofree char *again = hz_delta_config_to_json (c);
  HzDeltaConfig *c2 = hz_delta_config_new_from_json (again, &error);
  CHECK (c2 != NULL);
  CHECK (strcmp (hz_delta_config_hash (c), hz_delta_config_hash (c2)) == 0);
  hz_delta_config_unref (c2);
  hz_delta_config_unref (c);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!cfg)
    cfg = fuzz_lora_delta_config ();
  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  GError *error = NULL;
  guint64 round = 0;
  double eps = -1;
  HzLoraDelta *d = hz_lora_delta_from_wire (bytes, cfg, &round, &eps, &error);
  if (d)
    {
      CHECK (error == NULL);
      CHECK (hz_lora_delta_validate (d, cfg, NULL));
      CHECK (isfinite (hz_lora_delta_l2_norm (d)));
      CHECK (strlen (hz_lora_delta_get_base_sha256 (d)) == 64);
      hz_lora_delta_free (d);
    }
  else
    {
      CHECK (error != NULL && error->message[0]);
      CHECK (error->domain == HZ_LORA_ERROR || error->domain == HZ_SAFETENSORS_ERROR);
      g_error_free (error);
    }
  fuzz_config_json (data, size);
  return 0;
}
