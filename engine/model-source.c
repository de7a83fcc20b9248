/* engine/model-source.c — a model on its way to a GGUF file (see model-source.h). */
#include "model-source.h"

#include <string.h>

/* a kept object and the function that frees it */
typedef struct { gpointer p; GDestroyNotify f; } Kept;

static void
src_tensor_free (gpointer p)
{
  HzSrcTensor *t = p;
  g_free (t->name);
  g_free (t->owned);
  g_free (t);
}

void
hz_model_source_clear (HzModelSource *s)
{
  if (s->w)
    hz_gguf_writer_free (s->w);
  if (s->tensors)
    g_ptr_array_unref (s->tensors);
  if (s->keep)
    g_ptr_array_unref (s->keep);
  g_free (s->arch);
  memset (s, 0, sizeof *s);
}

void
hz_model_source_init (HzModelSource *s)
{
  memset (s, 0, sizeof *s);
  s->w = hz_gguf_writer_new ();
  s->tensors = g_ptr_array_new_with_free_func (src_tensor_free);
  s->keep = g_ptr_array_new ();
}

void
hz_model_source_keep (HzModelSource *s, gpointer p, GDestroyNotify f)
{
  Kept *k = g_new (Kept, 1);
  k->p = p;
  k->f = f;
  g_ptr_array_add (s->keep, k);
}

void
hz_model_source_release (HzModelSource *s)
{
  if (!s->keep)
    return;
  for (guint i = s->keep->len; i-- > 0;)
    {
      Kept *k = g_ptr_array_index (s->keep, i);
      k->f (k->p);
      g_free (k);
    }
  g_ptr_array_set_size (s->keep, 0);
}
