/* engine/lora-adapter.c — LoRA adapter sets and the reader of PEFT / GGUF adapter files
 * (lora-adapter.h). The learner's writers live in learner/adapter-io.c. */
#include "lora-adapter.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "gguf.h"
#include "hanzo/engine-error.h"
#include "quant.h"
#include "safetensors.h"

/* ------------------------------------------------------------ names, configs */

static const struct {
  const char *peft, *parent, *gguf;
} target_names[HZ_LORA_N_TARGETS] = {
  [HZ_LORA_Q] = { "q_proj", "self_attn", "attn_q" },
  [HZ_LORA_K] = { "k_proj", "self_attn", "attn_k" },
  [HZ_LORA_V] = { "v_proj", "self_attn", "attn_v" },
  [HZ_LORA_O] = { "o_proj", "self_attn", "attn_output" },
  [HZ_LORA_GATE] = { "gate_proj", "mlp", "ffn_gate" },
  [HZ_LORA_UP] = { "up_proj", "mlp", "ffn_up" },
  [HZ_LORA_DOWN] = { "down_proj", "mlp", "ffn_down" },
};

const char *
hz_lora_target_peft_name (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].peft;
}

const char *
hz_lora_target_peft_parent (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].parent;
}

const char *
hz_lora_target_gguf_name (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].gguf;
}

gboolean
hz_lora_target_from_name (const char *name, HzLoraTarget *out)
{
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    if (g_strcmp0 (name, target_names[t].peft) == 0 || g_strcmp0 (name, target_names[t].gguf) == 0)
      {
        *out = t;
        return TRUE;
      }
  return FALSE;
}

char *
hz_lora_peft_key (int32_t il, HzLoraTarget t, char ab)
{
  return g_strdup_printf ("base_model.model.model.layers.%d.%s.%s.lora_%c.weight", il,
                          hz_lora_target_peft_parent (t), hz_lora_target_peft_name (t), ab);
}

char *
hz_lora_gguf_key (int32_t il, HzLoraTarget t, char ab)
{
  return g_strdup_printf ("blk.%d.%s.weight.lora_%c", il, hz_lora_target_gguf_name (t), ab);
}

void
hz_lora_config_init (HzLoraConfig *c)
{
  c->r = 8;
  c->alpha = 8.0f;
  c->use_rslora = FALSE;
  c->targets = HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V);
}

double
hz_lora_config_scaling (const HzLoraConfig *c)
{
  return c->use_rslora ? c->alpha / sqrt ((double) c->r) : (double) c->alpha / c->r;
}

/* ------------------------------------------------------------------ HzLora */

/* in/out sizes of a target's base matrix */
static void
target_shape (const HzHparams *hp, HzLoraTarget t, int64_t *n_in, int64_t *n_out)
{
  const int64_t d = hp->n_embd, ff = hp->n_ff;
  switch (t)
    {
    case HZ_LORA_Q: *n_in = d; *n_out = (int64_t) hp->n_head * hp->head_dim_k; break;
    case HZ_LORA_K: *n_in = d; *n_out = (int64_t) hp->n_head_kv * hp->head_dim_k; break;
    case HZ_LORA_V: *n_in = d; *n_out = (int64_t) hp->n_head_kv * hp->head_dim_v; break;
    case HZ_LORA_O: *n_in = (int64_t) hp->n_head * hp->head_dim_v; *n_out = d; break;
    case HZ_LORA_GATE:
    case HZ_LORA_UP: *n_in = d; *n_out = ff; break;
    case HZ_LORA_DOWN: *n_in = ff; *n_out = d; break;
    default: g_assert_not_reached ();
    }
}

HzLora *
hz_lora_alloc (const HzHparams *hp, const HzLoraConfig *cfg, gboolean with_grads,
               GError **error)
{
  if (cfg->r < 1 || !isfinite (cfg->alpha) || cfg->alpha <= 0 ||
      (cfg->targets & HZ_LORA_TARGETS_ALL) == 0 || (cfg->targets & ~HZ_LORA_TARGETS_ALL))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "invalid LoRA configuration (r %d, alpha %g, targets 0x%x)",
                   cfg->r, cfg->alpha, cfg->targets);
      return NULL;
    }
  const guint ffn_targets = (1u << HZ_LORA_GATE) | (1u << HZ_LORA_UP) | (1u << HZ_LORA_DOWN);
  if (hp->n_expert > 0 && with_grads)
    {
      /* the learner's forward/backward pass has no mixture-of-experts FFN */
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "training LoRA adapters of mixture-of-experts models (%d experts) is not "
                   "supported", hp->n_expert);
      return NULL;
    }
  if (hp->gemma && with_grads)
    {
      /* the learner's forward/backward pass has no post-norms, GeGLU, soft-capping or
       * sliding window */
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "training LoRA adapters of %s models is not supported",
                   hz_arch_name (hp->arch));
      return NULL;
    }
  if (hp->n_expert > 0 && (cfg->targets & ffn_targets))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "LoRA adapters of the feed-forward projections (gate/up/down) are not "
                   "supported on mixture-of-experts models (%d experts)", hp->n_expert);
      return NULL;
    }
  HzLora *lora = g_new0 (HzLora, 1);
  lora->config = *cfg;
  lora->scaling = (float) hz_lora_config_scaling (cfg);
  lora->n_layer = hp->n_layer;
  lora->arch = hp->arch;
  lora->n_head = hp->n_head;
  lora->n_head_kv = hp->n_head_kv;
  lora->head_dim_k = hp->head_dim_k;
  lora->slots = g_new0 (HzLoraSlot, (gsize) hp->n_layer * HZ_LORA_N_TARGETS);

  gsize off = 0;
  for (int32_t il = 0; il < hp->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        if (!(cfg->targets & HZ_LORA_BIT (t)))
          continue;
        HzLoraSlot *s = &lora->slots[(gsize) il * HZ_LORA_N_TARGETS + t];
        target_shape (hp, t, &s->n_in, &s->n_out);
        s->off_a = off;
        off += (gsize) cfg->r * s->n_in;
        s->off_b = off;
        off += (gsize) s->n_out * cfg->r;
      }
  lora->n_params = off;
  lora->params = g_new0 (float, off);
  lora->grads = with_grads ? g_new0 (float, off) : NULL;
  return lora;
}

void
hz_lora_free (HzLora *lora)
{
  if (lora == NULL)
    return;
  g_free (lora->slots);
  g_free (lora->params);
  g_free (lora->grads);
  g_free (lora);
}

const HzLoraSlot *
hz_lora_slot (const HzLora *lora, int32_t layer, HzLoraTarget t)
{
  g_return_val_if_fail (layer >= 0 && layer < lora->n_layer && t < HZ_LORA_N_TARGETS, NULL);
  const HzLoraSlot *s = &lora->slots[(gsize) layer * HZ_LORA_N_TARGETS + t];
  return s->n_in > 0 ? s : NULL;
}

gboolean
hz_lora_check_model (const HzLora *lora, const HzHparams *hp, GError **error)
{
  if (lora->arch != hp->arch || lora->n_layer != hp->n_layer)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                   "the adapter was made for a %s model of %d layers, not a %s model of %d",
                   hz_arch_name (lora->arch), lora->n_layer, hz_arch_name (hp->arch),
                   hp->n_layer);
      return FALSE;
    }
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        int64_t n_in, n_out;
        if (s == NULL)
          continue;
        target_shape (hp, t, &n_in, &n_out);
        if (n_in != s->n_in || n_out != s->n_out)
          {
            g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                         "blk.%d.%s: the adapter maps %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
                         ", the model %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT, il,
                         hz_lora_target_gguf_name (t), s->n_in, s->n_out, n_in, n_out);
            return FALSE;
          }
      }
  return TRUE;
}

/* ------------------------------------------------------------ q/k row order */

void
hz_lora_permute_qk_rows (float *rows, int64_t n_rows, int64_t row_len, int32_t n_head,
                         gboolean to_gguf)
{
  g_return_if_fail (n_head > 0 && n_rows % n_head == 0 && (n_rows / n_head) % 2 == 0);
  const int64_t hd = n_rows / n_head, half = hd / 2;
  g_autofree float *tmp = g_new (float, hd * row_len);
  for (int32_t h = 0; h < n_head; h++)
    {
      float *head = rows + h * hd * row_len;
      for (int64_t i = 0; i < half; i++)
        for (int j = 0; j < 2; j++)
          {
            const int64_t gguf = 2 * i + j, hf = j * half + i;
            const int64_t dst = to_gguf ? gguf : hf, src = to_gguf ? hf : gguf;
            memcpy (tmp + dst * row_len, head + src * row_len, row_len * sizeof (float));
          }
      memcpy (head, tmp, hd * row_len * sizeof (float));
    }
}

gboolean
hz_lora_arch_permutes_qk (HzArch arch)
{
  return arch == HZ_ARCH_LLAMA;
}

int32_t
hz_lora_permute_heads (const HzLora *lora, HzLoraTarget t)
{
  if (!hz_lora_arch_permutes_qk (lora->arch))
    return 0;
  return t == HZ_LORA_Q ? lora->n_head : t == HZ_LORA_K ? lora->n_head_kv : 0;
}

/* ---------------------------------------------------------------- validation */

static gboolean
bad (GError **error, int code, const char *path, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
bad (GError **error, int code, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, HZ_ENGINE_ERROR, code, "%s: %s", path, msg);
  return FALSE;
}

/* every value of v[0..n) finite, else an error naming the tensor and the index */
static gboolean
check_finite (const float *v, gsize n, const char *path, const char *key, GError **error)
{
  for (gsize i = 0; i < n; i++)
    if (!isfinite (v[i]))
      return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                  "'%s' holds a non-finite value (%g at element %" G_GSIZE_FORMAT ")", key,
                  (double) v[i], i);
  return TRUE;
}

/* ---------------------------------------------------------------------- PEFT */

static gboolean
st_to_float (const HzSafetensor *t, float *out, gsize n, const char *path, GError **error)
{
  const guint8 *p = t->data;
  for (gsize i = 0; i < n; i++)
    switch (t->dtype)
      {
      case HZ_ST_F32: memcpy (&out[i], p + 4 * i, 4); break;
      case HZ_ST_BF16: { guint16 h; memcpy (&h, p + 2 * i, 2); out[i] = hz_bf16_to_fp32 (h); } break;
      case HZ_ST_F16: { guint16 h; memcpy (&h, p + 2 * i, 2); out[i] = hz_fp16_to_fp32 (h); } break;
      default:
        return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                    "tensor '%s' has dtype %s; adapters must be F32, F16 or BF16", t->name,
                    hz_st_dtype_name (t->dtype));
      }
  return TRUE;
}

/* a config member that must be absent, null, false, or an empty object/array */
static gboolean
unset_member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (JSON_NODE_HOLDS_OBJECT (n))
    return json_object_get_size (json_node_get_object (n)) == 0;
  if (JSON_NODE_HOLDS_ARRAY (n))
    return json_array_get_length (json_node_get_array (n)) == 0;
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_BOOLEAN)
    return !json_node_get_boolean (n);
  return FALSE;
}

/* Member `name` of `o` in *out: NULL when absent or null, else a value of `type`
 * (G_TYPE_DOUBLE also takes integers). FALSE when it has another JSON type. */
static gboolean
member_of_type (JsonObject *o, const char *name, GType type, JsonNode **out)
{
  JsonNode *n = json_object_get_member (o, name);
  *out = NULL;
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  const GType vt = json_node_get_value_type (n);
  *out = n;
  return vt == type || (type == G_TYPE_DOUBLE && vt == G_TYPE_INT64);
}

static gboolean
parse_peft_config (const char *path, HzLoraConfig *cfg, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, error))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "not a JSON object");
  JsonObject *o = json_node_get_object (root);
  /* every scalar member typed as PEFT writes it (absent or null: PEFT's default); the
   * json_object_get_*_member getters would g_critical on an array/object and convert a
   * string or a fraction silently */
  JsonNode *pt, *rn, *an, *rs;
  const char *wrong = !member_of_type (o, "peft_type", G_TYPE_STRING, &pt) ? "peft_type"
                      : !member_of_type (o, "r", G_TYPE_INT64, &rn) ? "r"
                      : !member_of_type (o, "lora_alpha", G_TYPE_DOUBLE, &an) ? "lora_alpha"
                      : !member_of_type (o, "use_rslora", G_TYPE_BOOLEAN, &rs) ? "use_rslora"
                      : NULL;
  if (wrong != NULL)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "'%s' has the wrong JSON type", wrong);
  if (pt != NULL && g_strcmp0 (json_node_get_string (pt), "LORA") != 0)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "peft_type is not LORA");
  hz_lora_config_init (cfg);
  const gint64 r = rn != NULL ? json_node_get_int (rn) : 8;
  if (r < 1 || r > G_MAXINT32)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "r %" G_GINT64_FORMAT " is not in "
                "1..%d", r, G_MAXINT32);
  cfg->r = (int32_t) r;
  cfg->alpha = an != NULL ? (float) json_node_get_double (an) : 8.0f;
  cfg->use_rslora = rs != NULL && json_node_get_boolean (rs);
  static const char *const unsupported[] = {
    "layers_to_transform", "rank_pattern", "alpha_pattern", "use_dora", "modules_to_save",
    "fan_in_fan_out",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (unsupported); i++)
    if (!unset_member (o, unsupported[i]))
      return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "unsupported option '%s'",
                  unsupported[i]);
  JsonNode *tm = json_object_get_member (o, "target_modules");
  cfg->targets = 0;
  if (tm && JSON_NODE_HOLDS_VALUE (tm) && json_node_get_value_type (tm) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (tm);
      HzLoraTarget t;
      if (g_strcmp0 (s, "all-linear") == 0)
        cfg->targets = HZ_LORA_TARGETS_ALL;
      else if (hz_lora_target_from_name (s, &t))
        cfg->targets = HZ_LORA_BIT (t);
      else
        return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                    "target_modules regular expressions are not supported");
    }
  else if (tm && JSON_NODE_HOLDS_ARRAY (tm))
    {
      JsonArray *a = json_node_get_array (tm);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          HzLoraTarget t;
          JsonNode *e = json_array_get_element (a, i);
          const char *s = JSON_NODE_HOLDS_VALUE (e) &&
                          json_node_get_value_type (e) == G_TYPE_STRING
                          ? json_node_get_string (e) : NULL;
          if (s == NULL || !hz_lora_target_from_name (s, &t))
            return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                        "target_modules names an unknown module ('%s')", s ? s : "?");
          cfg->targets |= HZ_LORA_BIT (t);
        }
    }
  else
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "target_modules missing");
  return TRUE;
}

/* TRUE when the tensor exists and is [rows, cols], else an error naming it. */
static gboolean
check_block_shape (const HzSafetensor *t, const char *key, int64_t rows, int64_t cols,
                   const char *path, GError **error)
{
  if (t == NULL)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "adapter lacks '%s'", key);
  if (t->n_dims != 2 || t->shape[0] != rows || t->shape[1] != cols)
    {
      g_autoptr (GString) got = g_string_new ("[");
      for (guint d = 0; d < t->n_dims; d++)
        g_string_append_printf (got, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->shape[d]);
      g_string_append_c (got, ']');
      return bad (error, HZ_ENGINE_ERROR_ADAPTER_MISMATCH, path,
                  "'%s' is %s but should be [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]"
                  " (rank from adapter_config.json, width from the model)", key, got->str,
                  rows, cols);
    }
  return TRUE;
}

/* Fill one parameter block (rows x cols) from a tensor, checking its shape and values. */
static gboolean
fill_block (float *dst, const HzSafetensor *t, const char *key, int64_t rows, int64_t cols,
            const char *path, GError **error)
{
  if (!check_block_shape (t, key, rows, cols, path, error))
    return FALSE;
  return st_to_float (t, dst, (gsize) rows * cols, path, error) &&
         check_finite (dst, (gsize) rows * cols, path, key, error);
}

HzLora *
hz_lora_read_peft (const char *dir, const HzHparams *hp, GError **error)
{
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_autofree char *st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
  HzLoraConfig cfg;
  if (!parse_peft_config (cfg_path, &cfg, error))
    return NULL;
  g_autoptr (HzSafetensors) st = hz_safetensors_open (st_path, error);
  if (st == NULL)
    {
      if (error && *error && !g_str_has_prefix ((*error)->message, st_path))
        g_prefix_error (error, "%s: ", st_path);
      return NULL;
    }
  /* the config's rank must agree with the file before r x width floats are allocated for
   * every projection (an absurd r would otherwise abort in the allocation) */
  for (int t = 0; t < HZ_LORA_N_TARGETS && hp->n_layer > 0; t++)
    if (cfg.targets & HZ_LORA_BIT (t))
      {
        int64_t n_in, n_out;
        target_shape (hp, t, &n_in, &n_out);
        g_autofree char *ka = hz_lora_peft_key (0, t, 'A');
        if (!check_block_shape (hz_safetensors_find (st, ka), ka, cfg.r, n_in, st_path, error))
          return NULL;
        break;
      }
  g_autoptr (HzLora) lora = hz_lora_alloc (hp, &cfg, FALSE, error);
  if (lora == NULL)
    return NULL;

  guint used = 0;
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        g_autofree char *ka = hz_lora_peft_key (il, t, 'A');
        g_autofree char *kb = hz_lora_peft_key (il, t, 'B');
        float *B = lora->params + s->off_b;
        if (!fill_block (lora->params + s->off_a, hz_safetensors_find (st, ka), ka, cfg.r,
                         s->n_in, st_path, error) ||
            !fill_block (B, hz_safetensors_find (st, kb), kb, s->n_out, cfg.r, st_path, error))
          return NULL;
        const int32_t heads = hz_lora_permute_heads (lora, t);
        if (heads > 0)
          hz_lora_permute_qk_rows (B, s->n_out, cfg.r, heads, TRUE);
        used += 2;
      }
  if (used != hz_safetensors_n_tensors (st))
    {
      bad (error, HZ_ENGINE_ERROR_ADAPTER_MISMATCH, st_path,
           "holds %u tensors but the config and model account for %u (more layers than the "
           "model?)", hz_safetensors_n_tensors (st), used);
      return NULL;
    }
  return g_steal_pointer (&lora);
}

/* ---------------------------------------------------------------------- GGUF */

HzLora *
hz_lora_read_gguf (const char *path, const HzHparams *hp, GError **error)
{
  g_autoptr (HzGguf) g = hz_gguf_open (path, error);
  if (g == NULL)
    {
      if (error && *error && !g_str_has_prefix ((*error)->message, path))
        g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  g_autofree char *gtype = hz_gguf_get_str (g, "general.type");
  g_autofree char *atype = hz_gguf_get_str (g, "adapter.type");
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  if (g_strcmp0 (gtype, "adapter") != 0 || g_strcmp0 (atype, "lora") != 0)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                "not a LoRA adapter (general.type '%s', adapter.type '%s')",
                gtype ? gtype : "(none)", atype ? atype : "(none)"), NULL;
  HzArch a;
  if (arch == NULL || !hz_arch_from_name (arch, &a) || a != hp->arch)
    return bad (error, HZ_ENGINE_ERROR_ADAPTER_MISMATCH, path,
                "adapter architecture '%s' does not match the model's '%s'",
                arch ? arch : "(none)", hz_arch_name (hp->arch)), NULL;

  /* targets and rank from the tensors of layer 0 */
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.targets = 0;
  cfg.r = 0;
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    {
      g_autofree char *ka = hz_lora_gguf_key (0, t, 'a');
      const HzGgufTensor *ta = hz_gguf_find_tensor (g, ka);
      if (ta == NULL)
        continue;
      cfg.targets |= HZ_LORA_BIT (t);
      if (cfg.r != 0 && ta->ne[1] != cfg.r)
        return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                    "'%s' has rank %" G_GINT64_FORMAT " but other targets rank %d", ka,
                    ta->ne[1], cfg.r), NULL;
      if (ta->ne[1] < 1 || ta->ne[1] > G_MAXINT32)
        return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "'%s' has an invalid rank", ka),
               NULL;
      cfg.r = (int32_t) ta->ne[1];
    }
  if (cfg.targets == 0)
    return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "no lora_a tensor in layer 0"), NULL;
  float alpha = 0;
  gboolean rs = FALSE;
  if (hz_gguf_get_f32 (g, "hanzo.lora.alpha", &alpha))
    hz_gguf_get_bool (g, "hanzo.lora.use_rslora", &rs);
  else if (!hz_gguf_get_f32 (g, "adapter.lora.alpha", &alpha) || alpha == 0)
    alpha = (float) cfg.r;   /* llama.cpp: no alpha means scale 1 */
  cfg.alpha = alpha;
  cfg.use_rslora = rs;
  g_autoptr (HzLora) lora = hz_lora_alloc (hp, &cfg, FALSE, error);
  if (lora == NULL)
    return NULL;

  int64_t used = 0;
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        for (int m = 0; m < 2; m++)
          {
            g_autofree char *key = hz_lora_gguf_key (il, t, m == 0 ? 'a' : 'b');
            const HzGgufTensor *ti = hz_gguf_find_tensor (g, key);
            const int64_t rows = m == 0 ? cfg.r : s->n_out, cols = m == 0 ? s->n_in : cfg.r;
            if (ti == NULL)
              return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path, "adapter lacks '%s'", key),
                     NULL;
            if (ti->ne[0] != cols || ti->ne[1] != rows || ti->ne[2] != 1 || ti->ne[3] != 1)
              return bad (error, HZ_ENGINE_ERROR_ADAPTER_MISMATCH, path,
                          "'%s' has ne [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] but should "
                          "have ne [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] (rank %d, "
                          "width from the model)", key, ti->ne[0], ti->ne[1], cols, rows,
                          cfg.r), NULL;
            const HzQuantTraits *qt = hz_quant_traits (ti->type);
            if (qt == NULL || qt->to_float == NULL || cols % qt->block_elems != 0)
              return bad (error, HZ_ENGINE_ERROR_BAD_ADAPTER, path,
                          "'%s' has an unusable tensor type", key), NULL;
            float *dst = lora->params + (m == 0 ? s->off_a : s->off_b);
            qt->to_float (ti->data, dst, rows * cols);
            if (!check_finite (dst, (gsize) rows * cols, path, key, error))
              return NULL;
            used++;
          }
      }
  /* every other tensor must be a LoRA tensor we did not expect: refuse silently-ignored
   * layers or targets */
  if (used != hz_gguf_n_tensors (g))
    {
      bad (error, HZ_ENGINE_ERROR_ADAPTER_MISMATCH, path,
           "holds %" G_GINT64_FORMAT " tensors, the model accounts for %" G_GINT64_FORMAT
           " (more layers than the model?)", hz_gguf_n_tensors (g), used);
      return NULL;
    }
  return g_steal_pointer (&lora);
}

HzLora *
hz_lora_read (const char *path, const HzHparams *hp, GError **error)
{
  return g_file_test (path, G_FILE_TEST_IS_DIR) ? hz_lora_read_peft (path, hp, error)
                                                : hz_lora_read_gguf (path, hp, error);
}

/* --------------------------------------------------- public HzAdapter, bindings */

struct _HzAdapter {
  gint     ref_count;
  guint64  serial;    /* unique per load in this process: identity for cache keys */
  char    *path;
  HzLora  *lora;
};

HzAdapter *
hz_adapter_new_for (const HzHparams *hp, const char *path, GError **error)
{
  static guint64 next_serial = 1;
  G_LOCK_DEFINE_STATIC (serial);

  g_return_val_if_fail (hp != NULL && path != NULL, NULL);
  HzLora *lora = hz_lora_read (path, hp, error);
  if (lora == NULL)
    return NULL;
  HzAdapter *a = g_new0 (HzAdapter, 1);
  a->ref_count = 1;
  a->path = g_strdup (path);
  a->lora = lora;
  G_LOCK (serial);
  a->serial = next_serial++;
  G_UNLOCK (serial);
  return a;
}

HzAdapter *
hz_adapter_ref (HzAdapter *a)
{
  g_return_val_if_fail (a != NULL, NULL);
  g_atomic_int_inc (&a->ref_count);
  return a;
}

void
hz_adapter_unref (HzAdapter *a)
{
  if (a == NULL || !g_atomic_int_dec_and_test (&a->ref_count))
    return;
  hz_lora_free (a->lora);
  g_free (a->path);
  g_free (a);
}

const char *hz_adapter_path (const HzAdapter *a) { return a->path; }
int32_t hz_adapter_rank (const HzAdapter *a) { return a->lora->config.r; }
double hz_adapter_scaling (const HzAdapter *a) { return a->lora->scaling; }
const HzLora *hz_adapter_get_lora (const HzAdapter *a) { return a->lora; }

void
hz_lora_binding_clear (HzLoraBinding *b)
{
  for (guint i = 0; i < b->n_refs; i++)
    hz_adapter_unref (b->refs[i]);
  g_free (b->refs);
  g_free ((gpointer) b->stack.terms);
  g_free (b->key);
  memset (b, 0, sizeof *b);
}

gboolean
hz_lora_binding_init (HzLoraBinding *b, const HzHparams *hp, HzAdapter *const *adapters,
                      const float *scales, guint n, GError **error)
{
  memset (b, 0, sizeof *b);
  for (guint i = 0; i < n; i++)
    {
      const float sc = scales ? scales[i] : 1.0f;
      if (adapters == NULL || adapters[i] == NULL || !isfinite (sc))
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                       "adapter %u of %u: %s", i + 1, n,
                       adapters && adapters[i] ? "the scale is not finite" : "no adapter");
          return FALSE;
        }
      GError *local = NULL;
      if (!hz_lora_check_model (adapters[i]->lora, hp, &local))
        {
          g_propagate_prefixed_error (error, local, "%s: ", adapters[i]->path);
          return FALSE;
        }
    }
  HzLoraTerm *terms = g_new0 (HzLoraTerm, MAX (n, 1));
  GString *key = g_string_new (NULL);
  b->refs = g_new0 (HzAdapter *, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const float sc = scales ? scales[i] : 1.0f;
      b->refs[b->n_refs++] = hz_adapter_ref (adapters[i]);
      if (sc == 0)
        continue;
      const float total = sc * adapters[i]->lora->scaling;
      guint32 bits;
      memcpy (&bits, &total, sizeof bits);
      g_string_append_printf (key, "%s%" G_GUINT64_FORMAT ":%08x", key->len ? "," : "",
                              adapters[i]->serial, bits);
      terms[b->stack.n++] = (HzLoraTerm) { adapters[i]->lora, total };
    }
  b->stack.terms = terms;
  b->key = g_string_free (key, FALSE);
  return TRUE;
}
