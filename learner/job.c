/* learner/job.c — one SFT training job (see job.h). */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include "job.h"
#include "adapter-io.h"
#include "checkpoint.h"
#include "hanzo/engine-train.h"

void
hz_learn_job_params_init (HzLearnJobParams *p)
{
  hz_lora_config_init (&p->lora);
  p->lora.alpha = 16;
  p->lora.targets = HZ_LORA_TARGETS_ALL;
  hz_sft_params_init (&p->sft);
  p->sft.adamw.lr = 2e-4;
  p->steps = 100;
  p->batch = 4;
  p->max_tokens = 512;
  p->checkpoint_every = 20;
  p->seed = 1;
  p->dp_sgd = FALSE;
  hz_dp_sgd_params_init (&p->dp);
}

void
hz_learn_job_result_clear (HzLearnJobResult *r)
{
  hz_lora_free (r->lora);
  r->lora = NULL;
}

gboolean
hz_learn_job_improved (const HzLearnJobResult *r)
{
  /* no held-out split: both unmeasured */
  if (isnan (r->heldout_before) && isnan (r->heldout_after))
    return !r->interrupted && r->steps > 0;
  /* a diverged run (NaN/Inf loss) is never an improvement */
  if (!isfinite (r->heldout_after))
    return FALSE;
  return !r->interrupted && (isnan (r->heldout_before) || r->heldout_after < r->heldout_before);
}

/* Tag of a job: what must match for a checkpoint to be resumed. */
static char *
job_tag (HzModel *model, const HzLearnJobParams *p, const HzLearnTokenized *tr)
{
  GChecksum *ck = g_checksum_new (G_CHECKSUM_SHA256);
  for (guint i = 0; i < tr->examples->len; i++)
    {
      const HzSftExample *e = &g_array_index (tr->examples, HzSftExample, i);
      g_checksum_update (ck, (const guchar *) e->tokens, sizeof (int32_t) * e->n);
      g_checksum_update (ck, (const guchar *) e->targets, sizeof (int32_t) * e->n);
    }
  char *tag = g_strdup_printf ("base=%s n_params=%" G_GUINT64_FORMAT " r=%d alpha=%g "
                               "targets=%u lr=%g steps=%" G_GINT64_FORMAT " batch=%d "
                               "dp=%d,%g,%g,%g data=%s",
                               hz_model_path (model), hz_model_n_params (model),
                               p->lora.r, p->lora.alpha, p->lora.targets, p->sft.adamw.lr,
                               p->steps, p->batch, p->dp_sgd, p->dp.sample_rate,
                               p->dp.noise_multiplier, p->dp.clip_norm,
                               g_checksum_get_string (ck));
  g_checksum_free (ck);
  return tag;
}

gboolean
hz_learn_job_run_sft (HzModel *model, const HzLearnDataset *train,
                      const HzLearnDataset *heldout, const HzLearnJobParams *params,
                      const char *init_adapter, const char *checkpoint_dir,
                      HzLearnProgressFunc progress, gpointer user_data,
                      HzLearnJobResult *result, GError **error)
{
  *result = (HzLearnJobResult) { NULL, 0, NAN, NAN, NAN, FALSE, FALSE, 0, 0, 0 };
  const HzLlm *llm = hz_model_get_llm (model);
  if (llm == NULL)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID, "model has no weights");
      return FALSE;
    }
  g_autoptr (HzLearnTokenized) tr = hz_learn_dataset_tokenize (train, model, params->max_tokens,
                                                                error);
  if (tr == NULL)
    return FALSE;
  g_autoptr (HzLearnTokenized) ho = hz_learn_dataset_tokenize (heldout, model, params->max_tokens,
                                                                error);
  if (ho == NULL)
    return FALSE;
  if (tr->examples->len == 0)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID, "no training examples");
      return FALSE;
    }
  HzLearnJobParams p = *params;
  g_autoptr (HzLora) lora = NULL;
  if (init_adapter)
    {
      if ((lora = hz_lora_load_peft (init_adapter, &llm->hp, error)) == NULL)
        return FALSE;
      p.lora = lora->config;
    }
  else
    {
      if ((lora = hz_lora_new (&llm->hp, &p.lora, error)) == NULL)
        return FALSE;
      hz_lora_init_peft (lora, p.seed);
    }
  if (p.sft.schedule.total_steps <= 1)
    p.sft.schedule = (HzSchedule) { HZ_SCHEDULE_COSINE, p.steps / 20, p.steps, 0.1 };
  const int64_t max_len = MAX (tr->max_len, ho->max_len);
  g_autoptr (HzSftTrainer) trainer = hz_sft_trainer_new (llm, lora, &p.sft, max_len);
  const HzSftExample *hx = (const HzSftExample *) ho->examples->data;
  if (ho->examples->len > 0)
    result->heldout_before = hz_sft_trainer_evaluate (trainer, hx, ho->examples->len);
  g_autofree char *tag = job_tag (model, &p, tr);
  if (checkpoint_dir)
    {
      g_autoptr (GError) local = NULL;
      result->resumed = hz_checkpoint_load (checkpoint_dir, lora,
                                            hz_sft_trainer_optimizer (trainer), tag, &local);
      if (local)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
    }
  const HzSftExample *tx = (const HzSftExample *) tr->examples->data;
  const guint n_train = tr->examples->len;
  g_autoptr (HzDpSgd) dp = NULL;
  g_autoptr (GArray) sample = g_array_new (FALSE, FALSE, sizeof (guint));
  if (p.dp_sgd)
    {
      if (p.dp.sample_rate <= 0)
        p.dp.sample_rate = MIN (1.0, (double) MAX (p.batch, 1) / n_train);
      if ((dp = hz_dp_sgd_new (&p.dp, error)) == NULL)
        return FALSE;
      result->dp_q = p.dp.sample_rate;
    }
  g_autofree HzSftExample *batch = g_new (HzSftExample, p.dp_sgd ? n_train : MAX (p.batch, 1));
  for (int64_t s = hz_sft_trainer_steps (trainer); s < p.steps; s++)
    {
      if (dp)
        {
          g_array_set_size (sample, 0);
          if (!hz_dp_sgd_sample (dp, n_train, sample, error))
            return FALSE;
          for (guint i = 0; i < sample->len; i++)
            batch[i] = tx[g_array_index (sample, guint, i)];
          result->train_loss = hz_sft_trainer_step_dp (trainer, dp, batch, sample->len,
                                                       p.dp.sample_rate * n_train, NULL, error);
          if (isnan (result->train_loss))
            return FALSE;
          result->dp_steps_run++;
        }
      else
        {
          for (int i = 0; i < p.batch; i++)
            batch[i] = tx[(s * p.batch + i) % n_train];
          result->train_loss = hz_sft_trainer_step (trainer, batch, p.batch, NULL);
        }
      const gboolean go_on = progress == NULL
                             || progress (s + 1, p.steps, result->train_loss, user_data);
      const gboolean ckpt = checkpoint_dir && (!go_on || (p.checkpoint_every > 0
                                                          && (s + 1) % p.checkpoint_every == 0));
      if (ckpt && !hz_checkpoint_save (checkpoint_dir, lora, hz_sft_trainer_optimizer (trainer),
                                       tag, error))
        return FALSE;
      if (!go_on)
        {
          result->interrupted = s + 1 < p.steps;
          break;
        }
    }
  result->steps = hz_sft_trainer_steps (trainer);
  if (dp)
    result->dp_epsilon = hz_dp_sgd_epsilon (p.dp.sample_rate, p.dp.noise_multiplier,
                                            (guint64) result->steps, p.dp.delta, NULL);
  if (ho->examples->len > 0)
    result->heldout_after = hz_sft_trainer_evaluate (trainer, hx, ho->examples->len);
  if (checkpoint_dir && !result->interrupted)
    hz_checkpoint_clear (checkpoint_dir);
  g_clear_pointer (&trainer, hz_sft_trainer_free);
  result->lora = g_steal_pointer (&lora);
  return TRUE;
}

/* Remove `dir` and the plain files in it (a staging folder of hz_learn_save_adapter). */
static void
remove_staging (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

gboolean
hz_learn_save_adapter (const HzLora *lora, const char *dir, const char *base_name,
                       GError **error)
{
  for (gsize i = 0; i < lora->n_params; i++)
    if (!isfinite (lora->params[i]))
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     "the adapter holds NaN/Inf values (training diverged; try a lower "
                     "learning rate): nothing was written");
        return FALSE;
      }
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot create '%s': %s",
                   dir, g_strerror (e));
      return FALSE;
    }
  /* Every file is written into a staging folder inside `dir` (same file system) and only
   * renamed into place once all of them are complete, so a failed save (full disk) leaves
   * the previous adapter whole instead of a mix of old and new files. */
  g_autofree char *staging = g_build_filename (dir, ".saving-XXXXXX", NULL);
  if (g_mkdtemp (staging) == NULL)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write in '%s': %s",
                   dir, g_strerror (e));
      return FALSE;
    }
  g_autofree char *gguf = g_build_filename (staging, "adapter.gguf", NULL);
  if (!hz_lora_save_peft (lora, staging, HZ_ST_BF16, base_name, error) ||
      !hz_lora_save_gguf (lora, gguf, HZ_TYPE_F32, error))
    {
      remove_staging (staging);
      return FALSE;
    }
  g_autoptr (GDir) d = g_dir_open (staging, 0, error);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *from = g_build_filename (staging, name, NULL);
      g_autofree char *to = g_build_filename (dir, name, NULL);
      if (g_rename (from, to) != 0)
        {
          int e = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                       "cannot move '%s' into place: %s", to, g_strerror (e));
          remove_staging (staging);
          return FALSE;
        }
    }
  if (d == NULL)
    {
      remove_staging (staging);
      return FALSE;
    }
  g_rmdir (staging);
  return TRUE;
}
