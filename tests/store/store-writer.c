/* tests/store/store-writer.c — the writing process of test-store-multiprocess: uses the
 * store the way the running app does, until it is killed.
 *
 *   store-writer DB [PAUSE_MS]
 *
 * One long-lived HzStore writes (the app's main thread): a conversation, then forever a
 * user message and a streamed assistant reply (appended empty and incomplete, updated
 * twice, marked complete), PAUSE_MS (default 2) between rounds. A second HzStore on the same file opens after the first
 * commits and stays open, reading now and then (the app's redact worker, ~2 s after start);
 * every 8th round a third one opens, reads and closes (the sidebar's search reader). After
 * each commit of a new message its id is written to stdout as "committed ID\n" with one
 * write(2), so the line is in the file or pipe the moment the row is committed, and
 * "completed ID ROUND\n" once a reply holds its final text (" Then, in round ROUND, the fox
 * ran home.") and is marked complete; a failed write is reported as "error MESSAGE\n" and the loop goes on. "ready\n" follows the
 * opening of the second connection. Exit status 1 when the store cannot be opened. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hanzo-store.h"

static void
say (const char *line)
{
  gsize len = strlen (line), off = 0;
  while (off < len)
    {
      ssize_t n = write (STDOUT_FILENO, line + off, len - off);
      if (n <= 0)
        return;
      off += (gsize) n;
    }
}

static void
say_committed (gint64 id)
{
  g_autofree char *line = g_strdup_printf ("committed %" G_GINT64_FORMAT "\n", id);
  say (line);
}

static void
say_error (GError *error)
{
  g_autofree char *line = g_strdup_printf ("error %s\n", error->message);
  say (line);
}

/* A read on `store` (the other connections' work): the conversation list. */
static void
read_some (HzStore *store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) convs = hz_store_list_conversations (store, &error);
  if (convs == NULL)
    say_error (error);
}

int
main (int argc, char *argv[])
{
  if (argc < 2 || argc > 3)
    {
      g_printerr ("usage: %s DB [PAUSE_MS]\n", argv[0]);
      return 2;
    }
  const char *path = argv[1];
  const gulong pause_us = argc == 3 ? 1000 * strtoul (argv[2], NULL, 10) : 2000;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  if (store == NULL)
    {
      g_printerr ("store-writer: %s\n", error->message);
      return 1;
    }
  const gint64 conv = hz_store_create_conversation (store, "written while others read",
                                                    NULL, NULL, &error);
  if (conv == 0)
    {
      g_printerr ("store-writer: %s\n", error->message);
      return 1;
    }
  g_autoptr (HzStore) second = NULL;
  gint64 parent = 0;
  for (guint round = 0;; round++)
    {
      g_autofree char *ask = g_strdup_printf ("question %u: what happened next?", round);
      const gint64 user = hz_store_append_message (store, conv, parent, HZ_ROLE_USER, ask,
                                                   NULL, TRUE, &error);
      if (user == 0)
        {
          say_error (error);
          g_clear_error (&error);
          continue;
        }
      say_committed (user);
      const gint64 reply = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "",
                                                    "ab", FALSE, &error);
      if (reply == 0)
        {
          say_error (error);
          g_clear_error (&error);
          continue;
        }
      say_committed (reply);
      parent = reply;
      g_autofree char *half = g_strdup_printf (" Then, in round %u,", round);
      g_autofree char *full = g_strdup_printf (" Then, in round %u, the fox ran home.", round);
      if (!hz_store_update_message (store, reply, half, 4, 0.05, -1, &error) ||
          !hz_store_update_message (store, reply, full, 9, -1, 80.0, &error) ||
          !hz_store_set_message_complete (store, reply, &error))
        {
          say_error (error);
          g_clear_error (&error);
        }
      else
        {
          g_autofree char *line = g_strdup_printf ("completed %" G_GINT64_FORMAT " %u\n",
                                                   reply, round);
          say (line);
        }

      if (second == NULL)
        {
          second = hz_store_open (path, &error);
          if (second == NULL)
            {
              say_error (error);
              g_clear_error (&error);
            }
          else
            say ("ready\n");
        }
      else if (round % 4 == 0)
        read_some (second);
      if (round % 8 == 7)
        {
          g_autoptr (HzStore) third = hz_store_open (path, &error);
          if (third == NULL)
            {
              say_error (error);
              g_clear_error (&error);
            }
          else
            read_some (third);
        }
      g_usleep (pause_us);
    }
  return 0;
}
