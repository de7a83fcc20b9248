/* tools/hanzo-cli-util.h — what every `hanzo` subcommand's messages share: user input
 * echoed safely, and the one form of "cannot load model" errors. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** `s` as it may be echoed to a terminal (g_free): control characters (C0, DEL, C1),
 *  Unicode format characters (bidirectional overrides, zero-width ones) and bytes that are
 *  not UTF-8 become escapes (\n, \t, \xNN, \u{NNNN}); everything else, printable UTF-8
 *  (ü, 模型) and backslashes included, is kept as it is (so a message that already quotes
 *  bytes as \xNN reads the same). NULL gives "". */
char *hz_cli_escape (const char *s);

/** Prints "hanzo CMD: MESSAGE" on stderr with MESSAGE escaped (hz_cli_escape): for errors
 *  whose text may carry user input (option parsing, file names, a server's reply). */
void hz_cli_print_error (const char *cmd, const char *message);

/** Prints "hanzo CMD: cannot load model 'PATH': REASON" on stderr, both escaped, REASON
 *  being `error`'s message without a leading "PATH: " (some loaders name the file
 *  themselves), and "the file is empty" for an empty file. */
void hz_cli_print_load_error (const char *cmd, const char *path, const GError *error);

G_END_DECLS
