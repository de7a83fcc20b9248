/* tests/server/make-chat-model.c — `make-chat-model SRC.gguf DST.gguf`: the chat model of
 * chat-model.h, for the OpenAI SDK test (tests/clients/run-openai-test.sh). */
#include <stdio.h>
#include "chat-model.h"

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: make-chat-model SRC.gguf DST.gguf\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  if (!hz_test_write_chat_model (argv[1], argv[2], &error))
    {
      fprintf (stderr, "make-chat-model: %s\n", error->message);
      return 1;
    }
  return 0;
}
