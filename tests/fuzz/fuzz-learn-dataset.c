/* tests/fuzz/fuzz-learn-dataset.c — libFuzzer target for the learner's JSONL training data
 * (learner/dataset.c, hz_learn_dataset_load_jsonl(): chat "messages" records, prompt /
 * response, chosen / rejected, rated completions, GRPO prompts with answers; `hanzo learn
 * --data FILE`). The input is the file; it is written to a private path and loaded, then
 * split into training and held-out parts.
 *
 * Invariants: a refused file carries an error message; every record has a target and a
 * context of messages with a known role and content; every group has as many rewards as
 * replies; the split keeps every record. Any violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond))                                                                           \
      {                                                                                    \
        g_printerr ("fuzz-learn-dataset: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                             \
        abort ();                                                                          \
      }                                                                                    \
  } while (0)

static char *path;

static void
remove_file (void)
{
  g_unlink (path);
}

static void
check_context (const GPtrArray *context)
{
  CHECK (context != NULL);
  for (guint i = 0; i < context->len; i++)
    {
      const HzChatMessage *m = context->pdata[i];
      CHECK (m->content != NULL);
      CHECK (g_str_equal (m->role, "system") || g_str_equal (m->role, "user") ||
             g_str_equal (m->role, "assistant"));
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!path)
    {
      const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
      path = g_strdup_printf ("%s/hz-fuzz-dataset-%d.jsonl", base, (int) getpid ());
      atexit (remove_file);
    }
  CHECK (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  GError *error = NULL;
  if (!hz_learn_dataset_load_jsonl (d, path, &error))
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return 0;
    }
  for (guint i = 0; i < d->records->len; i++)
    {
      const HzLearnRecord *r = d->records->pdata[i];
      CHECK (r->target != NULL);
      check_context (r->context);
    }
  for (guint i = 0; i < d->groups->len; i++)
    {
      const HzLearnGroup *g = d->groups->pdata[i];
      check_context (g->context);
      CHECK (g->replies->len == g->rewards->len);
    }
  g_autoptr (HzLearnDataset) train = NULL, held = NULL;
  hz_learn_dataset_split (d, 0.25, 7, &train, &held);
  CHECK (train->records->len + held->records->len == d->records->len);
  CHECK (train->groups->len == d->groups->len);
  return 0;
}
