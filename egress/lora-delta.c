/* egress/lora-delta.c — adapter configs, f32 deltas and their bf16 safetensors wire format.
 * Rules and formats: lora-delta.h. */
#include "lora-delta.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "hanzo/json-out.h"
#include "hanzo/engine-train.h"

G_DEFINE_QUARK (hz-lora-error-quark, hz_lora_error)

#define META_FORMAT  "format"
#define META_CONFIG  "hanzo.adapter_config_sha256"
#define META_BASE    "hanzo.base_model_sha256"
#define META_ROUND   "hanzo.round_id"
#define META_EPSILON "hanzo.client_epsilon"

typedef struct {
  char   *name;
  guint   n_dims;
  int64_t shape[HZ_ST_MAX_DIMS];
  gsize   n_elements;
  gsize   offset;
} TensorSpec;

struct _HzDeltaConfig {
  gatomicrefcount ref;
  guint      rank;
  double     alpha;
  GArray    *tensors;     /* TensorSpec */
  GHashTable *by_name;    /* name -> index + 1 */
  gsize      n_elements;
  char      *hash;        /* lazily computed */
};

struct _HzLoraDelta {
  HzDeltaConfig *cfg;
  char         *base_sha256;
  float        *data;
};

/* ================================================================= config */

static void
tensor_spec_clear (gpointer p)
{
  g_free (((TensorSpec *) p)->name);
}

HzDeltaConfig *
hz_delta_config_new (guint rank, double alpha)
{
  g_return_val_if_fail (rank >= 1 && alpha > 0, NULL);
  HzDeltaConfig *cfg = g_new0 (HzDeltaConfig, 1);
  g_atomic_ref_count_init (&cfg->ref);
  cfg->rank = rank;
  cfg->alpha = alpha;
  cfg->tensors = g_array_new (FALSE, TRUE, sizeof (TensorSpec));
  g_array_set_clear_func (cfg->tensors, tensor_spec_clear);
  cfg->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  return cfg;
}

HzDeltaConfig *
hz_delta_config_ref (HzDeltaConfig *cfg)
{
  g_atomic_ref_count_inc (&cfg->ref);
  return cfg;
}

void
hz_delta_config_unref (HzDeltaConfig *cfg)
{
  if (!cfg || !g_atomic_ref_count_dec (&cfg->ref))
    return;
  g_hash_table_unref (cfg->by_name);
  g_array_unref (cfg->tensors);
  g_free (cfg->hash);
  g_free (cfg);
}

gboolean
hz_delta_config_add_tensor (HzDeltaConfig *cfg, const char *name, guint n_dims,
                           const int64_t *shape, GError **error)
{
  if (!name || !*name || !g_utf8_validate (name, -1, NULL) ||
      strcmp (name, "__metadata__") == 0 || g_hash_table_contains (cfg->by_name, name))
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID,
                   "tensor name '%s' is empty, invalid, reserved or already used",
                   name ? name : "(null)");
      return FALSE;
    }
  if (n_dims < 1 || n_dims > HZ_ST_MAX_DIMS)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID,
                   "tensor '%s' has %u dimensions (1..%d allowed)", name, n_dims, HZ_ST_MAX_DIMS);
      return FALSE;
    }
  TensorSpec t = { 0 };
  t.n_elements = 1;
  for (guint d = 0; d < n_dims; d++)
    {
      if (shape[d] < 1 || shape[d] > ((int64_t) 1 << 40) ||
          t.n_elements > G_MAXSIZE / 4 / (gsize) shape[d])
        {
          g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID,
                       "tensor '%s' dimension %u is %" G_GINT64_FORMAT, name, d, shape[d]);
          return FALSE;
        }
      t.shape[d] = shape[d];
      t.n_elements *= (gsize) shape[d];
    }
  t.name = g_strdup (name);
  t.n_dims = n_dims;
  t.offset = cfg->n_elements;
  cfg->n_elements += t.n_elements;
  g_array_append_val (cfg->tensors, t);
  g_hash_table_insert (cfg->by_name, t.name, GUINT_TO_POINTER (cfg->tensors->len));
  g_clear_pointer (&cfg->hash, g_free);
  return TRUE;
}

/* The widths of each target's A (rank x in) and B (out x rank) in a Llama layer: 0 = hidden,
 * 1 = kv_dim, 2 = ffn. Tensors go in the engine's target order (q, k, v, o, gate, up, down)
 * under its PEFT names (hz_lora_peft_key); hz_delta_config_new_from_peft() orders tensors
 * the same way. */
static const struct { int in, out; } llama_dims[HZ_LORA_N_TARGETS] = {
  [HZ_LORA_Q] = { 0, 0 },    [HZ_LORA_K] = { 0, 1 },  [HZ_LORA_V] = { 0, 1 },
  [HZ_LORA_O] = { 0, 0 },    [HZ_LORA_GATE] = { 0, 2 }, [HZ_LORA_UP] = { 0, 2 },
  [HZ_LORA_DOWN] = { 2, 0 },
};

HzDeltaConfig *
hz_delta_config_new_llama (guint n_layers, guint hidden, guint kv_dim, guint ffn, guint rank,
                          double alpha)
{
  const guint dims[3] = { hidden, kv_dim, ffn };
  HzDeltaConfig *cfg = hz_delta_config_new (rank, alpha);
  for (guint l = 0; l < n_layers; l++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        g_autofree char *a = hz_lora_peft_key ((int32_t) l, t, 'A');
        g_autofree char *b = hz_lora_peft_key ((int32_t) l, t, 'B');
        const int64_t sa[2] = { rank, dims[llama_dims[t].in] },
                      sb[2] = { dims[llama_dims[t].out], rank };
        if (!hz_delta_config_add_tensor (cfg, a, 2, sa, NULL) ||
            !hz_delta_config_add_tensor (cfg, b, 2, sb, NULL))
          {
            hz_delta_config_unref (cfg);
            return NULL;
          }
      }
  return cfg;
}

static inline const TensorSpec *
spec (const HzDeltaConfig *cfg, guint i)
{
  g_return_val_if_fail (i < cfg->tensors->len, NULL);
  return &g_array_index (cfg->tensors, TensorSpec, i);
}

guint hz_delta_config_rank (const HzDeltaConfig *cfg) { return cfg->rank; }
double hz_delta_config_alpha (const HzDeltaConfig *cfg) { return cfg->alpha; }
guint hz_delta_config_n_tensors (const HzDeltaConfig *cfg) { return cfg->tensors->len; }
const char *hz_delta_config_tensor_name (const HzDeltaConfig *cfg, guint i) { return spec (cfg, i)->name; }
guint hz_delta_config_tensor_n_dims (const HzDeltaConfig *cfg, guint i) { return spec (cfg, i)->n_dims; }
const int64_t *hz_delta_config_tensor_shape (const HzDeltaConfig *cfg, guint i) { return spec (cfg, i)->shape; }
gsize hz_delta_config_tensor_n_elements (const HzDeltaConfig *cfg, guint i) { return spec (cfg, i)->n_elements; }
gsize hz_delta_config_offset (const HzDeltaConfig *cfg, guint i) { return spec (cfg, i)->offset; }
gsize hz_delta_config_n_elements (const HzDeltaConfig *cfg) { return cfg->n_elements; }

gssize
hz_delta_config_find (const HzDeltaConfig *cfg, const char *name)
{
  return (gssize) GPOINTER_TO_UINT (g_hash_table_lookup (cfg->by_name, name)) - 1;
}

char *
hz_delta_config_to_json (const HzDeltaConfig *cfg)
{
  GString *s = g_string_new (NULL);
  char alpha[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (alpha, sizeof alpha, "%.17g", cfg->alpha);
  g_string_append_printf (s, "{\"rank\":%u,\"alpha\":%s,\"tensors\":[", cfg->rank, alpha);
  for (guint i = 0; i < cfg->tensors->len; i++)
    {
      const TensorSpec *t = spec (cfg, i);
      JsonNode *node = json_node_init_string (json_node_alloc (), t->name);
      g_autofree char *name = hz_json_node_to_string (node, FALSE);
      json_node_unref (node);
      g_string_append_printf (s, "%s{\"name\":%s,\"shape\":[", i ? "," : "", name);
      for (guint d = 0; d < t->n_dims; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "," : "", t->shape[d]);
      g_string_append (s, "]}");
    }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

const char *
hz_delta_config_hash (HzDeltaConfig *cfg)
{
  if (!cfg->hash)
    {
      g_autofree char *json = hz_delta_config_to_json (cfg);
      cfg->hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);
    }
  return cfg->hash;
}

/* Member `name` of `o` when it is a JSON value of `type` (G_TYPE_DOUBLE also takes an
 * integer), else NULL. The json_object_get_*_member getters g_critical on an object or an
 * array, which hostile input must not reach. */
static JsonNode *
typed_member (JsonObject *o, const char *name, GType type)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  if (!n || !JSON_NODE_HOLDS_VALUE (n))
    return NULL;
  const GType vt = json_node_get_value_type (n);
  return vt == type || (type == G_TYPE_DOUBLE && vt == G_TYPE_INT64) ? n : NULL;
}

HzDeltaConfig *
hz_delta_config_new_from_json (const char *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  GError *local = NULL;
  if (!json_parser_load_from_data (parser, json, -1, &local))
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG, "adapter config: %s",
                   local->message);
      g_error_free (local);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);   /* NULL for an empty text */
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *rank = typed_member (o, "rank", G_TYPE_INT64);
  JsonNode *alpha = typed_member (o, "alpha", G_TYPE_DOUBLE);
  JsonNode *tensors = o ? json_object_get_member (o, "tensors") : NULL;
  if (!rank || !alpha || !tensors || !JSON_NODE_HOLDS_ARRAY (tensors) ||
      json_node_get_int (rank) < 1 || json_node_get_int (rank) > G_MAXUINT ||
      !(json_node_get_double (alpha) > 0))
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG,
                   "adapter config: needs an object with rank >= 1, alpha > 0 and tensors");
      return NULL;
    }
  g_autoptr (HzDeltaConfig) cfg = hz_delta_config_new ((guint) json_node_get_int (rank),
                                                     json_node_get_double (alpha));
  JsonArray *arr = json_node_get_array (tensors);
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonNode *tn = json_array_get_element (arr, i);
      JsonObject *t = JSON_NODE_HOLDS_OBJECT (tn) ? json_node_get_object (tn) : NULL;
      JsonNode *nn = typed_member (t, "name", G_TYPE_STRING);
      const char *name = nn ? json_node_get_string (nn) : NULL;
      JsonNode *shape = t ? json_object_get_member (t, "shape") : NULL;
      int64_t dims[HZ_ST_MAX_DIMS];
      guint n_dims = 0;
      gboolean ok = name && shape && JSON_NODE_HOLDS_ARRAY (shape) &&
                    json_array_get_length (json_node_get_array (shape)) <= HZ_ST_MAX_DIMS;
      for (guint d = 0; ok && d < json_array_get_length (json_node_get_array (shape)); d++)
        {
          JsonNode *dn = json_array_get_element (json_node_get_array (shape), d);
          ok = json_node_get_value_type (dn) == G_TYPE_INT64;
          if (ok)
            dims[n_dims++] = json_node_get_int (dn);
        }
      if (!ok || !hz_delta_config_add_tensor (cfg, name, n_dims, dims, &local))
        {
          g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG,
                       "adapter config: tensor %u is malformed%s%s", i,
                       local ? ": " : "", local ? local->message : "");
          g_clear_error (&local);
          return NULL;
        }
    }
  return g_steal_pointer (&cfg);
}

/* ================================================================= delta */

gboolean
hz_is_sha256_hex (const char *s)
{
  if (!s || strlen (s) != 64)
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      return FALSE;
  return TRUE;
}

HzLoraDelta *
hz_lora_delta_new (HzDeltaConfig *cfg, const char *base_sha256)
{
  g_return_val_if_fail (cfg && hz_is_sha256_hex (base_sha256), NULL);
  HzLoraDelta *d = g_new0 (HzLoraDelta, 1);
  d->cfg = hz_delta_config_ref (cfg);
  d->base_sha256 = g_strdup (base_sha256);
  d->data = g_new0 (float, MAX (cfg->n_elements, 1));
  return d;
}

HzLoraDelta *
hz_lora_delta_copy (const HzLoraDelta *delta)
{
  HzLoraDelta *d = hz_lora_delta_new (delta->cfg, delta->base_sha256);
  memcpy (d->data, delta->data, delta->cfg->n_elements * sizeof (float));
  return d;
}

void
hz_lora_delta_free (HzLoraDelta *delta)
{
  if (!delta)
    return;
  hz_delta_config_unref (delta->cfg);
  g_free (delta->base_sha256);
  g_free (delta->data);
  g_free (delta);
}

HzDeltaConfig *hz_lora_delta_get_config (const HzLoraDelta *delta) { return delta->cfg; }
const char *hz_lora_delta_get_base_sha256 (const HzLoraDelta *delta) { return delta->base_sha256; }
float *hz_lora_delta_data (HzLoraDelta *delta) { return delta->data; }
const float *hz_lora_delta_const_data (const HzLoraDelta *delta) { return delta->data; }

float *
hz_lora_delta_tensor (HzLoraDelta *delta, guint i)
{
  return delta->data + spec (delta->cfg, i)->offset;
}

gboolean
hz_lora_delta_set_tensor (HzLoraDelta *delta, const char *name, const float *values, gsize n,
                          GError **error)
{
  gssize i = hz_delta_config_find (delta->cfg, name);
  if (i < 0 || spec (delta->cfg, (guint) i)->n_elements != n)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_SHAPE,
                   "tensor '%s' %s (%" G_GSIZE_FORMAT " values given)", name,
                   i < 0 ? "is not in the adapter config" : "has another element count", n);
      return FALSE;
    }
  memcpy (hz_lora_delta_tensor (delta, (guint) i), values, n * sizeof (float));
  return TRUE;
}

double
hz_lora_delta_l2_norm (const HzLoraDelta *delta)
{
  double s = 0;
  for (gsize k = 0; k < delta->cfg->n_elements; k++)
    s += (double) delta->data[k] * delta->data[k];
  return sqrt (s);
}

/* First non-finite value: tensor index and element, or FALSE. */
static gboolean
find_non_finite (const HzDeltaConfig *cfg, const float *data, guint *tensor, gsize *elem)
{
  for (guint i = 0; i < cfg->tensors->len; i++)
    {
      const TensorSpec *t = spec (cfg, i);
      for (gsize k = 0; k < t->n_elements; k++)
        if (!isfinite (data[t->offset + k]))
          {
            *tensor = i;
            *elem = k;
            return TRUE;
          }
    }
  return FALSE;
}

static gboolean
check_finite (const HzDeltaConfig *cfg, const float *data, GError **error)
{
  guint ti;
  gsize k;
  if (!find_non_finite (cfg, data, &ti, &k))
    return TRUE;
  g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_NOT_FINITE,
               "tensor '%s' element %" G_GSIZE_FORMAT " is %g (not finite)",
               spec (cfg, ti)->name, k, (double) data[spec (cfg, ti)->offset + k]);
  return FALSE;
}

static gboolean
check_config (HzDeltaConfig *have, HzDeltaConfig *want, GError **error)
{
  if (have == want || strcmp (hz_delta_config_hash (have), hz_delta_config_hash (want)) == 0)
    return TRUE;
  g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG,
               "adapter config %s does not match the expected config %s",
               hz_delta_config_hash (have), hz_delta_config_hash (want));
  return FALSE;
}

gboolean
hz_lora_delta_validate (const HzLoraDelta *delta, HzDeltaConfig *expected, GError **error)
{
  return check_config (delta->cfg, expected, error) &&
         check_finite (delta->cfg, delta->data, error);
}

void
hz_lora_round_bf16 (float *values, gsize n)
{
  for (gsize k = 0; k < n; k++)
    values[k] = hz_bf16_to_fp32 (hz_fp32_to_bf16 (values[k]));
}

/* ================================================================= wire format */

GBytes *
hz_lora_delta_to_wire (HzLoraDelta *delta, guint64 round_id, double client_epsilon)
{
  HzDeltaConfig *cfg = delta->cfg;
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  g_autofree guint16 *buf = NULL;
  gsize cap = 0;
  for (guint i = 0; i < cfg->tensors->len; i++)
    {
      const TensorSpec *t = spec (cfg, i);
      if (t->n_elements > cap)
        buf = g_renew (guint16, buf, cap = t->n_elements);
      const float *src = delta->data + t->offset;
      for (gsize k = 0; k < t->n_elements; k++)
        buf[k] = GUINT16_TO_LE (hz_fp32_to_bf16 (src[k]));
      gboolean ok = hz_safetensors_writer_add (w, t->name, HZ_ST_BF16, t->n_dims, t->shape, buf,
                                               t->n_elements * 2, NULL);
      g_assert (ok);  /* the config guarantees valid, unique names and shapes */
    }
  char eps[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (eps, sizeof eps, "%.17g", client_epsilon);
  g_autofree char *round = g_strdup_printf ("%" G_GUINT64_FORMAT, round_id);
  hz_safetensors_writer_set_metadata (w, META_FORMAT, "pt");
  hz_safetensors_writer_set_metadata (w, META_CONFIG, hz_delta_config_hash (cfg));
  hz_safetensors_writer_set_metadata (w, META_BASE, delta->base_sha256);
  hz_safetensors_writer_set_metadata (w, META_ROUND, round);
  hz_safetensors_writer_set_metadata (w, META_EPSILON, eps);
  return hz_safetensors_writer_to_bytes (w);
}

static gboolean
shape_equal (const HzSafetensor *t, const TensorSpec *s)
{
  if (t->n_dims != s->n_dims)
    return FALSE;
  for (guint d = 0; d < s->n_dims; d++)
    if (t->shape[d] != s->shape[d])
      return FALSE;
  return TRUE;
}

static char *
shape_string (guint n_dims, const int64_t *shape)
{
  GString *s = g_string_new ("[");
  for (guint d = 0; d < n_dims; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "," : "", shape[d]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* Check every tensor of the file against the config and widen it into `out`. */
static gboolean
read_tensors (const HzSafetensors *st, const HzDeltaConfig *cfg, float *out, GError **error)
{
  if (hz_safetensors_n_tensors (st) != cfg->tensors->len)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_SHAPE,
                   "the file holds %u tensors, the adapter config %u",
                   hz_safetensors_n_tensors (st), cfg->tensors->len);
      return FALSE;
    }
  for (guint i = 0; i < cfg->tensors->len; i++)
    {
      const TensorSpec *s = spec (cfg, i);
      const HzSafetensor *t = hz_safetensors_find (st, s->name);
      if (!t || !shape_equal (t, s))
        {
          g_autofree char *want = shape_string (s->n_dims, s->shape);
          g_autofree char *have = t ? shape_string (t->n_dims, t->shape) : g_strdup ("missing");
          g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_SHAPE,
                       "tensor '%s' is %s, the adapter config wants %s", s->name, have, want);
          return FALSE;
        }
      if (t->dtype != HZ_ST_BF16)
        {
          g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_DTYPE,
                       "tensor '%s' has dtype %s; the wire format is BF16", s->name,
                       hz_st_dtype_name (t->dtype));
          return FALSE;
        }
      const guint8 *src = t->data;
      for (gsize k = 0; k < s->n_elements; k++)
        {
          guint16 h;
          memcpy (&h, src + 2 * k, 2);
          out[s->offset + k] = hz_bf16_to_fp32 (GUINT16_FROM_LE (h));
        }
    }
  return TRUE;
}

static gboolean
parse_u64 (const char *s, guint64 *out)
{
  return s && g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT64, out, NULL);
}

HzLoraDelta *
hz_lora_delta_from_wire (GBytes *bytes, HzDeltaConfig *expected, guint64 *round_id,
                         double *client_epsilon, GError **error)
{
  GError *local = NULL;
  g_autoptr (HzSafetensors) st = hz_safetensors_new_from_bytes (bytes, &local);
  if (!st)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_FORMAT, "not a valid safetensors file: %s",
                   local->message);
      g_error_free (local);
      return NULL;
    }
  const char *hash = hz_safetensors_metadata (st, META_CONFIG);
  const char *base = hz_safetensors_metadata (st, META_BASE);
  const char *round = hz_safetensors_metadata (st, META_ROUND);
  const char *eps = hz_safetensors_metadata (st, META_EPSILON);
  guint64 r;
  double e = 0;
  char *end = NULL;
  if (eps)
    e = g_ascii_strtod (eps, &end);
  if (!hash || !hz_is_sha256_hex (base) || !parse_u64 (round, &r) || !eps || !end || *end ||
      !isfinite (e) || e < 0)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_FORMAT,
                   "__metadata__ must hold %s, %s (sha256 hex), %s (u64) and %s (>= 0)",
                   META_CONFIG, META_BASE, META_ROUND, META_EPSILON);
      return NULL;
    }
  if (strcmp (hash, hz_delta_config_hash (expected)) != 0)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_CONFIG,
                   "adapter config %s does not match the expected config %s", hash,
                   hz_delta_config_hash (expected));
      return NULL;
    }
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (expected, base);
  if (!read_tensors (st, expected, d->data, error) || !check_finite (expected, d->data, error))
    return NULL;
  if (round_id)
    *round_id = r;
  if (client_epsilon)
    *client_epsilon = e;
  return g_steal_pointer (&d);
}

char *
hz_sha256_hex (GBytes *bytes)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
}

/* ----------------------------------------------------------------- PEFT adapter dirs */

static gboolean
is_lora_tensor (const char *name)
{
  return g_str_has_suffix (name, ".lora_A.weight") || g_str_has_suffix (name, ".lora_B.weight");
}

/* Sort key of a PEFT LoRA tensor name "base_model.model.model.layers.L.<block>.<proj>.
 * lora_<A|B>.weight": (L, projection in the engine's target order, A before B), so that an
 * all-projection adapter has exactly hz_delta_config_new_llama()'s order (and hash);
 * FALSE for other names, which sort after these by strcmp. */
static gboolean
peft_key (const char *name, guint64 *layer, guint *proj, guint *b)
{
  static const char prefix[] = "base_model.model.model.layers.";
  if (!g_str_has_prefix (name, prefix))
    return FALSE;
  char *end;
  *layer = g_ascii_strtoull (name + sizeof prefix - 1, &end, 10);
  if (end == name + sizeof prefix - 1 || *end != '.')
    return FALSE;
  for (guint p = 0; p < HZ_LORA_N_TARGETS; p++)
    for (guint k = 0; k < 2; k++)
      {
        g_autofree char *tail = g_strdup_printf (".%s.%s.lora_%c.weight",
                                                 hz_lora_target_peft_parent (p),
                                                 hz_lora_target_peft_name (p), k ? 'B' : 'A');
        if (g_str_equal (end, tail))
          {
            *proj = p;
            *b = k;
            return TRUE;
          }
      }
  return FALSE;
}

static int
cmp_tensor_name (gconstpointer a, gconstpointer b)
{
  const HzSafetensor *x = *(const HzSafetensor *const *) a, *y = *(const HzSafetensor *const *) b;
  guint64 lx, ly;
  guint px, py, bx, by;
  const gboolean kx = peft_key (x->name, &lx, &px, &bx), ky = peft_key (y->name, &ly, &py, &by);
  if (kx != ky)
    return kx ? -1 : 1;
  if (!kx)
    return strcmp (x->name, y->name);
  if (lx != ly)
    return lx < ly ? -1 : 1;
  if (px != py)
    return px < py ? -1 : 1;
  return (int) bx - (int) by;
}

/* The adapter's LoRA tensors sorted by name (borrowed from st). */
static GPtrArray *
sorted_tensors (const HzSafetensors *st)
{
  GPtrArray *v = g_ptr_array_new ();
  for (guint i = 0; i < hz_safetensors_n_tensors (st); i++)
    {
      const HzSafetensor *t = hz_safetensors_tensor (st, i);
      if (is_lora_tensor (t->name))
        g_ptr_array_add (v, (gpointer) t);
    }
  g_ptr_array_sort (v, cmp_tensor_name);
  return v;
}

#define PEFT_WEIGHTS "adapter_model.safetensors"

static HzDeltaConfig *
config_from (const char *dir, const HzSafetensors *st, GError **error)
{
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, cfg_path, error))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);   /* NULL for an empty file */
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_FORMAT, "%s: not a JSON object", cfg_path);
      return NULL;
    }
  JsonObject *o = json_node_get_object (root);
  JsonNode *rn = typed_member (o, "r", G_TYPE_INT64);
  JsonNode *an = typed_member (o, "lora_alpha", G_TYPE_DOUBLE);
  const gint64 r = rn ? json_node_get_int (rn) : 0;
  const double alpha = an ? json_node_get_double (an) : 0;
  g_autoptr (GPtrArray) ts = sorted_tensors (st);
  if (r < 1 || !(alpha > 0) || ts->len == 0)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_FORMAT,
                   "%s: not a LoRA adapter (r %" G_GINT64_FORMAT ", alpha %g, %u LoRA tensors)",
                   dir, r, alpha, ts->len);
      return NULL;
    }
  g_autoptr (HzDeltaConfig) cfg = hz_delta_config_new ((guint) r, alpha);
  for (guint i = 0; i < ts->len; i++)
    {
      const HzSafetensor *t = ts->pdata[i];
      if (!hz_delta_config_add_tensor (cfg, t->name, t->n_dims, t->shape, error))
        {
          g_autofree char *st_path = g_build_filename (dir, PEFT_WEIGHTS, NULL);
          g_prefix_error (error, "%s: ", st_path);
          return NULL;
        }
    }
  return g_steal_pointer (&cfg);
}

static HzSafetensors *
open_weights (const char *dir, GError **error)
{
  g_autofree char *path = g_build_filename (dir, PEFT_WEIGHTS, NULL);
  return hz_safetensors_open (path, error);   /* its errors name the file */
}

HzDeltaConfig *
hz_delta_config_new_from_peft (const char *adapter_dir, GError **error)
{
  g_autoptr (HzSafetensors) st = open_weights (adapter_dir, error);
  return st ? config_from (adapter_dir, st, error) : NULL;
}

HzLoraDelta *
hz_lora_delta_new_from_peft (const char *adapter_dir, const char *base_sha256,
                             GError **error)
{
  g_autoptr (HzSafetensors) st = open_weights (adapter_dir, error);
  if (st == NULL)
    return NULL;
  g_autoptr (HzDeltaConfig) cfg = config_from (adapter_dir, st, error);
  if (cfg == NULL)
    return NULL;
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, base_sha256);
  if (d == NULL)
    {
      g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_INVALID, "bad base model sha256 \"%s\"",
                   base_sha256);
      return NULL;
    }
  g_autoptr (GPtrArray) ts = sorted_tensors (st);
  for (guint i = 0; i < ts->len; i++)
    {
      const HzSafetensor *t = ts->pdata[i];
      float *out = hz_lora_delta_tensor (d, i);
      const gsize n = hz_delta_config_tensor_n_elements (cfg, i);
      const guint8 *src = t->data;   /* may be unaligned */
      for (gsize k = 0; k < n; k++)
        {
          if (t->dtype == HZ_ST_F32)
            memcpy (&out[k], src + 4 * k, 4);
          else if (t->dtype == HZ_ST_BF16 || t->dtype == HZ_ST_F16)
            {
              uint16_t h;
              memcpy (&h, src + 2 * k, 2);
              out[k] = t->dtype == HZ_ST_BF16 ? hz_bf16_to_fp32 (h) : hz_fp16_to_fp32 (h);
            }
          else
            {
              g_set_error (error, HZ_LORA_ERROR, HZ_LORA_ERROR_DTYPE, "%s/%s: tensor '%s' is %s "
                           "(F32, F16 or BF16 expected)", adapter_dir, PEFT_WEIGHTS, t->name,
                           hz_st_dtype_name (t->dtype));
              return NULL;
            }
        }
    }
  return g_steal_pointer (&d);
}
