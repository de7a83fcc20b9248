/* learner/background-portal.h — ask the XDG Background portal to let the learner run in
 * the background and start it at login, when it runs inside a sandbox (Flatpak).
 *
 * Protocol: org.freedesktop.portal.Background.RequestBackground (xdg-desktop-portal,
 * version 1+) on org.freedesktop.portal.Desktop /org/freedesktop/portal/desktop; the
 * answer arrives as org.freedesktop.portal.Request::Response on the request object whose
 * path is derived from the caller's unique name and a handle_token (the portal
 * documentation's "Requests" section). The Response signal is subscribed before the call
 * so that a fast answer is not lost.
 *
 * Thread safety: start and finish on one thread with a running main context.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/** TRUE when this process runs in a Flatpak sandbox (/.flatpak-info exists). */
gboolean hz_background_is_sandboxed (void);

/** Ask for background + (optionally) autostart with `commandline` (argv, NULL-terminated;
 *  the portal writes an autostart entry that runs it at login) and a user-visible `reason`.
 *  The callback runs on the calling thread's main context. */
void     hz_background_request_async (GDBusConnection *conn, const char *reason,
                                      const char *const *commandline, gboolean autostart,
                                      GCancellable *cancellable, GAsyncReadyCallback callback,
                                      gpointer user_data);
/** TRUE when the portal allowed running in the background; *autostart_out (may be NULL)
 *  says whether autostart was granted. Errors: G_IO_ERROR_PERMISSION_DENIED (the user
 *  said no: Response 1), G_IO_ERROR_FAILED (Response 2 or a malformed answer),
 *  G_DBUS_ERROR_* when no portal answers, G_IO_ERROR_CANCELLED. */
gboolean hz_background_request_finish (GAsyncResult *result, gboolean *autostart_out,
                                       GError **error);

G_END_DECLS
