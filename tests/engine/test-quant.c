/* tests/engine/test-quant.c — the quant format table against ggml's golden vectors
 * (../shared/golden/quant and quant-new, layouts in their README.md), plus core checks that
 * need no shared data (fp16/bf16 conversion, quantize→dequantize→dot self-consistency on
 * every SIMD level).
 *
 * Test paths:
 *   /quant/table-walk                 every row has traits, codecs, GGUF id, golden files
 *   /quant/decode/<type>              bit-exact dequantization (0 mismatching floats)
 *   /quant/encode/<type>              bit-exact reference quantization (0 differing bytes)
 *   /quant/dot/<type>                 vec_dot vs golden `result`, every supported SIMD level
 *   /quant/core/...                   no shared data needed
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "quant.h"
#include "../hz-test-util.h"

/* ---- golden files ------------------------------------------------------------------ */

static uint32_t
rd_u32 (const guint8 *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

/** Path of golden/<dir>/<kind>/<file> in quant/ or quant-new/, or NULL (skip) when the
 *  shared data is absent, or "" when present but the file is not there. */
static char *
golden_path (const char *kind, const char *file)
{
  g_autofree char *root = hz_test_shared_path ("golden/quant");
  if (!root)
    return NULL;
  g_autofree char *rel = g_strdup_printf ("%s/%s", kind, file);
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *p = g_build_filename (root, i ? "../quant-new" : ".", rel, NULL);
      if (g_file_test (p, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&p);
    }
  return g_strdup ("");
}

/** Loads golden file kind/<name><suffix>.bin; checks magic and the type header against the
 *  traits. Returns NULL after g_test_skip when shared data is absent; fails the test when
 *  the file is missing or malformed. */
static GBytes *
golden_load (const HzQuantTraits *t, const char *kind, const char *suffix, const char *magic,
             gboolean required)
{
  g_autofree char *file = g_strdup_printf ("%s%s.bin", t->name, suffix);
  g_autofree char *path = golden_path (kind, file);
  if (!path)
    return NULL;
  if (!*path)
    {
      if (required)
        g_test_fail_printf ("golden file %s/%s missing", kind, file);
      return NULL;
    }
  g_autoptr (GError) err = NULL;
  char *data;
  gsize len;
  g_assert_true (g_file_get_contents (path, &data, &len, &err));
  g_assert_cmpuint (len, >=, 40);
  g_assert_cmpmem (data, 8, magic, 8);
  const guint8 *h = (const guint8 *) data;
  g_assert_cmpuint (rd_u32 (h + 8), ==, t->type);
  return g_bytes_new_take (data, len);
}

/** Tolerance from golden/quant/README.md: |got − ref| ≤ 1e-5·|ref| + 1e-6·abs_f64. */
static gboolean
dot_close (double got, double ref, double abs_f64)
{
  return fabs (got - ref) <= 1e-5 * fabs (ref) + 1e-6 * abs_f64;
}

/* ---- /quant/decode ------------------------------------------------------------------ */
static void
test_decode (gconstpointer data)
{
  const HzQuantTraits *t = data;
  g_autoptr (GBytes) b = golden_load (t, "decode", "", "GGDEC001", TRUE);
  if (!b)
    return;
  gsize len;
  const guint8 *p = g_bytes_get_data (b, &len);
  uint32_t elems = rd_u32 (p + 12), bytes = rd_u32 (p + 16), nb = rd_u32 (p + 20);
  g_assert_cmpuint (elems, ==, t->block_elems);
  g_assert_cmpuint (bytes, ==, t->block_bytes);
  int64_t n = (int64_t) nb * elems;
  g_assert_cmpuint (len, ==, 32 + (gsize) nb * bytes + (gsize) n * 4);

  g_autofree guint8 *blocks = g_memdup2 (p + 32, (gsize) nb * bytes);
  g_autofree float *want = g_memdup2 (p + 32 + (gsize) nb * bytes, (gsize) n * 4);
  g_autofree float *got = g_new0 (float, n);
  t->to_float (blocks, got, n);

  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (memcmp (&got[i], &want[i], 4) != 0 && !(isnan (got[i]) && isnan (want[i])))
      {
        if (first < 0)
          first = i;
        bad++;
      }
  if (bad)
    g_test_fail_printf ("%s: %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " floats differ; "
                        "first at %" G_GINT64_FORMAT " (block %" G_GINT64_FORMAT "): got %a want %a",
                        t->name, bad, n, first, first / elems, got[first], want[first]);
  g_test_message ("%s: %" G_GINT64_FORMAT " floats, %" G_GINT64_FORMAT " mismatches",
                  t->name, n, bad);
}

/* ---- /quant/encode ------------------------------------------------------------------ */
/* the encoder under test: the row's from_float, or the file quantizer (quantize_chunk) */
static const HzQuantTraits *chunk_traits;
static void
chunk_from_float (const float *restrict x, void *restrict y, int64_t n)
{
  g_assert_cmpuint (hz_quant_quantize_rows (chunk_traits->type, x, y, 1, n), ==,
                    hz_quant_row_size (chunk_traits->type, n));
}

static void
check_encode_file (const HzQuantTraits *t, GBytes *b, const char *label, HzFromFloatFn enc)
{
  gsize len;
  const guint8 *p = g_bytes_get_data (b, &len);
  uint32_t elems = rd_u32 (p + 12), bytes = rd_u32 (p + 16);
  uint32_t rows = rd_u32 (p + 20), per_row = rd_u32 (p + 24), row_bytes = rd_u32 (p + 28);
  uint32_t flags = rd_u32 (p + 32);
  g_assert_cmpuint (elems, ==, t->block_elems);
  g_assert_cmpuint (bytes, ==, t->block_bytes);
  g_assert_cmpuint (row_bytes, ==, hz_quant_row_size (t->type, per_row));
  g_assert_cmpuint (len, ==, 40 + (gsize) rows * per_row * 4 + (gsize) rows * row_bytes);

  g_autofree float *in = g_memdup2 (p + 40, (gsize) rows * per_row * 4);
  const guint8 *want = p + 40 + (gsize) rows * per_row * 4;
  g_autofree guint8 *got = g_malloc0 (row_bytes);
  g_autofree float *dq_got = g_new (float, per_row);
  g_autofree float *dq_want = g_new (float, per_row);
  g_autofree guint8 *want_row = g_malloc (row_bytes);
  gsize bad_bytes = 0;
  for (uint32_t r = 0; r < rows; r++)
    {
      const float *x = in + (gsize) r * per_row;
      memcpy (want_row, want + (gsize) r * row_bytes, row_bytes);
      enc (x, got, per_row);
      gboolean zero_row = TRUE;
      for (uint32_t i = 0; i < per_row; i++)
        zero_row &= x[i] == 0.0f;
      if ((flags & 1) && zero_row)
        {
          /* README: the qs bytes of an all-zero row are undefined in ggml; compare the
           * decoded values (all zero, d = 0) instead. */
          t->to_float (got, dq_got, per_row);
          t->to_float (want_row, dq_want, per_row);
          for (uint32_t i = 0; i < per_row; i++)
            if (dq_got[i] != dq_want[i])
              bad_bytes++;
          continue;
        }
      for (uint32_t i = 0; i < row_bytes; i++)
        if (got[i] != want_row[i])
          {
            if (bad_bytes == 0)
              g_test_message ("%s %s: row %u byte %u (block %u): got 0x%02x want 0x%02x",
                              t->name, label, r, i, i / bytes, got[i], want_row[i]);
            bad_bytes++;
          }
    }
  if (bad_bytes)
    g_test_fail_printf ("%s %s: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes differ",
                        t->name, label, bad_bytes, (gsize) rows * row_bytes);
  g_test_message ("%s %s: %u rows x %u, 0 differing bytes expected, %" G_GSIZE_FORMAT " found",
                  t->name, label, rows, per_row, bad_bytes);
}

static void
test_encode (gconstpointer data)
{
  const HzQuantTraits *t = data;
  g_assert_nonnull (t->from_float);
  g_autoptr (GBytes) b = golden_load (t, "encode", "", "GGENC001", TRUE);
  if (!b)
    return;
  check_encode_file (t, b, "standard", t->from_float);
  g_autoptr (GBytes) edge = golden_load (t, "encode", "_edge", "GGENC001", FALSE);
  if (edge)
    check_encode_file (t, edge, "edge", t->from_float);
  /* llama-quantize's path (ggml_quantize_chunk): its own golden file where it differs from
   * the reference quantizer, otherwise it must equal the reference on the standard rows */
  chunk_traits = t;
  g_autoptr (GBytes) chunk = golden_load (t, "encode", "_quantize_chunk", "GGENC001", FALSE);
  check_encode_file (t, chunk ? chunk : b, "quantize_chunk", chunk_from_float);
}

/* ---- /quant/dot --------------------------------------------------------------------- */
static void
test_dot (gconstpointer data)
{
  const HzQuantTraits *t = data;
  const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
  g_assert_nonnull (vt);
  g_autoptr (GBytes) b = golden_load (t, "dot", "", "GGDOT001", TRUE);
  if (!b)
    return;
  gsize len;
  const guint8 *p = g_bytes_get_data (b, &len);
  g_assert_cmpuint (rd_u32 (p + 12), ==, t->vec_dot_type);
  g_assert_cmpuint (rd_u32 (p + 16), ==, t->block_elems);
  g_assert_cmpuint (rd_u32 (p + 20), ==, t->block_bytes);
  g_assert_cmpuint (rd_u32 (p + 24), ==, vt->block_elems);
  g_assert_cmpuint (rd_u32 (p + 28), ==, vt->block_bytes);
  uint32_t ncases = rd_u32 (p + 32);
  gsize off = 40;
  int levels_run = 0;
  double worst[HZ_SIMD_LEVELS] = { 0 };

  for (uint32_t c = 0; c < ncases; c++)
    {
      g_assert_cmpuint (off + 32, <=, len);
      uint32_t n = rd_u32 (p + off);
      float result, result_scalar;
      double ref_f64, abs_f64;
      memcpy (&result, p + off + 8, 4);
      memcpy (&result_scalar, p + off + 12, 4);
      memcpy (&ref_f64, p + off + 16, 8);
      memcpy (&abs_f64, p + off + 24, 8);
      off += 32;
      gsize wbytes = hz_quant_row_size (t->type, n), abytes = hz_quant_row_size (vt->type, n);
      g_assert_cmpuint (wbytes, >, 0);
      g_assert_cmpuint (off + wbytes + (gsize) n * 4 + abytes, <=, len);
      g_autofree guint8 *w = g_memdup2 (p + off, wbytes);
      g_autofree float *af = g_memdup2 (p + off + wbytes, (gsize) n * 4);
      g_autofree guint8 *a = g_memdup2 (p + off + wbytes + (gsize) n * 4, abytes);
      off += wbytes + (gsize) n * 4 + abytes;

      /* the activation bytes are ggml-cpu's from_float of the activations: ours must match */
      g_autofree guint8 *mine = g_malloc0 (abytes);
      hz_quant_act_from_float (vt->type) (af, mine, n);
      if (memcmp (mine, a, abytes) != 0)
        g_test_fail_printf ("%s case %u: activation quantizer (%s) differs from ggml-cpu's",
                            t->name, c, vt->name);

      float scalar = NAN;
      for (int l = 0; l < HZ_SIMD_LEVELS; l++)
        {
          HzVecDotFn fn = hz_quant_vec_dot_at (t->type, l);
          if (!fn || !hz_simd_supported (l))
            continue;
          float got = NAN;
          fn ((int) n, &got, w, a);
          double err = fabs (got - result) / (fabs (result) + 0.1 * abs_f64 + 1e-30);
          worst[l] = MAX (worst[l], err);
          if (!dot_close (got, result, abs_f64))
            g_test_fail_printf ("%s case %u (%s): got %.9g, ggml %.9g (scalar %.9g, f64 %.9g)",
                                t->name, c, hz_simd_level_name (l), got, result,
                                result_scalar, ref_f64);
          if (l == HZ_SIMD_SCALAR)
            scalar = got;
          else if (!dot_close (got, scalar, abs_f64))
            g_test_fail_printf ("%s case %u: %s %.9g vs scalar %.9g", t->name, c,
                                hz_simd_level_name (l), got, scalar);
          levels_run |= 1 << l;
        }
      g_assert_false (isnan (scalar));   /* the scalar path always runs */
    }
  g_assert_cmpuint (off, ==, len);
  for (int l = 0; l < HZ_SIMD_LEVELS; l++)
    if (levels_run & (1 << l))
      g_test_message ("%s %s: %u cases, worst |got-result|/(|result|+0.1 abs) = %.2g",
                      t->name, hz_simd_level_name (l), ncases, worst[l]);
}

/* ---- /quant/table-walk --------------------------------------------------------------- */

/** The entry of types.json (quant/ or quant-new/) for `name`, or NULL. */
static JsonObject *
types_entry (JsonParser **parsers, const char *name)
{
  for (int i = 0; i < 2; i++)
    {
      if (!parsers[i])
        continue;
      JsonArray *arr = json_node_get_array (json_parser_get_root (parsers[i]));
      for (guint k = 0; k < json_array_get_length (arr); k++)
        {
          JsonObject *o = json_array_get_object_element (arr, k);
          if (g_strcmp0 (json_object_get_string_member (o, "name"), name) == 0)
            return o;
        }
    }
  return NULL;
}

static void
test_table_walk (void)
{
  size_t nf = hz_quant_n_formats ();
  g_assert_cmpuint (nf, >=, 5);

  /* Core part: traits, codecs, GGUF mapping, pairing (no shared data needed). */
  for (size_t i = 0; i < nf; i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      g_assert_nonnull (t);
      g_assert_nonnull (t->name);
      g_assert_true (hz_quant_traits (t->type) == t);          /* GGUF/ggml id mapping */
      g_assert_true (hz_quant_traits_by_name (t->name) == t);
      g_autofree char *up = g_ascii_strup (t->name, -1);
      g_assert_true (hz_quant_traits_by_name (up) == t);
      g_assert_cmpuint (t->block_elems, >, 0);
      g_assert_cmpuint (t->block_bytes, >, 0);
      g_assert_true (t->is_quantized == (t->block_elems > 1));
      g_assert_cmpuint (hz_quant_row_size (t->type, t->block_elems * 3), ==, 3 * t->block_bytes);
      /* an activation quantizer exists exactly where a reference encoder does */
      g_assert_true ((hz_quant_act_from_float (t->type) != NULL) == (t->from_float != NULL));
      if (t->block_elems > 1)
        g_assert_cmpuint (hz_quant_row_size (t->type, t->block_elems + 1), ==, 0);
      if (!t->to_float)
        g_test_fail_printf ("%s has no decoder", t->name);
      const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
      if (!vt)
        g_test_fail_printf ("%s: vec_dot_type %d not in the table", t->name, t->vec_dot_type);
      else if (!vt->from_float)
        g_test_fail_printf ("%s: vec_dot_type %s cannot quantize activations", t->name, vt->name);
      else if (t->block_elems % vt->block_elems && vt->block_elems % t->block_elems)
        g_test_fail_printf ("%s: block sizes do not pair with %s", t->name, vt->name);
      if (t->vec_dot)
        {
          g_assert_true (hz_quant_vec_dot_at (t->type, HZ_SIMD_SCALAR) != NULL);
          /* the selected kernel is the best one available at the dispatch level */
          HzVecDotFn best = NULL;
          for (int l = 0; l <= (int) hz_simd_level (); l++)
            if (hz_quant_vec_dot_at (t->type, l))
              best = hz_quant_vec_dot_at (t->type, l);
          g_assert_true (t->vec_dot == best);
        }
      else
        {
          /* activation-only: must be the vec_dot_type of some weight format */
          gboolean used = FALSE;
          for (size_t k = 0; k < nf; k++)
            used |= hz_quant_format (k)->vec_dot_type == t->type && hz_quant_format (k) != t;
          if (!used)
            g_test_fail_printf ("%s has no dot kernel and is no activation format", t->name);
          g_assert_nonnull (t->from_float);
        }
    }
  g_assert_null (hz_quant_traits (63));
  g_assert_null (hz_quant_traits (1000));
  g_assert_null (hz_quant_traits_by_name ("q4_9"));
  g_assert_null (hz_quant_traits_by_name (NULL));
  g_assert_cmpuint (hz_quant_row_size (1000, 32), ==, 0);
  g_assert_cmpuint (hz_quant_row_size (HZ_TYPE_Q4_0, -32), ==, 0);
  g_assert_null (hz_quant_act_from_float (1000));
  g_assert_null (hz_quant_vec_dot_at (1000, HZ_SIMD_SCALAR));
  g_assert_null (hz_quant_vec_dot_at (HZ_TYPE_Q4_0, (HzSimdLevel) 99));
  /* the file quantizer refuses bad shapes and imatrix-only types without writing */
  {
    float src[64] = { 1.0f };
    guint8 dst[64] = { 0 };
    g_assert_cmpuint (hz_quant_quantize_rows (HZ_TYPE_Q4_0, src, dst, 1, 33), ==, 0);
    g_assert_cmpuint (hz_quant_quantize_rows (HZ_TYPE_Q4_0, src, dst, -1, 32), ==, 0);
    g_assert_cmpuint (hz_quant_quantize_rows (1000, src, dst, 1, 32), ==, 0);
    g_assert_cmpuint (hz_quant_quantize_rows (16 /* IQ2_XXS */, src, dst, 1, 256), ==, 0);
    for (int i = 0; i < 64; i++)
      g_assert_cmpuint (dst[i], ==, 0);
    g_assert_cmpuint (hz_quant_quantize_rows (HZ_TYPE_Q4_0, src, dst, 2, 32), ==, 36);
  }

  /* Golden part: every row has its golden files and agrees with ggml's types.json. */
  g_autofree char *root = hz_test_shared_path ("golden/quant");
  if (!root)
    return;
  JsonParser *parsers[2] = { json_parser_new (), json_parser_new () };
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *p = g_build_filename (root, i ? "../quant-new" : ".", "types.json", NULL);
      g_autoptr (GError) err = NULL;
      if (!json_parser_load_from_file (parsers[i], p, &err))
        g_test_fail_printf ("%s: %s", p, err->message);
    }
  for (size_t i = 0; i < nf; i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      if (t->type == HZ_TYPE_F32)
        continue;   /* the identity format: ggml ships no golden file; see /quant/core/f32 */
      JsonObject *o = types_entry (parsers, t->name);
      if (!o)
        {
          g_test_fail_printf ("%s: no entry in golden types.json", t->name);
          continue;
        }
      g_assert_cmpint (json_object_get_int_member (o, "ggml_type"), ==, t->type);
      g_assert_cmpint (json_object_get_int_member (o, "blck_size"), ==, t->block_elems);
      g_assert_cmpint (json_object_get_int_member (o, "type_size"), ==, t->block_bytes);
      gboolean imatrix = json_object_get_boolean_member (o, "requires_imatrix");
      if (imatrix != (t->from_float == NULL))
        g_test_fail_printf ("%s: from_float %s but ggml requires_imatrix=%d", t->name,
                            t->from_float ? "set" : "NULL", imatrix);
      JsonNode *vdt = json_object_get_member (o, "vec_dot_type");
      if (JSON_NODE_HOLDS_NULL (vdt))
        g_assert_null (t->vec_dot);  /* ggml: activation-only type */
      else
        {
          const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
          g_assert_cmpstr (json_node_get_string (vdt), ==, vt ? vt->name : "?");
          g_assert_nonnull (t->vec_dot);
        }
      const char *kinds[] = { "decode", "encode", "dot" };
      gboolean need[] = { TRUE, t->from_float != NULL, t->vec_dot != NULL };
      for (int k = 0; k < 3; k++)
        {
          if (!need[k])
            continue;
          g_autofree char *file = g_strdup_printf ("%s.bin", t->name);
          g_autofree char *path = golden_path (kinds[k], file);
          if (!path || !*path)
            g_test_fail_printf ("%s: golden %s file missing", t->name, kinds[k]);
        }
    }
  for (int i = 0; i < 2; i++)
    g_object_unref (parsers[i]);
}

/* ---- /quant/core -------------------------------------------------------------------- */

/** Every binary16 value converts to fp32 and back unchanged (NaN: stays NaN); fp32 values
 *  halfway between two halves round to even. */
static void
test_fp16 (void)
{
  for (uint32_t h = 0; h < 65536; h++)
    {
      float f = hz_fp16_to_fp32 ((uint16_t) h);
      uint16_t back = hz_fp32_to_fp16 (f);
      if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
        g_assert_true (isnan (f) && (back & 0x7c00) == 0x7c00 && (back & 0x3ff));
      else
        g_assert_cmphex (back, ==, h);
    }
  g_assert_cmpfloat (hz_fp16_to_fp32 (0x3c00), ==, 1.0f);
  g_assert_cmpfloat (hz_fp16_to_fp32 (0x0001), ==, 0x1p-24f);
  g_assert_cmphex (hz_fp32_to_fp16 (65504.0f), ==, 0x7bff);
  g_assert_cmphex (hz_fp32_to_fp16 (65519.99f), ==, 0x7bff);
  g_assert_cmphex (hz_fp32_to_fp16 (65520.0f), ==, 0x7c00);       /* tie -> even = inf */
  g_assert_cmphex (hz_fp32_to_fp16 (1.0f + 0x1p-11f), ==, 0x3c00); /* tie -> even */
  g_assert_cmphex (hz_fp32_to_fp16 (1.0f + 3 * 0x1p-11f), ==, 0x3c02);
  g_assert_cmphex (hz_fp32_to_fp16 (0x1p-25f), ==, 0x0000);        /* tie -> even = 0 */
  g_assert_cmphex (hz_fp32_to_fp16 (0x1.000002p-25f), ==, 0x0001);
  g_assert_cmphex (hz_fp32_to_fp16 (-0x1.8p-24f), ==, 0x8002);     /* 1.5 ulp -> 2 */
  g_assert_cmphex (hz_fp32_to_fp16 (1e-30f), ==, 0x0000);
  g_assert_cmphex (hz_fp32_to_fp16 (-INFINITY), ==, 0xfc00);
  g_assert_cmphex (hz_fp32_to_fp16 (NAN) & 0x7e00, ==, 0x7e00);
}

static void
test_bf16 (void)
{
  for (uint32_t h = 0; h < 65536; h++)
    {
      float f = hz_bf16_to_fp32 ((uint16_t) h);
      uint32_t u;
      memcpy (&u, &f, 4);
      g_assert_cmphex (u, ==, h << 16);
      if (!isnan (f))
        g_assert_cmphex (hz_fp32_to_bf16 (f), ==, h);
    }
  g_assert_cmphex (hz_fp32_to_bf16 (1.0f + 0x1p-8f), ==, 0x3f80);      /* tie -> even */
  g_assert_cmphex (hz_fp32_to_bf16 (1.0f + 3 * 0x1p-8f), ==, 0x3f82);  /* tie -> even */
  g_assert_cmphex (hz_fp32_to_bf16 (1.0f + 0x1.2p-8f), ==, 0x3f81);
  float snan;
  uint32_t sbits = 0x7f800001;
  memcpy (&snan, &sbits, 4);
  g_assert_cmphex (hz_fp32_to_bf16 (snan), ==, 0x7fc0);                /* made quiet */
}

/** splitmix64-based N(0,1) (Box-Muller), deterministic. */
static double
rnd_u (guint64 *s)
{
  guint64 z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return ((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static float
rnd_n (guint64 *s)
{
  double u1 = rnd_u (s) + 1e-300, u2 = rnd_u (s);
  return (float) (sqrt (-2 * log (u1)) * cos (2 * G_PI * u2));
}

/** Core self-consistency, no shared data (registered for rows with an encoder and a dot
 *  kernel; imatrix formats are covered by the golden tests): quantize random rows, decode
 *  them, and check that every vec_dot level equals Σ decode(w)·decode(a) in double within
 *  the golden tolerance. */
static void
test_core_selfcheck (gconstpointer data)
{
  const HzQuantTraits *t = data;
  const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
  g_assert_nonnull (t->from_float);
  g_assert_nonnull (t->vec_dot);
  const int n = 1024;   /* a multiple of every block size in the table */
  guint64 seed = 0x5eed0000u + t->type;
  g_autofree float *x = g_new (float, n), *a = g_new (float, n);
  g_autofree float *xd = g_new (float, n), *ad = g_new (float, n);
  for (int i = 0; i < n; i++)
    {
      x[i] = 0.05f * rnd_n (&seed) * (i % 97 == 0 ? 20.0f : 1.0f);
      a[i] = rnd_n (&seed);
    }
  g_autofree guint8 *w = g_malloc0 (hz_quant_row_size (t->type, n));
  g_autofree guint8 *aq = g_malloc0 (hz_quant_row_size (vt->type, n));
  t->from_float (x, w, n);
  vt->from_float (a, aq, n);
  t->to_float (w, xd, n);
  vt->to_float (aq, ad, n);
  double ref = 0, absum = 0, err2 = 0, sig2 = 0;
  for (int i = 0; i < n; i++)
    {
      ref += (double) xd[i] * ad[i];
      absum += fabs ((double) xd[i] * ad[i]);
      err2 += ((double) xd[i] - x[i]) * ((double) xd[i] - x[i]);
      sig2 += (double) x[i] * x[i];
    }
  /* the round trip is a quantization: it must beat the all-zero guess (1-bit Q1_0 on
   * data with ×20 outliers reaches 0.9; 4-bit formats stay below 0.2) */
  g_assert_cmpfloat (sqrt (err2 / sig2), <, t->block_bytes * 8.0 / t->block_elems < 2 ? 0.95 : 0.5);
  for (int l = 0; l < HZ_SIMD_LEVELS; l++)
    {
      HzVecDotFn fn = hz_quant_vec_dot_at (t->type, l);
      if (!fn || !hz_simd_supported (l))
        continue;
      float got = NAN;
      fn (n, &got, w, aq);
      /* q4_1/q5_1 use the f16-rounded sum of the q8_1 block (README: 5e-4 of abs) */
      double tol = t->vec_dot_type == 9 ? 5e-4 * absum : 1e-5 * fabs (ref) + 1e-6 * absum;
      if (fabs (got - ref) > tol)
        g_test_fail_printf ("%s %s: %.9g vs dequantized dot %.9g", t->name,
                            hz_simd_level_name (l), got, ref);
    }
}

/** F32 has no golden file: its decode/encode are copies; its dot must equal the double sum
 *  of float products (scalar: exactly ggml's formula) on every level. */
static void
test_core_f32 (void)
{
  const HzQuantTraits *t = hz_quant_traits (HZ_TYPE_F32);
  guint64 seed = 42;
  for (int n = 1; n <= 300; n += 37)
    {
      g_autofree float *x = g_new (float, n), *y = g_new (float, n), *c = g_new (float, n);
      for (int i = 0; i < n; i++)
        x[i] = rnd_n (&seed), y[i] = rnd_n (&seed);
      t->to_float (x, c, n);
      g_assert_cmpmem (c, n * 4, x, n * 4);
      t->from_float (x, c, n);
      g_assert_cmpmem (c, n * 4, x, n * 4);
      double ref = 0, absum = 0;
      for (int i = 0; i < n; i++)
        ref += (double) (x[i] * y[i]), absum += fabs (x[i] * y[i]);
      float got;
      hz_quant_vec_dot_at (HZ_TYPE_F32, HZ_SIMD_SCALAR) (n, &got, x, y);
      g_assert_cmpfloat (got, ==, (float) ref);
      for (int l = 1; l < HZ_SIMD_LEVELS; l++)
        if (hz_quant_vec_dot_at (HZ_TYPE_F32, l) && hz_simd_supported (l))
          {
            hz_quant_vec_dot_at (HZ_TYPE_F32, l) (n, &got, x, y);
            g_assert_true (dot_close (got, ref, absum));
          }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_message ("SIMD dispatch level: %s (avx2 %s, avx512 %s)",
                  hz_simd_level_name (hz_simd_level ()),
                  hz_simd_supported (HZ_SIMD_AVX2) ? "yes" : "no",
                  hz_simd_supported (HZ_SIMD_AVX512) ? "yes" : "no");
  g_test_add_func ("/quant/table-walk", test_table_walk);
  g_test_add_func ("/quant/core/fp16", test_fp16);
  g_test_add_func ("/quant/core/bf16", test_bf16);
  g_test_add_func ("/quant/core/f32", test_core_f32);
  for (size_t i = 0; i < hz_quant_n_formats (); i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      g_autofree char *p = NULL;
      if (t->type == HZ_TYPE_F32)
        continue;
      p = g_strdup_printf ("/quant/decode/%s", t->name);
      g_test_add_data_func (p, t, test_decode);
      if (t->from_float)
        {
          g_free (p);
          p = g_strdup_printf ("/quant/encode/%s", t->name);
          g_test_add_data_func (p, t, test_encode);
        }
      if (t->vec_dot)
        {
          g_free (p);
          p = g_strdup_printf ("/quant/dot/%s", t->name);
          g_test_add_data_func (p, t, test_dot);
        }
      if (t->vec_dot && t->from_float)
        {
          g_free (p);
          p = g_strdup_printf ("/quant/core/selfcheck/%s", t->name);
          g_test_add_data_func (p, t, test_core_selfcheck);
        }
    }
  return g_test_run ();
}
