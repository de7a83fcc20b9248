/* tests/fuzz/hf-check.h — what the Hugging Face folder fuzz targets (fuzz-hf-folder.c,
 * fuzz-hf-index.c) share (header-only; one folder per target program): the private folder
 * the input's parts are written to, and the invariants of hz_isq_open() / hz_isq_convert()
 * on it.
 *
 * Define FUZZ_TARGET (the target's name, a string literal) before including: it starts the
 * message of a failed invariant. Not thread-safe (libFuzzer runs one input at a time). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#include "gguf.h"
#include "quantize.h"

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET before including hf-check.h"
#endif

/* Aborts with "FUZZ_TARGET: invariant failed: COND (FILE:LINE)" unless `cond` holds. */
#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr (FUZZ_TARGET ": invariant failed: %s (%s:%d)\n", #cond, __FILE__,     \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

/* The folder (NULL until hf_dir_once) and the file names it may hold. */
static char *hf_dir;
static const char *const *hf_dir_files;
static gsize hf_dir_n_files;

static void
hf_dir_remove (void)
{
  for (gsize i = 0; i < hf_dir_n_files; i++)
    {
      g_autofree char *p = g_build_filename (hf_dir, hf_dir_files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (hf_dir);
}

/** Makes the private folder on the first call — under /dev/shm when there is one (memory-
 *  backed: every input writes its files), else under g_get_tmp_dir(), named after
 *  `tmpl_name` (a g_mkdtemp template such as "hz-fuzz-hf-XXXXXX") — and removes it with
 *  the `n_files` names of `files` (static strings) at exit. Returns TRUE on the call that
 *  made it, FALSE after; aborts when it cannot be made. */
static inline gboolean
hf_dir_once (const char *tmpl_name, const char *const *files, gsize n_files)
{
  if (hf_dir)
    return FALSE;
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  g_autofree char *tmpl = g_build_filename (base, tmpl_name, NULL);
  hf_dir = g_mkdtemp (g_steal_pointer (&tmpl));
  CHECK (hf_dir != NULL);
  hf_dir_files = files;
  hf_dir_n_files = n_files;
  atexit (hf_dir_remove);
  return TRUE;
}

/** Writes the bytes [start, end) as the folder's file `name`, or removes that file when the
 *  range is empty (an empty part of the input: the file is absent). Aborts when the write
 *  fails. */
static inline void
hf_dir_put (const char *name, const char *start, const char *end)
{
  g_autofree char *path = g_build_filename (hf_dir, name, NULL);
  if (end > start)
    CHECK (g_file_set_contents (path, start, (gssize) (end - start), NULL));
  else
    g_unlink (path);
}

/** Checks a refusal: *error is set and carries a message; clears it. */
static inline void
hf_check_refused (GError **error)
{
  CHECK (*error != NULL && (*error)->message[0]);
  g_clear_error (error);
}

/** Opens the folder with hz_isq_open(): NULL when it is refused (with a message), else the
 *  model (hz_isq_model_free / g_autoptr), whose metadata is checked to name
 *  general.architecture. */
static inline HzIsqModel *
hf_open_checked (void)
{
  GError *error = NULL;
  HzIsqModel *m = hz_isq_open (hf_dir, NULL, &error);
  if (!m)
    {
      hf_check_refused (&error);
      return NULL;
    }
  const HzGguf *g = hz_isq_model_gguf (m);
  CHECK (g != NULL);
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  CHECK (arch != NULL);
  return m;
}

/** Converts `m` to Q8_0 on one thread (hz_isq_convert): TRUE when converted, FALSE when it
 *  is refused (with a message). */
static inline gboolean
hf_convert_checked (HzIsqModel *m)
{
  GError *error = NULL;
  if (!hz_isq_convert (m, "Q8_0", 1, &error))
    {
      hf_check_refused (&error);
      return FALSE;
    }
  return TRUE;
}
