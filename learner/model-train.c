/* learner/model-train.c — the precision-independent part of the training graph
 * (model-train.h): opening a frozen base and its RoPE tables. */
#include "model-train.h"

#include "hanzo/engine-train.h"

HzTrainBase *
hz_train_base_open (const char *path, GError **error)
{
  g_autoptr (HzGguf) gguf = hz_gguf_open (path, error);
  if (gguf == NULL)
    return NULL;
  HzLlm *llm = hz_llm_load (gguf, error);
  if (llm == NULL)
    return NULL;
  HzTrainBase *b = g_new0 (HzTrainBase, 1);
  b->gguf = g_steal_pointer (&gguf);
  b->llm = llm;
  return b;
}

void
hz_train_base_free (HzTrainBase *b)
{
  if (b == NULL)
    return;
  hz_llm_free (b->llm);
  hz_gguf_free (b->gguf);
  g_free (b);
}

float *
hz_train_rope_table (const HzLlm *llm, int64_t T)
{
  const int n_rot = llm->hp.n_rot;
  HzRope rope;
  hz_cpu_rope_init (&rope, &llm->hp, llm->rope_freqs);
  float *cs = g_new (float, T * n_rot);
  for (int64_t t = 0; t < T; t++)
    hz_cpu_rope_cache (&rope, t, cs + t * n_rot);
  return cs;
}
