/* tests/server/make-tool-model.c — `make-tool-model DIR`: the tool models of tool-model.h as
 * DIR/tool.gguf (Qwen3's template), DIR/harmony.gguf (gpt-oss's) and DIR/talker.gguf (Qwen3's,
 * answering in words), for the OpenAI SDK test (tests/clients/run-openai-test.sh). Needs
 * HZ_SOURCE_DIR and the shared data (meson's test environment); exit 77 without them. */
#include <stdio.h>
#include "tool-model.h"

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: make-tool-model DIR\n");
      return 2;
    }
  g_autofree char *path = hz_test_write_tool_model (argv[1]);
  g_autofree char *harmony = path ? hz_test_write_harmony_model (argv[1]) : NULL;
  g_autofree char *talker = harmony ? hz_test_write_talker_model (argv[1]) : NULL;
  if (path == NULL || harmony == NULL || talker == NULL)
    {
      fprintf (stderr, "make-tool-model: the shared data is missing\n");
      return 77;
    }
  printf ("%s\n%s\n%s\n", path, harmony, talker);
  return 0;
}
