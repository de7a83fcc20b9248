/* tests/mcp/make-mcp-store.c — a store made by libhzstore for the MCP tests: two
 * conversations whose messages hold personal data, for search_conversations to find and
 * redact.
 *
 * Usage: make-mcp-store PATH   (PATH must not exist; prints nothing, exit 0 when written) */
#include <stdio.h>
#include "hanzo-store.h"

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: make-mcp-store PATH\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (argv[1], &error);
  gint64 a = store ? hz_store_create_conversation (store, "Trip with Maria Lopez", NULL, NULL,
                                                   &error) : 0;
  gint64 m1 = a ? hz_store_append_message (store, a, 0, HZ_ROLE_USER,
                                           "Plan the walrus tour for Maria Lopez; her mail is "
                                           "maria.lopez@example.com and her phone +1 415 555 0199.",
                                           NULL, TRUE, &error) : 0;
  gint64 m2 = m1 ? hz_store_append_message (store, a, m1, HZ_ROLE_ASSISTANT,
                                            "The walrus tour leaves at nine. Maria Lopez should "
                                            "bring a coat.", NULL, TRUE, &error) : 0;
  gint64 b = m2 ? hz_store_create_conversation (store, "Groceries", NULL, NULL, &error) : 0;
  gint64 m3 = b ? hz_store_append_message (store, b, 0, HZ_ROLE_USER,
                                           "Apples, bread and cheese for the weekend.", NULL, TRUE,
                                           &error) : 0;
  if (!m3)
    {
      fprintf (stderr, "make-mcp-store: %s\n", error->message);
      return 1;
    }
  return 0;
}
