/* LoRA deltas: configs, validation, and the bf16 safetensors wire format (issue 8). */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "lora-delta.h"
#include "quant.h"

#define BASE "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static float
f32_from_bits (guint32 u)
{
  float f;
  memcpy (&f, &u, 4);
  return f;
}

/* The round-to-nearest-even vectors through the engine's converter. */
static void
test_bf16_vectors (void)
{
  const struct { guint32 in; guint16 out; } v[] = {
    { 0x3F848000, 0x3F84 }, { 0x3F848010, 0x3F85 }, { 0x3F850000, 0x3F85 },
    { 0x3F858000, 0x3F86 }, { 0x3FFF8000, 0x4000 }, { 0x7F7FFFFF, 0x7F80 },
    { 0x00018000, 0x0002 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    {
      guint16 got = hz_fp32_to_bf16 (f32_from_bits (v[i].in));
      g_test_message ("f32 0x%08X -> bf16 0x%04X (want 0x%04X)", v[i].in, got, v[i].out);
      g_assert_cmphex (got, ==, v[i].out);
    }
  /* NaN stays NaN (quiet), infinities stay infinite, the sign is kept */
  g_assert_true (isnan (hz_bf16_to_fp32 (hz_fp32_to_bf16 (NAN))));
  g_assert_true (isnan (hz_bf16_to_fp32 (hz_fp32_to_bf16 (f32_from_bits (0x7F800001)))));
  g_assert_cmphex (hz_fp32_to_bf16 (-INFINITY), ==, 0xFF80);
  g_assert_cmphex (hz_fp32_to_bf16 (-1.0f), ==, 0xBF80);
  float x[3] = { f32_from_bits (0x3F848000), f32_from_bits (0x3F858000), NAN };
  hz_lora_round_bf16 (x, 3);
  g_assert_cmpfloat (x[0], ==, f32_from_bits (0x3F840000));
  g_assert_cmpfloat (x[1], ==, f32_from_bits (0x3F860000));
  g_assert_true (isnan (x[2]));
}

static HzDeltaConfig *
small_config (void)
{
  HzDeltaConfig *cfg = hz_delta_config_new (2, 4.0);
  const int64_t a[2] = { 2, 3 }, b[2] = { 4, 2 };
  g_assert_true (hz_delta_config_add_tensor (cfg, "l.0.q.lora_A.weight", 2, a, NULL));
  g_assert_true (hz_delta_config_add_tensor (cfg, "l.0.q.lora_B.weight", 2, b, NULL));
  return cfg;
}

static void
test_config (void)
{
  g_autoptr (HzDeltaConfig) tl = hz_delta_config_new_llama (22, 2048, 256, 5632, 16, 32);
  g_assert_nonnull (tl);
  g_assert_cmpuint (hz_delta_config_n_tensors (tl), ==, 22 * 7 * 2);
  /* per layer: r*(2048+2048)*2 (q,o) + r*(2048+256)*2 (k,v) + r*(2048+5632)*3 (gate,up,down) */
  g_assert_cmpuint (hz_delta_config_n_elements (tl), ==, 22 * 16 * (4096 * 2 + 2304 * 2 + 7680 * 3));
  gssize i = hz_delta_config_find (tl, "base_model.model.model.layers.3.mlp.down_proj.lora_A.weight");
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (hz_delta_config_tensor_shape (tl, (guint) i)[0], ==, 16);
  g_assert_cmpint (hz_delta_config_tensor_shape (tl, (guint) i)[1], ==, 5632);
  i = hz_delta_config_find (tl, "base_model.model.model.layers.21.self_attn.k_proj.lora_B.weight");
  g_assert_cmpint (hz_delta_config_tensor_shape (tl, (guint) i)[0], ==, 256);

  /* JSON round trip keeps the hash; any change changes it */
  g_autoptr (HzDeltaConfig) cfg = small_config ();
  g_autofree char *json = hz_delta_config_to_json (cfg);
  g_assert_cmpstr (json, ==, "{\"rank\":2,\"alpha\":4,\"tensors\":[{\"name\":\"l.0.q.lora_A.weight\","
                   "\"shape\":[2,3]},{\"name\":\"l.0.q.lora_B.weight\",\"shape\":[4,2]}]}");
  g_autofree char *want = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);
  g_assert_cmpstr (hz_delta_config_hash (cfg), ==, want);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzDeltaConfig) back = hz_delta_config_new_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_delta_config_hash (back), ==, hz_delta_config_hash (cfg));
  g_autoptr (HzDeltaConfig) other = hz_delta_config_new (2, 8.0);
  g_assert_cmpstr (hz_delta_config_hash (other), !=, hz_delta_config_hash (cfg));

  /* bad tensors and bad JSON */
  const int64_t zero[1] = { 0 }, one[1] = { 1 };
  g_assert_false (hz_delta_config_add_tensor (other, "z", 1, zero, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_true (hz_delta_config_add_tensor (other, "x", 1, one, NULL));
  g_assert_false (hz_delta_config_add_tensor (other, "x", 1, one, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_delta_config_add_tensor (other, "__metadata__", 1, one, NULL));
  g_assert_null (hz_delta_config_new_from_json ("{\"rank\":0,\"alpha\":1,\"tensors\":[]}", &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG);
  g_clear_error (&error);
  g_assert_null (hz_delta_config_new_from_json ("[", &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG);
}

static HzLoraDelta *
filled_delta (HzDeltaConfig *cfg)
{
  HzLoraDelta *d = hz_lora_delta_new (cfg, BASE);
  float *x = hz_lora_delta_data (d);
  for (gsize k = 0; k < hz_delta_config_n_elements (cfg); k++)
    x[k] = 0.01f * (float) k - 0.05f + 1e-4f;  /* not all bf16-exact */
  return d;
}

static void
test_delta_validate (void)
{
  g_autoptr (HzDeltaConfig) cfg = small_config ();
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  g_autoptr (GError) error = NULL;
  const float b[8] = { 3, 4, 0, 0, 0, 0, 0, 0 };
  g_assert_true (hz_lora_delta_set_tensor (d, "l.0.q.lora_B.weight", b, 8, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (hz_lora_delta_l2_norm (d), 5.0, 1e-12);
  g_assert_cmpfloat (hz_lora_delta_tensor (d, 1)[1], ==, 4.0f);
  g_assert_false (hz_lora_delta_set_tensor (d, "l.0.q.lora_B.weight", b, 7, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_SHAPE);
  g_clear_error (&error);
  g_assert_false (hz_lora_delta_set_tensor (d, "nope", b, 8, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_SHAPE);
  g_clear_error (&error);

  g_assert_true (hz_lora_delta_validate (d, cfg, &error));
  g_autoptr (HzDeltaConfig) same = small_config ();   /* a different object, same config */
  g_assert_true (hz_lora_delta_validate (d, same, &error));
  g_autoptr (HzDeltaConfig) other = hz_delta_config_new (2, 4.0);
  g_assert_false (hz_lora_delta_validate (d, other, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG);
  g_clear_error (&error);
  hz_lora_delta_tensor (d, 1)[5] = INFINITY;
  g_assert_false (hz_lora_delta_validate (d, cfg, &error));
  g_assert_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_NOT_FINITE);
  g_assert_nonnull (strstr (error->message, "l.0.q.lora_B.weight"));
  g_assert_nonnull (strstr (error->message, "element 5"));
}

static void
test_wire_roundtrip (void)
{
  g_autoptr (HzDeltaConfig) cfg = small_config ();
  g_autoptr (HzLoraDelta) d = filled_delta (cfg);
  g_autoptr (GBytes) wire = hz_lora_delta_to_wire (d, 42, 1.25);
  gsize len;
  const guint8 *p = g_bytes_get_data (wire, &len);
  guint64 n;
  memcpy (&n, p, 8);
  n = GUINT64_FROM_LE (n);
  g_assert_cmpuint (n % 8, ==, 0);
  g_assert_cmpuint (len, ==, 8 + n + 2 * 14);  /* 6 + 8 bf16 values */
  g_autofree char *header = g_strndup ((const char *) p + 8, n);
  g_test_message ("header: %s", header);
  g_assert_nonnull (strstr (header, "\"l.0.q.lora_A.weight\":{\"dtype\":\"BF16\",\"shape\":[2,3],"
                                    "\"data_offsets\":[0,12]}"));
  g_assert_nonnull (strstr (header, "\"data_offsets\":[12,28]"));
  g_assert_nonnull (strstr (header, "\"hanzo.round_id\":\"42\""));
  g_assert_nonnull (strstr (header, "\"hanzo.client_epsilon\":\"1.25\""));
  g_assert_nonnull (strstr (header, BASE));
  g_assert_nonnull (strstr (header, hz_delta_config_hash (cfg)));
  /* the data really is bf16 of the values, little-endian */
  guint16 h0;
  memcpy (&h0, p + 8 + n, 2);
  g_assert_cmphex (GUINT16_FROM_LE (h0), ==, hz_fp32_to_bf16 (hz_lora_delta_data (d)[0]));

  g_autoptr (GError) error = NULL;
  guint64 round = 0;
  double eps = 0;
  g_autoptr (HzLoraDelta) back = hz_lora_delta_from_wire (wire, cfg, &round, &eps, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (round, ==, 42);
  g_assert_cmpfloat (eps, ==, 1.25);
  g_assert_cmpstr (hz_lora_delta_get_base_sha256 (back), ==, BASE);
  g_autoptr (HzLoraDelta) rounded = hz_lora_delta_copy (d);
  hz_lora_round_bf16 (hz_lora_delta_data (rounded), 14);
  for (gsize k = 0; k < 14; k++)
    {
      g_assert_cmpfloat (hz_lora_delta_data (back)[k], ==, hz_lora_delta_data (rounded)[k]);
      g_assert_cmpfloat_with_epsilon (hz_lora_delta_data (back)[k], hz_lora_delta_data (d)[k],
                                      fabsf (hz_lora_delta_data (d)[k]) / 128 + 1e-12);
    }
  /* serialising the read-back delta again gives identical bytes */
  g_autoptr (GBytes) again = hz_lora_delta_to_wire (back, 42, 1.25);
  g_assert_true (g_bytes_equal (wire, again));
}

/* A file by hand: metadata right, one tensor wrong. */
static GBytes *
crafted (HzDeltaConfig *cfg, const char *bad_name, HzStDtype dtype, guint n_dims,
         const int64_t *shape, const void *data, gsize n_bytes, gboolean extra)
{
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  g_autofree guint16 *zeros = g_new0 (guint16, 64);
  for (guint i = 0; i < hz_delta_config_n_tensors (cfg); i++)
    {
      const char *name = hz_delta_config_tensor_name (cfg, i);
      if (bad_name && strcmp (name, bad_name) == 0)
        g_assert_true (hz_safetensors_writer_add (w, name, dtype, n_dims, shape, data, n_bytes, NULL));
      else
        g_assert_true (hz_safetensors_writer_add (w, name, HZ_ST_BF16,
                                                  hz_delta_config_tensor_n_dims (cfg, i),
                                                  hz_delta_config_tensor_shape (cfg, i), zeros,
                                                  2 * hz_delta_config_tensor_n_elements (cfg, i),
                                                  NULL));
    }
  if (extra)
    {
      const int64_t one[1] = { 1 };
      g_assert_true (hz_safetensors_writer_add (w, "extra", HZ_ST_BF16, 1, one, zeros, 2, NULL));
    }
  hz_safetensors_writer_set_metadata (w, "hanzo.adapter_config_sha256", hz_delta_config_hash (cfg));
  hz_safetensors_writer_set_metadata (w, "hanzo.base_model_sha256", BASE);
  hz_safetensors_writer_set_metadata (w, "hanzo.round_id", "7");
  hz_safetensors_writer_set_metadata (w, "hanzo.client_epsilon", "0");
  return hz_safetensors_writer_to_bytes (w);
}

static void
expect_reject (GBytes *bytes, HzDeltaConfig *cfg, int code)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLoraDelta) d = hz_lora_delta_from_wire (bytes, cfg, NULL, NULL, &error);
  g_assert_null (d);
  g_assert_error (error, HZ_LORA_ERROR, code);
  g_test_message ("rejected: %s", error->message);
}

static void
test_wire_reject (void)
{
  g_autoptr (HzDeltaConfig) cfg = small_config ();
  const char *a = "l.0.q.lora_A.weight";
  /* control: the crafted file itself is accepted */
  g_autoptr (GBytes) good = crafted (cfg, NULL, HZ_ST_BF16, 0, NULL, NULL, 0, FALSE);
  g_autoptr (HzLoraDelta) ok = hz_lora_delta_from_wire (good, cfg, NULL, NULL, NULL);
  g_assert_nonnull (ok);

  const int64_t wrong[2] = { 3, 2 }, flat[1] = { 6 };
  guint16 z6[6] = { 0 };
  float f6[6] = { 0 };
  g_autoptr (GBytes) b1 = crafted (cfg, a, HZ_ST_BF16, 2, wrong, z6, 12, FALSE);
  expect_reject (b1, cfg, HZ_LORA_ERROR_SHAPE);
  g_autoptr (GBytes) b2 = crafted (cfg, a, HZ_ST_BF16, 1, flat, z6, 12, FALSE);
  expect_reject (b2, cfg, HZ_LORA_ERROR_SHAPE);
  const int64_t right[2] = { 2, 3 };
  g_autoptr (GBytes) b3 = crafted (cfg, a, HZ_ST_F32, 2, right, f6, 24, FALSE);
  expect_reject (b3, cfg, HZ_LORA_ERROR_DTYPE);
  guint16 nan6[6] = { 0, 0, 0x7FC0, 0, 0, 0 }, inf6[6] = { 0xFF80, 0, 0, 0, 0, 0 };
  g_autoptr (GBytes) b4 = crafted (cfg, a, HZ_ST_BF16, 2, right, nan6, 12, FALSE);
  expect_reject (b4, cfg, HZ_LORA_ERROR_NOT_FINITE);
  g_autoptr (GBytes) b5 = crafted (cfg, a, HZ_ST_BF16, 2, right, inf6, 12, FALSE);
  expect_reject (b5, cfg, HZ_LORA_ERROR_NOT_FINITE);
  g_autoptr (GBytes) b6 = crafted (cfg, NULL, HZ_ST_BF16, 0, NULL, NULL, 0, TRUE);
  expect_reject (b6, cfg, HZ_LORA_ERROR_SHAPE);
  /* another adapter config */
  g_autoptr (HzDeltaConfig) other = hz_delta_config_new (2, 8.0);
  const int64_t s1[1] = { 4 };
  hz_delta_config_add_tensor (other, "w", 1, s1, NULL);
  expect_reject (good, other, HZ_LORA_ERROR_CONFIG);
  /* garbage, truncation and missing metadata */
  g_autoptr (GBytes) junk = g_bytes_new_static ("GARBAGE!GARBAGE!", 16);
  expect_reject (junk, cfg, HZ_LORA_ERROR_FORMAT);
  g_autoptr (GBytes) cut = g_bytes_new_from_bytes (good, 0, g_bytes_get_size (good) - 3);
  expect_reject (cut, cfg, HZ_LORA_ERROR_FORMAT);
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  g_assert_true (hz_safetensors_writer_add (w, a, HZ_ST_BF16, 2, right, z6, 12, NULL));
  g_autoptr (GBytes) nometa = hz_safetensors_writer_to_bytes (w);
  expect_reject (nometa, cfg, HZ_LORA_ERROR_FORMAT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/lora/bf16-vectors", test_bf16_vectors);
  g_test_add_func ("/egress/lora/config", test_config);
  g_test_add_func ("/egress/lora/validate", test_delta_validate);
  g_test_add_func ("/egress/lora/wire-roundtrip", test_wire_roundtrip);
  g_test_add_func ("/egress/lora/wire-reject", test_wire_reject);
  return g_test_run ();
}
