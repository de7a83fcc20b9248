/* mcp-env.c — the tools' model, redactor and store, made on first use (mcp-env.h). */
#include "mcp-env.h"

gboolean
hz_mcp_env_load_model (HzMcpEnv *env, GError **error)
{
  if (env->model)
    return TRUE;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = env->n_threads;
  env->model = hz_model_load (env->model_path, &mp, error);
  return env->model != NULL;
}

HzContext *
hz_mcp_env_context (HzMcpEnv *env, GError **error)
{
  if (env->context)
    return env->context;
  if (!hz_mcp_env_load_model (env, error))
    return NULL;
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_threads = env->n_threads;
  env->context = hz_context_new (env->model, &cp, error);
  return env->context;
}

HzRedactor *
hz_mcp_env_redactor (HzMcpEnv *env, GError **error)
{
  if (!env->redactor)
    env->redactor = hz_redactor_new (error);
  return env->redactor;
}

HzStore *
hz_mcp_env_store (HzMcpEnv *env, GError **error)
{
  if (!env->store)
    env->store = hz_store_open_readonly (env->store_path, error);
  return env->store;
}

void
hz_mcp_env_clear (HzMcpEnv *env)
{
  g_clear_pointer (&env->store, hz_store_close);
  g_clear_pointer (&env->redactor, hz_redactor_free);
  g_clear_pointer (&env->context, hz_context_free);
  g_clear_pointer (&env->model, hz_model_free);
  g_clear_pointer (&env->model_path, g_free);
  g_clear_pointer (&env->store_path, g_free);
}
